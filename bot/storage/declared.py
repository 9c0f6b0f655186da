"""A store's method declared as the operation it runs, instead of written out to forward it:

    class Store(CachedStorage):
        post_by_ref = read(queries.post_by_ref)   # async def post_by_ref(db: Sql, ref: str)

`store.post_by_ref(ref)` runs `queries.post_by_ref(sql, ref)` through the backend's `_read`
(`write`: `_write`, after COMMIT; `effect`: `_effect`, with the command's idempotency key).
The method's signature is the operation's without its connection, so mypy --strict checks the
store against the core's ports (bot/core/ports/) through the operation itself: a parameter
or a return type that drifts from the port is an error where the store is used as a port.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from bot.storage.sql import Sql

P = ParamSpec("P")
T = TypeVar("T")


Operation = Callable[Concatenate[Sql, P], Coroutine[Any, Any, T]]


class Declared(Generic[P, T]):
    def __init__(self, fn: Operation[P, T], how: str) -> None:
        self.fn = fn
        self.how = how  # the backend's method that runs it: _read, _write or _effect
        self.signature = inspect.signature(fn)
        self.name = fn.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, store: None, owner: type) -> Declared[P, T]: ...
    @overload
    def __get__(self, store: object, owner: type) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, store: object, owner: type) -> Any:
        if store is None:
            return self
        run = getattr(store, self.how)
        fn, signature = self.fn, self.signature

        async def method(*args: Any, **kwargs: Any) -> Any:
            if kwargs:  # the backends run an operation with positional arguments
                bound = signature.bind(None, *args, **kwargs)
                bound.apply_defaults()
                args = bound.args[1:]
            return await run(fn, *args)

        method.__name__ = self.name
        method.__doc__ = fn.__doc__
        return method


def read(fn: Operation[P, T]) -> Declared[P, T]:
    return Declared(fn, "_read")


def write(fn: Operation[P, T]) -> Declared[P, T]:
    return Declared(fn, "_write")


def effect(fn: Operation[P, T]) -> Declared[P, T]:
    """A write that is a command's effect (cached_storage.py's `_effect`)."""
    return Declared(fn, "_effect")
