"""The in-memory store's tables: plain rows in dicts, what the SQL schemas hold, without the
aggregates (boards are summed from the answers when read)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime


@dataclass
class Person:
    name: str = ""
    locale: str | None = None


@dataclass
class Chat:
    title: str = ""
    locale: str | None = None
    platform_locale: str | None = None


@dataclass
class Answer:
    id: int
    post_id: int
    person_key: str
    option: int
    correct: bool
    answered_at: datetime
    elapsed_ms: int
    chat_key: str
    quiz_id: str
    question_id: str
    daily_date: date | None


@dataclass
class Daily:
    post_id: int
    claimed_at: datetime
    published_at: datetime | None = None


@dataclass
class Round:
    id: int
    chat_key: str
    selector: str | None
    total: int
    mode: str | None
    locale: str
    started_at: datetime
    finished_at: datetime | None = None
    posts: list[int] = field(default_factory=list)
    summary_posted_at: datetime | None = None


@dataclass
class Draft:
    locale: str
    created_at: datetime
    title: str | None = None
    questions: dict[str, str] = field(default_factory=dict)  # ref -> question, in order
    photo: bytes | None = None  # for the next question
