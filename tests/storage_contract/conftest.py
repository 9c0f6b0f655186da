"""Every test in this folder runs once per store: SQLite (a file) and PostgreSQL (a fresh
database on QUIZBOT_TEST_POSTGRES_URL's server, skipped with one visible line without it).

The database is a copy of a migrated one (tests/database_copies.py), which is what the
store's first open() would have made of an empty one, except for the tests of what opening
does to a database: migrating every earlier version, processes migrating together, refusing
a database that is not quizbot's or is newer. They write to it before any store opens it, or
open several at once, so they get it empty (EMPTY, or the `empty_database` marker)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.storage_contract.backends import Backend, Store, backend_for

BACKENDS = ("sqlite", "postgres")
EMPTY = ("test_migrations.py", "test_identity.py", "test_names.py")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "empty_database: the storage contract's `backend` fixture gives an empty database, "
        "not a copy of a migrated one (a test of what opening does to a database)",
    )


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    node = request.node
    empty = node.path.name in EMPTY or node.get_closest_marker("empty_database") is not None
    async with backend_for(request.param, tmp_path, migrated=not empty) as chosen:
        yield chosen


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[Store]:
    async with backend.opened() as opened:
        yield opened
