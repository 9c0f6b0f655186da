"""MemoryStorage: every storage operation on plain Python objects (tables.py).

Each method runs to its end without awaiting anything, so under asyncio it is one atomic
step: what a database transaction gives the other backends. Times are kept as aware UTC
datetimes; boards and streaks are summed from the answers when read, so `materialize` has
nothing to do.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable, Coroutine, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Concatenate, ParamSpec, TypeVar

from bot.core.ports import (
    AlreadyHandled,
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
    unclaimed_command,
)
from bot.core.schedule import Schedule
from bot.storage.aggregation import aggregate, streaks
from bot.storage.cards import Kept, Key, replayed
from bot.storage.day_runs import Run, continued
from bot.storage.item_figures import figures_of
from bot.storage.memory import privacy
from bot.storage.memory.live import LiveTables, MemoryLive
from bot.storage.memory.tables import Answer, Chat, Daily, Draft, Person, Round
from bot.storage.problem_reports import appended
from bot.storage.store import PostCreation

STALE_LEASE = timedelta(days=1)  # leases expired this long ago are dropped (as in SQL)


def _utc(when: datetime) -> datetime:
    return when.astimezone(UTC)


P = ParamSpec("P")
R = TypeVar("R")


def effect(
    method: Callable[Concatenate[MemoryStorage, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[MemoryStorage, P], Coroutine[Any, Any, R]]:
    """A write that is a command's effect: claims the command's key with it, as the
    databases do in one transaction (storage/cache.py `_effect`)."""

    @functools.wraps(method)
    async def claimed(self: MemoryStorage, /, *args: P.args, **kwargs: P.kwargs) -> R:
        command = unclaimed_command()
        if command is None:
            return await method(self, *args, **kwargs)
        handled = self._db.handled_commands
        if command.key in handled:
            raise AlreadyHandled(command.key)
        handled[command.key] = _utc(command.at)
        try:
            result = await method(self, *args, **kwargs)
        except BaseException:
            del handled[command.key]  # rolled back with the effect
            raise
        command.claimed = True
        return result

    return claimed


def _minute(at: time) -> time:
    return time(at.hour, at.minute)  # schedules keep HH:MM, as the SQL schemas do


@dataclasses.dataclass
class MemoryDatabase:
    """What a database holds; shared by every MemoryStorage opened on it."""

    persons: dict[str, Person] = dataclasses.field(default_factory=dict)
    chats: dict[str, Chat] = dataclasses.field(default_factory=dict)
    posts: dict[int, PostRecord] = dataclasses.field(default_factory=dict)
    summaries: dict[int, datetime] = dataclasses.field(default_factory=dict)  # post: posted
    refs: dict[str, int] = dataclasses.field(default_factory=dict)
    answers: dict[tuple[int, str], Answer] = dataclasses.field(default_factory=dict)
    runs: dict[int, RunRecord] = dataclasses.field(default_factory=dict)
    schedules: dict[str, Schedule] = dataclasses.field(default_factory=dict)
    dailies: dict[tuple[str, date], Daily] = dataclasses.field(default_factory=dict)
    leases: dict[str, tuple[str, datetime]] = dataclasses.field(default_factory=dict)
    settings: dict[str, ChatSettingsRecord] = dataclasses.field(default_factory=dict)
    uploads: dict[str, str] = dataclasses.field(default_factory=dict)
    rounds: dict[int, Round] = dataclasses.field(default_factory=dict)
    reminders: dict[str, Schedule] = dataclasses.field(default_factory=dict)
    reminder_days: set[tuple[str, date]] = dataclasses.field(default_factory=set)
    # (person, day) -> (claimed at, sent at)
    reminder_sends: dict[tuple[str, date], tuple[datetime, datetime | None]] = \
        dataclasses.field(default_factory=dict)
    delivery_steps: dict[tuple[str, str], datetime] = dataclasses.field(default_factory=dict)
    reports: dict[int, ProblemReportRecord] = dataclasses.field(default_factory=dict)
    drafts: dict[str, Draft] = dataclasses.field(default_factory=dict)
    packs: dict[str, AuthoredPackRecord] = dataclasses.field(default_factory=dict)
    dashboards: dict[str, int] = dataclasses.field(default_factory=dict)  # chat: generation
    handled_commands: dict[str, datetime] = dataclasses.field(default_factory=dict)
    live: LiveTables = dataclasses.field(default_factory=LiveTables)

    @property
    def answer_rows(self) -> list[Answer]:
        return list(self.answers.values())
    ids: itertools.count[int] = dataclasses.field(default_factory=lambda: itertools.count(1))

    def next_id(self) -> int:
        return next(self.ids)


class MemoryStorage(PostCreation, MemoryLive):
    def __init__(self, database: MemoryDatabase | None = None) -> None:
        self.database = database or MemoryDatabase()
        self._open = False

    @property
    def _db(self) -> MemoryDatabase:
        if not self._open:
            raise RuntimeError("storage is not open")
        return self.database

    # lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:
        self._open = True

    async def close(self) -> None:
        self._open = False

    async def __aenter__(self) -> MemoryStorage:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def materialize(self) -> None:
        """Boards are summed when read: nothing lags."""
        self._db  # noqa: B018  # like the others: only while open

    # people and chats ------------------------------------------------------------------
    def _person(self, key: str) -> Person:
        return self._db.persons.setdefault(key, Person())

    def _chat(self, key: str) -> Chat:
        return self._db.chats.setdefault(key, Chat())

    async def upsert_person(self, key: str, name: str) -> None:
        person = self._person(key)
        if name:  # a blank name keeps the stored one
            person.name = name

    async def upsert_chat(self, key: str, title: str, platform_locale: str | None = None) -> None:
        chat = self._chat(key)
        chat.title = title
        if platform_locale is not None:
            chat.platform_locale = platform_locale

    @effect
    async def set_person_locale(self, key: str, locale: str | None) -> None:
        self._person(key).locale = locale

    async def person_locale(self, key: str) -> str | None:
        person = self._db.persons.get(key)
        return None if person is None else person.locale

    async def person_name(self, person_key: str) -> str | None:
        person = self._db.persons.get(person_key)
        return None if person is None else person.name

    @effect
    async def set_chat_locale(self, key: str, locale: str | None) -> None:
        self._chat(key).locale = locale

    async def chat_locale(self, key: str) -> str | None:
        chat = self._db.chats.get(key)
        return None if chat is None else chat.locale

    async def chat_platform_locale(self, key: str) -> str | None:
        chat = self._db.chats.get(key)
        return None if chat is None else chat.platform_locale

    async def chat_title(self, key: str) -> str | None:
        chat = self._db.chats.get(key)
        return None if chat is None else chat.title

    async def chats(self) -> list[tuple[str, str]]:
        return [(key, chat.title) for key, chat in sorted(self._db.chats.items())]

    async def migrate_chat(self, old: str, new: str) -> bool:
        db = self._db
        moved = db.chats.pop(old, None)
        if moved is None:
            return False
        if (target := db.chats.get(new)) is None:
            db.chats[new] = moved
        elif target.locale is None:
            target.locale = moved.locale
        for post_id, post in db.posts.items():
            if post.chat_key == old:
                db.posts[post_id] = dataclasses.replace(post, chat_key=new)
        for answer in db.answers.values():
            if answer.chat_key == old:
                answer.chat_key = new
        for run_id, run in db.runs.items():
            if run.chat_key == old:
                db.runs[run_id] = dataclasses.replace(run, chat_key=new)
        if (schedule := db.schedules.pop(old, None)) is not None and new not in db.schedules:
            db.schedules[new] = dataclasses.replace(schedule, chat_key=new)
        for chat_key, day in [k for k in db.dailies if k[0] == old]:
            daily = db.dailies.pop((chat_key, day))
            db.dailies.setdefault((new, day), daily)
        if (settings := db.settings.pop(old, None)) is not None and new not in db.settings:
            db.settings[new] = dataclasses.replace(settings, chat_key=new)
        for record in db.rounds.values():
            if record.chat_key == old:
                record.chat_key = new
        for report_id, report in db.reports.items():
            if report.chat_key == old:
                db.reports[report_id] = dataclasses.replace(report, chat_key=new)
        return True

    # posts -----------------------------------------------------------------------------
    def _insert_post(self, new: NewPost) -> PostRecord:
        db = self._db
        self._chat(new.chat_key)
        post = PostRecord(
            db.next_id(), new.chat_key, new.quiz_id, new.question_id, tuple(new.order),
            new.locale, _utc(new.created_at),
            None if new.closes_at is None else _utc(new.closes_at), None, new.run_id,
            new.kind, new.owner_key,
        )
        db.posts[post.id] = post
        return post

    @effect
    async def _create_post(self, new: NewPost) -> PostRecord:
        return self._insert_post(new)

    async def get_post(self, post_id: int) -> PostRecord | None:
        return self._db.posts.get(post_id)

    async def bind_ref(self, post_id: int, *refs: str) -> None:
        for ref in refs:
            self._db.refs[ref] = post_id

    async def post_by_ref(self, ref: str) -> PostRecord | None:
        post_id = self._db.refs.get(ref)
        return None if post_id is None else self._db.posts.get(post_id)

    async def refs(self, post_id: int) -> tuple[str, ...]:
        return tuple(sorted(ref for ref, pid in self._db.refs.items() if pid == post_id))

    async def close_post(self, post_id: int, when: datetime, quiet: bool = False) -> bool:
        db = self._db
        post = db.posts.get(post_id)
        if post is None or post.closed_at is not None:
            return False
        db.posts[post_id] = dataclasses.replace(post, closed_at=_utc(when))
        if quiet:
            db.summaries[post_id] = _utc(when)
        return True

    async def mark_summary_posted(self, post_id: int, when: datetime) -> None:
        if post_id in self._db.posts:
            self._db.summaries.setdefault(post_id, _utc(when))

    async def unposted_summaries(
        self, closed_after: datetime, closed_before: datetime
    ) -> list[PostRecord]:
        db = self._db
        return [
            post for post in self._posts_by_id()
            if post.closed_at is not None and post.id not in db.summaries
            and closed_after < post.closed_at <= closed_before and post.run_id is None
        ]

    def _posts_by_id(self) -> list[PostRecord]:
        return sorted(self._db.posts.values(), key=lambda post: post.id)

    async def claim_command(self, key: str, when: datetime) -> bool:
        handled = self._db.handled_commands
        if key in handled:
            return False
        handled[key] = _utc(when)
        return True

    async def forget_commands(self, handled_before: datetime) -> int:
        handled = self._db.handled_commands
        old = [key for key, at in handled.items() if at < handled_before]
        for key in old:
            del handled[key]
        return len(old)

    async def take_lease(self, name: str, holder: str, until: datetime, now: datetime) -> bool:
        leases = self._db.leases
        held = leases.get(name)
        taken = held is None or held[1] <= now or held[0] == holder
        if taken:
            leases[name] = (holder, _utc(until))
        for stale in [k for k, (_, end) in leases.items() if end < now - STALE_LEASE]:
            del leases[stale]
        return taken

    async def release_lease(self, name: str, holder: str) -> None:
        leases = self._db.leases
        if (held := leases.get(name)) is not None and held[0] == holder:
            del leases[name]

    async def open_posts(
        self, chat_key: str | None = None, due_before: datetime | None = None,
        kind: str | None = None,
    ) -> list[PostRecord]:
        return [
            post for post in self._posts_by_id()
            if post.closed_at is None
            and (chat_key is None or post.chat_key == chat_key)
            and (due_before is None or (post.closes_at is not None
                                        and post.closes_at <= due_before))
            and (kind is None or post.kind == kind)
        ]

    async def posted_questions(
        self, chat_key: str, kind: str | None = None
    ) -> dict[tuple[str, str], int]:
        counts: dict[tuple[str, str], int] = {}
        for post in self._db.posts.values():
            if post.chat_key == chat_key and (kind is None or post.kind == kind):
                pair = (post.quiz_id, post.question_id)
                counts[pair] = counts.get(pair, 0) + 1
        return counts

    async def shown_orders(
        self, chat_key: str, quiz_id: str | None = None
    ) -> dict[tuple[str, str], tuple[int, ...]]:
        return {
            (post.quiz_id, post.question_id): post.order for post in self._posts_by_id()
            if post.chat_key == chat_key and (quiz_id is None or post.quiz_id == quiz_id)
        }  # the latest post of each question last, so its order stays

    # answers ---------------------------------------------------------------------------
    def _answers(self) -> list[Answer]:
        return sorted(self._db.answers.values(), key=lambda answer: answer.id)

    @staticmethod
    def _record(answer: Answer, name: str = "") -> AnswerRecord:
        return AnswerRecord(answer.post_id, answer.person_key, answer.option, answer.correct,
                            answer.answered_at, answer.elapsed_ms, name)

    async def record_answer(
        self, answer: AnswerRecord
    ) -> tuple[RecordOutcome, AnswerRecord | None]:
        db = self._db
        post = db.posts.get(answer.post_id)
        if post is None:
            raise LookupError(f"post {answer.post_id} does not exist")
        key = (answer.post_id, answer.person_key)
        if (earlier := db.answers.get(key)) is not None:
            return "duplicate", self._record(earlier)
        at = _utc(answer.answered_at)
        if post.closed_at is not None or (post.closes_at is not None and post.closes_at <= at):
            return "closed", None
        person = self._person(answer.person_key)
        if answer.name:
            person.name = answer.name
        daily = next((day for (chat, day), claim in db.dailies.items()
                      if claim.post_id == post.id), None)
        db.answers[key] = Answer(
            db.next_id(), post.id, answer.person_key, answer.option, answer.correct, at,
            answer.elapsed_ms, post.chat_key, post.quiz_id, post.question_id, daily,
        )
        return "inserted", None

    async def answers_for_post(self, post_id: int) -> list[AnswerRecord]:
        persons = self._db.persons
        rows = [a for a in self._answers() if a.post_id == post_id]
        rows.sort(key=lambda a: (a.answered_at, a.elapsed_ms, a.id))
        return [self._record(a, persons[a.person_key].name) for a in rows]

    async def answer_count(self, post_id: int) -> int:
        return sum(1 for a in self._db.answers.values() if a.post_id == post_id)

    async def answer_of(self, post_id: int, person_key: str) -> AnswerRecord | None:
        found = self._db.answers.get((post_id, person_key))
        return None if found is None else self._record(found)

    async def person_history(self, person_key: str) -> dict[tuple[str, str], bool]:
        rows = [a for a in self._answers() if a.person_key == person_key]
        rows.sort(key=lambda a: (a.answered_at, a.id))
        return {(a.quiz_id, a.question_id): a.correct for a in rows}

    async def item_responses(
        self, quiz_id: str | None = None, chat_key: str | None = None
    ) -> list[ItemResponse]:
        first: dict[tuple[str, str, str], Answer] = {}
        for a in self._answers():
            if (quiz_id is None or a.quiz_id == quiz_id) and (
                chat_key is None or a.chat_key == chat_key
            ):
                first.setdefault((a.person_key, a.quiz_id, a.question_id), a)
        return [
            ItemResponse(a.person_key, a.chat_key, a.quiz_id, a.question_id, a.option,
                         a.correct, a.elapsed_ms)
            for a in sorted(first.values(), key=lambda a: a.id)
        ]

    # quiz runs -------------------------------------------------------------------------
    async def create_run(
        self, person_key: str, chat_key: str, quiz_id: str, questions: tuple[str, ...],
        locale: str, started_at: datetime,
    ) -> RunRecord:
        db = self._db
        self._chat(chat_key)
        self._person(person_key)
        run = RunRecord(db.next_id(), person_key, chat_key, quiz_id, tuple(questions), locale,
                        _utc(started_at), None)
        db.runs[run.id] = run
        return run

    async def active_run(self, person_key: str, chat_key: str) -> RunRecord | None:
        return next((run for _, run in sorted(self._db.runs.items())
                     if run.person_key == person_key and run.chat_key == chat_key
                     and run.finished_at is None), None)

    async def get_run(self, run_id: int) -> RunRecord | None:
        return self._db.runs.get(run_id)

    async def finish_run(self, run_id: int, when: datetime) -> None:
        runs = self._db.runs
        if (run := runs.get(run_id)) is not None and run.finished_at is None:
            runs[run_id] = dataclasses.replace(run, finished_at=_utc(when))

    async def run_posts(self, run_id: int) -> list[PostRecord]:
        return [post for post in self._posts_by_id() if post.run_id == run_id]

    # boards and stats ------------------------------------------------------------------
    async def leaderboard(
        self, chat_key: str | None, since: datetime | None, limit: int, person_key: str | None
    ) -> tuple[list[ScoreRow], ScoreRow | None]:
        chat = chat_key if chat_key is not None else "*"
        first = None if since is None else since.astimezone(UTC).date()
        rows = [
            (a.chat_key, a.person_key, a.correct, a.elapsed_ms, a.answered_at.date())
            for a in self._answers() if first is None or a.answered_at.date() >= first
        ]
        sums = aggregate(rows).totals
        persons = self._db.persons
        ranked = sorted(
            ((person, values) for (board, person), values in sums.items() if board == chat),
            key=lambda item: (-item[1][0], item[1][2], item[0]),
        )
        board = [
            ScoreRow(person, persons[person].name if person in persons else "", values[0],
                     values[1], values[2], rank)
            for rank, (person, values) in enumerate(ranked, start=1)
        ]
        mine = next((row for row in board if row.person_key == person_key), None)
        return board[:limit], mine

    async def person_totals(self, person_key: str) -> dict[str, tuple[int, int]]:
        totals: dict[str, tuple[int, int]] = {}
        for a in self._db.answers.values():
            if a.person_key == person_key:
                answered, correct = totals.get(a.quiz_id, (0, 0))
                totals[a.quiz_id] = (answered + 1, correct + int(a.correct))
        return totals

    async def person_streaks(self, person_key: str) -> tuple[int, int]:
        corrects = [a.correct for a in self._answers() if a.person_key == person_key]
        return streaks((0, 0), corrects)

    # daily schedules -------------------------------------------------------------------
    @effect
    async def set_schedule(self, schedule: Schedule, updated_by: str | None = None) -> None:
        self._chat(schedule.chat_key)
        self._db.schedules[schedule.chat_key] = dataclasses.replace(
            schedule, at=_minute(schedule.at),
            updated_at=_utc(schedule.updated_at or datetime.now(UTC)),
        )

    @effect
    async def delete_schedule(self, chat_key: str) -> bool:
        return self._db.schedules.pop(chat_key, None) is not None

    async def get_schedule(self, chat_key: str) -> Schedule | None:
        return self._db.schedules.get(chat_key)

    async def schedules(self) -> list[Schedule]:
        return [s for _, s in sorted(self._db.schedules.items())]

    async def claim_daily(
        self, chat_key: str, local_date: date, post: NewPost, when: datetime
    ) -> PostRecord | None:
        db = self._db
        if (chat_key, local_date) in db.dailies:
            return None
        created = self._insert_post(post)
        db.dailies[(chat_key, local_date)] = Daily(created.id, _utc(when))
        return created

    async def mark_daily_published(self, post_id: int, when: datetime) -> None:
        for claim in self._db.dailies.values():
            if claim.post_id == post_id:
                claim.published_at = _utc(when)

    async def unpublished_dailies(self, claimed_before: datetime) -> list[PostRecord]:
        db = self._db
        posts = [db.posts[claim.post_id] for claim in db.dailies.values()
                 if claim.published_at is None and claim.claimed_at <= claimed_before]
        return sorted((p for p in posts if p.closed_at is None), key=lambda p: p.id)

    async def daily_day_of(self, chat_key: str, local_date: date) -> int | None:
        claim = self._db.dailies.get((chat_key, local_date))
        return None if claim is None else claim.post_id

    async def daily_days(self, person_key: str) -> tuple[list[date], date | None]:
        return (await self.daily_days_for([person_key]))[person_key]

    async def daily_days_for(
        self, person_keys: Sequence[str]
    ) -> dict[str, tuple[list[date], date | None]]:
        newest: dict[str, date] = {}
        for chat, day in self._db.dailies:
            newest[chat] = max(day, newest.get(chat, day))
        result: dict[str, tuple[list[date], date | None]] = {}
        for key in person_keys:
            answers = [a for a in self._db.answers.values()
                       if a.person_key == key and a.daily_date is not None]
            days = sorted({a.daily_date for a in answers if a.correct and a.daily_date})
            latest = [newest[a.chat_key] for a in answers if a.chat_key in newest]
            result[key] = (days, max(latest) if latest else None)
        return result

    # chat settings and rounds ----------------------------------------------------------
    async def get_upload(self, key: str) -> str | None:
        return self._db.uploads.get(key)

    async def set_upload(self, key: str, ref: str, when: datetime) -> None:
        self._db.uploads[key] = ref

    async def get_chat_settings(self, chat_key: str) -> ChatSettingsRecord | None:
        return self._db.settings.get(chat_key)

    @effect
    async def set_chat_settings(
        self, settings: ChatSettingsRecord, when: datetime, updated_by: str | None = None
    ) -> None:
        self._chat(settings.chat_key)
        self._db.settings[settings.chat_key] = settings

    @staticmethod
    def _round(record: Round) -> RoundRecord:
        return RoundRecord(record.id, record.chat_key, record.selector, record.total,
                           record.mode, record.locale, record.started_at, record.finished_at,
                           tuple(record.posts))

    @effect
    async def create_round(
        self, chat_key: str, selector: str | None, total: int, mode: str | None, locale: str,
        started_at: datetime,
    ) -> RoundRecord:
        db = self._db
        record = Round(db.next_id(), chat_key, selector, total, mode, locale, _utc(started_at))
        db.rounds[record.id] = record
        return self._round(record)

    async def add_round_post(self, round_id: int, step: int, post: NewPost) -> PostRecord | None:
        record = self._db.rounds.get(round_id)
        if record is None or record.finished_at is not None or len(record.posts) != step:
            return None
        created = self._insert_post(post)
        record.posts.append(created.id)
        return created

    async def get_round(self, round_id: int) -> RoundRecord | None:
        record = self._db.rounds.get(round_id)
        return None if record is None else self._round(record)

    async def active_rounds(self, chat_key: str | None = None) -> list[RoundRecord]:
        return [self._round(r) for _, r in sorted(self._db.rounds.items())
                if r.finished_at is None and (chat_key is None or r.chat_key == chat_key)]

    async def finish_round(self, round_id: int, when: datetime) -> bool:
        record = self._db.rounds.get(round_id)
        if record is None or record.finished_at is not None:
            return False
        record.finished_at = _utc(when)
        return True

    async def unposted_round_summaries(
        self, finished_after: datetime, finished_before: datetime
    ) -> list[RoundRecord]:
        return [self._round(r) for r in sorted(self._db.rounds.values(), key=lambda r: r.id)
                if r.finished_at is not None and r.summary_posted_at is None
                and finished_after <= r.finished_at < finished_before]

    async def mark_round_summary_posted(self, round_id: int, when: datetime) -> None:
        record = self._db.rounds.get(round_id)
        if record is not None and record.summary_posted_at is None:
            record.summary_posted_at = _utc(when)

    # spaced review ---------------------------------------------------------------------
    async def review_answers(self, person_key: str) -> list[ReviewAnswer]:
        posts = self._db.posts
        rows = [a for a in self._answers() if a.person_key == person_key]
        rows.sort(key=lambda a: (a.answered_at, a.id))
        return [ReviewAnswer(a.quiz_id, a.question_id, a.correct, a.answered_at, a.elapsed_ms,
                             posts[a.post_id].owner_key is not None) for a in rows]

    @effect
    async def set_reminder(self, reminder: Schedule) -> None:
        self._db.reminders[reminder.chat_key] = Schedule(
            reminder.chat_key, _minute(reminder.at), reminder.tz,
            updated_at=_utc(reminder.updated_at or datetime.now(UTC)),
        )

    @effect
    async def delete_reminder(self, person_key: str) -> bool:
        return self._db.reminders.pop(person_key, None) is not None

    async def get_reminder(self, person_key: str) -> Schedule | None:
        return self._db.reminders.get(person_key)

    async def reminders(self) -> list[Schedule]:
        return [r for _, r in sorted(self._db.reminders.items())]

    async def claim_reminder(self, person_key: str, local_date: date, when: datetime) -> bool:
        days = self._db.reminder_days
        if (person_key, local_date) in days:
            return False
        days.add((person_key, local_date))
        self._db.reminder_sends[(person_key, local_date)] = (_utc(when), None)
        return True

    async def unsent_reminders(
        self, claimed_after: datetime, claimed_before: datetime
    ) -> list[tuple[str, date]]:
        return sorted(day for day, (claimed, sent) in self._db.reminder_sends.items()
                      if sent is None and claimed_after <= claimed < claimed_before)

    async def mark_reminder_sent(self, person_key: str, local_date: date, when: datetime) -> None:
        sends = self._db.reminder_sends
        claimed, sent = sends.get((person_key, local_date), (None, None))
        if claimed is not None and sent is None:
            sends[(person_key, local_date)] = (claimed, _utc(when))

    # steps of a delivery ---------------------------------------------------------------
    async def delivery_step_done(self, name: str, step: str, when: datetime) -> None:
        self._db.delivery_steps.setdefault((name, step), _utc(when))

    async def forget_delivery_step(self, name: str, step: str) -> None:
        self._db.delivery_steps.pop((name, step), None)

    async def delivery_steps(self, name: str) -> frozenset[str]:
        return frozenset(step for (of, step) in self._db.delivery_steps if of == name)

    async def forget_delivery_steps(self, done_before: datetime) -> int:
        steps = self._db.delivery_steps
        old = [key for key, at in steps.items() if at < done_before]
        for key in old:
            del steps[key]
        return len(old)

    # problem reports -------------------------------------------------------------------
    @effect
    async def add_problem_report(
        self, report: NewProblemReport, *, since: datetime, daily_cap: int, max_chars: int
    ) -> tuple[ReportOutcome, ProblemReportRecord | None]:
        reports = self._db.reports
        when = _utc(report.created_at)
        mine = [r for _, r in sorted(reports.items()) if r.person_key == report.person_key]
        for stored in mine:
            if (stored.quiz_id, stored.question_id) == (report.quiz_id, report.question_id) \
                    and stored.resolved_at is None:
                reports[stored.id] = dataclasses.replace(
                    stored, text=appended(stored.text, report.text, max_chars), updated_at=when,
                    person_name=report.person_name,
                )
                return "appended", reports[stored.id]
        if sum(1 for r in mine if r.created_at > since) >= daily_cap:
            return "capped", None
        added = ProblemReportRecord(
            self._db.next_id(), report.quiz_id, report.question_id, report.person_key,
            report.person_name, report.chat_key, report.text, when, when,
        )
        reports[added.id] = added
        return "inserted", added

    async def problem_reports(
        self, *, open_only: bool = True, quiz_id: str | None = None,
        chat_key: str | None = None,
    ) -> list[ProblemReportRecord]:
        return [r for _, r in sorted(self._db.reports.items())
                if (not open_only or r.resolved_at is None)
                and (quiz_id is None or r.quiz_id == quiz_id)
                and (chat_key is None or r.chat_key == chat_key)]

    @effect
    async def resolve_problem_report(
        self, report_id: int, when: datetime, note: str | None = None
    ) -> ResolveOutcome:
        reports = self._db.reports
        report = reports.get(report_id)
        if report is None:
            return "unknown"
        if report.resolved_at is not None:
            return "already"
        reports[report_id] = dataclasses.replace(report, resolved_at=_utc(when), resolution=note)
        return "resolved"

    async def last_answered(self, person_key: str, chat_key: str) -> tuple[str, str] | None:
        rows = [a for a in self._db.answers.values()
                if a.person_key == person_key and a.chat_key == chat_key]
        if not rows:
            return None
        newest = max(rows, key=lambda a: (a.answered_at, a.id))
        return newest.quiz_id, newest.question_id

    # authoring -------------------------------------------------------------------------
    async def get_draft(self, author_key: str) -> DraftRecord | None:
        draft = self._db.drafts.get(author_key)
        if draft is None:
            return None
        return DraftRecord(author_key, draft.locale, draft.title, draft.created_at,
                           tuple(draft.questions.values()), draft.photo)

    @effect
    async def create_draft(self, author_key: str, locale: str, when: datetime) -> bool:
        drafts = self._db.drafts
        if author_key in drafts:
            return False
        drafts[author_key] = Draft(locale, _utc(when))
        return True

    async def add_draft_question(
        self, author_key: str, locale: str, question: str, ref: str, when: datetime
    ) -> int:
        self._db.drafts.setdefault(author_key, Draft(locale, _utc(when)))
        draft = self._db.drafts[author_key]
        if ref not in draft.questions:
            draft.questions[ref] = question
            draft.photo = None
        return list(draft.questions).index(ref) + 1

    @effect
    async def set_draft_photo(
        self, author_key: str, locale: str, photo: bytes, when: datetime
    ) -> None:
        self._db.drafts.setdefault(author_key, Draft(locale, _utc(when))).photo = photo

    @effect
    async def undo_draft_question(self, author_key: str) -> int | None:
        draft = self._db.drafts.get(author_key)
        if draft is None or not draft.questions:
            return None
        number = len(draft.questions)
        draft.questions.popitem()
        return number

    @effect
    async def name_draft(self, author_key: str, title: str) -> bool:
        draft = self._db.drafts.get(author_key)
        if draft is None:
            return False
        draft.title = title
        return True

    @effect
    async def delete_draft(self, author_key: str) -> bool:
        return self._db.drafts.pop(author_key, None) is not None

    @effect
    async def publish_draft(self, pack: AuthoredPackRecord) -> bool:
        packs = self._db.packs
        if pack.quiz_id in packs:
            return False
        packs[pack.quiz_id] = dataclasses.replace(pack, published_at=_utc(pack.published_at))
        self._db.drafts.pop(pack.author_key, None)
        return True

    async def authored_packs(self) -> list[AuthoredPackRecord]:
        return sorted(self._db.packs.values(), key=lambda p: (p.published_at, p.quiz_id))

    @effect
    async def withdraw_pack(self, quiz_id: str, when: datetime) -> bool:
        packs = self._db.packs
        pack = packs.get(quiz_id)
        if pack is None or pack.withdrawn_at is not None:
            return False
        packs[quiz_id] = dataclasses.replace(pack, withdrawn_at=_utc(when))
        return True

    async def authored_packs_version(self) -> str:
        packs = self._db.packs.values()
        return f"{len(packs)}:{sum(p.withdrawn_at is not None for p in packs)}"

    # a person's data (bot/core/privacy.py) ----------------------------------------------
    async def person_data(self, person_key: str) -> dict[str, Any]:
        return privacy.person_data(self._db, person_key)

    @effect
    async def delete_person(self, person_key: str, private_chats: Sequence[str] = ()) -> bool:
        return privacy.delete_person(self._db, person_key, private_chats)

    # the organiser's dashboard (bot/web) ------------------------------------------------
    async def dashboard_generation(self, chat_key: str) -> int:
        return self._db.dashboards.get(chat_key, 0)

    async def revoke_dashboard(self, chat_key: str) -> int:
        dashboards = self._db.dashboards
        dashboards[chat_key] = dashboards.get(chat_key, 0) + 1
        return dashboards[chat_key]

    def _totals(self, chat_key: str, since: date | None = None) -> list[PersonTotals]:
        sums: dict[str, list[int]] = {}
        for a in self._db.answers.values():
            if a.chat_key == chat_key and (
                    since is None or a.answered_at.astimezone(UTC).date() >= since):
                row = sums.setdefault(a.person_key, [0, 0, 0])
                row[0] += 1
                row[1] += int(a.correct)
                row[2] += a.elapsed_ms
        persons = self._db.persons
        people = [PersonTotals(key, persons[key].name if key in persons else "", *values)
                  for key, values in sums.items()]
        return sorted(people, key=lambda p: (-p.correct, p.time_ms, p.person_key))

    def _day_runs(self, chat_key: str) -> tuple[dict[str, Run], date | None]:
        """The chat's runs by person, and the day from which a run is current."""
        runs: dict[str, Run] = {}
        for a in self._answers():  # in id order, as the materializers apply them
            if a.chat_key == chat_key and a.daily_date is not None and a.correct:
                runs[a.person_key] = continued(runs.get(a.person_key), a.daily_date)
        days = [day for chat, day in self._db.dailies if chat == chat_key]
        return runs, max(days) - timedelta(days=1) if days else None

    async def chat_streaks(self, chat_key: str) -> tuple[int, int, int]:
        runs, since = self._day_runs(chat_key)
        best = max((run[2] for run in runs.values()), default=0)
        if since is None:
            return 0, 0, best
        current = [run[1] for run in runs.values() if run[0] >= since]
        return len(current), max(current, default=0), best

    async def chat_day_streaks(self, chat_key: str, person_keys: Sequence[str]
                               ) -> dict[str, int]:
        runs, since = self._day_runs(chat_key)
        return {} if since is None else {
            key: runs[key][1] for key in person_keys if key in runs and runs[key][0] >= since}

    async def item_quizzes(self, chat_key: str) -> list[str]:
        return sorted({r.quiz_id for r in await self.item_responses(None, chat_key)})

    async def item_figures(self, chat_key: str, quiz_id: str | None = None) -> ItemFigures:
        return figures_of((r.quiz_id, r.question_id, r.person_key, r.option, r.correct)
                          for r in await self.item_responses(quiz_id, chat_key))

    async def open_reports(
        self, chat_key: str, after: int | None, limit: int
    ) -> list[ProblemReportRecord]:
        return [r for r in await self.problem_reports(chat_key=chat_key)
                if after is None or r.id > after][:limit]

    async def open_report_count(self, chat_key: str) -> int:
        return len(await self.problem_reports(chat_key=chat_key))

    async def open_reports_per_question(self, chat_key: str, quiz_id: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        for report in await self.problem_reports(chat_key=chat_key):
            if report.quiz_id == quiz_id:
                counts[report.question_id] = counts.get(report.question_id, 0) + 1
        return counts

    def _cards(self, person_key: str | None = None) -> dict[Key, Kept]:
        """The cards of the answers (of one person), replayed as review.py does."""
        rows = sorted((a for a in self._db.answers.values()
                       if person_key is None or a.person_key == person_key),
                      key=lambda a: (a.answered_at, a.id))
        posts = self._db.posts
        return replayed(((a.person_key, a.quiz_id, a.question_id), a.chat_key, ReviewAnswer(
            a.quiz_id, a.question_id, a.correct, a.answered_at, a.elapsed_ms,
            posts[a.post_id].owner_key is not None)) for a in rows)

    async def person_cards(self, person_key: str) -> list[CardRecord]:
        return sorted((CardRecord(k[1], k[2], v.chat_key, v.card.due, v.card.stability)
                       for k, v in self._cards(person_key).items()),
                      key=lambda c: (c.due, c.quiz_id, c.question_id))

    async def recent_answers(self, person_key: str, limit: int) -> list[ReviewAnswer]:
        return list(reversed(await self.review_answers(person_key)))[:limit]

    async def chat_cards(self, chat_key: str, today: date) -> tuple[int, int]:
        days = [v.day for v in self._cards().values() if v.chat_key == chat_key]
        return len(days), sum(day <= today for day in days)

    async def chat_totals(self, chat_key: str) -> tuple[int, int, int]:
        people = self._totals(chat_key)
        return len(people), sum(p.answered for p in people), sum(p.correct for p in people)

    async def chat_days(self, chat_key: str, since: date) -> list[DayCount]:
        days: dict[date, tuple[int, int]] = {}
        for a in self._db.answers.values():
            day = a.answered_at.date()
            if a.chat_key == chat_key and day >= since:
                answered, correct = days.get(day, (0, 0))
                days[day] = (answered + 1, correct + int(a.correct))
        return [DayCount(day, *days[day]) for day in sorted(days)]

    async def chat_people(
        self, chat_key: str, after: PeopleCursor | None, limit: int
    ) -> list[PersonTotals]:
        page = await self.board_people(chat_key, None, after, limit)
        assert page is not None
        return page

    async def board_people(
        self, chat_key: str, since: date | None, after: PeopleCursor | None, limit: int
    ) -> list[PersonTotals] | None:
        people = self._totals(chat_key, since)
        if after is not None:
            correct, time_ms, key = after
            people = [p for p in people
                      if p.correct < correct or (p.correct == correct
                                                 and (p.time_ms, p.person_key) > (time_ms, key))]
        return people[:limit]

    async def people_activity(
        self, chat_key: str, person_keys: Sequence[str]
    ) -> dict[str, tuple[datetime, dict[str, tuple[int, int]]]]:
        found: dict[str, tuple[datetime, dict[str, tuple[int, int]]]] = {}
        for key in person_keys:
            mine = [a for a in self._answers() if a.chat_key == chat_key and a.person_key == key]
            if not mine:
                continue
            quizzes: dict[str, tuple[int, int]] = {}
            for a in mine:
                answered, correct = quizzes.get(a.quiz_id, (0, 0))
                quizzes[a.quiz_id] = (answered + 1, correct + int(a.correct))
            found[key] = (max(a.answered_at for a in mine), quizzes)
        return found

    async def chat_answers(
        self, chat_key: str, after: AnswerCursor | None, limit: int,
        person_key: str | None = None,
    ) -> list[AnswerRow]:
        db = self._db
        rounds = {post: r.id for r in db.rounds.values() for post in r.posts}
        if person_key is None:
            rows = sorted(
                (a for a in db.answers.values() if a.chat_key == chat_key
                 and (after is None or (a.person_key, a.answered_at, a.id) > after)),
                key=lambda a: (a.person_key, a.answered_at, a.id),
            )[:limit]
        else:  # one person's, the newest first
            rows = sorted(
                (a for a in db.answers.values() if a.chat_key == chat_key
                 and a.person_key == person_key
                 and (after is None or (a.answered_at, a.id) < after[1:])),
                key=lambda a: (a.answered_at, a.id), reverse=True,
            )[:limit]
        return [
            AnswerRow(a.id, a.person_key, db.persons[a.person_key].name
                      if a.person_key in db.persons else "", a.post_id, a.quiz_id,
                      a.question_id, a.option, a.correct, a.answered_at, a.elapsed_ms,
                      rounds.get(a.post_id))
            for a in rows
        ]
