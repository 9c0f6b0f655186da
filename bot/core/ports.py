"""What the core needs from the outside world, and the records it exchanges with it.

Import arrows point one way: adapters -> core -> ports <- storage. The storage's ports are
small, one per role (answers, posts, boards, schedules...): each part of the core depends on
the few it uses; `Storage`, all of them, is implemented by bot/storage (SQLite, PostgreSQL, and
in memory for the core's tests). `ChatPort` is implemented by each platform adapter, so the
core's scheduler can post and close questions by itself. Times are aware UTC datetimes; the
rules (what may be answered, what counts) live in the core, while a backend guarantees
atomicity and uniqueness.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self

from bot.core.models import PostSummary, ShownQuestion
from bot.core.schedule import Schedule

if TYPE_CHECKING:  # analysis.py imports this module for ItemResponse
    from bot.core.analysis import QuizReport

RecordOutcome = Literal["inserted", "duplicate", "closed"]


@dataclass(frozen=True, slots=True)
class PostRecord:
    id: int
    chat_key: str
    quiz_id: str
    question_id: str
    order: tuple[int, ...]  # order[shown] = canonical option index
    locale: str
    created_at: datetime
    closes_at: datetime | None
    closed_at: datetime | None
    run_id: int | None
    kind: str  # "quiz", "run" or "daily"
    owner_key: str | None = None  # the one person who may answer (a private question or run)


@dataclass(frozen=True, slots=True)
class NewPost:
    chat_key: str
    quiz_id: str
    question_id: str
    order: tuple[int, ...]
    locale: str
    created_at: datetime
    closes_at: datetime | None = None
    run_id: int | None = None
    kind: str = "quiz"
    owner_key: str | None = None


@dataclass(frozen=True, slots=True)
class AnswerRecord:
    post_id: int
    person_key: str
    option: int  # canonical index (choice, true/false); -1 for the other kinds
    correct: bool
    answered_at: datetime
    elapsed_ms: int
    name: str = ""
    # the other kinds' canonical answer (bot/core/grading.py): multi "0,2", order "2,0,1",
    # numeric the number, text the normalised text; None for choice and true/false
    response: str | None = None
    confidence: int | None = None  # models.Confidence, when the chat asks how sure


@dataclass(frozen=True, slots=True)
class ItemResponse:
    """One person's first answer to one question (item analysis, bot/core/analysis.py)."""

    person_key: str
    chat_key: str
    quiz_id: str
    question_id: str
    option: int  # canonical index (choice, true/false); -1 for the other kinds
    correct: bool  # as scored when answered
    elapsed_ms: int
    response: str | None = None  # the other kinds' canonical answer (AnswerRecord.response)


@dataclass(frozen=True, slots=True)
class RunRecord:
    id: int
    person_key: str
    chat_key: str
    quiz_id: str
    questions: tuple[str, ...]
    locale: str
    started_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class ScoreRow:
    person_key: str
    name: str
    correct: int
    answered: int
    time_ms: int
    rank: int


@dataclass(frozen=True, slots=True)
class ChatSettingsRecord:
    """A chat's own settings (/settings); None: the bot's default."""

    chat_key: str
    question_seconds: int | None = None  # how long a /quiz question stays open
    mode: str | None = None  # "polls" or "buttons"
    chart: bool | None = None  # a chart of the answers on each close summary; None: off
    admins_only: bool | None = None  # only admins start or replace questions; None: anyone
    peer_threshold: int | None = None  # percent right at a peer round's first vote that
    # skips the discussion; None: the default
    peer_discussion: int | None = None  # seconds a peer round's discussion lasts
    confidence: bool | None = None  # ask how sure with each answer; None: off


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """N questions in a row in one chat (/quiz <quiz or tag> N)."""

    id: int
    chat_key: str
    selector: str | None
    total: int
    mode: str | None
    locale: str
    started_at: datetime
    finished_at: datetime | None
    posts: tuple[int, ...] = ()  # the posts asked so far, in order


@dataclass(frozen=True, slots=True)
class ReviewAnswer:
    """One answer of a person, as spaced review replays it (bot/core/review.py)."""

    quiz_id: str
    question_id: str
    correct: bool
    answered_at: datetime
    elapsed_ms: int
    personal: bool  # the post was the person's own (a run, a review, a private question)
    confidence: int | None = None  # how sure they said they were (models.Confidence)


@dataclass(frozen=True, slots=True)
class NewProblemReport:
    """What a person says is wrong with a question (bot/core/problem_reports.py)."""

    quiz_id: str
    question_id: str
    person_key: str
    person_name: str
    chat_key: str
    text: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ProblemReportRecord:
    id: int
    quiz_id: str
    question_id: str
    person_key: str
    person_name: str
    chat_key: str
    text: str  # a second report of the same open one is appended on a new line
    created_at: datetime
    updated_at: datetime
    resolved_at: datetime | None = None
    resolution: str | None = None  # the admin's note


# add_problem_report: a new report, one appended to the person's open report of the same
# question, or refused (the person made `daily_cap` reports after `since`)
ReportOutcome = Literal["inserted", "appended", "capped"]
# resolve_problem_report
ResolveOutcome = Literal["resolved", "unknown", "already"]


@dataclass(frozen=True, slots=True)
class DraftRecord:
    """An author's unpublished pack (bot/core/authoring.py); its questions as JSON, in order."""

    author_key: str
    locale: str
    title: str | None
    created_at: datetime
    questions: tuple[str, ...] = ()
    photo: bytes | None = None  # sent for the next question (a PNG or JPEG, checked)


@dataclass(frozen=True, slots=True)
class AuthoredPackRecord:
    """A pack written in a chat and published: its YAML, loaded with the bundled packs."""

    quiz_id: str
    author_key: str
    text: str
    published_at: datetime
    # /unpublish: no longer offered; kept so its answers keep their quiz and its id stays taken
    withdrawn_at: datetime | None = None
    # its pictures by the path the YAML names them with (relative to the pack's folder)
    files: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True, slots=True)
class DayCount:
    """A chat's answers on one UTC day (the dashboard's charts)."""

    day: date
    answered: int
    correct: int


@dataclass(frozen=True, slots=True)
class CardRecord:
    """A person's review card as the materializers keep it (bot/storage/cards.py): the
    question, the chat of the answer that last moved it, when it is due, its stability."""

    quiz_id: str
    question_id: str
    chat_key: str
    due: datetime
    stability: float | None


@dataclass(frozen=True, slots=True)
class ItemGroup:
    """People who gave the same first answers in a quiz: `answered` first answers there,
    `correct` of them right, and right (1) or wrong (0) on this question. Enough to compute a
    question's discrimination (bot/core/analysis.py) without reading one answer."""

    quiz_id: str
    question_id: str
    answered: int
    correct: int
    right: int
    people: int


@dataclass(frozen=True, slots=True)
class ItemFigures:
    """A chat's item-analysis inputs as the materializer keeps them (storage/item_figures.py):
    first answers per option, and the people grouped by their first answers in each quiz."""

    options: tuple[tuple[str, str, int, int], ...]  # (quiz, question, option, people)
    groups: tuple[ItemGroup, ...]
    # the first answers of the kinds not answered with one option (option -1), by their
    # canonical response: (quiz, question, response, people)
    responses: tuple[tuple[str, str, str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class PersonTotals:
    """One person's all-time figures in one chat (the dashboard's People page)."""

    person_key: str
    name: str
    answered: int
    correct: int
    time_ms: int


@dataclass(frozen=True, slots=True)
class AnswerRow:
    """One stored answer in a chat, with what an export and a person's page show."""

    id: int
    person_key: str
    name: str
    post_id: int
    quiz_id: str
    question_id: str
    option: int  # canonical index
    correct: bool
    answered_at: datetime
    elapsed_ms: int
    round_id: int | None  # the round (/quiz <quiz> N) the post was asked in


# where the next page of a chat's answers starts: after (person_key, answered_at, id)
AnswerCursor = tuple[str, datetime, int]
# where the next page of a chat's people starts: after (correct, time_ms, person_key) in
# board order (most correct first, then the faster, then by key)
PeopleCursor = tuple[int, int, str]


class StorageError(Exception):
    """The database cannot be used (missing, unwritable, not ours, too new): one line that
    names it and says what to do."""


# The storage, by role: each part of the core takes the few of these it uses (a Protocol of
# its own inheriting them), and `Storage`, all of them, is what a backend implements.
class PeopleStore(Protocol):
    async def upsert_person(self, key: str, name: str) -> None: ...
    async def person_name(self, person_key: str) -> str | None: ...
    async def person_locale(self, key: str) -> str | None: ...
    async def set_person_locale(self, key: str, locale: str | None) -> None: ...


class ChatStore(Protocol):
    async def upsert_chat(
        self, key: str, title: str, platform_locale: str | None = None
    ) -> None: ...
    async def chat_locale(self, key: str) -> str | None: ...
    async def chat_platform_locale(self, key: str) -> str | None: ...
    async def chat_title(self, key: str) -> str | None:
        """The chat's name as the platform last gave it (None: never seen, "" : none)."""
        ...
    async def set_chat_locale(self, key: str, locale: str | None) -> None: ...
    async def migrate_chat(self, old: str, new: str) -> bool:
        """Move a chat's posts, answers, boards, schedule and settings to a new key."""
        ...
    async def chats(self) -> list[tuple[str, str]]:
        """Every chat the bot has posted in, as (key, title), by key (`quizbot chats`)."""
        ...


class PostStore(Protocol):
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
    ) -> PostRecord: ...
    async def get_post(self, post_id: int) -> PostRecord | None: ...
    async def bind_ref(self, post_id: int, *refs: str) -> None:
        """Bind each reference to the post, all in one transaction."""
        ...
    async def post_by_ref(self, ref: str) -> PostRecord | None: ...
    async def refs(self, post_id: int) -> tuple[str, ...]: ...
    async def open_posts(
        self, chat_key: str | None = None, due_before: datetime | None = None,
        kind: str | None = None,
    ) -> list[PostRecord]: ...
    async def posted_questions(
        self, chat_key: str, kind: str | None = None
    ) -> dict[tuple[str, str], int]:
        """(quiz_id, question_id) -> times posted in this chat (of this kind)."""
        ...


class ClosingStore(Protocol):
    """Closing posts and delivering each one's summary once."""

    async def close_post(self, post_id: int, when: datetime, quiet: bool = False) -> bool:
        """Mark closed; True only for the one call that closed it. `quiet`: no summary due."""
        ...
    async def mark_summary_posted(self, post_id: int, when: datetime) -> None: ...
    async def unposted_summaries(
        self, closed_after: datetime, closed_before: datetime
    ) -> list[PostRecord]:
        """Closed, non-run posts whose summary the platform never confirmed."""
        ...


class LeaseStore(Protocol):
    async def take_lease(self, name: str, holder: str, until: datetime, now: datetime) -> bool:
        """Claim `name` for `holder` until `until`, shared by every process on the database:
        False while another holder has it unexpired; the same holder renews it."""
        ...
    async def release_lease(self, name: str, holder: str) -> None: ...


class AnswerStore(Protocol):
    async def record_answer(
        self, answer: AnswerRecord
    ) -> tuple[RecordOutcome, AnswerRecord | None]:
        """Insert and commit if the post is open at answer.answered_at and the person has not
        answered it. ("duplicate", the stored final answer) otherwise, or ("closed", None)."""
        ...
    async def answers_for_post(self, post_id: int) -> list[AnswerRecord]: ...
    async def answer_count(self, post_id: int) -> int: ...
    async def answer_of(self, post_id: int, person_key: str) -> AnswerRecord | None: ...
    async def missed_answers(
        self, person_key: str, limit: int
    ) -> list[tuple[AnswerRecord, str, str, tuple[int, ...]]]:
        """The latest answers of the questions whose latest answer is wrong, in the order
        they were first answered: (answer, quiz, question, the post's option order)."""
        ...
    async def person_history(self, person_key: str) -> dict[tuple[str, str], bool]:
        """(quiz_id, question_id) -> whether the person's latest answer to it was right."""
        ...


class ItemStore(Protocol):
    """What an item analysis reads: the raw answers, and the letters the chat saw."""

    async def item_responses(
        self, quiz_id: str | None = None, chat_key: str | None = None
    ) -> list[ItemResponse]:
        """Each person's first answer to each question, of one quiz and one chat (None: all),
        oldest first. A later answer to the same question (another post) is left out: it was
        given after seeing the answer. Read from the answers themselves, not the aggregates."""
        ...
    async def shown_orders(
        self, chat_key: str, quiz_id: str | None = None
    ) -> dict[tuple[str, str], tuple[int, ...]]:
        """(quiz_id, question_id) -> the option order (order[shown] = canonical) of its
        latest post in this chat: the letters that chat saw last."""
        ...


class RunStore(Protocol):
    async def create_run(
        self, person_key: str, chat_key: str, quiz_id: str, questions: tuple[str, ...],
        locale: str, started_at: datetime,
    ) -> RunRecord: ...
    async def active_run(self, person_key: str, chat_key: str) -> RunRecord | None: ...
    async def get_run(self, run_id: int) -> RunRecord | None: ...
    async def finish_run(self, run_id: int, when: datetime) -> None: ...
    async def run_posts(self, run_id: int) -> list[PostRecord]: ...


class BoardStore(Protocol):
    """Boards and stats: read from aggregates that may lag the answers briefly."""

    async def materialize(self) -> None:
        """Bring boards and streaks up to every answer acknowledged so far."""
        ...
    async def leaderboard(
        self, chat_key: str | None, since: datetime | None, limit: int, person_key: str | None
    ) -> tuple[list[ScoreRow], ScoreRow | None]: ...
    async def person_totals(self, person_key: str) -> dict[str, tuple[int, int]]:
        """quiz_id -> (answered, correct)."""
        ...
    async def person_calibration(self, person_key: str) -> dict[int, tuple[int, int]]:
        """How sure they said they were (models.Confidence) -> (answered, correct)."""
        ...
    async def person_streaks(self, person_key: str) -> tuple[int, int]:
        """(current, best) run of consecutive correct answers."""
        ...
    async def daily_days(self, person_key: str) -> tuple[list[date], date | None]:
        """Local dates with a correct daily answer, and the newest daily question in the
        chats where the person answered one."""
        ...
    async def daily_days_for(
        self, person_keys: Sequence[str]
    ) -> dict[str, tuple[list[date], date | None]]:
        """daily_days of several people at once (a board's rows)."""
        ...


class ScheduleStore(Protocol):
    """Chats' daily schedules."""

    async def set_schedule(self, schedule: Schedule, updated_by: str | None = None) -> None: ...
    async def delete_schedule(self, chat_key: str) -> bool: ...
    async def get_schedule(self, chat_key: str) -> Schedule | None: ...
    async def schedules(self) -> list[Schedule]: ...


class DailyStore(Protocol):
    """The daily question of each chat and local date, claimed once."""

    async def claim_daily(
        self, chat_key: str, local_date: date, post: NewPost, when: datetime
    ) -> PostRecord | None:
        """Atomically create the day's post and claim (chat, local date); None if claimed."""
        ...
    async def mark_daily_published(self, post_id: int, when: datetime) -> None: ...
    async def unpublished_dailies(self, claimed_before: datetime) -> list[PostRecord]: ...
    async def daily_day_of(self, chat_key: str, local_date: date) -> int | None: ...


class SettingsStore(Protocol):
    async def get_chat_settings(self, chat_key: str) -> ChatSettingsRecord | None: ...
    async def set_chat_settings(
        self, settings: ChatSettingsRecord, when: datetime, updated_by: str | None = None
    ) -> None: ...


class RoundStore(Protocol):
    async def create_round(
        self, chat_key: str, selector: str | None, total: int, mode: str | None, locale: str,
        started_at: datetime,
    ) -> RoundRecord: ...
    async def add_round_post(self, round_id: int, step: int, post: NewPost) -> PostRecord | None:
        """Create the round's post number `step` (0-based) in one transaction, only if the
        round is unfinished and has exactly `step` posts; None otherwise (another call or
        process asked it)."""
        ...
    async def get_round(self, round_id: int) -> RoundRecord | None: ...
    async def active_rounds(self, chat_key: str | None = None) -> list[RoundRecord]:
        """Unfinished rounds (of one chat), oldest first."""
        ...
    async def finish_round(self, round_id: int, when: datetime) -> bool:
        """Mark finished; True only for the one call that finished it."""
        ...


@dataclass(frozen=True, slots=True)
class NewLive:
    chat_key: str
    kind: str  # "host" (/host) or "peer" (/peer)
    host_key: str
    selector: str | None
    total: int
    seconds: int  # how long each question is open
    speed: bool
    teams: int  # 0: everyone for themselves, else 2..6
    locale: str
    started_at: datetime
    choose: bool = False  # people choose their team on joining (else filled in turn)


@dataclass(frozen=True, slots=True)
class LiveStep:
    step: int  # 0-based
    post_id: int
    skipped: bool


@dataclass(frozen=True, slots=True)
class LiveRecord:
    """A live session; `state` and the countdown are saved by `save_live` (compare and set
    on `version`), so two processes or a restart never run it twice."""

    id: int
    chat_key: str
    kind: str
    host_key: str
    selector: str | None
    total: int
    seconds: int
    speed: bool
    teams: int
    locale: str
    state: str
    closes_at: datetime | None
    paused_ms: int | None
    version: int
    started_at: datetime
    finished_at: datetime | None
    steps: tuple[LiveStep, ...] = ()
    choose: bool = False  # people choose their team on joining


@dataclass(frozen=True, slots=True)
class LivePlayer:
    person_key: str
    name: str
    team: int | None  # 0-based
    joined_at: datetime


@dataclass(frozen=True, slots=True)
class Revote:
    person_key: str
    option: int  # canonical index
    correct: bool
    answered_at: datetime


@dataclass(frozen=True, slots=True)
class PeerVotes:
    """One peer round's question that went to a revote: right answers of each vote."""

    quiz_id: str
    question_id: str
    first: int  # first votes
    first_right: int
    second: int  # revotes
    second_right: int


class LiveStore(Protocol):
    async def create_live(self, new: NewLive) -> LiveRecord | None:
        """A new session in the lobby; None while the chat has an unfinished one."""
        ...
    async def get_live(self, session_id: int) -> LiveRecord | None: ...
    async def live_in_chat(self, chat_key: str) -> LiveRecord | None:
        """The chat's unfinished session."""
        ...
    async def active_lives(self) -> list[LiveRecord]:
        """Every unfinished session, oldest first."""
        ...
    async def chat_lives(
        self, chat_key: str, before: int | None = None, limit: int = 50
    ) -> list[LiveRecord]:
        """The chat's sessions, newest first: up to `limit` with an id below `before`."""
        ...
    async def save_live(self, record: LiveRecord) -> LiveRecord | None:
        """Store host_key, state, closes_at, paused_ms and finished_at if the stored version
        is still `record.version`; the stored record (version + 1), else None."""
        ...
    async def add_live_step(self, session_id: int, step: int, post: NewPost) -> PostRecord | None:
        """The session's question number `step` (0-based) as a new post, only if the
        session is unfinished and has exactly `step` questions; None otherwise."""
        ...
    async def skip_live_step(self, session_id: int, step: int) -> None: ...
    async def join_live(
        self, session_id: int, person_key: str, name: str, teams: int, when: datetime,
        team: int | None = None, gap: int = 0,
    ) -> bool:
        """Join once (True the first time); with `teams`, the team is the number of players
        who joined before, modulo `teams`, so teams stay even. A chosen `team` (0-based) is
        joined only while it has fewer than `gap` players more than the smallest of the
        `teams` teams (False: already joined, or that team is full for now)."""
        ...
    async def live_players(self, session_id: int) -> list[LivePlayer]:
        """In the order they joined."""
        ...
    async def live_player_count(self, session_id: int) -> int: ...
    async def is_live_player(self, session_id: int, person_key: str) -> bool: ...
    async def record_revote(self, post_id: int, vote: Revote) -> bool:
        """A peer round's second vote, once per person (True the first time)."""
        ...
    async def revotes(self, post_id: int) -> list[Revote]: ...
    async def peer_votes(self, chat_key: str, quiz_id: str | None = None) -> list[PeerVotes]:
        """The chat's peer rounds that went to a revote (of one quiz), oldest first."""
        ...


class ReviewStore(Protocol):
    """Spaced review: the cards are replayed from the answers; a reminder is a Schedule whose
    chat_key is the person's key, claimed once per person and local date."""

    async def review_answers(self, person_key: str) -> list[ReviewAnswer]:
        """Every answer of the person, oldest first (answered_at, then id)."""
        ...
    async def set_reminder(self, reminder: Schedule) -> None: ...
    async def delete_reminder(self, person_key: str) -> bool: ...
    async def get_reminder(self, person_key: str) -> Schedule | None: ...
    async def reminders(self) -> list[Schedule]: ...
    async def claim_reminder(self, person_key: str, local_date: date, when: datetime) -> bool:
        """Claim the person's reminder of that local date; False if it was claimed already
        (by this process or another: the claim's primary key decides)."""
        ...


class ReportStore(Protocol):
    """Problem reports ("⚑": what is wrong with a question)."""

    async def add_problem_report(
        self, report: NewProblemReport, *, since: datetime, daily_cap: int, max_chars: int
    ) -> tuple[ReportOutcome, ProblemReportRecord | None]:
        """In one transaction: append `report.text` to the person's open report of the same
        question (cut to `max_chars`), else insert it unless the person made `daily_cap`
        reports after `since` (("capped", None))."""
        ...
    async def problem_reports(
        self, *, open_only: bool = True, quiz_id: str | None = None,
        chat_key: str | None = None,
    ) -> list[ProblemReportRecord]:
        """Oldest first; `chat_key`: only the reports made in that chat."""
        ...
    async def resolve_problem_report(
        self, report_id: int, when: datetime, note: str | None = None
    ) -> ResolveOutcome: ...
    async def last_answered(self, person_key: str, chat_key: str) -> tuple[str, str] | None:
        """(quiz_id, question_id) of the person's newest answer in the chat."""
        ...


class DraftStore(Protocol):
    """Authoring: one open draft per author, published packs."""

    async def get_draft(self, author_key: str) -> DraftRecord | None: ...
    async def create_draft(self, author_key: str, locale: str, when: datetime) -> bool:
        """Start an empty draft; False if the author has one already (it is kept)."""
        ...
    async def add_draft_question(
        self, author_key: str, locale: str, question: str, ref: str, when: datetime
    ) -> int:
        """Append a question (JSON) to the author's draft, starting one in `locale` if there
        is none; its number (from 1). The question takes the draft's photo (it is no longer
        waiting). The same `ref` again adds nothing and returns the number it got."""
        ...
    async def set_draft_photo(
        self, author_key: str, locale: str, photo: bytes, when: datetime
    ) -> None:
        """Keep a photo for the author's next question (replacing one waiting), starting a
        draft in `locale` if there is none."""
        ...
    async def undo_draft_question(self, author_key: str) -> int | None:
        """Remove the draft's last question; its number, None if there was none."""
        ...
    async def name_draft(self, author_key: str, title: str) -> bool: ...
    async def delete_draft(self, author_key: str) -> bool: ...
    async def publish_draft(self, pack: AuthoredPackRecord) -> bool:
        """Store the pack (and its files) and delete its author's draft in one transaction;
        False (nothing changed) if a pack with that id was published already."""
        ...
    async def authored_packs(self) -> list[AuthoredPackRecord]:
        """Every published pack, oldest first (withdrawn ones too)."""
        ...
    async def withdraw_pack(self, quiz_id: str, when: datetime) -> bool:
        """Mark a published pack withdrawn; False if there is none offered with that id."""
        ...
    async def authored_packs_version(self) -> str:
        """A cheap token that changes whenever a pack is published or withdrawn (by any
        process on this database): other processes compare it to reload."""
        ...


class DashboardStore(Protocol):
    """The organiser's web dashboard (bot/web): paged reads of one chat, and the generation
    that `/dashboard revoke` bumps to end every link and session of the chat at once."""

    async def dashboard_generation(self, chat_key: str) -> int:
        """0 until the chat's dashboard access was first revoked."""
        ...
    async def revoke_dashboard(self, chat_key: str) -> int:
        """Bump the chat's generation (every process sees it); the new one."""
        ...
    async def chat_totals(self, chat_key: str) -> tuple[int, int, int]:
        """(people, answers, right answers) in the chat, from the aggregates."""
        ...
    async def chat_days(self, chat_key: str, since: date) -> list[DayCount]:
        """Answers per UTC day from `since` on, oldest first (days with none left out)."""
        ...
    async def chat_people(
        self, chat_key: str, after: PeopleCursor | None, limit: int
    ) -> list[PersonTotals]:
        """The chat's people in board order, `limit` after the cursor."""
        ...
    async def board_people(
        self, chat_key: str, since: date | None, after: PeopleCursor | None, limit: int
    ) -> list[PersonTotals] | None:
        """The chat's board from `since` (None: all time; today: the day's; the week
        window's first day: the week's), `limit` after the cursor in rank order; None if no
        one table holds that board (a week window behind: BoardStore.leaderboard reads it)."""
        ...
    async def people_activity(
        self, chat_key: str, person_keys: Sequence[str]
    ) -> dict[str, tuple[datetime, dict[str, tuple[int, int]]]]:
        """Each person's last answer in the chat and, per quiz, (answered, right) there."""
        ...
    async def chat_answers(
        self, chat_key: str, after: AnswerCursor | None, limit: int,
        person_key: str | None = None,
    ) -> list[AnswerRow]:
        """The chat's answers by person, time and id, or one person's the newest first;
        `limit` past the cursor: an index range, never the whole table."""
        ...
    async def chat_streaks(self, chat_key: str) -> tuple[int, int, int]:
        """The daily question's streaks in the chat: (people on a streak now, the longest
        current one, the longest ever), in days; kept by the materializer."""
        ...
    async def chat_day_streaks(self, chat_key: str, person_keys: Sequence[str]
                               ) -> dict[str, int]:
        """Each person's current run of days with a right daily answer in the chat (as
        chat_streaks counts them; absent: none), by primary key of the kept runs."""
        ...
    async def item_quizzes(self, chat_key: str) -> list[str]:
        """The quizzes with first answers in the chat (the Questions page's list)."""
        ...
    async def item_figures(self, chat_key: str, quiz_id: str | None = None) -> ItemFigures:
        """The chat's item-analysis inputs (of one quiz), kept from first answers (one per
        person and question): an index range of a few rows per question."""
        ...
    async def open_reports(
        self, chat_key: str, after: int | None, limit: int
    ) -> list[ProblemReportRecord]:
        """The chat's open problem reports by id, `limit` after the id `after`: a range of
        an index of open reports, however many there are."""
        ...
    async def open_report_count(self, chat_key: str) -> int:
        """How many problem reports made in the chat are open."""
        ...

    async def open_reports_per_question(self, chat_key: str, quiz_id: str) -> dict[str, int]:
        """How many open problem reports made in the chat each question of `quiz_id` has
        (questions without one left out)."""
        ...
    async def person_cards(self, person_key: str) -> list[CardRecord]:
        """Every review card of the person, the soonest due first, as the materializer
        keeps them (the same as their answers replayed: bot/core/deck.py)."""
        ...
    async def recent_answers(self, person_key: str, limit: int) -> list[ReviewAnswer]:
        """The person's newest `limit` answers (every chat), newest first."""
        ...
    async def chat_cards(self, chat_key: str, today: date) -> tuple[int, int]:
        """(the chat's cards, those due by the end of the UTC day `today`): a chat's cards
        are the cards last answered in it; a range of per-day counts, not of cards."""
        ...


class PrivacyStore(Protocol):
    """A person's own data: seen (/mydata) and deleted everywhere (bot/core/privacy.py)."""

    async def person_data(self, person_key: str) -> dict[str, Any]:
        """Everything stored about the person, as JSON-ready values."""
        ...
    async def delete_person(self, person_key: str, private_chats: Sequence[str] = ()) -> bool:
        """Remove the person, their answers and what is theirs alone from every table and
        from the caches of every process (their rows of the boards too), and their private
        chats with the bot (`private_chats`, besides the one whose key is theirs); False if
        nothing was stored about them."""
        ...


class UploadStore(Protocol):
    """Files a platform holds for the bot (a question card sent once), by a key naming the
    platform and the file's content: re-sent by reference, also after a restart."""

    async def get_upload(self, key: str) -> str | None: ...
    async def set_upload(self, key: str, ref: str, when: datetime) -> None:
        """Keep `ref` for `key` (the latest one wins)."""
        ...


# Exactly once ---------------------------------------------------------------------------------
# Kept together: a command's idempotency key and the small stores that make each side effect
# happen once whichever process runs it and however often the platform delivers it.
class AlreadyHandled(Exception):
    """The command with this key was handled before (by this or another process): its effect
    is stored and its reply was sent (or lost with the process that sent it); nothing runs."""

    def __init__(self, key: str) -> None:
        super().__init__(f"command {key} was handled already")
        self.key = key


@dataclass(slots=True)
class CommandKey:
    """The idempotency key of the command being handled in this task: the platform's id of
    its delivery (`tg:<bot>:<update_id>`, `dc:<interaction id>`), which a redelivery keeps.

    Design: a command's effect and its key are one write. The adapter names the key for the
    whole handling of an update (`command_key`); the storage's few writes that are a
    command's effect (undoing a draft's question, publishing, a language, settings, a
    schedule, a reminder, resolving a report, deleting a person's data...) insert the key
    in the same transaction as the effect, and find it there when a redelivery (kill -9
    before the confirmation, a webhook's 500, another process behind a load balancer)
    runs the command again: AlreadyHandled, and the effect is not repeated. The key is
    claimed once per handling: the first effect write claims it, later ones of the same
    command run as usual. A command whose effect is a platform send (a question, a file)
    claims its key in a write of its own before sending (`CommandStore.claim_command`): a
    crash in between loses that send rather than doing it twice. Incidental writes (a
    person's name, a chat's title) never claim: a crash after one of them must not turn
    the redelivery into a no-op. Keys are kept `KEEP_COMMAND_KEYS` (Telegram keeps an
    unconfirmed update 24 hours; a Discord interaction token lives 15 minutes), then
    pruned by the scheduler."""

    key: str
    at: datetime
    claimed: bool = False


KEEP_COMMAND_KEYS = timedelta(days=3)
_command: ContextVar[CommandKey | None] = ContextVar("quizbot_command_key", default=None)


@contextmanager
def command_key(key: str, at: datetime) -> Iterator[CommandKey]:
    """Everything awaited inside (in this task) handles the command with this key."""
    current = CommandKey(key, at)
    token = _command.set(current)
    try:
        yield current
    finally:
        _command.reset(token)


def enter_command(key: str, at: datetime) -> CommandKey:
    """For a task that handles one command from here to its end (discord.py runs each
    interaction in a task of its own): the rest of this task handles the command `key`."""
    current = CommandKey(key, at)
    _command.set(current)
    return current


def unclaimed_command() -> CommandKey | None:
    """The key of the command being handled here, if its effect has not been stored yet."""
    current = _command.get()
    return None if current is None or current.claimed else current


class CommandStore(Protocol):
    """The keys of the commands handled (key, handled_at); an effect write claims its key in
    its own transaction (see CommandKey)."""

    async def claim_command(self, key: str, when: datetime) -> bool:
        """Store the key; False if it was stored before (the command was handled)."""
        ...
    async def forget_commands(self, handled_before: datetime) -> int:
        """Drop the keys handled before then; how many."""
        ...


class DeliveryStore(Protocol):
    """What is to be delivered besides question summaries (ClosingStore): round summaries
    and review reminders are due from when their round finished or their day was claimed
    and marked once the platform confirmed them; and the steps of one delivery that went out
    (or may have: each is stored before it is sent, and forgotten when the platform refused
    it), so that a retry, after a failure or a crash, does not repeat them."""

    async def unposted_round_summaries(
        self, finished_after: datetime, finished_before: datetime
    ) -> list[RoundRecord]: ...
    async def mark_round_summary_posted(self, round_id: int, when: datetime) -> None: ...
    async def unsent_reminders(
        self, claimed_after: datetime, claimed_before: datetime
    ) -> list[tuple[str, date]]:
        """(person key, local day) of the reminders claimed in that time and never sent."""
        ...
    async def mark_reminder_sent(self, person_key: str, local_date: date, when: datetime) -> None:
        ...
    async def delivery_step_done(self, name: str, step: str, when: datetime) -> None:
        """`step` of the delivery `name` is being sent (it went out, or may have)."""
        ...
    async def forget_delivery_step(self, name: str, step: str) -> None:
        """The platform refused `step`: it is to be sent again."""
        ...
    async def delivery_steps(self, name: str) -> frozenset[str]: ...
    async def forget_delivery_steps(self, done_before: datetime) -> int: ...


class Storage(
    PeopleStore, ChatStore, PostStore, ClosingStore, LeaseStore, AnswerStore, ItemStore,
    RunStore, BoardStore, ScheduleStore, DailyStore, SettingsStore, RoundStore, ReviewStore,
    ReportStore, DraftStore, PrivacyStore, DashboardStore, UploadStore, CommandStore,
    DeliveryStore, LiveStore, Protocol,
):
    """Every role at once: what a backend implements and QuizService is wired with."""

    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def __aenter__(self) -> Self: ...
    async def __aexit__(self, *exc: object) -> None: ...


# The platforms --------------------------------------------------------------------------------
class ChatGone(Exception):
    """The bot can never post in that chat again (removed, blocked, the chat deleted)."""


class TryLater(Exception):
    """A transient failure (network, flood limit): the same call may work later."""

    def __init__(self, reason: str = "", retry_after: timedelta | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class RoundScore:
    person_key: str
    name: str
    right: int  # questions of the round answered right
    answered: int


@dataclass(frozen=True, slots=True)
class RoundSummary:
    """A round's end: who got how many right (most first), in the round's language."""

    round_id: int
    chat_key: str
    locale: str
    asked: int  # questions asked (fewer than `total` when a new /quiz replaced the round)
    total: int
    scores: tuple[RoundScore, ...]


class ChatPort(Protocol):
    """What an adapter offers the core for chats of its platform (keys starting with `prefix`).

    Both methods raise ChatGone or TryLater for the failures the core handles itself; anything
    else is logged by the core and tried again later, like TryLater.
    """

    prefix: str  # e.g. "tg:" or "dc:"

    async def send_question(self, question: ShownQuestion) -> None:
        """Send a question the core created to question.chat_key and bind the platform's
        references (poll id, message id) to question.post_id before returning."""
        ...

    async def close_question(self, summary: PostSummary) -> None:
        """Retire the question on the platform (stop the poll, disable the buttons) and show
        its one summary there."""
        ...

    async def round_over(self, summary: RoundSummary) -> None:
        """Show a round's short summary in its chat (after its last question's summary)."""
        ...

    async def send_private(self, person_key: str, text: str) -> None:
        """Send `text` to the person privately (Telegram: their private chat with the bot;
        Discord: a DM). `person_key` starts with `prefix`."""
        ...


class CardRenderer(Protocol):
    """Draws a question's card as PNG bytes (bot/reports/cards.py): its prompt, code, formula
    and image in its language. Blocking and CPU-bound: the core calls it in a worker
    thread."""

    def question_card(self, question: ShownQuestion) -> bytes: ...

    def card_key(self, question: ShownQuestion) -> str:
        """A hash of what the card shows and how it is drawn (the same card, the same key)."""
        ...


class ChartRenderer(Protocol):
    """Draws charts as PNG bytes, every word in the reader's language and script
    (bot/reports/png.py, with Pillow, which the core never imports). Blocking and CPU-bound:
    the core calls it in a worker thread."""

    def report_chart(self, reports: Sequence[QuizReport], locale: str) -> bytes:
        """The share of answers on each option, per question, lettered as in the reports."""
        ...

    def summary_chart(self, summary: PostSummary) -> bytes:
        """One closed question's share of answers on each option, in the order and the
        language its chat saw."""
        ...


class Meter(Protocol):
    """Where the core reports what it did, for the operator's metrics (bot/metrics.py counts
    it for Prometheus); the core never reads anything back. Labels stay few: a platform and an
    outcome, never a person or a chat."""

    def answered(self, platform: str, outcome: str, seconds: float) -> None:
        """One answer handled: `outcome` is accepted, repeat, closed or refused; `seconds`
        from the call to its commit (or refusal)."""
        ...

    def ticked(self, seconds: float, overdue: bool) -> None:
        """One scheduler round took `seconds`; `overdue`: longer than its interval, so the
        work due in the next one starts late."""
        ...


class NoMeter:
    """Counts nothing: the default when no metrics endpoint is configured."""

    def answered(self, platform: str, outcome: str, seconds: float) -> None:
        pass

    def ticked(self, seconds: float, overdue: bool) -> None:
        pass
