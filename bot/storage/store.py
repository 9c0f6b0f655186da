"""Store: every storage operation the two databases share, written once: the SQL in
queries.py, ops.py, rounds.py, review.py, drafts.py, problem_reports.py and privacy.py over a
connection's Sql (sql.py), run through a backend's `_read` / `_write` (cache.py).

A backend class adds its lifecycle (open, close), its connection handling, and the operations
that truly differ between SQLite and PostgreSQL: recording an answer (the hot path), claiming
the daily post, moving a chat, and the boards (their reads and materializing them).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from datetime import UTC, date, datetime
from types import ModuleType
from typing import Any, ClassVar, Self

from bot.core.ports import (
    AnswerCursor,
    AnswerRecord,
    AnswerRow,
    AuthoredPackRecord,
    CardRecord,
    ChatSettingsRecord,
    DayCount,
    DraftRecord,
    ItemFigures,
    ItemResponse,
    NewPost,
    NewProblemReport,
    PeopleCursor,
    PersonTotals,
    PostRecord,
    ProblemReportRecord,
    RecordOutcome,
    ReportOutcome,
    ResolveOutcome,
    ReviewAnswer,
    RoundRecord,
    RunRecord,
    ScoreRow,
)
from bot.core.schedule import Schedule
from bot.storage import (
    cards,
    dashboard,
    day_runs,
    deliveries,
    drafts,
    item_figures,
    ops,
    privacy,
    queries,
    review,
    rounds,
)
from bot.storage import problem_reports as reports
from bot.storage.cache import CachedStorage
from bot.storage.live import LiveSql


class Store(CachedStorage, LiveSql):
    boards: ClassVar[ModuleType]  # the backend's reads of the aggregates: leaderboard (and its
    # Roll), person_streaks, daily_days_for
    # the write that deletes a person; each backend's also takes them out of the rank counts
    delete_person_op: ClassVar[Any] = staticmethod(privacy.delete_person)

    async def create_post(
        self,
        chat_key: str,
        quiz_id: str,
        question_id: str,
        order: tuple[int, ...],
        locale: str,
        created_at: datetime,
        closes_at: datetime | None = None,
        run_id: int | None = None,
        kind: str = "quiz",
        owner_key: str | None = None,
    ) -> PostRecord:
        post_id = await self._effect(ops.insert_post, NewPost(
            chat_key, quiz_id, question_id, tuple(order), locale, created_at, closes_at, run_id,
            kind, owner_key,
        ))
        post = await self.get_post(post_id)
        assert post is not None
        return post

    @abstractmethod
    async def open(self) -> None: ...

    @abstractmethod
    async def close(self) -> None: ...

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @staticmethod
    def _board_day(day: date) -> Any:
        """A board's first day as the backend's boards take it."""
        return day

    @abstractmethod
    async def _roll_week(self, until: Any) -> None:
        """Move the week window to end on `until` (boards.Roll): a write of the aggregates."""

    async def chats(self) -> list[tuple[str, str]]:
        result: list[tuple[str, str]] = await self._read(queries.chats)
        return result

    # posts -----------------------------------------------------------------------------
    async def bind_ref(self, post_id: int, *refs: str) -> None:
        await self._write(ops.bind_ref, post_id, *refs)

    async def post_by_ref(self, ref: str) -> PostRecord | None:
        result: PostRecord | None = await self._read(queries.post_by_ref, ref)
        return result

    async def refs(self, post_id: int) -> tuple[str, ...]:
        result: tuple[str, ...] = await self._read(queries.refs, post_id)
        return result

    async def close_post(self, post_id: int, when: datetime, quiet: bool = False) -> bool:
        closed = bool(await self._write(
            ops.close_post, post_id, when, quiet))
        self._changed()
        self._posts.pop(post_id)
        return closed

    async def mark_summary_posted(self, post_id: int, when: datetime) -> None:
        await self._write(ops.mark_summary_posted, post_id, when)

    async def unposted_summaries(
        self, closed_after: datetime, closed_before: datetime
    ) -> list[PostRecord]:
        result: list[PostRecord] = await self._read(
            queries.unposted_summaries, closed_after,
            closed_before)
        return result

    async def take_lease(self, name: str, holder: str, until: datetime, now: datetime) -> bool:
        return bool(await self._write(
            ops.take_lease, name, holder, until, now))

    async def release_lease(self, name: str, holder: str) -> None:
        await self._write(ops.release_lease, name, holder)

    async def open_posts(
        self, chat_key: str | None = None, due_before: datetime | None = None,
        kind: str | None = None,
    ) -> list[PostRecord]:
        due = None if due_before is None else due_before
        result: list[PostRecord] = await self._read(
            queries.open_posts, chat_key, due, kind)
        return result

    async def posted_questions(
        self, chat_key: str, kind: str | None = None
    ) -> dict[tuple[str, str], int]:
        result: dict[tuple[str, str], int] = await self._read(
            queries.posted_questions, chat_key, kind)
        return result

    async def shown_orders(
        self, chat_key: str, quiz_id: str | None = None
    ) -> dict[tuple[str, str], tuple[int, ...]]:
        result: dict[tuple[str, str], tuple[int, ...]] = await self._read(
            queries.shown_orders, chat_key, quiz_id)
        return result

    # answers ---------------------------------------------------------------------------
    async def record_answer(
        self, answer: AnswerRecord
    ) -> tuple[RecordOutcome, AnswerRecord | None]:
        """One write: the answer, and its person (answer.name) unless known unchanged. The
        person's language comes back with it if it is not cached, so the reply that follows
        reads nothing."""
        key, name = answer.person_key, answer.name
        upsert = self._known_people.get(key) != name if name else key not in self._known_people
        read_locale = self._person_locales.get(key) is None
        generation = self._generation
        outcome, earlier, locale = await self._record(answer, upsert, read_locale)
        if locale is not None and generation == self._generation:
            self._person_locales.put(key, locale[0])
        if upsert and name and outcome == "inserted":
            self._known_people.put(key, name)
        return outcome, earlier

    @abstractmethod
    async def _record(
        self, answer: AnswerRecord, upsert_person: bool, read_locale: bool
    ) -> tuple[RecordOutcome, AnswerRecord | None, tuple[str | None] | None]:
        """The backend's one write of an answer (the hot path): its outcome, the earlier
        answer of a duplicate, and if `read_locale` the person's stored language (a 1-tuple)."""

    async def answers_for_post(self, post_id: int) -> list[AnswerRecord]:
        result: list[AnswerRecord] = await self._read(
            queries.answers_for_post, post_id)
        return result

    async def answer_count(self, post_id: int) -> int:
        return int(await self._read(queries.answer_count, post_id))

    async def answer_of(self, post_id: int, person_key: str) -> AnswerRecord | None:
        result: AnswerRecord | None = await self._read(
            queries.answer, post_id, person_key)
        return result

    async def person_history(self, person_key: str) -> dict[tuple[str, str], bool]:
        result: dict[tuple[str, str], bool] = await self._read(
            queries.person_history, person_key)
        return result

    async def item_responses(
        self, quiz_id: str | None = None, chat_key: str | None = None
    ) -> list[ItemResponse]:
        result: list[ItemResponse] = await self._read(
            queries.item_responses, quiz_id, chat_key)
        return result

    # quiz runs -------------------------------------------------------------------------
    async def create_run(
        self, person_key: str, chat_key: str, quiz_id: str, questions: tuple[str, ...],
        locale: str, started_at: datetime,
    ) -> RunRecord:
        run_id = await self._write(
            ops.create_run, person_key, chat_key, quiz_id, tuple(questions),
            locale, started_at,
        )
        run = await self.get_run(run_id)
        assert run is not None
        return run

    async def active_run(self, person_key: str, chat_key: str) -> RunRecord | None:
        result: RunRecord | None = await self._read(
            queries.active_run, person_key, chat_key)
        return result

    async def get_run(self, run_id: int) -> RunRecord | None:
        result: RunRecord | None = await self._read(queries.run, run_id)
        return result

    async def finish_run(self, run_id: int, when: datetime) -> None:
        await self._write(ops.finish_run, run_id, when)

    async def run_posts(self, run_id: int) -> list[PostRecord]:
        result: list[PostRecord] = await self._read(queries.run_posts, run_id)
        return result

    # boards and stats ------------------------------------------------------------------
    async def leaderboard(
        self, chat_key: str | None, since: datetime | None, limit: int, person_key: str | None
    ) -> tuple[list[ScoreRow], ScoreRow | None]:
        chat = chat_key if chat_key is not None else "*"
        day = None if since is None else self._board_day(since.astimezone(UTC).date())
        board = await self._read(self.boards.leaderboard, chat, day, limit, person_key)
        if isinstance(board, self.boards.Roll):  # the first week board of a day with no answers
            await self._roll_week(board.until)
            board = await self._read(self.boards.leaderboard, chat, day, limit, person_key, False)
        assert not isinstance(board, self.boards.Roll)
        result: tuple[list[ScoreRow], ScoreRow | None] = board
        return result

    async def person_totals(self, person_key: str) -> dict[str, tuple[int, int]]:
        result: dict[str, tuple[int, int]] = await self._read(
            queries.person_totals, person_key)
        return result

    async def person_streaks(self, person_key: str) -> tuple[int, int]:
        result: tuple[int, int] = await self._read(
            self.boards.person_streaks, person_key)
        return result

    # daily schedules -------------------------------------------------------------------
    async def set_schedule(self, schedule: Schedule, updated_by: str | None = None) -> None:
        updated_at = schedule.updated_at or datetime.now(UTC)
        await self._effect(ops.set_schedule, schedule, updated_at, updated_by)

    async def delete_schedule(self, chat_key: str) -> bool:
        return bool(await self._effect(ops.delete_schedule, chat_key))

    async def get_schedule(self, chat_key: str) -> Schedule | None:
        result: Schedule | None = await self._read(queries.schedule, chat_key)
        return result

    async def schedules(self) -> list[Schedule]:
        result: list[Schedule] = await self._read(queries.schedules)
        return result

    async def mark_daily_published(self, post_id: int, when: datetime) -> None:
        await self._write(ops.mark_daily_published, post_id, when)

    async def unpublished_dailies(self, claimed_before: datetime) -> list[PostRecord]:
        """Claimed days whose question never reached the chat (a crash in between)."""
        result: list[PostRecord] = await self._read(
            queries.unpublished_dailies, claimed_before)
        return result

    async def daily_day_of(self, chat_key: str, local_date: date) -> int | None:
        result: int | None = await self._read(
            queries.daily_day_of, chat_key, local_date)
        return result

    async def daily_days(self, person_key: str) -> tuple[list[date], date | None]:
        days = await self.daily_days_for([person_key])
        return days[person_key]

    async def daily_days_for(
        self, person_keys: Sequence[str]
    ) -> dict[str, tuple[list[date], date | None]]:
        result: dict[str, tuple[list[date], date | None]] = await self._read(
            self.boards.daily_days_for, list(person_keys))
        return result

    # uploaded files ----------------------------------------------------------------------
    async def get_upload(self, key: str) -> str | None:
        result: str | None = await self._read(rounds.upload, key)
        return result

    async def set_upload(self, key: str, ref: str, when: datetime) -> None:
        await self._write(rounds.set_upload, key, ref, when)

    # chat settings and rounds ----------------------------------------------------------
    async def get_chat_settings(self, chat_key: str) -> ChatSettingsRecord | None:
        result: ChatSettingsRecord | None = await self._read(
            rounds.chat_settings, chat_key)
        return result

    async def set_chat_settings(
        self, settings: ChatSettingsRecord, when: datetime, updated_by: str | None = None
    ) -> None:
        await self._effect(
            rounds.set_chat_settings, settings, when, updated_by)

    async def create_round(
        self, chat_key: str, selector: str | None, total: int, mode: str | None, locale: str,
        started_at: datetime,
    ) -> RoundRecord:
        round_id = await self._effect(
            rounds.create_round, chat_key, selector, total, mode, locale,
            started_at)
        record = await self.get_round(round_id)
        assert record is not None
        return record

    async def add_round_post(self, round_id: int, step: int, post: NewPost) -> PostRecord | None:
        post_id = await self._write(rounds.add_round_post, round_id, step, post)
        return None if post_id is None else await self.get_post(post_id)

    async def get_round(self, round_id: int) -> RoundRecord | None:
        result: RoundRecord | None = await self._read(
            rounds.get_round, round_id)
        return result

    async def active_rounds(self, chat_key: str | None = None) -> list[RoundRecord]:
        result: list[RoundRecord] = await self._read(
            rounds.active_rounds, chat_key)
        return result

    async def finish_round(self, round_id: int, when: datetime) -> bool:
        return bool(await self._write(
            rounds.finish_round, round_id, when))

    async def unposted_round_summaries(
        self, finished_after: datetime, finished_before: datetime
    ) -> list[RoundRecord]:
        result: list[RoundRecord] = await self._read(
            rounds.unposted_round_summaries, finished_after, finished_before)
        return result

    async def mark_round_summary_posted(self, round_id: int, when: datetime) -> None:
        await self._write(rounds.mark_round_summary_posted, round_id, when)

    # spaced review ---------------------------------------------------------------------
    async def review_answers(self, person_key: str) -> list[ReviewAnswer]:
        result: list[ReviewAnswer] = await self._read(
            review.review_answers, person_key)
        return result

    async def set_reminder(self, reminder: Schedule) -> None:
        updated_at = reminder.updated_at or datetime.now(UTC)
        await self._effect(review.set_reminder, reminder, updated_at)

    async def delete_reminder(self, person_key: str) -> bool:
        return bool(await self._effect(review.delete_reminder, person_key))

    async def get_reminder(self, person_key: str) -> Schedule | None:
        result: Schedule | None = await self._read(review.reminder, person_key)
        return result

    async def reminders(self) -> list[Schedule]:
        result: list[Schedule] = await self._read(review.reminders)
        return result

    async def claim_reminder(self, person_key: str, local_date: date, when: datetime) -> bool:
        return bool(await self._write(
            review.claim_reminder, person_key, local_date,
            when))

    async def unsent_reminders(
        self, claimed_after: datetime, claimed_before: datetime
    ) -> list[tuple[str, date]]:
        result: list[tuple[str, date]] = await self._read(
            review.unsent_reminders, claimed_after, claimed_before)
        return result

    async def mark_reminder_sent(self, person_key: str, local_date: date, when: datetime) -> None:
        await self._write(review.mark_reminder_sent, person_key, local_date, when)

    # steps of a delivery (bot/core/delivery.py) ----------------------------------------
    async def delivery_step_done(self, name: str, step: str, when: datetime) -> None:
        await self._write(deliveries.delivery_step_done, name, step, when)

    async def forget_delivery_step(self, name: str, step: str) -> None:
        await self._write(deliveries.forget_delivery_step, name, step)

    async def delivery_steps(self, name: str) -> frozenset[str]:
        result: frozenset[str] = await self._read(deliveries.delivery_steps, name)
        return result

    async def forget_delivery_steps(self, done_before: datetime) -> int:
        return int(await self._write(deliveries.forget_delivery_steps, done_before))

    # problem reports (bot/core/problem_reports.py) -------------------------------------
    async def add_problem_report(
        self, report: NewProblemReport, *, since: datetime, daily_cap: int, max_chars: int
    ) -> tuple[ReportOutcome, ProblemReportRecord | None]:
        outcome, report_id = await self._effect(
            reports.add_problem_report, report, since, daily_cap,
            max_chars)
        if report_id is None:
            return outcome, None
        return outcome, await self._read(reports.problem_report, report_id)

    async def problem_reports(
        self, *, open_only: bool = True, quiz_id: str | None = None,
        chat_key: str | None = None,
    ) -> list[ProblemReportRecord]:
        result: list[ProblemReportRecord] = await self._read(
            reports.problem_reports, open_only, quiz_id, chat_key)
        return result

    async def resolve_problem_report(
        self, report_id: int, when: datetime, note: str | None = None
    ) -> ResolveOutcome:
        result: ResolveOutcome = await self._effect(
            reports.resolve_problem_report, report_id, when, note)
        return result

    async def last_answered(self, person_key: str, chat_key: str) -> tuple[str, str] | None:
        result: tuple[str, str] | None = await self._read(
            reports.last_answered, person_key, chat_key)
        return result

    # authoring (bot/core/authoring.py) -------------------------------------------------
    async def get_draft(self, author_key: str) -> DraftRecord | None:
        result: DraftRecord | None = await self._read(drafts.draft, author_key)
        return result

    async def create_draft(self, author_key: str, locale: str, when: datetime) -> bool:
        return bool(await self._effect(
            drafts.create_draft, author_key, locale, when))

    async def add_draft_question(
        self, author_key: str, locale: str, question: str, ref: str, when: datetime
    ) -> int:
        return int(await self._write(drafts.add_draft_question, author_key,
                                     locale, question, ref, when))

    async def set_draft_photo(
        self, author_key: str, locale: str, photo: bytes, when: datetime
    ) -> None:
        await self._effect(drafts.set_draft_photo, author_key, locale, photo, when)

    async def undo_draft_question(self, author_key: str) -> int | None:
        result: int | None = await self._effect(
            drafts.undo_draft_question, author_key)
        return result

    async def name_draft(self, author_key: str, title: str) -> bool:
        return bool(await self._effect(drafts.name_draft, author_key, title))

    async def delete_draft(self, author_key: str) -> bool:
        return bool(await self._effect(drafts.delete_draft, author_key))

    async def publish_draft(self, pack: AuthoredPackRecord) -> bool:
        return bool(await self._effect(drafts.publish_draft, pack))

    async def authored_packs(self) -> list[AuthoredPackRecord]:
        result: list[AuthoredPackRecord] = await self._read(drafts.authored_packs)
        return result

    async def withdraw_pack(self, quiz_id: str, when: datetime) -> bool:
        return bool(await self._effect(drafts.withdraw_pack, quiz_id, when))

    async def authored_packs_version(self) -> str:
        return str(await self._read(drafts.authored_packs_version))

    # a person's data (bot/core/privacy.py) ----------------------------------------------
    async def person_data(self, person_key: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._read(privacy.person_data, person_key)
        return result

    async def delete_person(self, person_key: str, private_chats: Sequence[str] = ()) -> bool:
        deleted = bool(await self._effect(self.delete_person_op, person_key,
                                         tuple(private_chats)))
        # nothing of theirs may come back from this process's caches. Other processes on
        # PostgreSQL hear it (NOTIFY); on SQLite their cached languages expire, and a person
        # they still know comes back only by answering (sqlite/ops.py)
        self._changed()
        self._known_people.pop(person_key)
        self._person_locales.pop(person_key)
        for chat in (person_key, *private_chats):
            self._known_chats.pop(chat)
            self._chat_rows.pop(chat)
        self._posts.clear()
        return deleted

    # the organiser's dashboard (bot/web) ------------------------------------------------
    async def dashboard_generation(self, chat_key: str) -> int:
        return int(await self._read(dashboard.generation, chat_key))

    async def revoke_dashboard(self, chat_key: str) -> int:
        return int(await self._write(dashboard.revoke, chat_key))

    async def chat_totals(self, chat_key: str) -> tuple[int, int, int]:
        result: tuple[int, int, int] = await self._read(dashboard.chat_totals, chat_key)
        return result

    async def chat_days(self, chat_key: str, since: date) -> list[DayCount]:
        result: list[DayCount] = await self._read(dashboard.chat_days, chat_key, since)
        return result

    async def chat_people(
        self, chat_key: str, after: PeopleCursor | None, limit: int
    ) -> list[PersonTotals]:
        result: list[PersonTotals] = await self._read(dashboard.chat_people, chat_key, after,
                                                      limit)
        return result

    async def board_people(
        self, chat_key: str, since: date | None, after: PeopleCursor | None, limit: int
    ) -> list[PersonTotals] | None:
        result: list[PersonTotals] | None = await self._read(
            dashboard.board_people, chat_key, since, after, limit)
        return result

    async def people_activity(
        self, chat_key: str, person_keys: Sequence[str]
    ) -> dict[str, tuple[datetime, dict[str, tuple[int, int]]]]:
        result: dict[str, tuple[datetime, dict[str, tuple[int, int]]]] = await self._read(
            dashboard.people_activity, chat_key, list(person_keys))
        return result

    async def chat_answers(
        self, chat_key: str, after: AnswerCursor | None, limit: int,
        person_key: str | None = None,
    ) -> list[AnswerRow]:
        result: list[AnswerRow] = await self._read(dashboard.chat_answers, chat_key, after,
                                                   limit, person_key)
        return result

    async def chat_streaks(self, chat_key: str) -> tuple[int, int, int]:
        result: tuple[int, int, int] = await self._read(day_runs.streaks, chat_key)
        return result

    async def chat_day_streaks(self, chat_key: str, person_keys: Sequence[str]
                               ) -> dict[str, int]:
        result: dict[str, int] = await self._read(day_runs.current_runs, chat_key, person_keys)
        return result

    async def item_quizzes(self, chat_key: str) -> list[str]:
        result: list[str] = await self._read(item_figures.item_quizzes, chat_key)
        return result

    async def item_figures(self, chat_key: str, quiz_id: str | None = None) -> ItemFigures:
        result: ItemFigures = await self._read(item_figures.item_figures, chat_key, quiz_id)
        return result

    async def open_reports(
        self, chat_key: str, after: int | None, limit: int
    ) -> list[ProblemReportRecord]:
        result: list[ProblemReportRecord] = await self._read(
            dashboard.open_reports, chat_key, after, limit)
        return result

    async def open_report_count(self, chat_key: str) -> int:
        return int(await self._read(dashboard.open_report_count, chat_key))

    async def open_reports_per_question(self, chat_key: str, quiz_id: str) -> dict[str, int]:
        result: dict[str, int] = await self._read(
            dashboard.open_reports_per_question, chat_key, quiz_id)
        return result

    async def person_cards(self, person_key: str) -> list[CardRecord]:
        result: list[CardRecord] = await self._read(cards.person_cards, person_key)
        return result

    async def recent_answers(self, person_key: str, limit: int) -> list[ReviewAnswer]:
        result: list[ReviewAnswer] = await self._read(review.recent_answers, person_key, limit)
        return result

    async def chat_cards(self, chat_key: str, today: date) -> tuple[int, int]:
        result: tuple[int, int] = await self._read(cards.chat_cards, chat_key, today)
        return result

    async def _count_cards(self) -> None:
        """At the end of open(): replay the people a migration left pending into the card
        table (cards.py), a few hundred per transaction; nothing once done. A failure
        closes the storage again."""
        try:
            while await self._write(cards.count_pending):
                pass
        except BaseException:
            await self.close()
            raise
