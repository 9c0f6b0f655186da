"""A read that finds the PostgreSQL server out of connection slots (max_connections, SQLSTATE
53300) waits for one of the process's own pooled connections instead of failing: on a busy
server an answer must not be refused with "not saved" only because the read pool could not
grow. asyncpg's pool is stood in for, so no server is needed (the server's refusal is the
exception asyncpg raises)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import pytest

from bot.storage.postgres import storage as pg_storage
from bot.storage.postgres.storage import PostgresStorage


class FullServerPool:
    """Refuses `refusals` acquisitions as a full server does, then hands out a connection."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.acquired = 0

    def get_size(self) -> int:
        return 2

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[Any]:
        if self.refusals:
            self.refusals -= 1
            raise asyncpg.TooManyConnectionsError("sorry, too many clients already")
        self.acquired += 1
        yield object()


def storage_with(pool: FullServerPool) -> PostgresStorage:
    store = PostgresStorage("postgresql://quizbot@127.0.0.1:1/none")
    store._pool = pool
    return store


async def read_one(db: Any) -> str:
    return "read"


async def test_a_read_waits_for_a_pooled_connection_and_says_so_once(
        caplog: pytest.LogCaptureFixture) -> None:
    pool = FullServerPool(refusals=3)
    store = storage_with(pool)
    with caplog.at_level(logging.WARNING, logger=pg_storage.__name__):
        assert await store._read(read_one) == "read"
        pool.refusals = 2
        assert await store._read(read_one) == "read"
    assert pool.acquired == 2
    warnings = [r.getMessage() for r in caplog.records if "connection slot" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert "max_connections" in warnings[0] and "none" in warnings[0]


async def test_a_server_full_for_longer_than_the_wait_fails_the_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_storage, "SLOTS_WAIT", 0.1)
    pool = FullServerPool(refusals=1_000)
    with pytest.raises(asyncpg.TooManyConnectionsError):
        await asyncio.wait_for(storage_with(pool)._read(read_one), 5)
    assert pool.acquired == 0 and pool.refusals < 1_000
