"""The core's values: what passes between the core and the adapters, and every value type one
part of the core hands another (a schedule, an item analysis's report, review stats, an option's
letter). It imports no other module of bot/core, so a use case's module is imported for its
rules, never for a type, and bot/core holds no import circle (tests/test_architecture.py). No
platform types here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from enum import IntEnum, StrEnum
from zoneinfo import ZoneInfo

from bot.content.items import Kind

PLATFORM_ID = re.compile(r"(tg|dc):-?\d+")  # a person key, never a name to show


@dataclass(frozen=True, slots=True)
class Person:
    """Someone who answers. `key` is platform-prefixed: "tg:123", "dc:456", "console:ada"."""

    key: str
    name: str
    platform_locale: str | None = None

    @property
    def known_name(self) -> str:
        """The name to store: blank where the platform gave none or gave an id instead, so
        storage keeps the name it has (a blank never overwrites one)."""
        name = self.name.strip()
        return "" if name == self.key or PLATFORM_ID.fullmatch(name) else name


@dataclass(frozen=True, slots=True)
class Chat:
    """Where questions are posted: "tg:-100123" (group), "dc:789" (channel), "console"."""

    key: str
    title: str = ""
    is_private: bool = False
    platform_locale: str | None = None  # the platform's language for it (a Discord server's)


class Period(StrEnum):
    DAY = "day"
    WEEK = "week"
    ALL = "all"


class AnswerStatus(StrEnum):
    ACCEPTED = "accepted"
    ALREADY_ANSWERED = "already_answered"
    CLOSED = "closed"
    UNKNOWN_POST = "unknown_post"
    INVALID_OPTION = "invalid_option"
    NOT_YOURS = "not_yours"  # a question of someone else's private quiz run


@dataclass(frozen=True, slots=True)
class Picks:
    """Several options at once (Kind.MULTI), as shown indexes: every right one and no other
    is right."""

    shown: frozenset[int]


@dataclass(frozen=True, slots=True)
class Typed:
    """A typed answer: a number (Kind.NUMERIC), a short text (Kind.TEXT), or the letters of an
    order (Kind.ORDER, "B A D C"), exactly as the person typed it."""

    text: str


@dataclass(frozen=True, slots=True)
class Ordered:
    """Options put in order (Kind.ORDER), first to last, as shown indexes."""

    shown: tuple[int, ...]


# What a person answers: a shown option's index (Kind.CHOICE, Kind.TRUEFALSE), or one of these
Response = int | Picks | Typed | Ordered


class Confidence(IntEnum):
    """How sure the person said they were (an optional tap with the answer)."""

    GUESSING = 0
    THINK_SO = 1
    SURE = 2


@dataclass(frozen=True, slots=True)
class ShownQuestion:
    """One question as posted in one chat, rendered in one locale, options in shown order."""

    post_id: int
    chat_key: str
    quiz_id: str
    quiz_title: str
    question_id: str
    prompt: str
    options: tuple[str, ...]
    correct: int  # index into `options` (shown order)
    explanation: str  # short form, fits a Telegram quiz poll
    details: str | None  # long form for after the question closes
    locale: str
    # its place in the round or quiz run it belongs to ("question 2 of 5"); None for a
    # question on its own (/quiz, a daily question, a review card)
    number: int | None
    total: int | None
    run_id: int | None = None
    closes_at: datetime | None = None
    owner_key: str | None = None  # a private question: only this person may answer
    # how the chat shows it: "polls", "buttons", or None (the platform's default); the core
    # decides it (what was asked, else the chat's running round, else its /settings)
    mode: str | None = None
    # shown on the question's card (bot/reports/card.py) in `locale`: a snippet and the
    # Pygments language it is in, a formula (mathtext), an image's file
    code: str | None = None
    code_language: str = "text"
    formula: str | None = None
    image: str | None = None
    image_alt: str | None = None  # the image's text in `locale`, for screen readers
    kind: Kind = Kind.CHOICE
    # Kind.MULTI: the shown indexes of every right option; Kind.ORDER: the shown indexes in
    # the right order; () otherwise (`correct` is the one right option, -1 when none is)
    correct_set: tuple[int, ...] = ()
    unit: str | None = None  # Kind.NUMERIC: the answer's unit in `locale` ("GB")
    daily: bool = False  # the chat's scheduled daily question (labelled so where it is shown)
    # a picture sent with the explanation (its file, PNG or JPEG) and its text in `locale`
    explanation_image: str | None = None
    explanation_image_alt: str | None = None

    @property
    def has_card(self) -> bool:
        """Whether it is shown with a card: code, a formula or an image."""
        return self.code is not None or self.formula is not None or self.image is not None

    @property
    def personal(self) -> bool:
        """One person's question (a private question or a quiz run), not the chat's."""
        return self.owner_key is not None


@dataclass(frozen=True, slots=True)
class RunSummary:
    run_id: int
    quiz_id: str
    quiz_title: str
    score: int
    total: int
    missed: tuple[MissedQuestion, ...]


@dataclass(frozen=True, slots=True)
class MissedQuestion:
    quiz_id: str
    question_id: str
    number: int
    prompt: str
    correct_text: str
    chosen_text: str | None
    explanation: str


@dataclass(frozen=True, slots=True)
class AnswerResult:
    status: AnswerStatus
    post_id: int
    correct: bool = False
    chosen: int | None = None  # shown index; for ALREADY_ANSWERED the earlier, final choice
    # (None for an answer that is not one option: several, typed or an order)
    correct_option: int | None = None  # shown index
    correct_text: str = ""
    chosen_text: str = ""
    explanation: str = ""
    details: str | None = None
    locale: str = "en"
    # the person's answer as shown back to them when it is not one option ("A, C", "2.9 GB",
    # "B → A → C"), and for Kind.MULTI (right picks, right options): (2, 3) is two of three
    response_text: str = ""
    partial: tuple[int, int] | None = None
    # INVALID_OPTION of a typed answer that could not be read: the kind it should be typed
    # as (what to tell the person: "a number, e.g. 2.9"); None for a forged or stale one
    expected: Kind | None = None
    # For a question of a quiz run: the next question, or the summary once the run ends.
    next_question: ShownQuestion | None = None
    run_summary: RunSummary | None = None
    # one person's question: show them the result and explanation (a shared question's
    # result is shown by its poll or by the summary when it closes)
    personal: bool = False

    @property
    def accepted(self) -> bool:
        return self.status is AnswerStatus.ACCEPTED


@dataclass(frozen=True, slots=True)
class Answerer:
    name: str
    person_key: str
    elapsed_ms: int


# The steps of a summary's delivery, each stored before it is sent (core/delivery.py)
CHART_STEP, TEXT_STEP = "chart", "text"


@dataclass(frozen=True, slots=True)
class PostSummary:
    """What a chat sees once when a question closes."""

    post_id: int
    chat_key: str
    question: ShownQuestion
    answered: int
    right: int
    per_option: tuple[int, ...]  # answers per shown option
    fastest: tuple[Answerer, ...]  # fastest correct answerers, quickest first
    refs: tuple[str, ...] = ()  # platform references bound to the post (poll id, message id)
    chart: bytes | None = None  # a PNG of the shares per option (/settings chart on)
    # steps of its delivery that went out, or may have, in an earlier try that failed or
    # whose process died (CHART_STEP, TEXT_STEP): not to be sent again
    done: frozenset[str] = frozenset()
    # the right answer as text, for every kind ("2.87 GB (±0.1)", "B) … → D) …")
    correct_text: str = ""
    # a typed kind's (numeric, text) most common answers as shown, with their counts
    typed: tuple[tuple[str, int], ...] = ()

    @property
    def share_right(self) -> float:
        return self.right / self.answered if self.answered else 0.0


@dataclass(frozen=True, slots=True)
class BoardRow:
    rank: int
    person_key: str
    name: str
    correct: int
    answered: int
    time_ms: int
    day_streak: int = 0  # current run of days with a correct daily answer


@dataclass(frozen=True, slots=True)
class Leaderboard:
    chat_key: str | None  # None: across all chats
    period: Period
    rows: tuple[BoardRow, ...]
    me: BoardRow | None  # the caller's own row, even outside the top N


@dataclass(frozen=True, slots=True)
class QuizStats:
    quiz_id: str
    title: str
    answered: int
    correct: int


@dataclass(frozen=True, slots=True)
class PersonStats:
    person_key: str
    name: str
    answered: int
    correct: int
    current_streak: int  # consecutive correct answers, most recent first
    best_streak: int
    per_quiz: tuple[QuizStats, ...] = field(default=())
    day_streak: int = 0  # consecutive local days with a correct daily answer
    best_day_streak: int = 0
    # (confidence said, answered, right) where the chat asked how sure, most sure first
    calibration: tuple[tuple[Confidence, int, int], ...] = ()

    @property
    def accuracy(self) -> float:
        return self.correct / self.answered if self.answered else 0.0


@dataclass(frozen=True, slots=True)
class QuizInfo:
    id: str
    title: str
    tags: tuple[str, ...]
    questions: int


@dataclass(frozen=True, slots=True)
class ScheduleStatus:
    schedule: Schedule
    next_post: datetime  # local time in the schedule's zone


# A daily schedule (bot/core/schedule.py parses one and says when it is due)
@dataclass(frozen=True, slots=True)
class Schedule:
    chat_key: str
    at: time  # local wall-clock time
    tz: str  # IANA zone name
    selector: str | None = None  # quiz id or tag to draw from; None: every quiz
    open_minutes: int | None = None  # None: open until the next daily question
    updated_at: datetime | None = None  # when it was set; no post for earlier moments

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.tz)

    def local_date(self, now: datetime) -> date:
        return now.astimezone(self.zone).date()

    def moment(self, day: date) -> datetime:
        """The UTC instant of this schedule on a local date.

        A wall time skipped by a spring-forward change resolves to the instant just after the
        gap (zoneinfo's fold=0 rule, e.g. 02:30 → 03:30 new time); a time repeated in autumn
        takes its first occurrence. Either way there is exactly one moment per local day.
        """
        local = datetime.combine(day, self.at, tzinfo=self.zone)
        return local.astimezone(UTC)

    def due_day(self, now: datetime) -> date | None:
        """The local date whose post is due at `now` (it may already have been posted)."""
        today = self.local_date(now)
        moment = self.moment(today)
        if now < moment:
            return None
        if self.updated_at is not None and moment < self.updated_at:
            return None  # set after today's moment: the first post is tomorrow
        return today

    def next_moment(self, now: datetime, posted_today: bool) -> datetime:
        today = self.local_date(now)
        day = today
        if posted_today or (self.due_day(now) is None and now >= self.moment(today)):
            day = today + timedelta(days=1)
        return self.moment(day)


# The letter a reader sees for a shown option
LETTERS = "ABCDEFGHIJKL"


def letter(index: int) -> str:
    return LETTERS[index]


# Spaced review (bot/core/review.py)
@dataclass(frozen=True, slots=True)
class ReviewStats:
    cards: int
    due: int
    reviews: int
    right: int

    @property
    def retention(self) -> float | None:
        """Share of reviews answered right; None before the first review."""
        return self.right / self.reviews if self.reviews else None


# Item analysis (bot/core/item_stats.py computes these)
MIN_ANSWERS = 10  # below this, no flag: the shares are too noisy to act on
OBSERVED_EASY = 0.8  # share right from this up: observed easy
OBSERVED_HARD = 0.4  # below this: observed hard
ONE_OPTION = (Kind.CHOICE, Kind.TRUEFALSE)  # the kinds answered with one option


class Flag(StrEnum):
    TOO_EASY = "too easy"
    TOO_HARD = "too hard"
    DISTRACTOR = "distractor beats answer"
    NEGATIVE = "negative discrimination"


@dataclass(frozen=True, slots=True)
class OptionShare:
    """One option as a reader names it: its letter where they saw it, its text."""

    canonical: int
    letter: str
    text: str
    count: int
    share: float | None  # None: nobody answered the question
    correct: bool


@dataclass(frozen=True, slots=True)
class ItemStats:
    question_id: str
    prompt: str
    answer: int  # the correct option's canonical index
    option_counts: tuple[int, ...]  # answers per canonical option
    discrimination: float | None
    discriminated: int  # people in the discrimination (with a score on the other questions)
    median_ms: float | None
    flags: tuple[Flag, ...]
    options: tuple[str, ...] = ()  # the options' text by canonical index, in the report's locale
    order: tuple[int, ...] = ()  # order[shown] = canonical, as a chat saw it; (): the pack's
    stated: str | None = None  # the difficulty the pack states (easy, medium, hard), if any
    kind: Kind = Kind.CHOICE
    # the kinds not answered with one option: how many answered and how many were right (a
    # multi's option counts are its picks, numbers and texts have none)
    total: int | None = None
    right_count: int | None = None
    right_options: tuple[int, ...] = ()  # a multi's right options (canonical)
    typed: tuple[tuple[str, int, bool], ...] = ()  # most common answers: (as read, n, right)
    wrong: tuple[tuple[str, int], ...] = ()  # the most common wrong ones

    @property
    def shown(self) -> tuple[int, ...]:
        """The canonical options in the order they are lettered A, B, … for the reader."""
        return self.order or tuple(range(len(self.option_counts)))

    def letter_of(self, canonical: int) -> str:
        return letter(self.shown.index(canonical))

    def shown_options(self) -> tuple[OptionShare, ...]:
        """Every option in the reader's letters and order, with its count and share."""
        n = self.answered
        return tuple(
            OptionShare(
                canonical=o, letter=letter(position),
                text=self.options[o] if o < len(self.options) else "",
                count=self.option_counts[o], share=self.option_counts[o] / n if n else None,
                correct=o in self.right_options if self.kind is Kind.MULTI
                else o == self.answer,
            )
            for position, o in enumerate(self.shown)
        )

    @property
    def answered(self) -> int:
        return self.total if self.total is not None else sum(self.option_counts)

    @property
    def observed(self) -> str | None:
        """The difficulty its answers show (easy, medium, hard); None below MIN_ANSWERS."""
        share = self.share_right
        if share is None or self.answered < MIN_ANSWERS:
            return None
        return "easy" if share >= OBSERVED_EASY else "hard" if share < OBSERVED_HARD \
            else "medium"

    @property
    def right(self) -> int:
        if self.right_count is not None:
            return self.right_count
        return self.option_counts[self.answer] if 0 <= self.answer < len(self.option_counts) \
            else 0

    @property
    def share_right(self) -> float | None:
        return self.right / self.answered if self.answered else None

    @property
    def option_shares(self) -> tuple[float, ...] | None:
        n = self.answered
        return tuple(c / n for c in self.option_counts) if n else None

    @property
    def popular_distractors(self) -> tuple[int, ...]:
        """Wrong options chosen more often than the answer (of a choice)."""
        if self.kind not in ONE_OPTION:
            return ()
        return tuple(
            i for i, c in enumerate(self.option_counts) if i != self.answer and c > self.right
        )


@dataclass(frozen=True, slots=True)
class QuizReport:
    quiz_id: str
    title: str
    people: int  # who answered at least one of its questions
    items: tuple[ItemStats, ...]  # in pack order, answered or not
    stale: int = 0  # answers left out: the question or option is no longer in the pack
    as_seen: bool = False  # letters as the chat saw each question (else the pack's letters)

    @property
    def answers(self) -> int:
        return sum(item.answered for item in self.items)

    @property
    def max_options(self) -> int:
        return max((len(item.option_counts) for item in self.items), default=0)
