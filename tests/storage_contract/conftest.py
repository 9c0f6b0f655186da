"""Every test in this folder runs once per store: in memory, SQLite (a file) and PostgreSQL (a
fresh database on QUIZBOT_TEST_POSTGRES_URL's server, skipped with one visible line without
it). A test that reads tables or sets a database's own options is skipped on the in-memory
store with its reason."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.storage_contract.backends import Backend, Store, backend_for

BACKENDS = ("memory", "sqlite", "postgres")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked `database` (a writer, a materializer, migrations, files, connections)
    runs on SQLite and PostgreSQL only."""
    memory = [
        item for item in items if item.get_closest_marker("database") is not None
        and (callspec := getattr(item, "callspec", None)) is not None
        and callspec.params.get("backend") == "memory"
    ]
    if memory:
        config.hook.pytest_deselected(items=memory)
        items[:] = [item for item in items if item not in memory]


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend_for(request.param, tmp_path) as chosen:
        yield chosen


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[Store]:
    async with backend.opened() as opened:
        yield opened
