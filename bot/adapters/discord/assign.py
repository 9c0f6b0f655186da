"""The assignments cog: /assign (with quiz, date, time, timezone: give one; alone: the
channel's list) and /unassign id:, and the announcement's button that starts a member's run.

The button is a DynamicItem whose custom_id carries the assignment and its token
(`as:<id>:<token>`); pressed, it starts (or goes on with) the presser's run of it in the
channel, seen by them alone (ephemeral), as /quiz run:True. Whether the quiz, date, time and
zone are valid, who may assign (`can_manage`: Manage Server) and what an error says are the
core's (core/assignments.py), shown by the tree's `on_error` or ErrorReplies for a press.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import discord
from discord import app_commands
from discord.app_commands import Choice
from discord.ext import commands

from bot.adapters.discord.daily import COMMON_ZONES
from bot.adapters.discord.identity import can_manage, chat_of, person_of
from bot.adapters.discord.intake import Intake
from bot.adapters.discord.publish import ChannelPublisher
from bot.adapters.discord.quiz import AUTOCOMPLETE_MAX, quiz_choices
from bot.adapters.discord.replies import ErrorReplies, Reply, Responder, reader
from bot.core import assignment_text
from bot.core.ports import AssignmentRecord
from bot.core.schedule import zone_names
from bot.core.service import QuizService
from bot.i18n import Translator, _, translator

TEMPLATE = r"as:(?P<id>[0-9]{1,18}):(?P<token>[A-Za-z0-9_]{1,16})"


class TakeButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=TEMPLATE):
    """The announcement's button; `cog` is set on the subclass each bot registers."""

    cog: ClassVar[AssignCog | None] = None

    def __init__(self, assignment_id: int, token: str, label: str = "") -> None:
        super().__init__(discord.ui.Button(
            label=label or "…", style=discord.ButtonStyle.primary,
            custom_id=f"as:{assignment_id}:{token}"))
        self.assignment_id = assignment_id
        self.token = token

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
        match: re.Match[str], /,
    ) -> TakeButton:
        return cls(int(match["id"]), match["token"])

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return self.cog is not None and self.cog.intake.admit(interaction)

    async def callback(self, interaction: discord.Interaction) -> None:
        if self.cog is not None:
            await self.cog.pressed(interaction, self.assignment_id, self.token)


class AssignCog(commands.Cog):
    def __init__(self, service: QuizService, publisher: ChannelPublisher,
                 errors: ErrorReplies, intake: Intake) -> None:
        self.service = service
        self.publisher = publisher
        self.errors = errors
        self.intake = intake

        class Bound(TakeButton, template=TEMPLATE):
            pass

        Bound.cog = self
        self.button = Bound
        self.dynamic_items: tuple[type[TakeButton], ...] = (Bound,)

    @app_commands.command(name="assign",
                          description=_("A quiz everyone takes privately by a deadline"))
    @app_commands.describe(
        quiz=_("A quiz or topic (empty: this channel's assignments)"),
        date=_("The deadline's day, YYYY-MM-DD"),
        time=_("The deadline's time, 24-hour HH:MM (default 23:59)"),
        timezone=_("Time zone, e.g. Asia/Kolkata (default UTC)"),
    )
    async def assign_command(
        self, interaction: discord.Interaction, quiz: str | None = None,
        date: str | None = None, time: str | None = None, timezone: str | None = None,
    ) -> None:
        chat = chat_of(interaction)
        # the announcement is the channel's; the list and the usage are the asker's
        async with Responder(interaction, ephemeral=not (quiz and date)) as responder:
            t = await reader(self.service, interaction)
            assignments = self.service.assignments
            if not quiz:
                records = await assignments.listed(chat)
                await responder.send(Reply.text(assignment_text.listing(
                    [(r, assignments.title(r, t.locale)) for r in records], t,
                    t.gettext("/unassign id: cancels one (admins)."))))
                return
            if not date:
                await responder.send(Reply.text(t.gettext(
                    "Give the deadline: /assign quiz: date: YYYY-MM-DD time: HH:MM "
                    "timezone: Asia/Kolkata")))
                return
            record = await assignments.assign(chat, quiz, date, time or None, timezone or None,
                                              by=person_of(interaction),
                                              allowed=can_manage(interaction))
            t = translator(await self.service.locales.for_audience(chat))
            await responder.send(self.announcement(record, t))

    def announcement(self, record: AssignmentRecord, t: Translator) -> Reply:
        view = discord.ui.View(timeout=None)
        view.add_item(self.button(record.id, record.new.token, t.gettext("Take it privately")))
        title = self.service.assignments.title(record, t.locale)
        return Reply(content=assignment_text.announcement(record, title, t), view=view)

    @assign_command.autocomplete("quiz")
    async def quiz_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[Choice[str]]:
        return await quiz_choices(self.service, interaction, current)

    @assign_command.autocomplete("timezone")
    async def zone_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[Choice[str]]:
        names = zone_names(current, AUTOCOMPLETE_MAX) if current.strip() else list(COMMON_ZONES)
        return [Choice(name=name, value=name) for name in names[:AUTOCOMPLETE_MAX]]

    @app_commands.command(name="unassign", description=_("Cancel one of this channel's "
                                                         "assignments"))
    @app_commands.describe(id=_("The assignment's number, as /assign lists it"))
    async def unassign_command(self, interaction: discord.Interaction, id: str) -> None:
        async with Responder(interaction, ephemeral=True) as responder:
            assignments = self.service.assignments
            record = await assignments.cancel(chat_of(interaction), id,
                                              allowed=can_manage(interaction))
            t = await reader(self.service, interaction)
            await responder.send(Reply.text(assignment_text.cancelled(
                record, assignments.title(record, t.locale), t)))

    async def pressed(self, interaction: discord.Interaction, assignment_id: int,
                      token: str) -> None:
        """The member's run of it, shown to them alone."""
        chat = chat_of(interaction)
        try:
            async with Responder(interaction, ephemeral=True) as responder:
                taken = await self.service.assignments.take(
                    assignment_id, person_of(interaction), chat, token=token,
                    from_chat=chat.key)
                lead = None
                if taken.quizzes > 1:
                    t = await reader(self.service, interaction)
                    lead = assignment_text.started(taken.quiz_number, taken.quizzes,
                                                   taken.question.quiz_title, t)
                await self.publisher.reply_with(responder, taken.question, ephemeral=True,
                                                lead=lead)
        except Exception as exc:
            await self.errors.failed(interaction, exc, "an assignment's button")
