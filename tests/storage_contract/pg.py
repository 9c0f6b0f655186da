"""The PostgreSQL server the tests use: QUIZBOT_TEST_POSTGRES_URL, one fresh database per test.

Without the variable, or with the server unreachable, every PostgreSQL case is skipped by
`require()`, and the session ends with one line saying how many and why (tests/conftest.py's
pytest_terminal_summary); never silently.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from functools import cache

import asyncpg
import pytest

from bot.storage.postgres.url import redact, with_database

ENV = "QUIZBOT_TEST_POSTGRES_URL"
SKIP_PREFIX = "PostgreSQL tests skipped"


@cache
def unavailable() -> str | None:
    """Why PostgreSQL tests cannot run here, or None (asked once per session)."""
    url = os.environ.get(ENV, "").strip()
    if not url:
        return f"{ENV} is not set (e.g. postgresql://postgres@127.0.0.1:5432/test)"

    async def probe() -> None:
        db = await asyncpg.connect(url, timeout=5)
        try:
            await db.execute("SELECT 1")
        finally:
            await db.close()

    try:  # in a thread of its own: a test's event loop may be running here
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, probe()).result()
    except Exception as exc:
        return f"PostgreSQL at {redact(url)} is unreachable ({type(exc).__name__}: {exc})"
    return None


def require() -> str:
    """The server's URL, or skip the test saying why."""
    reason = unavailable()
    if reason is not None:
        pytest.skip(f"{SKIP_PREFIX}: {reason}")
    return os.environ[ENV].strip()


@asynccontextmanager
async def fresh_database(prefix: str = "t") -> AsyncIterator[str]:
    """A new, empty database on the test server for one test; dropped afterwards (also if
    connections are still open: WITH (FORCE))."""
    server = require()
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(server, timeout=10)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield with_database(server, name)
    finally:
        admin = await asyncpg.connect(server, timeout=10)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
