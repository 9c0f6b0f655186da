"""The review cog: /review (the due cards, privately) and /remind (a daily review reminder).

The core decides what is due (bot/core/review.py). /review shows the first due card as the
person's own question: ephemeral in a channel, a plain message in a DM; each click's reply
brings the next due card (buttons.py, as in a quiz run). /remind time:HH:MM timezone:Zone sets
one DM a day, sent by the core scheduler when reviews are due; time:off removes it; no time
shows it.
"""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import Choice
from discord.ext import commands

from bot.adapters.discord.daily import COMMON_ZONES
from bot.adapters.discord.identity import chat_of, person_of
from bot.adapters.discord.publish import ChannelPublisher
from bot.adapters.discord.quiz import AUTOCOMPLETE_MAX
from bot.adapters.discord.replies import Reply, Responder, reader
from bot.core import render
from bot.core.schedule import zone_names
from bot.core.service import QuizService
from bot.i18n import _


class ReviewCog(commands.Cog):
    def __init__(self, service: QuizService, publisher: ChannelPublisher) -> None:
        self.service = service
        self.publisher = publisher

    @app_commands.command(name="review",
                          description=_("Go through the questions due for review"))
    async def review_command(self, interaction: discord.Interaction) -> None:
        person, chat = person_of(interaction), chat_of(interaction)
        ephemeral = not chat.is_private
        async with Responder(interaction, ephemeral=ephemeral) as responder:
            t = await reader(self.service, interaction)
            question = await self.service.spaced.start(person, chat, t.locale)
            if question is None:
                wait = await self.service.spaced.next_due(person)
                await responder.send(Reply.text(render.nothing_due_text(t, wait)), ephemeral=True)
                return
            await self.publisher.reply_with(responder, question, ephemeral=ephemeral)

    @app_commands.command(name="remind",
                          description=_("A daily reminder when reviews are due"))
    @app_commands.describe(
        time=_("HH:MM, 24-hour, or 'off' (empty: show the reminder)"),
        timezone=_("Time zone, e.g. Asia/Kolkata (default UTC)"),
    )
    async def remind_command(
        self, interaction: discord.Interaction, time: str | None = None,
        timezone: str = "UTC",
    ) -> None:
        person = person_of(interaction)
        async with Responder(interaction, ephemeral=True) as responder:
            t = await reader(self.service, interaction)
            if time is None:
                text = render.reminder_status_text(
                    await self.service.spaced.reminder(person), t, off="/remind time:off",
                    # i18n: {command} is the command as typed on Discord (keep it as is)
                    usage=t.gettext("Set one with {command}.",
                                    command="/remind time:HH:MM timezone:Asia/Kolkata"))
            elif time.strip().lower() == "off":
                text = render.reminder_off_text(await self.service.spaced.reminder_off(person), t)
            else:
                reminder = await self.service.spaced.set_reminder(person, time, timezone)
                text = render.reminder_set_text(reminder, t)
            await responder.send(Reply.text(text))

    @remind_command.autocomplete("timezone")
    async def zone_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[Choice[str]]:
        names = zone_names(current, AUTOCOMPLETE_MAX) if current.strip() else list(COMMON_ZONES)
        return [Choice(name=name, value=name) for name in names[:AUTOCOMPLETE_MAX]]
