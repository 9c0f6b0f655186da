from __future__ import annotations

import os
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.content import Catalog, load_catalog
from bot.core.service import QuizService
from bot.storage import SqliteStorage
from tests.clock import FakeClock

os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_PACKS = Path(__file__).parent / "data" / "packs"
BUNDLED = ROOT / "content"


@pytest.fixture
def sample_catalog() -> Catalog:
    return load_catalog(SAMPLE_PACKS)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[SqliteStorage]:
    store = SqliteStorage(tmp_path / "quiz.db")
    await store.open()
    yield store
    await store.close()


@pytest.fixture
def service(sample_catalog: Catalog, storage: SqliteStorage, clock: FakeClock) -> QuizService:
    return QuizService(sample_catalog, storage, clock, random.Random(7))
