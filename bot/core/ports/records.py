"""The records the core and the storage pass to each other: what is stored (a post, an answer,
a run, a round, a live game, a report, a draft...), what a query returns (totals, rows, item
figures) and the outcomes and cursors of the storage's calls. Plain frozen dataclasses, no
behaviour: the rules that read them live in the core's use cases."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

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
    """One person's first answer to one question (item analysis, bot/core/item_stats.py)."""

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
    target: int | None = None  # percent right aimed at for someone alone; None: 75


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
    question's discrimination (bot/core/item_stats.py) without reading one answer."""

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
    option: int  # canonical index; -1 for the kinds not answered with one option
    correct: bool
    answered_at: datetime
    elapsed_ms: int
    round_id: int | None  # the round (/quiz <quiz> N) the post was asked in
    response: str | None = None  # those kinds' canonical answer (AnswerRecord.response)


# where the next page of a chat's answers starts: after (person_key, answered_at, id)
AnswerCursor = tuple[str, datetime, int]
# where the next page of a chat's people starts: after (correct, time_ms, person_key) in
# board order (most correct first, then the faster, then by key)
PeopleCursor = tuple[int, int, str]


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
    lobby_ref: str | None = None  # the platform's reference to the lobby message


@dataclass(frozen=True, slots=True)
class LivePlayer:
    person_key: str
    name: str
    team: int | None  # 0-based
    joined_at: datetime
    locale: str | None = None  # the platform's language for the person when they joined


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


# assignments (bot/core/assignments.py) ------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NewAssignment:
    """A quiz or topic given to a chat to finish privately by `deadline` (UTC)."""

    chat_key: str
    selector: str  # as the admin named it: a quiz id or a tag
    quizzes: tuple[str, ...]  # the quizzes it names, taken in this order
    total: int  # their questions when it was assigned
    token: str  # in the announcement's link or button: a guessed id is not enough
    locale: str
    tz: str  # the zone the deadline was given in
    deadline: datetime
    remind_at: datetime  # when the members who have not finished are reminded
    created_at: datetime
    created_by: str | None


@dataclass(frozen=True, slots=True)
class AssignmentRecord:
    id: int
    new: NewAssignment
    cancelled_at: datetime | None
    summary_claimed_at: datetime | None  # the deadline's summary, claimed once
    summary_posted_at: datetime | None


@dataclass(frozen=True, slots=True)
class AssignmentProgress:
    """One member's progress: questions of the assignment's set answered in its runs."""

    person_key: str
    name: str
    answered: int
    right: int
    started_at: datetime
    last_answer_at: datetime | None


@dataclass(frozen=True, slots=True)
class AssignmentQuestion:
    """How the takers did on one question of the set (their first answer in its runs)."""

    quiz_id: str
    question_id: str
    answered: int
    right: int
