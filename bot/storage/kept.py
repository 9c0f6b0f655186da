"""The aggregates kept from the answers by a module of their own each, written once for both
databases: the dashboard's item figures, the daily streaks per chat, the review cards, the
difficulty model's ratings.

One list, so that adding one is one line here: both materializers apply each chunk of answers
to every one of them, both moves of a chat recount the two chats in every one, and a person's
deletion takes them out of every one. The contract suite recounts each from the answers
(tests/storage_contract/backends.py).
"""

from __future__ import annotations

from typing import Protocol

from bot.storage import cards, day_runs, difficulty, item_figures
from bot.storage.sql import Sql


class Kept(Protocol):
    async def apply_chunk(self, db: Sql, where: str, order: str, *args: object) -> None:
        """Add the answers `where` selects (in `order`, the materializer's) to the
        aggregate, inside the materializer's transaction."""
        ...

    async def recount(self, db: Sql, chat_key: str) -> None:
        """Count a chat's part again from its answers alone (a chat's move)."""
        ...

    async def forget_person(self, db: Sql, person_key: str) -> None:
        """Take a person out (their deletion)."""
        ...


KEPT: tuple[Kept, ...] = (item_figures, day_runs, cards, difficulty)


async def apply_chunk(db: Sql, where: str, order: str, *args: object) -> None:
    for kept in KEPT:
        await kept.apply_chunk(db, where, order, *args)


async def recount(db: Sql, chat_key: str) -> None:
    for kept in KEPT:
        await kept.recount(db, chat_key)


async def forget_person(db: Sql, person_key: str) -> None:
    for kept in KEPT:
        await kept.forget_person(db, person_key)
