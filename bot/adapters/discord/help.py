"""/help, and the welcome when the bot is added to a server.

Which commands a person sees is the core's rule (bot/core/help.py); the list here is
Discord's syntax. `/help` is ephemeral, in the reader's language, with the admin commands for
those with Manage Server (in a DM, for its person). The welcome goes once, on
`on_guild_join` (discord.py calls it for a server the bot was not in, never for the servers a
restart finds again), to the server's system channel or else the first text channel the bot
may write in, in that channel's language.
"""

from __future__ import annotations

import logging

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.identity import PREFIX, can_manage, channel_title, chat_of
from bot.adapters.discord.replies import Reply, Responder, reader
from bot.core.help import Entry, Where, help_text, welcome_text
from bot.core.models import Chat
from bot.core.service import QuizService
from bot.i18n import _, translator

log = logging.getLogger(__name__)

ENTRIES = (
    Entry(_("/quiz — a question now, for everyone in this channel")),
    Entry(_("/quiz quiz: <quiz id> run: True — the whole quiz, one question after another, "
            "just for you")),
    Entry(_("/quiz quiz: <quiz or topic> questions: N — N questions in a row for the "
            "channel"), Where.SHARED),
    Entry(_("/leaderboard — who knows best")),
    Entry(_("/stats — your answers, accuracy and streaks")),
    Entry(_("/review — the questions due for review")),
    Entry(_("/review-export — your due and missed questions as an Anki deck")),
    Entry(_("/remind time: HH:MM timezone: <zone> — a daily reminder when reviews are due")),
    Entry(_("/lang code: <language> — your language")),
    Entry(_("/report question: <question id> text: <what is wrong> — report a wrong or "
            "unclear question")),
    Entry(_("/daily status — this channel's daily question")),
    Entry(_("/settings — this channel's question time and who may ask")),
    Entry(_("/help — this list")),
    Entry(_("/mydata — what I store about you, as a file; /mydata delete: True deletes it")),
    Entry(_("/lang code: <language> scope: channel — the channel's language"), Where.SHARED,
          admin=True),
    Entry(_("/daily set time: HH:MM timezone: <zone> — a question every day; /daily off"),
          admin=True),
    Entry(_("/settings time: chart: quiz: — change them"), admin=True),
    Entry(_("/analysis — which questions work, with a chart"), admin=True),
    Entry(_("/reports — open reports about questions asked here, and resolving one"),
          admin=True),
    Entry(_("/dashboard — a private link to this channel's web dashboard; revoke: True"),
          admin=True),
)

START = _("/quiz quiz: <quiz id>")


class HelpCog(commands.Cog):
    def __init__(self, service: QuizService) -> None:
        self.service = service

    @app_commands.command(name="help", description=_("What this bot does and how to use it"))
    async def help_command(self, interaction: discord.Interaction) -> None:
        chat = chat_of(interaction)
        async with Responder(interaction, ephemeral=True) as responder:
            t = await reader(self.service, interaction)
            await responder.send(Reply.text(help_text(
                ENTRIES, self.service.quizzes(t.locale), t, private=chat.is_private,
                admin=can_manage(interaction), start=START)))

    @commands.Cog.listener()
    async def on_guild_join(self, guild: discord.Guild) -> None:
        channel = welcome_channel(guild)
        if channel is None:
            log.info("no channel to welcome server %s in", guild.id)
            return
        chat = Chat(f"{PREFIX}{channel.id}", channel_title(guild.name, channel.name),
                    platform_locale=str(guild.preferred_locale))
        t = translator(await self.service.locale_of_chat(chat))
        text = welcome_text(self.service.quizzes(t.locale), t, start=START)
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
