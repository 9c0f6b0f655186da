"""Values passed between the core and the adapters. No platform types here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum, StrEnum
from typing import TYPE_CHECKING

from bot.content.items import Kind

if TYPE_CHECKING:
    from bot.core.schedule import Schedule

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
