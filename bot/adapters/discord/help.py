"""/help, and the welcome when the bot is added to a server.

The lines are those core/commands.py declares for Discord (Discord's syntax), of the commands
the bot's command tree has; which of them a person sees is the core's rule (bot/core/help.py).
`/help` is ephemeral, in the reader's language, with the admin commands for those with Manage
Server in a server (a DM's /help leaves them out, as Telegram's private chat does). The
welcome goes once, on `on_guild_join` (discord.py calls it for a server the bot was not in,
never for the servers a restart finds again), to the server's system channel or else the first
text channel the bot may write in, in that channel's language.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any, ClassVar

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.identity import (
    PREFIX,
    can_manage,
    channel_title,
    chat_of,
    person_of,
)
from bot.adapters.discord.publish import ChannelPublisher
from bot.adapters.discord.replies import ErrorReplies, Reply, Responder, reader
from bot.content.limits import DC_SELECT_LABEL
from bot.core.commands import help_entries
from bot.core.help import Entry, help_text, welcome_text
from bot.core.models import Chat, QuizInfo
from bot.core.render import short as clip
from bot.core.service import QuizService
from bot.i18n import Translator, _, translator

log = logging.getLogger(__name__)

ENTRIES = help_entries("discord")  # core/commands.py: Discord's /help lines, every one

START = _("/quiz quiz: <quiz id>")
MENU_ID = "qs:start"  # the quizzes' menu under /help and the welcome
MENU_OPTIONS = 25  # Discord's most options in one select
PLACEHOLDER = 150  # a select's placeholder


class QuizMenu(discord.ui.DynamicItem[discord.ui.Select[Any]], template=MENU_ID):
    """A quiz chosen from the menu under /help or the welcome: that quiz, run for whoever
    chose it, in their own view of the channel (as /quiz quiz: <id> run: True). `cog` is set
    on the subclass each bot registers (HelpCog.dynamic_items). The value is never trusted:
    the core refuses a quiz it does not have."""

    cog: ClassVar[HelpCog | None] = None

    def __init__(self, quizzes: Sequence[QuizInfo] = (), t: Translator | None = None) -> None:
        options = [discord.SelectOption(
            label=clip(q.title, DC_SELECT_LABEL), value=q.id[:DC_SELECT_LABEL],
            description=clip(t.ngettext("{n} question", "{n} questions", q.questions), 100)
            if t is not None else None) for q in quizzes[:MENU_OPTIONS]]
        super().__init__(discord.ui.Select(
            custom_id=MENU_ID, min_values=1, max_values=1,
            placeholder=clip(t.gettext("Start a quiz…"), PLACEHOLDER) if t is not None else None,
            options=options or [discord.SelectOption(label="…", value="-")]))

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> QuizMenu:
        return cls()

    async def callback(self, interaction: discord.Interaction) -> None:
        data: Any = interaction.data or {}
        values = [str(v) for v in data.get("values") or []]
        if self.cog is not None and values:
            await self.cog.start(interaction, values[0])


class HelpCog(commands.Cog):
    def __init__(self, service: QuizService) -> None:
        self.service = service
        self.tree: app_commands.CommandTree[Any] | None = None  # the bot's (build_bot)
        self.publisher: ChannelPublisher | None = None  # the bot's (build_bot)
        self.errors = ErrorReplies(service)

        class BoundQuizMenu(QuizMenu, template=MENU_ID):
            pass

        BoundQuizMenu.cog = self
        self.menu = BoundQuizMenu
        self.dynamic_items = (BoundQuizMenu,)  # registered by the client's setup_hook

    def menu_view(self, t: Translator) -> discord.ui.View | None:
        quizzes = self.service.questions.quizzes(t.locale)
        if not quizzes:
            return None
        view = discord.ui.View(timeout=None)
        view.add_item(self.menu(quizzes, t))
        return view

    async def start(self, interaction: discord.Interaction, quiz_id: str) -> None:
        """The quiz run, shown only to the one who chose it (a DM is private already)."""
        if self.publisher is None:
            return
        person, chat = person_of(interaction), chat_of(interaction)
        try:
            async with (
                Responder(interaction, ephemeral=not chat.is_private) as responder,
                self.service.asking.quiz(chat, person, quiz_id, run=True) as question,
            ):
                await self.publisher.reply_with(responder, question,
                                                ephemeral=not chat.is_private)
        except Exception as exc:  # a refusal (an unknown quiz) in the chooser's language
            await self.errors.failed(interaction, exc, f"quiz menu {quiz_id!r}")

    def entries(self) -> tuple[Entry, ...]:
        """The /help lines of the commands in the tree (before it is set: every declared)."""
        if self.tree is None:
            return ENTRIES
        return help_entries("discord", {c.name for c in self.tree.get_commands()})

    @app_commands.command(name="help", description=_("What this bot does and how to use it"))
    async def help_command(self, interaction: discord.Interaction) -> None:
        chat = chat_of(interaction)
        async with Responder(interaction, ephemeral=True) as responder:
            t = await reader(self.service, interaction)
            reply = Reply.text(help_text(
                self.entries(), self.service.questions.quizzes(t.locale), t,
                private=chat.is_private, admin=can_manage(interaction) and not chat.is_private,
                start=START))
            reply.view = self.menu_view(t)  # the quizzes started by a choice
            await responder.send(reply)

    @commands.Cog.listener()
    async def on_guild_join(self, guild: discord.Guild) -> None:
        channel = welcome_channel(guild)
        if channel is None:
            log.info("no channel to welcome server %s in", guild.id)
            return
        chat = Chat(f"{PREFIX}{channel.id}", channel_title(guild.name, channel.name),
                    platform_locale=str(guild.preferred_locale))
        t = translator(await self.service.locales.for_audience(chat))
        text = welcome_text(self.service.questions.quizzes(t.locale), t, start=START)
        reply = Reply.text(text)
        reply.view = self.menu_view(t)
        try:
            await channel.send(**reply.kwargs())
        except discord.HTTPException as exc:
            log.info("could not welcome server %s in #%s: %s", guild.id, channel.id, exc)


def welcome_channel(guild: discord.Guild) -> discord.TextChannel | None:
    """The system channel if the bot may write there, else the first text channel it may."""
    me = guild.me

    def writable(channel: discord.TextChannel) -> bool:
        return me is None or channel.permissions_for(me).send_messages

    if guild.system_channel is not None and writable(guild.system_channel):
        return guild.system_channel
    return next((c for c in sorted(guild.text_channels, key=lambda c: c.position)
                 if writable(c)), None)
