"""The discord.py bot: the cogs, the answer buttons and the command translator.

A fresh bot per start (discord.py's close() leaves a client unusable). Everything a handler
needs is given to its cog or to the button class when the bot is built (`build_bot`), so no
handler reaches for state through `interaction.client`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.buttons import AnswerButton, AnswerClicks, answer_buttons
from bot.adapters.discord.daily import DailyCog
from bot.adapters.discord.intake import Intake
from bot.adapters.discord.localize import CatalogTranslator
from bot.adapters.discord.publish import ChannelPublisher
from bot.adapters.discord.quiz import QuizCog
from bot.adapters.discord.replies import ErrorReplies
from bot.core.service import QuizService

log = logging.getLogger(__name__)


class QuizTree(app_commands.CommandTree[Any]):
    """Takes a command only through the bot's `Intake`: once per interaction (a /quiz run
    again would replace the question it showed with one nobody sees), and not while the bot
    is stopping."""

    intake: Intake | None = None

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return self.intake is None or self.intake.admit(interaction)


class QuizBot(commands.Bot):
    def __init__(
        self, cogs: Sequence[commands.Cog], buttons: type[AnswerButton], *,
        intake: Intake | None = None, guild_ready_timeout: float = 2.0,
    ) -> None:
        # Slash commands and buttons need no privileged intents; `guilds` gives channel names.
        # No prefix commands: only a mention could trigger one, and none are defined.
        intents = discord.Intents.none()
        intents.guilds = True
        super().__init__(
            command_prefix=commands.when_mentioned,
            help_command=None,
            tree_cls=QuizTree,
            intents=intents,
            guild_ready_timeout=guild_ready_timeout,
            allowed_mentions=discord.AllowedMentions.none(),  # names in text never ping anyone
        )
        self.cogs_to_add = list(cogs)
        self.buttons = buttons
        self.intake = intake = intake or Intake()
        assert isinstance(self.tree, QuizTree)
        self.tree.intake = intake

    async def setup_hook(self) -> None:
        for cog in self.cogs_to_add:
            await self.add_cog(cog)
        # buttons of every message, old or new, dispatch here by custom_id
        self.add_dynamic_items(self.buttons)
        # command descriptions in every language Discord and our catalogs share (before sync)
        await self.tree.set_translator(CatalogTranslator())


def build_bot(service: QuizService, publisher: ChannelPublisher, *,
              intake: Intake | None = None, guild_ready_timeout: float = 2.0) -> QuizBot:
    """A new bot wired to the service; the publisher posts through it from now on. Every
    interaction is taken through `intake`."""
    errors = ErrorReplies(service)
    intake = intake or Intake()
    buttons = answer_buttons(AnswerClicks(service, publisher, errors), intake)
    bot = QuizBot(
        [QuizCog(service, publisher, errors), DailyCog(service, errors)], buttons,
        intake=intake, guild_ready_timeout=guild_ready_timeout,
    )
    publisher.client, publisher.buttons = bot, buttons
    return bot
