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
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.identity import PREFIX, can_manage, channel_title, chat_of
from bot.adapters.discord.replies import Reply, Responder, reader
from bot.core.commands import help_entries
from bot.core.help import Entry, help_text, welcome_text
from bot.core.models import Chat
from bot.core.service import QuizService
from bot.i18n import _, translator

log = logging.getLogger(__name__)

ENTRIES = help_entries("discord")  # core/commands.py: Discord's /help lines, every one

START = _("/quiz quiz: <quiz id>")


class HelpCog(commands.Cog):
    def __init__(self, service: QuizService) -> None:
        self.service = service
        self.tree: app_commands.CommandTree[Any] | None = None  # the bot's (build_bot)

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
            await responder.send(Reply.text(help_text(
                self.entries(), self.service.questions.quizzes(t.locale), t,
                private=chat.is_private, admin=can_manage(interaction) and not chat.is_private,
                start=START)))

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
        try:
            await channel.send(**Reply.text(text).kwargs())
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
