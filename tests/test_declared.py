"""A store's method declared as its operation (bot/storage/declared.py): how it is run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.storage.declared import effect, read, write
from bot.storage.sql import Sql


async def answer_count(db: Sql, post_id: int, kind: str | None = None) -> int:
    """How many answers."""
    return 0


class Recording:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = []

    async def _read(self, fn: Callable[..., Any], *args: Any) -> Any:
        self.calls.append(("read", fn, args))
        return 7

    async def _write(self, fn: Callable[..., Any], *args: Any) -> Any:
        self.calls.append(("write", fn, args))
        return 8

    async def _effect(self, fn: Callable[..., Any], *args: Any) -> Any:
        self.calls.append(("effect", fn, args))
        return 9

    count = read(answer_count)
    bump = write(answer_count)
    claimed = effect(answer_count)


async def test_each_kind_runs_the_operation_where_its_kind_says() -> None:
    store = Recording()
    assert await store.count(3) == 7
    assert await store.bump(3, "daily") == 8
    assert await store.claimed(4) == 9
    assert store.calls == [("read", answer_count, (3,)), ("write", answer_count, (3, "daily")),
                           ("effect", answer_count, (4,))]


async def test_keywords_become_positions_with_the_operations_defaults() -> None:
    store = Recording()
    await store.count(post_id=5)
    await store.count(5, kind="quiz")
    assert [args for _, _, args in store.calls] == [(5, None), (5, "quiz")]


def test_the_method_keeps_its_name_and_the_operations_docstring() -> None:
    method = Recording().count
    assert method.__name__ == "count"
    assert method.__doc__ == "How many answers."
    assert Recording.count.fn is answer_count  # on the class: the declaration itself
