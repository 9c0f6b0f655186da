from __future__ import annotations

import atexit
import os
import random
import shutil
import tempfile
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.content import Catalog, load_catalog
from bot.core.ports import Storage
from bot.core.service import QuizService
from bot.reports.png import PngCharts
from bot.storage import SqliteStorage
from tests.clock import FakeClock
from tests.database_copies import postgres_database, sqlite_copy
from tests.sqlite_in_loop import LoopStorage
from tests.storage_contract.pg import SKIP_PREFIX, unavailable

os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
# The content cache of every bot the tests start in a folder of this process's own (one per
# pytest-xdist worker), removed at its end, not the user's ~/.cache; a test of the cache sets
# its own. The bot processes the tests start drop every QUIZBOT_ variable, so XDG_CACHE_HOME
# (their default) points there too.
_RUN_CACHE = Path(tempfile.mkdtemp(prefix="quizbot-test-cache-"))
atexit.register(shutil.rmtree, _RUN_CACHE, ignore_errors=True)
os.environ["XDG_CACHE_HOME"] = str(_RUN_CACHE / "xdg")
os.environ.setdefault("QUIZBOT_CACHE_DIR", str(_RUN_CACHE / "quizbot"))

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_PACKS = Path(__file__).parent / "data" / "packs"
BUNDLED = ROOT / "content"

# The store behind the shared `storage` fixture (and so behind every suite that uses the
# service): `sqlite` (a file per test), or `postgres` (a fresh database per test on
# QUIZBOT_TEST_POSTGRES_URL's server). Unset, every suite runs on SQLite and the suites of what
# a user sees (BOTH_STORES) once more on PostgreSQL in the same session, so one pytest-xdist
# queue balances both (the PostgreSQL cases skip with one line without a server); set, that
# store alone.
STORE = os.environ.get("QUIZBOT_TEST_STORE", "").strip()
STORES = ("sqlite", "postgres")
BOTH_STORES = tuple(Path(__file__).parent / suite
                    for suite in ("behaviour", "telegram_e2e", "discord_e2e"))
# CI sets it: the session stops before it starts if the PostgreSQL tests would be skipped.
REQUIRE_POSTGRES = "QUIZBOT_TEST_REQUIRE_POSTGRES"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "sqlite_only(reason): the test reads or drives SQLite itself; skipped when "
        "QUIZBOT_TEST_STORE=postgres",
    )
    config.addinivalue_line(
        "markers",
        "memory_store: the shared `storage` fixture is SQLite's store on an in-memory "
        "database in the event loop (the core's unit tests need a store, not a database "
        "file); QUIZBOT_TEST_STORE does not apply",
    )
    config.addinivalue_line(
        "markers",
        "slow: a crash, load or real-time test of several seconds; `make test-quick` leaves "
        "it out",
    )
    if STORE and STORE not in STORES:
        raise pytest.UsageError(f"QUIZBOT_TEST_STORE={STORE!r}: use one of {', '.join(STORES)}")
    if STORE == "postgres" and (reason := unavailable()) is not None:
        raise pytest.UsageError(f"QUIZBOT_TEST_STORE=postgres, but {reason}")
    if os.environ.get(REQUIRE_POSTGRES) and (reason := unavailable()) is not None:
        raise pytest.UsageError(f"{REQUIRE_POSTGRES} is set, but {reason}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """With QUIZBOT_TEST_STORE unset, a test of BOTH_STORES on the shared `storage` fixture
    runs on each store (`[sqlite]`, `[postgres]`); one that reads SQLite itself (`sqlite_only`)
    or runs on the in-loop store (`memory_store`) runs once."""
    node = metafunc.definition
    if (STORE or "storage" not in metafunc.fixturenames
            or not any(node.path.is_relative_to(suite) for suite in BOTH_STORES)
            or node.get_closest_marker("sqlite_only") or node.get_closest_marker("memory_store")):
        return
    metafunc.parametrize("storage", STORES, indirect=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """With QUIZBOT_TEST_STORE=postgres, the tests that run on the shared `storage` fixture
    run on PostgreSQL; a test that does not use it (its own SQLite file, processes of their
    own, no database at all) would only run again unchanged, and is skipped saying so."""
    if STORE != "postgres":
        return
    for item in items:
        marker = item.get_closest_marker("sqlite_only")
        if item.get_closest_marker("memory_store") is not None:
            item.add_marker(pytest.mark.skip(
                reason=f"QUIZBOT_TEST_STORE={STORE} changes nothing here: the test runs on "
                "SQLite's store on an in-memory database"
            ))
        elif marker is not None:
            reason = marker.kwargs.get("reason") or (marker.args[0] if marker.args else "")
            item.add_marker(pytest.mark.skip(
                reason=f"SQLite only (QUIZBOT_TEST_STORE={STORE}): {reason}"
            ))
        elif "storage" not in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.skip(
                reason=f"QUIZBOT_TEST_STORE={STORE} changes nothing here: the test does not "
                "use the shared storage fixture (it has its own SQLite file, or no database)"
            ))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The PostgreSQL cases skipped for want of a server: one line, whatever their number."""
    reasons: list[str] = []
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        if SKIP_PREFIX in reason:
            reasons.append(reason[reason.index(SKIP_PREFIX):])
    if reasons:
        terminalreporter.write_line(
            f"{len(reasons)} PostgreSQL test(s) skipped: "
            f"{reasons[0].removeprefix(SKIP_PREFIX).lstrip(': ')}",
            yellow=True, bold=True,
        )


@pytest.fixture
def sample_catalog() -> Catalog:
    return load_catalog(SAMPLE_PACKS)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))


@pytest.fixture
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """The storage behind the service: SQLite's store on an in-memory database in the event
    loop for a test marked `memory_store` (and not `sqlite_only`), else a SqliteStorage file,
    or on PostgreSQL (QUIZBOT_TEST_STORE=postgres, or a BOTH_STORES test's `[postgres]` case)
    a PostgresStorage on a database of its own; either a copy of a migrated one
    (tests/database_copies.py)."""
    node = request.node
    if node.get_closest_marker("memory_store") and not node.get_closest_marker("sqlite_only"):
        async with LoopStorage() as memory:
            yield memory
        return
    if getattr(request, "param", STORE) == "postgres":
        from bot.storage.postgres.storage import PostgresStorage

        async with postgres_database(migrated=True) as url:
            store: Any = PostgresStorage(url, pool_size=4)
            await store.open()
            yield store
            await store.close()
        return
    store = SqliteStorage(await sqlite_copy(tmp_path))
    await store.open()
    yield store
    await store.close()


@pytest.fixture
def service(sample_catalog: Catalog, storage: Storage, clock: FakeClock) -> QuizService:
    return QuizService(sample_catalog, storage, clock, random.Random(7), charts=PngCharts())
