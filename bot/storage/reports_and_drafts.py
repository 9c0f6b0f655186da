"""Problem reports and authoring drafts: the Storage methods both backends implement the same
way, over their own operations (`bot/storage/{problem_reports,authoring}.py` on SQLite,
`bot/storage/postgres/...` on PostgreSQL). A backend names its two op modules and how it stores
a time (`_when`); the methods here only route."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from datetime import datetime
from types import ModuleType
from typing import Any, ClassVar

from bot.core.ports import (
    AuthoredPackRecord,
    DraftRecord,
    NewProblemReport,
    ProblemReportRecord,
    ReportOutcome,
    ResolveOutcome,
)


class ReportsAndDrafts(ABC):
    report_ops: ClassVar[ModuleType]
    draft_ops: ClassVar[ModuleType]

    @abstractmethod
    def _read(self, fn: Callable[..., Any], *args: Any) -> Awaitable[Any]: ...

    @abstractmethod
    def _write(self, fn: Callable[..., Any], *args: Any) -> Awaitable[Any]: ...

    @staticmethod
    @abstractmethod
    def _when(moment: datetime) -> Any:
        """A time as this backend's operations take it."""

    # problem reports (bot/core/problem_reports.py) ----------------------------------------
    async def add_problem_report(
        self, report: NewProblemReport, *, since: datetime, daily_cap: int, max_chars: int
    ) -> tuple[ReportOutcome, ProblemReportRecord | None]:
        outcome, report_id = await self._write(
            self.report_ops.add_problem_report, report, self._when(since), daily_cap, max_chars
        )
        if report_id is None:
            return outcome, None
        return outcome, await self._read(self.report_ops.problem_report, report_id)

    async def problem_reports(
        self, *, open_only: bool = True, quiz_id: str | None = None,
        chat_key: str | None = None,
    ) -> list[ProblemReportRecord]:
        result: list[ProblemReportRecord] = await self._read(
            self.report_ops.problem_reports, open_only, quiz_id, chat_key)
        return result

    async def resolve_problem_report(
        self, report_id: int, when: datetime, note: str | None = None
    ) -> ResolveOutcome:
        result: ResolveOutcome = await self._write(
            self.report_ops.resolve_problem_report, report_id, self._when(when), note)
        return result

    async def last_answered(self, person_key: str, chat_key: str) -> tuple[str, str] | None:
        result: tuple[str, str] | None = await self._read(
            self.report_ops.last_answered, person_key, chat_key)
        return result

    # authoring (bot/core/authoring.py) ------------------------------------------------------
    async def get_draft(self, author_key: str) -> DraftRecord | None:
        result: DraftRecord | None = await self._read(self.draft_ops.draft, author_key)
        return result

    async def create_draft(self, author_key: str, locale: str, when: datetime) -> bool:
        return bool(await self._write(
            self.draft_ops.create_draft, author_key, locale, self._when(when)))

    async def add_draft_question(
        self, author_key: str, locale: str, question: str, ref: str, when: datetime
    ) -> int:
        return int(await self._write(self.draft_ops.add_draft_question, author_key, locale,
                                     question, ref, self._when(when)))

    async def undo_draft_question(self, author_key: str) -> int | None:
        result: int | None = await self._write(self.draft_ops.undo_draft_question, author_key)
        return result

    async def name_draft(self, author_key: str, title: str) -> bool:
        return bool(await self._write(self.draft_ops.name_draft, author_key, title))

    async def delete_draft(self, author_key: str) -> bool:
        return bool(await self._write(self.draft_ops.delete_draft, author_key))

    async def publish_draft(self, pack: AuthoredPackRecord) -> bool:
        return bool(await self._write(
            self.draft_ops.publish_draft, pack, self._when(pack.published_at)))

    async def authored_packs(self) -> list[AuthoredPackRecord]:
        result: list[AuthoredPackRecord] = await self._read(self.draft_ops.authored_packs)
        return result

    async def withdraw_pack(self, quiz_id: str, when: datetime) -> bool:
        return bool(await self._write(self.draft_ops.withdraw_pack, quiz_id, self._when(when)))
