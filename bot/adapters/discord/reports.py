"""Reporting a problem with a question on Discord: the ⚑ button and /report.

- A ⚑ button under every question (buttons.py adds it on a row of its own, open or closed)
  is a DynamicItem whose custom_id is `rp:<question id>` (at most 51 of Discord's 100
  characters), so it works on messages sent before a restart. Clicked, it opens a modal
  "What is wrong with this question?" with one text input (MAX_REPORT_CHARS).
- The modal's submission (custom_id `rpm:<question id>`) is taken by this cog's interaction
  listener, not by a Modal object kept in memory: a modal opened before a restart and
  submitted after it is still stored.
- `/report question:<autocomplete> text:<…>`: with no text it opens the same modal; with no
  question it reports the last question the person answered in this channel. A typed question
  that is none is refused with the nearest ids; a refusal shows Discord's syntax.
- `/reports [resolve:<id>] [note:<…>]` (Manage Server): the open reports made in this
  channel, or one resolved, in the reader's language, ephemeral.

Every id is checked by the core (an unknown or forged one is refused, nothing stored), and
the ephemeral thanks, in the person's language, is sent only after the report is stored.
"""

from __future__ import annotations

import logging
import re
from typing import Any, ClassVar

import discord
from discord import app_commands
from discord.app_commands import Choice
from discord.ext import commands

from bot.adapters.discord.embeds import clip
from bot.adapters.discord.identity import can_manage, chat_of, person_of
from bot.adapters.discord.intake import Intake
from bot.adapters.discord.quiz import AUTOCOMPLETE_MAX
from bot.adapters.discord.replies import ErrorReplies, Reply, Responder, reader
from bot.content.items import DEFAULT_LOCALE
from bot.content.limits import DC_CHOICE_NAME, DC_CUSTOM_ID
from bot.core.errors import MAX_REPORT_CHARS
from bot.core.problem_reports import (
    ReportReceipt,
    report_heading_text,
    report_list_text,
    report_thanks_text,
    resolved_text,
)
from bot.core.service import QuizService
from bot.i18n import Translator, _

log = logging.getLogger(__name__)

FLAG = "⚑"
# wide enough that a forged id still reaches the handler and gets a polite refusal
FLAG_TEMPLATE = r"rp:(?P<question>[\s\S]{1,97})"
MODAL = re.compile(r"rpm:(?P<question>[\s\S]{1,96})")
MODAL_TITLE = 45  # Discord's limit on a modal's title and a text input's label
MODAL_TIMEOUT = 900.0  # seconds discord.py keeps an unanswered modal (never used by us)
USAGE = _("/report question: <question id> text: <what is wrong>")
RESOLVE_HINT = _("Resolve one with /reports resolve: <id> note: <what was done>.")


def flag_id(question_id: str) -> str:
    value = f"rp:{question_id}"
    assert len(value) <= DC_CUSTOM_ID
    return value


class ReportModal(discord.ui.Modal):
    """What is wrong with the question? Its submission is read by ReportCog.on_interaction."""

    def __init__(self, question_id: str, t: Translator, heading: str = "") -> None:
        """`heading`: the question as people know it (its quiz and number), not its id."""
        title = t.gettext("Report: {question}", question=heading) if heading \
            else t.gettext("Report a problem")
        super().__init__(title=clip(title, MODAL_TITLE),
                         custom_id=f"rpm:{question_id}"[:DC_CUSTOM_ID], timeout=MODAL_TIMEOUT)
        self.add_item(discord.ui.TextInput(
            label=clip(t.gettext("What is wrong with this question?"), MODAL_TITLE),
            style=discord.TextStyle.paragraph, min_length=1, max_length=MAX_REPORT_CHARS,
            custom_id="text",
        ))


class ReportFlag(discord.ui.DynamicItem[discord.ui.Button[Any]], template=FLAG_TEMPLATE):
    """The ⚑ under a question. `reports` and `intake` are set on the subclass each bot
    registers (`report_flags`), so two bots in one process never share state."""

    reports: ClassVar[ReportCog | None] = None
    intake: ClassVar[Intake | None] = None

    def __init__(self, question_id: str, *, row: int | None = None) -> None:
        super().__init__(discord.ui.Button(
            label=FLAG, style=discord.ButtonStyle.secondary, custom_id=flag_id(question_id),
            row=row,
        ))
        self.question_id = question_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
        match: re.Match[str], /,
    ) -> ReportFlag:
        return cls(match["question"])

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return self.intake is None or self.intake.admit(interaction)

    async def callback(self, interaction: discord.Interaction) -> None:
        if self.reports is not None:
            await self.reports.open_modal(interaction, self.question_id)

    @classmethod
    def add_to(cls, view: discord.ui.View, question_id: str, options: int) -> None:
        """On the row after the options' (5 to a row: 10 options and ⚑ take 3 of 5 rows)."""
        view.add_item(cls(question_id, row=-(-options // 5)))


def report_flags(reports: ReportCog, intake: Intake | None = None) -> type[ReportFlag]:
    """The ⚑ class one bot registers with `add_dynamic_items` and builds its views with."""

    class BoundReportFlag(ReportFlag, template=FLAG_TEMPLATE):
        pass

    BoundReportFlag.reports = reports
    BoundReportFlag.intake = intake
    return BoundReportFlag


async def question_choices(
    service: QuizService, interaction: discord.Interaction, current: str
) -> list[Choice[str]]:
    """Questions whose id or prompt (in the person's language) contains what was typed."""
    try:
        t = await reader(service, interaction)
    except Exception:  # discord.py only logs these; an empty list beats a spinner
        log.exception("autocomplete of a question failed for %r", current)
        return []
    needle = current.strip().lower()
    found: list[Choice[str]] = []
    for quiz in service.catalog:
        for question in quiz.questions:
            prompt = question.prompt.get(t.locale)
            if not needle or needle in question.id or needle in prompt.lower():
                found.append(Choice(name=clip(f"{question.id}: {prompt}", DC_CHOICE_NAME),
                                    value=question.id))
                if len(found) == AUTOCOMPLETE_MAX:
                    return found
    return found


class ReportCog(commands.Cog):
    def __init__(self, service: QuizService, errors: ErrorReplies,
                 intake: Intake | None = None) -> None:
        self.service = service
        self.errors = errors
        self.intake = intake

    @app_commands.command(name="report",
                          description=_("Report a wrong or unclear question"))
    @app_commands.describe(
        question=_("The question (empty: the last one you answered here)"),
        text=_("What is wrong with it (empty: a form opens)"),
    )
    async def report_command(
        self, interaction: discord.Interaction, question: str | None = None,
        text: str | None = None,
    ) -> None:
        person, chat = person_of(interaction), chat_of(interaction)
        if question is not None and not self.service.problem_reports.is_question(question):
            async with Responder(interaction, ephemeral=True):  # refused with the nearest
                await self.service.problem_reports.report(person, chat, question, text or "",
                                                          usage=USAGE, typed=True)
            return
        if text is None and question is not None:
            await self.open_modal(interaction, question)
            return
        async with Responder(interaction, ephemeral=True) as responder:
            if question is None:
                receipt = await self.service.problem_reports.report_last(person, chat, text or "",
                                                                         usage=USAGE)
            else:
                receipt = await self.service.problem_reports.report(person, chat, question,
                                                                    text or "", usage=USAGE)
            await responder.send(Reply.text(await self.thanks(interaction, receipt)))

    @app_commands.command(name="reports",
                          description=_("Open reports about questions asked here (admins)"))
    @app_commands.describe(resolve=_("The number of a report to resolve"),
                           note=_("What was done about it"))
    @app_commands.default_permissions(manage_guild=True)  # hidden from others; checked anyway
    async def reports_command(
        self, interaction: discord.Interaction, resolve: int | None = None,
        note: str | None = None,
    ) -> None:
        chat, allowed = chat_of(interaction), can_manage(interaction)
        async with Responder(interaction, ephemeral=True) as responder:
            t = await reader(self.service, interaction)
            if resolve is not None:
                done = await self.service.problem_reports.resolve_in_chat(chat, resolve, note,
                                                                          allowed=allowed)
                await responder.send(Reply.text(resolved_text(done, t)))
                return
            reports = await self.service.problem_reports.for_chat(chat, allowed=allowed)
            titles = self.service.problem_reports.titles(reports, t.locale)
            await responder.send(Reply.text(report_list_text(reports, t, titles,
                                                             RESOLVE_HINT)))

    @report_command.autocomplete("question")
    async def question_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[Choice[str]]:
        return await question_choices(self.service, interaction, current)

    async def open_modal(self, interaction: discord.Interaction, question_id: str) -> None:
        """⚑ or /report question:<id>: the form, for a question the catalog has."""
        try:
            # UnknownQuestion: refused
            self.service.problem_reports.title(question_id, DEFAULT_LOCALE)
            t = await reader(self.service, interaction)
            heading = report_heading_text(
                self.service.problem_reports.place(question_id, t.locale), t)
            await interaction.response.send_modal(ReportModal(question_id, t, heading))
        except Exception as exc:
            await self.errors.failed(interaction, exc, f"report flag for {question_id!r}")

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """A submitted report form (whichever process or run of the bot opened it)."""
        if interaction.type is not discord.InteractionType.modal_submit:
            return
        data: Any = interaction.data or {}
        match = MODAL.fullmatch(str(data.get("custom_id", "")))
        if match is None or (self.intake is not None and not self.intake.admit(interaction)):
            return
        text = next((str(c.get("value") or "") for row in data.get("components") or []
                     for c in row.get("components") or [] if c.get("custom_id") == "text"), "")
        try:
            async with Responder(interaction, ephemeral=True) as responder:
                receipt = await self.service.problem_reports.report(
                    person_of(interaction), chat_of(interaction), match["question"], text,
                    usage=USAGE)
                await responder.send(Reply.text(await self.thanks(interaction, receipt)))
        except Exception as exc:
            await self.errors.failed(interaction, exc, f"report form {match['question']!r}")

    async def thanks(self, interaction: discord.Interaction, receipt: ReportReceipt) -> str:
        t = await reader(self.service, interaction)
        title = self.service.problem_reports.title(receipt.report.question_id, t.locale)
        return report_thanks_text(receipt, title, t)
