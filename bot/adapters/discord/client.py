"""The discord.py bot: the cogs, the answer buttons and the command translator.

A fresh bot per start (discord.py's close() leaves a client unusable). Everything a handler
needs is given to its cog or to the button class when the bot is built (`build_bot`), so no
handler reaches for state through `interaction.client`.

Unsharded, it is a `commands.Bot` (one gateway connection, no shard in IDENTIFY); given shards
(QUIZBOT_DISCORD_SHARD_COUNT / QUIZBOT_DISCORD_SHARDS) it is a `commands.AutoShardedBot`
running those shards of that count, one connection each, as one client: interactions from
any of them reach the same cogs, REST calls (posting, editing) need no shard.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import aiohttp
import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.analysis import AnalysisCog
from bot.adapters.discord.assign import AssignCog
from bot.adapters.discord.buttons import AnswerButton, AnswerClicks, answer_buttons
from bot.adapters.discord.confidence import ConfidenceTaps
from bot.adapters.discord.daily import DailyCog
from bot.adapters.discord.dashboard import DashboardCog
from bot.adapters.discord.help import HelpCog
from bot.adapters.discord.intake import Intake
from bot.adapters.discord.kinds import KindAnswers, KindsCog
from bot.adapters.discord.live import LiveCog
from bot.adapters.discord.localize import CatalogTranslator
from bot.adapters.discord.privacy import PrivacyCog
from bot.adapters.discord.publish import ChannelPublisher
from bot.adapters.discord.quiz import QuizCog
from bot.adapters.discord.replies import ErrorReplies
from bot.adapters.discord.reports import ReportCog, report_flags
from bot.adapters.discord.review import ReviewCog
from bot.adapters.discord.review_export import ReviewExportCog
from bot.core.service import QuizService

log = logging.getLogger(__name__)

# Discord allows `max_concurrency` IDENTIFYs per 5 seconds, one per rate-limit bucket
# (shard id % max_concurrency); more are refused with an invalid session.
IDENTIFY_WINDOW = 5.0
# REST connections kept open to Discord. discord.py's own connector has no limit, so a burst
# of interaction responses opens a new connection (a TLS handshake on Discord) per call; a
# bounded pool makes the burst wait for, and reuse, kept-alive connections.
REST_CONNECTIONS = 50


class QuizTree(app_commands.CommandTree[Any]):
    """Takes a command only through the bot's `Intake`: once per interaction (a /quiz run
    again would replace the question it showed with one nobody sees), and not while the bot
    is stopping. Every command's error, from any cog, is answered here (`errors`)."""

    intake: Intake | None = None
    errors: ErrorReplies | None = None

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return self.intake is None or self.intake.admit(interaction)

    async def on_error(self, interaction: discord.Interaction,
                       error: app_commands.AppCommandError, /) -> None:
        if self.errors is None:
            await super().on_error(interaction, error)
            return
        await self.errors.command_failed(interaction, error)


class QuizBot(commands.Bot):
    def __init__(
        self, cogs: Sequence[commands.Cog], buttons: type[AnswerButton], *,
        intake: Intake | None = None, errors: ErrorReplies | None = None,
        guild_ready_timeout: float = 2.0,
        identify_interval: float = IDENTIFY_WINDOW, **options: Any,
    ) -> None:
        # Slash commands and buttons need no privileged intents; `guilds` gives channel names.
        # No prefix commands: only a mention could trigger one, and none are defined.
        intents = discord.Intents.none()
        intents.guilds = True
        if "connector" not in options:
            options["connector"] = rest_connector()
        super().__init__(
            command_prefix=commands.when_mentioned,
            help_command=None,
            tree_cls=QuizTree,
            intents=intents,
            guild_ready_timeout=guild_ready_timeout,
            allowed_mentions=discord.AllowedMentions.none(),  # names in text never ping anyone
            **options,
        )
        self.identify_interval = identify_interval
        self.max_concurrency = 1  # the adapter sets Discord's figure before connecting
        self._identify_locks: dict[int, asyncio.Lock] = {}  # per rate-limit bucket
        self._identified: dict[int, float] = {}  # bucket -> when it last IDENTIFYed (loop time)
        self.cogs_to_add = list(cogs)
        self.buttons = buttons
        self.intake = intake = intake or Intake()
        assert isinstance(self.tree, QuizTree)
        self.tree.intake = intake
        self.tree.errors = errors

    async def setup_hook(self) -> None:
        for cog in self.cogs_to_add:
            await self.add_cog(cog)
            for item in getattr(cog, "dynamic_items", ()):  # e.g. /mydata's confirmation
                self.add_dynamic_items(item)
        # buttons of every message, old or new, dispatch here by custom_id
        self.add_dynamic_items(self.buttons)
        if self.buttons.clicks is not None and self.buttons.clicks.taps is not None:
            self.add_dynamic_items(self.buttons.clicks.taps.button)
        if self.buttons.flag is not None:
            self.add_dynamic_items(self.buttons.flag)
        # command descriptions in every language Discord and our catalogs share (before sync)
        await self.tree.set_translator(CatalogTranslator())

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """Keep to Discord's IDENTIFY limit: one per `identify_interval` seconds in each
        rate-limit bucket (discord.py waits 5 s before every IDENTIFY but the first, so a
        process of many shards would start no faster with a larger max_concurrency)."""
        bucket = (shard_id or 0) % max(1, self.max_concurrency)
        loop = asyncio.get_running_loop()
        async with self._identify_locks.setdefault(bucket, asyncio.Lock()):
            last = self._identified.get(bucket)
            if last is not None and (wait := last + self.identify_interval - loop.time()) > 0:
                await asyncio.sleep(wait)
            self._identified[bucket] = loop.time()


def rest_connector() -> aiohttp.TCPConnector:
    """The pool every REST call of one bot goes through (interaction responses, follow-ups
    and edits too: discord.py gives interactions the client's session). Made inside the
    running loop, which aiohttp binds it to; the bot's close() closes it."""
    return aiohttp.TCPConnector(limit=REST_CONNECTIONS)


class ShardedQuizBot(QuizBot, commands.AutoShardedBot):
    """The same bot on `shard_ids` of `shard_count` shards (discord.py's AutoShardedClient)."""

    def __init__(
        self, cogs: Sequence[commands.Cog], buttons: type[AnswerButton], *,
        shard_ids: Sequence[int], shard_count: int, **options: Any,
    ) -> None:
        super().__init__(cogs, buttons, shard_ids=list(shard_ids), shard_count=shard_count,
                         **options)


def build_bot(service: QuizService, publisher: ChannelPublisher, *,
              intake: Intake | None = None, guild_ready_timeout: float = 2.0,
              identify_interval: float = IDENTIFY_WINDOW,
              shards: tuple[Sequence[int], int] | None = None) -> QuizBot:
    """A new bot wired to the service; the publisher posts through it from now on. Every
    interaction is taken through `intake`. `shards`: (the shard ids, the shard count) for a
    sharded bot; None for one unsharded connection."""
    errors = ErrorReplies(service)
    intake = intake or Intake()
    reports = ReportCog(service, errors, intake)
    taps = ConfidenceTaps(service, intake)  # "How sure are you?" (/settings confidence)
    clicks = AnswerClicks(service, publisher, errors, taps=taps)
    buttons = answer_buttons(clicks, intake, report_flags(reports, intake))
    kinds = KindsCog(KindAnswers(service, clicks, errors), intake)
    buttons.kinds = kinds.items  # the other kinds' components on question messages
    cogs: list[commands.Cog] = [QuizCog(service, publisher), kinds, DailyCog(service),
                                ReviewCog(service, publisher), reports,
                                AnalysisCog(service), help_cog := HelpCog(service),
                                PrivacyCog(service, errors, intake), ReviewExportCog(service),
                                DashboardCog(service), live := LiveCog(service, intake, errors),
                                AssignCog(service, publisher, errors, intake)]  # /assign
    options: dict[str, Any] = {"intake": intake, "errors": errors,
                               "guild_ready_timeout": guild_ready_timeout,
                               "identify_interval": identify_interval}
    bot = QuizBot(cogs, buttons, **options) if shards is None else \
        ShardedQuizBot(cogs, buttons, shard_ids=shards[0], shard_count=shards[1], **options)
    publisher.client, publisher.buttons = bot, buttons
    live.client = bot
    help_cog.tree = bot.tree  # /help lists the commands the tree has
    help_cog.publisher = publisher  # a quiz chosen from /help's menu is sent by it
    return bot
