"""What a copy between two databases moves (`quizbot db copy`, copy.py): the tables in the order
foreign keys need them, each with its key and the columns whose values the two store
differently, and the side each database plays in it. Each backend's side is in its own package
(sqlite/copy_side.py, postgres/copy_side.py); neither imports the other.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

BATCH = 5000
PROGRESS = "copy_progress"


@dataclass(frozen=True)
class Table:
    name: str
    key: tuple[str, ...]
    columns: tuple[str, ...]
    times: tuple[str, ...] = ()  # timestamps (SQLite: unix ms)
    dates: tuple[str, ...] = ()  # dates (SQLite: YYYY-MM-DD)
    lists: tuple[str, ...] = ()  # arrays (SQLite: JSON)
    flags: tuple[str, ...] = ()  # booleans (SQLite: 0/1)


# in the order foreign keys need them
TABLES = (
    Table("persons", ("key",), ("key", "name", "locale")),
    Table("chats", ("key",), ("key", "title", "locale", "platform_locale", "kind")),
    Table("runs", ("id",), ("id", "person_key", "chat_key", "quiz_id", "questions", "locale",
                            "started_at", "finished_at"),
          times=("started_at", "finished_at"), lists=("questions",)),
    Table("posts", ("id",), ("id", "chat_key", "quiz_id", "question_id", "option_order",
                             "locale", "kind", "run_id", "owner_key", "created_at",
                             "closes_at", "closed_at", "summary_posted_at"),
          times=("created_at", "closes_at", "closed_at", "summary_posted_at"),
          lists=("option_order",)),
    Table("post_refs", ("ref",), ("ref", "post_id")),
    Table("answers", ("id",), ("id", "post_id", "person_key", "option", "correct",
                               "answered_at", "elapsed_ms", "chat_key", "quiz_id",
                               "question_id", "daily_date", "response", "confidence"),
          times=("answered_at",), dates=("daily_date",), flags=("correct",)),
    Table("schedules", ("chat_key",), ("chat_key", "local_time", "tz", "selector",
                                       "open_minutes", "updated_at", "updated_by"),
          times=("updated_at",)),
    Table("daily_posts", ("chat_key", "local_date"), ("chat_key", "local_date", "post_id",
                                                      "claimed_at", "published_at"),
          times=("claimed_at", "published_at"), dates=("local_date",)),
    Table("chat_settings", ("chat_key",), ("chat_key", "question_seconds", "mode",
                                           "updated_at", "updated_by", "chart", "admins_only",
                                           "peer_threshold", "peer_discussion", "confidence",
                                           "target"),
          times=("updated_at",), flags=("chart", "admins_only", "confidence")),
    Table("rounds", ("id",), ("id", "chat_key", "selector", "total", "mode", "locale",
                              "started_at", "finished_at", "summary_posted_at"),
          times=("started_at", "finished_at", "summary_posted_at")),
    Table("round_posts", ("round_id", "step"), ("round_id", "step", "post_id")),
    Table("reminders", ("person_key",), ("person_key", "local_time", "tz", "updated_at"),
          times=("updated_at",)),
    Table("reminder_days", ("person_key", "local_date"), ("person_key", "local_date",
                                                          "claimed_at", "sent_at"),
          times=("claimed_at", "sent_at"), dates=("local_date",)),
    Table("problem_reports", ("id",), ("id", "quiz_id", "question_id", "person_key",
                                       "person_name", "chat_key", "text", "created_at",
                                       "updated_at", "resolved_at", "resolution"),
          times=("created_at", "updated_at", "resolved_at")),
    Table("drafts", ("author_key",), ("author_key", "locale", "title", "created_at",
                                      "photo"),
          times=("created_at",)),
    Table("draft_questions", ("author_key", "number"), ("author_key", "number", "question",
                                                        "ref", "added_at"),
          times=("added_at",)),
    Table("authored_packs", ("quiz_id",), ("quiz_id", "author_key", "pack", "published_at",
                                           "withdrawn_at"),
          times=("published_at", "withdrawn_at")),
    Table("authored_files", ("quiz_id", "path"), ("quiz_id", "path", "data")),
    Table("dashboard_access", ("chat_key",), ("chat_key", "generation")),
    Table("live_sessions", ("id",), ("id", "chat_key", "kind", "host_key", "selector", "total",
                                     "seconds", "speed", "teams", "locale", "state",
                                     "closes_at", "paused_ms", "version", "started_at",
                                     "finished_at", "team_choice", "lobby_ref"),
          times=("closes_at", "started_at", "finished_at"), flags=("speed", "team_choice")),
    Table("live_steps", ("session_id", "step"), ("session_id", "step", "post_id", "skipped"),
          flags=("skipped",)),
    Table("live_players", ("session_id", "person_key"), ("session_id", "person_key", "name",
                                                         "team", "joined_at", "locale"),
          times=("joined_at",)),
    Table("live_revotes", ("post_id", "person_key"), ("post_id", "person_key", "option",
                                                      "correct", "answered_at"),
          times=("answered_at",), flags=("correct",)),
    # assignments (bot/core/assignments.py): after runs, which their runs name
    Table("assignments", ("id",), ("id", "chat_key", "selector", "quizzes", "total", "token",
                                   "locale", "tz", "deadline", "remind_at", "created_at",
                                   "created_by", "cancelled_at", "summary_claimed_at",
                                   "summary_posted_at"),
          times=("deadline", "remind_at", "created_at", "cancelled_at", "summary_claimed_at",
                 "summary_posted_at"), lists=("quizzes",)),
    Table("assignment_runs", ("assignment_id", "run_id"), ("assignment_id", "run_id",
                                                           "person_key", "quiz_id")),
    Table("assignment_reminders", ("assignment_id", "person_key"),
          ("assignment_id", "person_key", "claimed_at", "sent_at"),
          times=("claimed_at", "sent_at")),
    # the platforms' file ids of uploaded question cards: valid for the same bot on any
    # database, so a moved community does not upload every card again
    Table("uploads", ("key",), ("key", "ref", "uploaded_at"), times=("uploaded_at",)),
    # each person's fitted FSRS parameters (fsrs_params.py): copied, not fitted again (a fit
    # is not repeatable to the bit), so the destination schedules as the source did
    Table("review_params", ("person_key",), ("person_key", "parameters", "reviews", "items",
                                             "fitted_at", "default_loss", "fitted_loss",
                                             "default_rmse", "fitted_rmse"),
          times=("fitted_at",)),
)
# derived from the answers, rebuilt by the destination: counted to check, never copied
REBUILT = ("totals", "scores")
# tables a copy leaves behind on purpose: derived data, bookkeeping, short-lived claims
NOT_COPIED = {
    "scores", "totals", "week_scores", "week_window", "rank_counts", "streaks",
    "chat_figures", "chat_day_figures", "item_firsts", "item_options", "item_groups",
    "item_responses",
    "day_runs", "cards", "card_days", "cards_pending",
    # the difficulty model's ratings (difficulty.py), rebuilt by the destination's materializer
    "difficulty_questions", "difficulty_people", "difficulty_firsts", "difficulty_pending",
    "materialized", "schema_version", PROGRESS, "leases", "sqlite_sequence",
    "handled_commands", "delivery_steps",
    "send_budgets",  # a token's next send slot: of the moment (token_budget.py)
}


@dataclass
class Progress:
    last: tuple[Any, ...] | None = None  # the last key copied
    copied: int = 0
    done: bool = False


class Side:
    """One database, read or written row by row in key order, rows as plain Python values
    (datetimes, dates, lists, bools)."""

    where: str

    async def connect(self) -> None: ...
    async def close(self) -> None: ...
    async def count(self, table: str) -> int: raise NotImplementedError
    async def tables(self) -> set[str]: raise NotImplementedError
    async def batch(self, table: Table, after: tuple[Any, ...] | None,
                    limit: int) -> list[tuple[Any, ...]]: raise NotImplementedError
    async def write(self, table: Table, rows: list[tuple[Any, ...]],
                    progress: Progress, source: str) -> None: raise NotImplementedError
    async def progress(self) -> tuple[str, dict[str, Progress]] | None: raise NotImplementedError
    async def start_progress(self, source: str) -> None: raise NotImplementedError
    async def finish(self) -> None: raise NotImplementedError
    async def forget_progress(self) -> None: raise NotImplementedError
    async def empty(self) -> None: raise NotImplementedError
    async def in_use(self) -> str | None:
        """Why another process may be writing to this database (None: nothing says so)."""
        raise NotImplementedError


def key_json(key: tuple[Any, ...]) -> str:
    return json.dumps([v.isoformat() if isinstance(v, date) else v for v in key])


def key_of(table: Table, text: str) -> tuple[Any, ...]:
    values = json.loads(text)
    return tuple(
        date.fromisoformat(v) if column in table.dates else v
        for column, v in zip(table.key, values, strict=True)
    )


def from_ms(value: int | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value / 1000, UTC)


def to_ms(value: datetime | None) -> int | None:
    return None if value is None else int(value.timestamp() * 1000)
