"""The storage's ports, one per role (people, chats, posts, answers, boards, schedules, rounds,
live games, review, reports, drafts, the dashboard, privacy, uploads...): each part of the core
takes the few it uses, and `Storage`, all of them, is what bot/storage implements (SQLite,
PostgreSQL). A backend guarantees atomicity and uniqueness; the rules (what may be answered,
what counts) stay in the core. Times are aware UTC datetimes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol, Self

from bot.core.difficulty import First, Rating
from bot.core.ports.exactly_once import CommandStore, DeliveryStore
from bot.core.ports.records import (
    AnswerCursor,
    AnswerRecord,
    AnswerRow,
    AssignmentProgress,
    AssignmentQuestion,
    AssignmentRecord,
    AuthoredPackRecord,
    CardRecord,
    ChatSettingsRecord,
    DayCount,
    DraftRecord,
    ItemFigures,
    ItemResponse,
    LivePlayer,
    LiveRecord,
    NewAssignment,
    NewLive,
    NewPost,
    NewProblemReport,
    PeerVotes,
    PeopleCursor,
    PersonTotals,
    PostRecord,
    ProblemReportRecord,
    RecordOutcome,
    ReportOutcome,
    ResolveOutcome,
    ReviewAnswer,
    Revote,
    RoundRecord,
    RunRecord,
    ScoreRow,
)
from bot.core.schedule import Schedule


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
    # the platform's kind of the chat (Telegram: group, supergroup, channel), stored so that
    # no lookup spends the send budget (bot/storage/chat_kinds.py)
    async def chat_kind(self, key: str) -> str | None: ...
    async def set_chat_kind(self, key: str, kind: str) -> None: ...


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
    async def lease_sends(self, name: str, now: float, count: int, interval: float) -> float:
        """A slice of the send budget `name` shared by every process (a bot token's): the
        first of `count` slots `interval` s apart, none before `now` (Unix seconds)."""
        ...


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
    async def person_calibration(
        self, person_key: str, chat_key: str | None = None
    ) -> dict[int, tuple[int, int]]:
        """How sure they said they were (models.Confidence) -> (answered, correct); in
        `chat_key` only, if given."""
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
    async def add_live_step(self, session_id: int, step: int, post: NewPost,
                            then: LiveRecord | None = None) -> PostRecord | None:
        """The session's question number `step` (0-based) as a new post, only if the
        session is unfinished and has exactly `step` questions; None otherwise. With
        `then`, the session's state as save_live stores it, in the same transaction, and
        only if its version is still `then.version`."""
        ...
    async def skip_live_step(self, session_id: int, step: int) -> None: ...
    async def join_live(
        self, session_id: int, person_key: str, name: str, teams: int, when: datetime,
        team: int | None = None, gap: int = 0, locale: str | None = None,
    ) -> bool:
        """Join once (True the first time); with `teams`, the team is the number of players
        who joined before, modulo `teams`, so teams stay even. A chosen `team` (0-based) is
        joined only while it has fewer than `gap` players more than the smallest of the
        `teams` teams (False: already joined, or that team is full for now). `locale`: the
        platform's language for the person."""
        ...
    async def set_live_lobby(self, session_id: int, ref: str) -> None:
        """The platform's reference to the session's lobby message."""
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


# review tuned to each person (bot/core/fsrs_fit.py, bot/storage/fsrs_params.py)
@dataclass(frozen=True, slots=True)
class ReviewFit:
    """A person's FSRS fit. `parameters` None: the defaults stay (too little history, or the
    fit did not predict the person's held-out reviews better). The figures: log loss and RMSE
    of the binned predicted recall on those held-out reviews, default and fitted."""

    parameters: tuple[float, ...] | None
    reviews: int  # answers to a card seen before, when fitted
    items: int  # the optimizer's items (a review on a later day than the one before)
    default_loss: float | None = None
    fitted_loss: float | None = None
    default_rmse: float | None = None
    fitted_rmse: float | None = None


class ReviewFitStore(Protocol):
    """Each person's fitted FSRS parameters; storing a fit replays their kept cards with them."""

    async def person_parameters(self, person_key: str) -> tuple[float, ...] | None: ...
    async def review_fit(self, person_key: str) -> tuple[ReviewFit, datetime] | None:
        """The person's last fit and when it ran; None: never fitted."""
        ...
    async def save_fit(self, person_key: str, fit: ReviewFit, when: datetime) -> None: ...
    async def fits_due(self, min_reviews: int, min_cards: int, refit_after: int,
                       fitted_before: datetime, limit: int) -> list[str]:
        """People with enough reviews never fitted, or fitted before `fitted_before` on
        `refit_after` fewer reviews than they have now."""
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


class AssignmentStore(Protocol):
    """Assignments (core/assignments.py): a quiz given to a chat with a deadline, the runs its
    members take it in, and its reminder (per member) and summary, each claimed once."""

    async def create_assignment(self, new: NewAssignment) -> int: ...
    async def assignment(self, assignment_id: int) -> AssignmentRecord | None: ...
    async def chat_assignments(
        self, chat_key: str, deadline_after: datetime
    ) -> list[AssignmentRecord]:
        """The chat's assignments not cancelled whose deadline is after `deadline_after`,
        soonest first."""
        ...
    async def cancel_assignment(self, assignment_id: int, chat_key: str, when: datetime) -> bool:
        """False if it is not the chat's, already cancelled, or its deadline's summary is
        claimed."""
        ...
    async def add_assignment_run(
        self, assignment_id: int, run_id: int, person_key: str, quiz_id: str
    ) -> None: ...
    async def assignment_runs(
        self, assignment_id: int, person_key: str
    ) -> list[tuple[int, str]]:
        """The person's runs of the assignment as (run id, quiz id), oldest first."""
        ...
    async def answered_in_assignment(
        self, assignment_id: int, person_key: str
    ) -> set[tuple[str, str]]:
        """The questions (quiz id, question id) the person answered in its runs."""
        ...
    async def assignment_progress(self, assignment_id: int) -> list[AssignmentProgress]: ...
    async def assignment_questions(self, assignment_id: int) -> list[AssignmentQuestion]: ...
    async def assignments_to_remind(self, now: datetime) -> list[AssignmentRecord]:
        """Not cancelled, past their reminder time and before their deadline."""
        ...
    async def claim_assignment_reminder(
        self, assignment_id: int, person_key: str, when: datetime
    ) -> bool:
        """True once per assignment and person, in whichever process asks first."""
        ...
    async def unsent_assignment_reminders(
        self, claimed_after: datetime, claimed_before: datetime
    ) -> list[tuple[int, str]]: ...
    async def mark_assignment_reminder_sent(
        self, assignment_id: int, person_key: str, when: datetime
    ) -> None: ...
    async def assignments_due(self, now: datetime) -> list[AssignmentRecord]:
        """Past their deadline, not cancelled, their summary not claimed yet."""
        ...
    async def claim_assignment_summary(self, assignment_id: int, when: datetime) -> bool:
        """True once per assignment, in whichever process asks first."""
        ...
    async def unposted_assignment_summaries(
        self, claimed_after: datetime, claimed_before: datetime
    ) -> list[AssignmentRecord]: ...
    async def mark_assignment_summary_posted(self, assignment_id: int, when: datetime) -> None:
        ...


# questions at the right difficulty (bot/core/difficulty.py, bot/storage/difficulty.py)
@dataclass(frozen=True, slots=True)
class AbilityRecord:
    """A person's kept overall ability (None: no first answer yet) and first answers, in
    their order (what their concept abilities are replayed from)."""

    ability: Rating | None
    firsts: tuple[tuple[tuple[str, str], First], ...]


class DifficultyStore(Protocol):
    """The difficulty model's ratings, kept by the materializer."""

    async def ability(self, person_key: str) -> AbilityRecord: ...
    async def question_difficulties(self, quiz_ids: Sequence[str]
                                    ) -> dict[tuple[str, str], Rating]:
        """The kept difficulty of each rated question of these quizzes."""
        ...


# misconceptions a chat holds (bot/core/misconceptions.py, bot/storage/misconceptions.py)
@dataclass(frozen=True, slots=True)
class ChosenOption:
    """A person's latest answer in a chat to one question: the canonical option (-1 for the
    kinds without one), the stored response (a multi's "0,2") and how sure they said they
    were (None: not asked)."""

    quiz_id: str
    question_id: str
    person_key: str
    name: str
    option: int
    response: str | None
    confidence: int | None


class MisconceptionStore(Protocol):
    async def chosen_options(self, chat_key: str, quiz_ids: Sequence[str]
                             ) -> list[ChosenOption]:
        """Each person's latest answer in the chat to each question of these quizzes."""
        ...


class Storage(
    PeopleStore, ChatStore, PostStore, ClosingStore, LeaseStore, AnswerStore, ItemStore,
    RunStore, BoardStore, ScheduleStore, DailyStore, SettingsStore, RoundStore, ReviewStore,
    ReportStore, DraftStore, PrivacyStore, DashboardStore, UploadStore, CommandStore,
    DeliveryStore, LiveStore, AssignmentStore, ReviewFitStore, DifficultyStore,
    MisconceptionStore, Protocol,
):
    """Every role at once: what a backend implements and QuizService is wired with."""

    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def __aenter__(self) -> Self: ...
    async def __aexit__(self, *exc: object) -> None: ...
