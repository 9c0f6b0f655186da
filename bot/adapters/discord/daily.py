"""/daily set | off | status: one question a day in a channel.

The core owns schedules and posts them (DailyScheduler calls the adapter's post_question and
post_summary); these commands only set, remove and show a channel's schedule.

Who may change it: members with Manage Server, in a DM the person themself. The group is
registered with `default_permissions(manage_guild=True)` (Discord ignores it on subcommands),
which only hides the command by default; server admins can change that in Integrations, so
`set` and `off` check `can_manage` on every use. `status` does not: anyone the server lets use
/daily may see it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import discord
from discord import app_commands
from discord.app_commands import Choice

from bot.adapters.discord.commands import AUTOCOMPLETE_MAX, quiz_autocomplete
from bot.adapters.discord.identity import can_manage, chat_of, person_of, personal_locale
from bot.adapters.discord.replies import Reply, respond
from bot.core import render
from bot.core.models import ScheduleStatus
from bot.core.schedule import ScheduleError, parse_time, parse_zone, zone_names
from bot.core.service import QuizService
from bot.i18n import Translator, _, translator

if TYPE_CHECKING:
    from bot.adapters.discord.client import QuizClient

# What the time-zone autocomplete offers before anything is typed: the zones of the people this
# bot serves first (India, Bangladesh, Nepal), then a few common ones.
COMMON_ZONES = (
    "UTC", "Asia/Kolkata", "Asia/Dhaka", "Asia/Kathmandu", "Asia/Karachi", "Asia/Dubai",
    "Asia/Singapore", "Asia/Tokyo", "Europe/London", "Europe/Berlin", "America/New_York",
    "America/Chicago", "America/Los_Angeles", "Australia/Sydney",
)
MAX_OPEN_MINUTES = 24 * 60
SUGGESTIONS = 5  # zones offered after a zone that does not exist


def register(tree: app_commands.CommandTree[QuizClient]) -> None:
    daily = app_commands.Group(
        name="daily",
        description=_("A question every day in this channel"),
        default_permissions=discord.Permissions(manage_guild=True),
    )

    @daily.command(name="set", description=_("Post a question here every day at a set time"))
    @app_commands.describe(
        time=_("Local time, 24-hour HH:MM, e.g. 09:30"),
        timezone=_("Time zone, e.g. Asia/Kolkata (default UTC)"),
        quiz=_("A quiz or topic (empty: any)"),
        minutes=_("Minutes each question stays open (default: until the next one)"),
    )
    async def set_command(
        interaction: discord.Interaction,
        time: str,
        timezone: str = "UTC",
        quiz: str | None = None,
        minutes: app_commands.Range[int, 1, MAX_OPEN_MINUTES] | None = None,
    ) -> None:
        await _set(interaction, time, timezone, quiz, minutes)

    set_command.autocomplete("timezone")(zone_autocomplete)
    set_command.autocomplete("quiz")(quiz_autocomplete)

    @daily.command(name="off", description=_("Stop the daily question in this channel"))
    async def off_command(interaction: discord.Interaction) -> None:
        await _off(interaction)

    @daily.command(name="status", description=_("This channel's daily question and the next one"))
    async def status_command(interaction: discord.Interaction) -> None:
        await _status(interaction)

    tree.add_command(daily)


async def zone_autocomplete(interaction: discord.Interaction, current: str) -> list[Choice[str]]:
    """IANA zones containing what was typed ("kolkata", "new york"); common ones at first."""
    names = zone_names(current, AUTOCOMPLETE_MAX) if current.strip() else list(COMMON_ZONES)
    return [Choice(name=name, value=name) for name in names[:AUTOCOMPLETE_MAX]]


def _service(interaction: discord.Interaction) -> QuizService:
    return cast("QuizClient", interaction.client).service


def refusal(t: Translator) -> str:
    return t.gettext(
        "Only members with the Manage Server permission can change this channel's daily "
        "question. /daily status shows it."
    )


def bad_schedule(at: str, zone: str, t: Translator) -> str | None:
    """The time or zone problem in the reader's language (the core's ScheduleError carries
    English text only); None when both are fine. The same msgids as on Telegram."""
    try:
        parse_time(at)
    except ScheduleError:
        text = t.gettext(
            "“{text}” is not a time: use HH:MM, 24-hour, e.g. 09:30 or 18:05", text=at
        )
    else:
        try:
            parse_zone(zone)
            return None
        except ScheduleError:
            text = t.gettext(
                "“{name}” is not a time zone: use an IANA name such as Asia/Kolkata or "
                "Asia/Dhaka", name=zone,
            )
            # typed instead of picked from the autocomplete: "kolkata", "asia/dhaka"
            needle = zone.strip().rsplit("/", 1)[-1]
            if len(needle) >= 3 and (close := zone_names(needle, limit=SUGGESTIONS)):
                text += "\n" + t.gettext("Did you mean: {zones}?", zones=", ".join(close))
    return text + "\n" + t.gettext("Nothing was changed.")


async def _set(
    interaction: discord.Interaction, at: str, zone: str, selector: str | None,
    minutes: int | None,
) -> None:
    service = _service(interaction)
    chat = chat_of(interaction)

    async def work() -> Reply:
        t = translator(await personal_locale(service, interaction))
        if not can_manage(interaction):
            return Reply.text(refusal(t))
        if problem := bad_schedule(at, zone, t):
            return Reply.text(problem)
        # an unknown quiz raises UnknownQuiz, explained by the tree's on_error; nothing stored
        status = await service.set_schedule(
            chat, at, zone, selector or None, open_minutes=minutes, by=person_of(interaction)
        )
        head = t.gettext("Done: this channel gets a question every day.")
        return Reply.text(f"{head}\n{schedule_text(status, t)}")

    await respond(interaction, work(), ephemeral=True)


async def _off(interaction: discord.Interaction) -> None:
    service = _service(interaction)

    async def work() -> Reply:
        t = translator(await personal_locale(service, interaction))
        if not can_manage(interaction):
            return Reply.text(refusal(t))
        if await service.remove_schedule(chat_of(interaction)):
            return Reply.text(t.gettext("The daily question is off for this channel."))
        return Reply.text(t.gettext("This channel has no daily question."))

    await respond(interaction, work(), ephemeral=True)


async def _status(interaction: discord.Interaction) -> None:
    service = _service(interaction)

    async def work() -> Reply:
        t = translator(await personal_locale(service, interaction))
        status = await service.schedule_status(chat_of(interaction))
        if status is None:
            return Reply.text(t.gettext(
                "This channel has no daily question. Members with the Manage Server "
                "permission can set one with /daily set."
            ))
        return Reply.text(schedule_text(status, t))

    await respond(interaction, work(), ephemeral=True)


def schedule_text(status: ScheduleStatus, t: Translator) -> str:
    """The shared status text (in the schedule's zone) and the next post as a Discord
    timestamp, which each reader's client shows in their own time zone."""
    unix = int(status.next_post.timestamp())
    return render.schedule_status_text(status, t) + "\n" + t.gettext(
        "In your time zone: {when}", when=f"<t:{unix}:F> (<t:{unix}:R>)"
    )
