"""A backend as the written-once storage (store.py) sees it: where its operations are and how
it stores a time and a day. How it runs them (`_read`, `_write`: a thread, a pool) is the
backend class's own.

Each namespace holds functions of a connection with the same names and arguments in every
backend (SQLite's plain functions run in its threads, PostgreSQL's coroutines on its pool):
the statements that differ between the two SQL dialects stay there, and nothing above them
is written twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from types import ModuleType


@dataclass(frozen=True)
class Dialect:
    ops: ModuleType  # writes: people, chats, posts, runs, schedules, leases
    queries: ModuleType  # reads of the same
    boards: ModuleType  # the aggregates' reads (leaderboard, streaks, daily days)
    rounds: ModuleType  # chat settings and rounds
    review: ModuleType  # spaced review's answers and reminders
    reports: ModuleType  # problem reports
    drafts: ModuleType  # authoring drafts and published packs
    when: Callable[[datetime], object]  # a time as the operations take it
    day: Callable[[date], object]  # a local date as the operations take it
