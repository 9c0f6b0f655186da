"""scripts/bench_postgres.py's count of the server's CPU: which backends it reads and how it
attributes them, asserted by structure (pids, roles, rows), never by a measured figure.

The PostgreSQL cases run on a fresh database of QUIZBOT_TEST_POSTGRES_URL's server (skipped
with one visible line without it)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import asyncpg
import pytest

from tests.storage_contract.pg import fresh_database, require

ROOT = Path(__file__).resolve().parent.parent
LOCAL_PROC = Path("/proc/self/stat").is_file()


def load(name: str) -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules.setdefault(name, module)  # a dataclass looks its module up there
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "scripts"))


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load("bench_postgres")


def database_of(url: str) -> str:
    return url.rsplit("/", 1)[-1].split("?")[0]


@pytest.mark.skipif(not LOCAL_PROC, reason="no /proc here")
def test_a_process_is_read_only_under_its_own_name() -> None:
    common = load("bench_common")
    me = Path("/proc/self/comm").read_text().strip()
    assert isinstance(common.proc_cpu_named(os.getpid(), me), float)
    assert common.proc_cpu_named(os.getpid(), me + "-not") is None
    assert common.proc_cpu_named(2**31 - 1, me) is None  # no such pid


@pytest.mark.skipif(not LOCAL_PROC, reason="no /proc here")
async def test_backends_of_the_database_only_also_those_that_come_and_go(
        bench: ModuleType) -> None:
    server = require()
    async with fresh_database("bcpu") as url:
        early = await asyncpg.connect(url)
        elsewhere = await asyncpg.connect(server)  # another database of the same server
        backends = bench.Backends(server, database_of(url))
        try:
            await backends.start()
            if not backends.local:
                pytest.skip("the test server is not on this machine")
            late = await asyncpg.connect(url)
            gone = await asyncpg.connect(url)
            for db in (late, gone):
                await db.fetchval("SELECT count(*) FROM generate_series(1, 3000000)")
            await backends._sample()  # what the poll does meanwhile
            await gone.close()
            await backends.stop()
            cpu = backends.cpu()
            pids = {db.get_server_pid() for db in (early, late, gone)}
            assert set(cpu) == pids  # not the poll's own, not another database's
            assert elsewhere.get_server_pid() not in cpu
            # counted from their start: the query's CPU is in, also for the one that left
            assert backends.base[late.get_server_pid()] == 0.0
            assert cpu[late.get_server_pid()] > 0 and cpu[gone.get_server_pid()] > 0
            await late.close()
        finally:
            await backends.close()
            await early.close()
            await elsewhere.close()


@pytest.mark.skipif(not LOCAL_PROC, reason="no /proc here")
async def test_a_server_elsewhere_gives_no_server_figure(bench: ModuleType,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    server = require()
    monkeypatch.setattr(bench, "proc_cpu_named", lambda pid, name: None)
    async with fresh_database("bcpu") as url:
        db = await asyncpg.connect(url)
        backends = bench.Backends(server, database_of(url))
        try:
            await backends.start()
            await backends.stop()
        finally:
            await backends.close()
            await db.close()
    assert not backends.local and backends.cpu() == {}


def run(server_us: float | None, local: bool = True) -> dict[str, Any]:
    return {"cpu_us": 10.0, "server_us": server_us, "server_local": local,
            "server_roles_us": {"writer": 1.0, "materializer": 2.0} if local else {},
            "backends": 4, "catch_up_ms": 250.0}


def test_cpu_rows_beside_the_batched_floor(bench: ModuleType) -> None:
    kinds = {"floor": "one INSERT", "batched": "batched"}
    runs = {"core": [run(30.0), run(40.0)], "floor": [run(50.0)] * 2,
            "batched": [run(20.0)] * 2}
    rows = bench.cpu_rows("1 process", runs, kinds)
    assert [r.name for r in rows] == [
        "CPU per answer, 1 process (the processes, all threads)",
        "CPU per answer, 1 process, the server's backends",
        "CPU per answer, 1 process, client + server",
    ]
    assert [r.floor_name for r in rows] == ["batched"] * 3
    assert rows[1].value == [30.0, 40.0] and rows[1].floor == [20.0, 20.0]
    assert rows[2].value == [40.0, 50.0] and rows[2].floor == [30.0, 30.0]
    assert rows[1].note.startswith("quizbot's backends: materializer 2.0, writer 1.0 µs")
    assert "one INSERT: 50.0 µs" in rows[1].note

    runs["floor"] = [run(None, local=False)] * 2
    (only,) = bench.cpu_rows("1 process", runs, kinds)
    assert only.name == "CPU per answer, 1 process (the processes, all threads)"
    assert "not on this machine" in only.note


@pytest.mark.slow
@pytest.mark.skipif(not LOCAL_PROC, reason="no /proc here")
async def test_a_run_reads_every_backend_by_what_it_serves(bench: ModuleType) -> None:
    """One short run of quizbot and of the batched floor, as the bench runs them."""
    server = require()
    core = await bench.processes("core", server, 1, 0.3)
    if not core["server_local"]:
        pytest.skip("the test server is not on this machine")
    # the writer, the materializer, the listener, the read pool's first connection
    assert set(core["server_roles_us"]) == {"writer", "materializer", "listen", "reads"}
    assert core["backends"] == 4
    assert core["server_us"] == pytest.approx(sum(core["server_roles_us"].values()), abs=0.1)
    floor = await bench.processes("batched", server, 1, 0.3)
    assert set(floor["server_roles_us"]) == {"pool"} and floor["backends"] == bench.POOL
