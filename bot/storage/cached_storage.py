"""CachedStorage: the bounded caches both database backends (SqliteStorage, PostgresStorage)
keep in front of their database, and the port methods that go through them.

A backend provides two hooks, `_read(fn, *args)` and `_write(fn, *args)` (run a function of
a connection: an operation written once (queries.py, ops.py) or one of its own; await the
result, a write's after COMMIT), and its own move of a chat (`migrate_chat_op`).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from bot.core.ports import AlreadyHandled, PostRecord, unclaimed_command
from bot.storage import commands, ops, queries
from bot.storage.declared import write
from bot.storage.lru import Expiring, Lru

T = TypeVar("T")
POST_CACHE = 4096  # posts: a few thousand live questions at once
PEOPLE_CACHE = 50_000  # about 5 MB at most
CHAT_CACHE = 10_000
# A language chosen through another process shows here within this long (SQLite: on the same
# file; PostgreSQL: if its NOTIFY is lost); one chosen through this process shows at once (the
# cache entry is replaced).
LOCALE_TTL = 60.0

PersonRow = tuple[str, str | None]  # name, locale
ChatRow = tuple[str, str | None, str | None]  # title, locale, platform_locale


class CachedStorage(ABC):
    @staticmethod
    @abstractmethod
    def migrate_chat_op(db: Any, old: str, new: str) -> Any:
        """The backend's own move of a chat (a write): (old, new) -> bool."""

    def __init__(self) -> None:
        # Caches, each bounded (LRU), so the hot path reads nothing: people and chats recently
        # seen unchanged, to skip redundant upserts; recently used posts; people's and chats'
        # languages. Each is updated or dropped by the write that changes what it holds; a
        # read that raced such a write is not cached (the generation moved).
        self._known_people: Lru[str, str] = Lru(PEOPLE_CACHE)  # key -> name
        self._known_chats: Lru[str, tuple[str, str | None]] = Lru(CHAT_CACHE)
        self._posts: Lru[int, PostRecord] = Lru(POST_CACHE)
        self._person_locales: Expiring[str, str | None] = Expiring(PEOPLE_CACHE, LOCALE_TTL)
        self._chat_rows: Expiring[str, ChatRow | None] = Expiring(CHAT_CACHE, LOCALE_TTL)
        self._generation = 0  # bumped by every change to a cached value
        self._inflight: dict[tuple[str, object], asyncio.Future[Any]] = {}

    @abstractmethod
    def _read(self, fn: Callable[..., Any], *args: Any) -> Awaitable[Any]:
        """Run a read; await its result."""

    @abstractmethod
    def _write(self, fn: Callable[..., Any], *args: Any) -> Awaitable[Any]:
        """Queue a write; await the result (it resolves after COMMIT)."""

    async def _read_once(self, what: str, key: object, fn: Callable[..., Any], *args: Any) -> Any:
        """A read for a cache miss; concurrent misses of one key share it (a storm of clicks
        on a post nobody has read since a restart reads it once)."""
        future = self._inflight.get((what, key))
        if future is None:
            future = asyncio.ensure_future(self._read(fn, *args))
            self._inflight[(what, key)] = future
            future.add_done_callback(lambda _: self._inflight.pop((what, key), None))
        return await asyncio.shield(future)

    async def _effect(self, fn: Callable[..., Any], *args: Any) -> Any:
        """A write that is a command's effect: with the command's key, if it has one not
        claimed yet (core/ports/ CommandKey); AlreadyHandled if the key was stored before."""
        command = unclaimed_command()
        if command is None:
            return await self._write(fn, *args)
        result = await self._write(commands.claimed_then, command.key, command.at, fn, *args)
        if isinstance(result, str) and result == commands.ALREADY:
            raise AlreadyHandled(command.key)
        command.claimed = True
        return result

    claim_command = write(commands.claim_command)
    forget_commands = write(commands.forget_commands)

    def _changed(self) -> None:
        self._generation += 1

    # people and chats ------------------------------------------------------------------
    async def upsert_person(self, key: str, name: str) -> None:
        """A blank name keeps the stored one (the person is created if new)."""
        if self._known_people.get(key) == name or (not name and key in self._known_people):
            return  # no I/O for a known, unchanged person
        row: PersonRow | None = await self._read(queries.person, key)
        if row is None or (name and row[0] != name):
            await self._write(ops.upsert_person, key, name)
        self._known_people.put(key, name or (row[0] if row else ""))

    async def upsert_chat(self, key: str, title: str, platform_locale: str | None = None) -> None:
        known = (title, platform_locale)
        if self._known_chats.get(key) == known:
            return
        row: ChatRow | None = await self._read(queries.chat, key)
        if row is None or row[0] != title or (
            platform_locale is not None and row[2] != platform_locale
        ):
            await self._write(ops.upsert_chat, key, title, platform_locale)
            self._changed()
            self._chat_rows.pop(key)
        self._known_chats.put(key, known)

    async def migrate_chat(self, old: str, new: str) -> bool:
        moved: bool = await self._write(self.migrate_chat_op, old, new)
        self._changed()
        self._posts.clear()
        for key in (old, new):
            self._known_chats.pop(key)
            self._chat_rows.pop(key)
        return moved

    async def set_person_locale(self, key: str, locale: str | None) -> None:
        await self._effect(ops.set_person_locale, key, locale)
        self._changed()
        self._person_locales.put(key, locale)

    async def person_locale(self, key: str) -> str | None:
        if (hit := self._person_locales.get(key)) is not None:
            return hit[0]
        generation = self._generation
        row: PersonRow | None = await self._read_once(
            "person", key, queries.person, key)
        locale = None if row is None else row[1]
        if generation == self._generation:
            self._person_locales.put(key, locale)
        return locale

    async def person_name(self, key: str) -> str | None:
        row: PersonRow | None = await self._read(queries.person, key)
        return None if row is None else row[0]

    async def set_chat_locale(self, key: str, locale: str | None) -> None:
        await self._effect(ops.set_chat_locale, key, locale)
        self._changed()
        self._chat_rows.pop(key)

    async def _chat(self, key: str) -> ChatRow | None:
        if (hit := self._chat_rows.get(key)) is not None:
            return hit[0]
        generation = self._generation
        row: ChatRow | None = await self._read_once("chat", key, queries.chat, key)
        if generation == self._generation:
            self._chat_rows.put(key, row)
        return row

    async def chat_locale(self, key: str) -> str | None:
        row = await self._chat(key)
        return None if row is None else row[1]

    async def chat_platform_locale(self, key: str) -> str | None:
        row = await self._chat(key)
        return None if row is None else row[2]

    async def chat_title(self, key: str) -> str | None:
        row = await self._chat(key)
        return None if row is None else row[0]

    # posts -----------------------------------------------------------------------------
    async def get_post(self, post_id: int) -> PostRecord | None:
        # A cached post may miss a close made by another process; record_answer re-checks.
        if (post := self._posts.get(post_id)) is not None:
            return post
        generation = self._generation
        read: PostRecord | None = await self._read_once(
            "post", post_id, queries.post, post_id
        )
        if read is not None and generation == self._generation:
            self._posts.put(post_id, read)
        return read
