"""Every test in this folder runs once per store: SQLite (a file) and PostgreSQL (a fresh
database on QUIZBOT_TEST_POSTGRES_URL's server, skipped with one visible line without it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.storage_contract.backends import Backend, Store, backend_for

BACKENDS = ("sqlite", "postgres")


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend_for(request.param, tmp_path) as chosen:
        yield chosen


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[Store]:
    async with backend.opened() as opened:
        yield opened
