"""The daily cog: /daily set | off | status, one question a day in a channel.

The core owns schedules: it checks them (time, zone, quiz, open time, who may), posts each day's
question through the adapter's ChatPort and closes the previous one. These commands only pass
what was typed and who may manage the channel (`can_manage`: Manage Server, in a DM the person
themself); refusals and bad input come back as the core's errors, rendered by
the tree's `on_error` (client.py).

The group is registered with `default_permissions(manage_guild=True)` (Discord ignores it on
subcommands), which only hides it by default, status included; server admins can change that
in Integrations, so set and off pass `allowed=` on every use.
"""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import Choice
from discord.ext import commands

from bot.adapters.discord.identity import can_manage, chat_of, person_of
from bot.adapters.discord.quiz import AUTOCOMPLETE_MAX, quiz_choices
from bot.adapters.discord.replies import Reply, Responder, reader
from bot.core import render
from bot.core.daily import MAX_OPEN_MINUTES
from bot.core.models import ScheduleStatus
from bot.core.schedule import zone_names
from bot.core.service import QuizService
from bot.i18n import Translator, _

# What the time-zone autocomplete offers before anything is typed: the zones of the people this
# bot serves first (India, Bangladesh, Nepal), then a few common ones.
COMMON_ZONES = (
    "UTC", "Asia/Kolkata", "Asia/Dhaka", "Asia/Kathmandu", "Asia/Karachi", "Asia/Dubai",
    "Asia/Singapore", "Asia/Tokyo", "Europe/London", "Europe/Berlin", "America/New_York",
    "America/Chicago", "America/Los_Angeles", "Australia/Sydney",
)


def schedule_text(status: ScheduleStatus, t: Translator) -> str:
    """The shared status text (in the schedule's zone) and the next post as a Discord
    timestamp, which each reader's client shows in their own time zone."""
    unix = int(status.next_post.timestamp())
    return render.schedule_status_text(status, t) + "\n" + t.gettext(
        "In your time zone: {when}", when=f"<t:{unix}:F> (<t:{unix}:R>)"
    )


@app_commands.default_permissions(manage_guild=True)
class DailyCog(commands.GroupCog, group_name="daily",
               group_description=_("A question every day in this channel")):
    def __init__(self, service: QuizService) -> None:
        self.service = service
        super().__init__()

    @app_commands.command(name="set",
                          description=_("Post a question here every day at a set time"))
    @app_commands.describe(
        time=_("Local time, 24-hour HH:MM, e.g. 09:30"),
        timezone=_("Time zone, e.g. Asia/Kolkata (default UTC)"),
        quiz=_("A quiz or topic (empty: any)"),
        minutes=_("Minutes each question stays open (default: until the next one)"),
    )
    async def set_command(
        self,
        interaction: discord.Interaction,
        time: str,
        timezone: str = "UTC",
        quiz: str | None = None,
        minutes: app_commands.Range[int, 1, MAX_OPEN_MINUTES] | None = None,
    ) -> None:
        async with Responder(interaction, ephemeral=True) as responder:
            status = await self.service.daily.set(
                chat_of(interaction), time, timezone, quiz or None, open_minutes=minutes,
                by=person_of(interaction), allowed=can_manage(interaction),
            )
            t = await reader(self.service, interaction)
            head = t.gettext("Done: this channel gets a question every day.")
            await responder.send(Reply.text(f"{head}\n{schedule_text(status, t)}"))

    @set_command.autocomplete("timezone")
    async def zone_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[Choice[str]]:
        """IANA zones containing what was typed ("kolkata", "new york"); common ones first."""
        names = zone_names(current, AUTOCOMPLETE_MAX) if current.strip() else list(COMMON_ZONES)
        return [Choice(name=name, value=name) for name in names[:AUTOCOMPLETE_MAX]]

    @set_command.autocomplete("quiz")
    async def quiz_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[Choice[str]]:
        return await quiz_choices(self.service, interaction, current)

    @app_commands.command(name="off", description=_("Stop the daily question in this channel"))
    async def off_command(self, interaction: discord.Interaction) -> None:
        """Its open question closes now, with its summary on the question message."""
        async with Responder(interaction, ephemeral=True) as responder:
            removed = await self.service.daily_off(chat_of(interaction),
                                                   allowed=can_manage(interaction))
            t = await reader(self.service, interaction)
            await responder.send(Reply.text(
                t.gettext("The daily question is off for this channel.") if removed
                else t.gettext("This channel has no daily question.")
            ))

    @app_commands.command(name="status",
                          description=_("This channel's daily question and the next one"))
    async def status_command(self, interaction: discord.Interaction) -> None:
        async with Responder(interaction, ephemeral=True) as responder:
            status = await self.service.daily.status(chat_of(interaction))
            t = await reader(self.service, interaction)
            await responder.send(Reply.text(
                schedule_text(status, t) if status is not None else t.gettext(
                    "This channel has no daily question. Members with the Manage Server "
                    "permission can set one with /daily set."
                )
            ))
