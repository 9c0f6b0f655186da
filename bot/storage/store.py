"""Store: every storage operation the two databases share, written once: the SQL in
queries.py, ops.py, rounds.py, review.py, drafts.py, problem_reports.py and privacy.py over a
connection's Sql (sql.py), run through a backend's `_read` / `_write` (cached_storage.py).

An operation that is only run is declared, not forwarded: `post_by_ref = read(queries.post_by_ref)`
(declared.py) is the port's method, its signature the operation's, checked by mypy against the
port. A method is written out only where it does more: caches, several operations, defaults.

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
    AnswerRecord,
    NewPost,
    NewProblemReport,
    PostRecord,
    ProblemReportRecord,
    RecordOutcome,
    ReportOutcome,
    RoundRecord,
    RunRecord,
    ScoreRow,
)
from bot.core.schedule import Schedule
from bot.storage import (
    assignments,
    cards,
    chat_kinds,
    dashboard,
    day_runs,
    deliveries,
    drafts,
    fsrs_params,
    item_figures,
    misconceptions,  # a chat's misconceptions
    ops,
    privacy,
    queries,
    review,
    rounds,
    token_budget,
)
from bot.storage import difficulty as difficulty_ratings  # questions at the right difficulty
from bot.storage import problem_reports as reports
from bot.storage.cached_storage import CachedStorage
from bot.storage.declared import effect, read, write
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

    chats = read(queries.chats)
    chat_kind = read(chat_kinds.chat_kind)  # the platform's kind of a chat (issue 36)
    set_chat_kind = write(chat_kinds.set_chat_kind)

    # posts -----------------------------------------------------------------------------
    async def bind_ref(self, post_id: int, *refs: str) -> None:
        await self._write(ops.bind_ref, post_id, *refs)

    post_by_ref = read(queries.post_by_ref)
    refs = read(queries.refs)

    async def close_post(self, post_id: int, when: datetime, quiet: bool = False) -> bool:
        closed = bool(await self._write(
            ops.close_post, post_id, when, quiet))
        self._changed()
        self._posts.pop(post_id)
        return closed

    mark_summary_posted = write(ops.mark_summary_posted)
    unposted_summaries = read(queries.unposted_summaries)
    take_lease = write(ops.take_lease)
    release_lease = write(ops.release_lease)
    lease_sends = write(token_budget.lease_sends)  # a token's shared send budget (issue 36)

    open_posts = read(queries.open_posts)
    posted_questions = read(queries.posted_questions)
    shown_orders = read(queries.shown_orders)

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

    answers_for_post = read(queries.answers_for_post)
    answer_count = read(queries.answer_count)
    answer_of = read(queries.answer)
    person_history = read(queries.person_history)
    missed_answers = read(queries.missed_answers)
    item_responses = read(queries.item_responses)

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

    active_run = read(queries.active_run)
    get_run = read(queries.run)
    finish_run = write(ops.finish_run)
    run_posts = read(queries.run_posts)

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

    person_totals = read(queries.person_totals)
    person_calibration = read(queries.person_calibration)

    async def person_streaks(self, person_key: str) -> tuple[int, int]:
        result: tuple[int, int] = await self._read(
            self.boards.person_streaks, person_key)
        return result

    # daily schedules -------------------------------------------------------------------
    async def set_schedule(self, schedule: Schedule, updated_by: str | None = None) -> None:
        updated_at = schedule.updated_at or datetime.now(UTC)
        await self._effect(ops.set_schedule, schedule, updated_at, updated_by)

    delete_schedule = effect(ops.delete_schedule)
    get_schedule = read(queries.schedule)
    schedules = read(queries.schedules)
    mark_daily_published = write(ops.mark_daily_published)
    # Claimed days whose question never reached the chat (a crash in between).
    unpublished_dailies = read(queries.unpublished_dailies)
    daily_day_of = read(queries.daily_day_of)

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
    get_upload = read(rounds.upload)
    set_upload = write(rounds.set_upload)

    # chat settings and rounds ----------------------------------------------------------
    get_chat_settings = read(rounds.chat_settings)
    set_chat_settings = effect(rounds.set_chat_settings)

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

    get_round = read(rounds.get_round)
    active_rounds = read(rounds.active_rounds)
    finish_round = write(rounds.finish_round)
    unposted_round_summaries = read(rounds.unposted_round_summaries)
    mark_round_summary_posted = write(rounds.mark_round_summary_posted)

    # spaced review ---------------------------------------------------------------------
    review_answers = read(review.review_answers)

    async def set_reminder(self, reminder: Schedule) -> None:
        updated_at = reminder.updated_at or datetime.now(UTC)
        await self._effect(review.set_reminder, reminder, updated_at)

    delete_reminder = effect(review.delete_reminder)
    get_reminder = read(review.reminder)
    reminders = read(review.reminders)
    claim_reminder = write(review.claim_reminder)
    unsent_reminders = read(review.unsent_reminders)
    mark_reminder_sent = write(review.mark_reminder_sent)
    # review tuned to each person (fsrs_params.py)
    person_parameters = read(fsrs_params.person_parameters)
    review_fit = read(fsrs_params.review_fit)
    save_fit = write(fsrs_params.save_fit)
    fits_due = read(fsrs_params.fits_due)

    # steps of a delivery (bot/core/delivery.py) ----------------------------------------
    delivery_step_done = write(deliveries.delivery_step_done)
    forget_delivery_step = write(deliveries.forget_delivery_step)
    delivery_steps = read(deliveries.delivery_steps)
    forget_delivery_steps = write(deliveries.forget_delivery_steps)

    # assignments (bot/core/assignments.py) --------------------------------------------
    create_assignment = effect(assignments.create_assignment)
    assignment = read(assignments.assignment)
    chat_assignments = read(assignments.chat_assignments)
    cancel_assignment = effect(assignments.cancel_assignment)
    add_assignment_run = write(assignments.add_assignment_run)
    assignment_runs = read(assignments.assignment_runs)
    answered_in_assignment = read(assignments.answered_in_assignment)
    assignment_progress = read(assignments.assignment_progress)
    assignment_questions = read(assignments.assignment_questions)
    assignments_to_remind = read(assignments.assignments_to_remind)
    claim_assignment_reminder = write(assignments.claim_assignment_reminder)
    unsent_assignment_reminders = read(assignments.unsent_assignment_reminders)
    mark_assignment_reminder_sent = write(assignments.mark_assignment_reminder_sent)
    assignments_due = read(assignments.assignments_due)
    claim_assignment_summary = write(assignments.claim_assignment_summary)
    unposted_assignment_summaries = read(assignments.unposted_assignment_summaries)
    mark_assignment_summary_posted = write(assignments.mark_assignment_summary_posted)

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

    resolve_problem_report = effect(reports.resolve_problem_report)
    last_answered = read(reports.last_answered)

    # authoring (bot/core/authoring.py) -------------------------------------------------
    get_draft = read(drafts.draft)
    create_draft = effect(drafts.create_draft)
    add_draft_question = write(drafts.add_draft_question)
    set_draft_photo = effect(drafts.set_draft_photo)
    undo_draft_question = effect(drafts.undo_draft_question)
    name_draft = effect(drafts.name_draft)
    delete_draft = effect(drafts.delete_draft)
    publish_draft = effect(drafts.publish_draft)
    authored_packs = read(drafts.authored_packs)
    withdraw_pack = effect(drafts.withdraw_pack)
    authored_packs_version = read(drafts.authored_packs_version)

    # a person's data (bot/core/privacy.py) ----------------------------------------------
    person_data = read(privacy.person_data)

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
    dashboard_generation = read(dashboard.generation)
    revoke_dashboard = write(dashboard.revoke)
    chat_totals = read(dashboard.chat_totals)
    chat_days = read(dashboard.chat_days)
    chat_people = read(dashboard.chat_people)
    board_people = read(dashboard.board_people)

    async def people_activity(
        self, chat_key: str, person_keys: Sequence[str]
    ) -> dict[str, tuple[datetime, dict[str, tuple[int, int]]]]:
        result: dict[str, tuple[datetime, dict[str, tuple[int, int]]]] = await self._read(
            dashboard.people_activity, chat_key, list(person_keys))
        return result

    chat_answers = read(dashboard.chat_answers)
    chat_streaks = read(day_runs.streaks)
    chat_day_streaks = read(day_runs.current_runs)
    item_quizzes = read(item_figures.item_quizzes)
    item_figures = read(item_figures.item_figures)
    open_reports = read(dashboard.open_reports)
    open_report_count = read(dashboard.open_report_count)
    open_reports_per_question = read(dashboard.open_reports_per_question)
    person_cards = read(cards.person_cards)
    recent_answers = read(review.recent_answers)
    chat_cards = read(cards.chat_cards)
    # the difficulty model's ratings (bot/storage/difficulty.py)
    ability = read(difficulty_ratings.ability)
    question_difficulties = read(difficulty_ratings.question_difficulties)
    # the answers a chat's misconceptions are counted from (bot/storage/misconceptions.py)
    chosen_options = read(misconceptions.chosen_options)

    async def _count_cards(self) -> None:
        """At the end of open(): replay the people a migration left pending into the card
        table (cards.py), a few hundred per transaction; nothing once done. A failure
        closes the storage again."""
        try:
            while await self._write(cards.count_pending):
                pass
            while await self._write(difficulty_ratings.count_pending):  # the ratings too
                pass
        except BaseException:
            await self.close()
            raise
