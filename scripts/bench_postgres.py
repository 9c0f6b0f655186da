"""Benchmark PostgresStorage: answers/s from 1, 2 and 4 processes on one database, and every
board at a million answers. Writes bench_postgres.json (rendered by scripts/bench_report.py),
asserts nothing.

    python scripts/bench_postgres.py [--quick] [--url postgresql://…] [--json FILE]
                                     [--answers-only] [--no-pin]

The server is --url, else QUIZBOT_BENCH_POSTGRES_URL, else QUIZBOT_TEST_POSTGRES_URL; the
script creates databases of its own there (bench_…) and drops them at the end. Without a URL
it says so in one line, writes a JSON with no figures and exits 0 (`make bench` runs it).

Every figure stands beside its floors, measured in the same run on the same server, floors
and quizbot in turns (three runs with one process; one with 2 and 4; --quick: one process,
one run). The machine's speed and load are taken at the start and end of each table.

1. answers/s, p99 and CPU per answer with 1, 2 and 4 processes, each answering through
   QuizService.answer (its own PostgresStorage) with 50 people at once. Floors, the same
   number of processes inserting the same rows with raw asyncpg: (a) one INSERT per
   transaction over 8 connections (PostgreSQL's own group commit), (b) batched: the rows
   queued meanwhile inserted by one executemany in one transaction, what a writer that
   batches can reach. CPU in three rows: the answering processes (all threads), the
   server's backends serving their connections (utime + stime in /proc/<pid>/stat of every
   client backend of the run's database in pg_stat_activity, polled during the run so a
   connection opened meanwhile counts too; by what each serves: writer, materializer, reads,
   listen), and both. Quizbot's run ends with materialize(): what was not yet applied to
   the boards when the answering stopped is applied, and counted. With the server on
   another machine the server's rows are left out, and the table says so. With the server
   on this machine and two CPUs or more, its processes run on one CPU and the bench's on
   the others (issue 36's decision 3; `Pinned`; --no-pin leaves them all on every CPU).
2. every board (global and one chat; day, week, all time; the top 10, and a mid-table
   person's rank) through QuizService.leaderboard, with 1,000,000 answers by 100,000 people
   in 50 chats over 60 days (the SQLite bench's data); floor: one row read by primary key
   through the same pool. Filling and applying a million answers takes minutes: `make bench`
   leaves this part out (--answers-only).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import asyncpg  # noqa: E402
from bench_common import (  # noqa: E402
    Calibration,
    Row,
    cpu_model,
    open_loop,
    part,
    proc_cpu_named,
    self_cpu,
)

from bot.content import load_catalog  # noqa: E402
from bot.core.clock import SystemClock  # noqa: E402
from bot.core.models import Chat, Person  # noqa: E402
from bot.core.service import QuizService  # noqa: E402
from bot.storage.postgres.storage import PostgresStorage  # noqa: E402
from bot.storage.postgres.url import redact, with_database  # noqa: E402

CONCURRENCY = 50  # people answering at once, per process
STEADY_RATE = 1000  # answers/s due in the open-loop runs
POOL = 8  # the floor's connections per process (PostgresStorage's read pool has as many)
INSERT = (
    "INSERT INTO answers(post_id, person_key, option, correct, answered_at, elapsed_ms,"
    " chat_key, quiz_id, question_id) VALUES ($1, $2, 0, $3, $4, $5, $6, 'q', 'x')"
)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


async def create_database(server: str) -> str:
    name = f"bench_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(server)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return with_database(server, name)


async def drop_database(server: str, url: str) -> None:
    name = url.rsplit("/", 1)[-1].split("?")[0]
    admin = await asyncpg.connect(server)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


# 1. processes ------------------------------------------------------------------------------
async def worker(kind: str, url: str, index: int, seconds: float, rate: int = 0) -> None:
    """One process: set up, say `ready`, wait for `go` on stdin, answer for `seconds`, print
    the count and latencies as JSON. With `rate`, answers are due at that steady rate (open
    loop, latency from each one's due time) instead of CONCURRENCY answering at once."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    people = 2000
    latencies: list[float] = []
    stop = False

    async def run(answer: Any, roles: Callable[[], dict[int, str]],
                  finish: Callable[[], Awaitable[None]] | None = None) -> None:
        """Answer for `seconds`; then `finish` (quizbot: apply what the materializer holds,
        so its cost is in the run's). `roles`: this process's connections, backend pid →
        what it serves, said at `ready` and with the figures (a pool grows meanwhile)."""
        nonlocal stop
        counter = iter(range(10**9))

        async def one_worker() -> None:
            for i in counter:
                if stop:
                    return
                t0 = time.perf_counter()
                await answer(i)
                latencies.append(time.perf_counter() - t0)

        print("ready", json.dumps(roles()), flush=True)
        await reader.readline()  # go
        start, (cpu0, _) = time.perf_counter(), self_cpu()
        if rate:
            latencies.extend((await open_loop(answer, rate, seconds)).latencies)
        else:
            tasks = [asyncio.ensure_future(one_worker()) for _ in range(CONCURRENCY)]
            await asyncio.sleep(seconds)
            stop = True
            await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - start
        if finish is not None:
            await finish()
        catch_up, (cpu1, _) = time.perf_counter() - start - elapsed, self_cpu()
        print(json.dumps({"answers": len(latencies), "seconds": elapsed, "cpu": cpu1 - cpu0,
                          "p50": pct(latencies, 0.5), "p99": pct(latencies, 0.99),
                          "catch_up": catch_up, "roles": roles()}),
              flush=True)
        await reader.readline()  # bye: the server's CPU is read, the connections may close

    if kind == "core":
        store = PostgresStorage(url)
        async with store:
            service = QuizService(load_catalog(ROOT / "content"), store, SystemClock(),
                                  random.Random(index))
            quiz = next(iter(service.catalog))
            chat = Chat(f"bench:{index}", "bench")
            posts = [
                (await service.questions.post(chat, quiz.id, quiz.questions[0].id, "en")).post_id
                for _ in range(400)
            ]
            crowd = [Person(f"p:{index}:{i}", f"person {i}") for i in range(people)]

            async def answer(i: int) -> None:
                result = await service.answer(posts[i // people], crowd[i % people], i % 3)
                assert result.accepted, result

            def roles() -> dict[int, str]:
                # the bench reads the storage's connections, the product is not changed
                assert store._writer is not None
                found = {pid: role for role, db in (
                    ("writer", store._writer._db), ("materializer", store.materializer._db),
                    ("listen", store._listener)) if db is not None
                    for pid in [db.get_server_pid()]}
                return {**pool_pids(store._pool, "reads"), **found}

            await run(answer, roles, store.materialize)
        return
    pool = await asyncpg.create_pool(url, min_size=POOL, max_size=POOL)
    try:
        chat_key = f"bench:{index}"
        async with pool.acquire() as db:
            await db.execute("INSERT INTO chats(key) VALUES ($1)", chat_key)
            await db.executemany("INSERT INTO persons(key, name) VALUES ($1, $2)",
                                 [(f"p:{index}:{i}", f"person {i}") for i in range(people)])
            posts = [r[0] for r in await db.fetch(
                "INSERT INTO posts(chat_key, quiz_id, question_id, option_order, locale,"
                " created_at) SELECT $1, 'q', 'x', '{0,1,2}', 'en', now()"
                " FROM generate_series(1, 400) RETURNING id", chat_key)]
        now = datetime.now(UTC)

        def row(i: int) -> tuple[Any, ...]:
            return (posts[i // people], f"p:{index}:{i % people}", i % 2 == 0, now, 1000,
                    chat_key)

        async def raw(i: int) -> None:
            async with pool.acquire() as db:
                await db.execute(INSERT, *row(i))

        def floor_roles() -> dict[int, str]:
            return pool_pids(pool, "pool")

        if kind == "floor":
            await run(raw, floor_roles)
            return
        # "batched": group commit by hand, what a writer can reach: one task takes every row
        # queued meanwhile and inserts them with one executemany in one transaction
        queue: list[tuple[tuple[Any, ...], asyncio.Future[None]]] = []
        wake = asyncio.Event()

        async def writer() -> None:
            async with pool.acquire() as db:
                while True:
                    await wake.wait()
                    wake.clear()
                    batch = queue[:]
                    del queue[:]
                    if not batch:
                        continue
                    async with db.transaction():
                        await db.executemany(INSERT, [r for r, _ in batch])
                    for _, future in batch:
                        future.set_result(None)

        async def batched(i: int) -> None:
            future: asyncio.Future[None] = loop.create_future()
            queue.append((row(i), future))
            wake.set()
            await future

        task = asyncio.create_task(writer())
        await run(batched, floor_roles)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    finally:
        await pool.close()


def pool_pids(pool: Any, role: str) -> dict[int, str]:
    """The backend pids of an asyncpg pool's open connections."""
    return {holder._con.get_server_pid(): role for holder in pool._holders
            if holder._con is not None and not holder._con.is_closed()}


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[1])


def threads_of(pid: int) -> list[int]:
    return [int(t) for t in os.listdir(f"/proc/{pid}/task")]


class Pinned:
    """The database server on a CPU of its own and this bench (the bot's processes and the
    floors it starts, which inherit it) on the others, the same for both sides (issue 36,
    decision 3): on a 2-CPU machine they otherwise take turns on the same cores, and the p99
    measures who got the CPU. Every postgres process of this machine's server is pinned (a
    backend forks from the postmaster, so new connections inherit it) and put back at the
    end. `why_not` says why nothing was pinned: a server elsewhere, one CPU, no permission."""

    def __init__(self) -> None:
        self.saved: dict[int, set[int]] = {}  # pid or thread id → its CPUs before
        self.server_cpus: set[int] = set()
        self.bench_cpus: set[int] = set()
        self.postmaster = 0
        self.why_not = ""

    async def pin(self, server: str) -> None:
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            self.why_not = "one CPU: the server and the bench share it"
            return
        db = await asyncpg.connect(server)
        try:
            backend = await db.fetchval("SELECT pg_backend_pid()")
        finally:
            await db.close()
        if proc_cpu_named(backend, "postgres") is None:
            self.why_not = "the server is not on this machine"
            return
        self.postmaster = parent_of(backend)
        self.server_cpus, self.bench_cpus = {cpus[0]}, set(cpus[1:])
        try:
            for pid in self._server_pids():
                self._set(pid, self.server_cpus)
            for tid in threads_of(os.getpid()):
                self._set(tid, self.bench_cpus)
        except PermissionError:
            self.unpin()
            self.why_not = "no permission to pin the server's processes"

    def _server_pids(self) -> list[int]:
        pids = [self.postmaster]
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if parent_of(int(entry)) == self.postmaster:
                        pids.append(int(entry))
                except (OSError, ValueError):
                    pass  # gone meanwhile
        return pids

    def _set(self, pid: int, cpus: set[int]) -> None:
        try:
            self.saved.setdefault(pid, os.sched_getaffinity(pid))
            os.sched_setaffinity(pid, cpus)
        except ProcessLookupError:
            pass

    def unpin(self) -> None:
        everything = set(range(os.cpu_count() or 1))
        if self.postmaster:  # backends forked while pinned too
            for pid in self._server_pids():
                self.saved.setdefault(pid, everything)
        for pid, cpus in self.saved.items():
            try:
                os.sched_setaffinity(pid, cpus)
            except (ProcessLookupError, PermissionError):
                pass
        self.saved.clear()

    def describe(self) -> str:
        if self.why_not:
            return f"Not pinned ({self.why_not})."
        return (f"The server's processes pinned to CPU {', '.join(map(str, self.server_cpus))}; "
                f"this bench, quizbot's processes and the floors' to CPU "
                f"{', '.join(map(str, sorted(self.bench_cpus)))} (sched_setaffinity, as "
                "`taskset` does).")


class Backends:
    """The server's CPU for one database: utime + stime (/proc/<pid>/stat) of every backend
    serving a connection to it (pg_stat_activity), from `start()` to `stop()`. Polled while
    the run goes, so a backend that connects meanwhile (a pool growing) is counted from its
    start, and one that disconnects keeps its last reading. `local` is False when a backend
    is not a postgres process of this machine: the server runs elsewhere, no figure then."""

    POLL = 0.2  # s

    def __init__(self, server: str, database: str) -> None:
        self.server, self.database = server, database
        self.base: dict[int, float] = {}  # pid → CPU at start (0 for one that came later)
        self.last: dict[int, float] = {}  # pid → CPU at its last reading
        self.foreign: set[int] = set()  # pids that are not this machine's postgres
        self._db: Any = None
        self._task: asyncio.Task[None] | None = None
        self._sampling = asyncio.Lock()  # one query at a time on the connection

    async def start(self) -> None:
        self._db = await asyncpg.connect(self.server)
        await self._sample(first=True)
        self._task = asyncio.create_task(self._poll())

    async def stop(self) -> None:
        try:
            if self._task is not None:
                self._task.cancel()
                await asyncio.gather(self._task, return_exceptions=True)
                await self._sample()
        finally:
            await self.close()

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._db is not None:
            await self._db.close()
            self._db = None

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(self.POLL)
            await self._sample()

    async def _sample(self, first: bool = False) -> None:
        # only pids listed now are read: a pid that ended may be another process's by now
        async with self._sampling:  # the poll and a caller's reading may overlap
            records = await self._db.fetch(
                "SELECT pid FROM pg_stat_activity WHERE datname = $1"
                " AND backend_type = 'client backend'", self.database)
        for record in records:
            pid = record["pid"]
            cpu = proc_cpu_named(pid, "postgres")
            if cpu is None:
                if first:  # later, it may be one that just ended
                    self.foreign.add(pid)
                continue
            self.base.setdefault(pid, cpu if first else 0.0)
            self.last[pid] = cpu

    @property
    def local(self) -> bool:
        return bool(self.last) and not self.foreign

    def cpu(self) -> dict[int, float]:
        """Seconds of CPU per backend pid over the run."""
        return {pid: self.last[pid] - self.base[pid] for pid in self.last}


async def processes(kind: str, server: str, count: int, seconds: float, rate: int = 0
                    ) -> dict[str, Any]:
    """`count` worker processes of `kind` on one fresh database, started together; the
    client processes' CPU (each its own, all threads) and the server's (the backends of
    every connection to that database) over the same run."""
    url = await create_database(server)
    backends = Backends(server, url.rsplit("/", 1)[-1].split("?")[0])
    try:
        async with PostgresStorage(url):  # the schema
            pass
        children = [
            await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--worker", kind, "--url", url, "--index", str(i),
                "--seconds", str(seconds), "--rate", str(rate),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            )
            for i in range(count)
        ]
        roles: dict[int, str] = {}
        for child in children:
            assert child.stdout is not None
            word, _, said = (await child.stdout.readline()).decode().partition(" ")
            assert word.strip() == "ready", word
            roles.update({int(pid): role for pid, role in json.loads(said).items()})
        await backends.start()
        for child in children:
            assert child.stdin is not None
            child.stdin.write(b"go\n")
            await child.stdin.drain()
        results = []
        for child in children:
            assert child.stdout is not None
            results.append(json.loads(await child.stdout.readline()))
        await backends.stop()  # every process has its figures and its connections still open
        for child in children:
            assert child.stdin is not None
            child.stdin.write(b"bye\n")
            await child.stdin.drain()
        for child in children:
            await child.wait()
        for r in results:
            roles.update({int(pid): role for pid, role in r["roles"].items()})
        answers = sum(r["answers"] for r in results)
        by_role: dict[str, float] = {}
        for pid, cpu in backends.cpu().items():
            role = roles.get(pid, "connected during the run")
            by_role[role] = by_role.get(role, 0.0) + cpu * 1e6 / answers
        return {
            "rate": sum(r["answers"] / r["seconds"] for r in results),
            "p50_ms": ms(statistics.median(r["p50"] for r in results)),
            "p99_ms": ms(max(r["p99"] for r in results)),
            "cpu_us": sum(r["cpu"] for r in results) * 1e6 / answers,
            "server_local": backends.local,
            "server_us": sum(by_role.values()) if backends.local else None,
            "server_roles_us": {k: round(v, 2) for k, v in sorted(by_role.items())}
            if backends.local else {},
            "backends": len(backends.last),
            "catch_up_ms": ms(max(r["catch_up"] for r in results)),
        }
    finally:
        await backends.close()
        await drop_database(server, url)


# 2. boards at a million answers ------------------------------------------------------------
async def fill_boards(url: str, answers: int, people: int, chats: int, days: int) -> None:
    """The SQLite bench's data, written with COPY: `answers` answers of `people` people in
    `chats` chats over `days` days up to now, 50 per post, the first post of each chat and
    day a daily question. The materializer applies them when the storage opens."""
    rng = random.Random(5)
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    posts = answers // 50
    span = timedelta(days=days)
    end = today + timedelta(days=1) - timedelta(minutes=2)
    db = await asyncpg.connect(url)
    try:
        await db.execute("SET synchronous_commit = off")  # filling only
        await db.copy_records_to_table(
            "persons", columns=["key", "name"],
            records=[(f"p:{i}", f"person {i}") for i in range(people)])
        await db.copy_records_to_table(
            "chats", columns=["key", "title"],
            records=[(f"c:{i}", f"chat {i}") for i in range(chats)])
        post_rows, daily_rows, meta = [], [], []
        seen: set[tuple[str, date]] = set()
        for i in range(posts):
            chat = f"c:{i % chats}"
            created = end - span + (span * i) / posts
            local = created.date()
            daily = (chat, local) not in seen
            seen.add((chat, local))
            post_rows.append((i + 1, chat, "q", "x", [0, 1, 2, 3], "en", created,
                              "daily" if daily else "quiz", created))
            if daily:
                daily_rows.append((chat, local, i + 1, created))
            meta.append((chat, created, local if daily else None))
        await db.copy_records_to_table(
            "posts", columns=["id", "chat_key", "quiz_id", "question_id", "option_order",
                              "locale", "created_at", "kind", "closed_at"], records=post_rows)
        await db.execute("SELECT setval(pg_get_serial_sequence('posts', 'id'), $1)", posts)
        await db.copy_records_to_table(
            "daily_posts", columns=["chat_key", "local_date", "post_id", "claimed_at"],
            records=daily_rows)
        batch: list[tuple[Any, ...]] = []
        columns = ["post_id", "person_key", "option", "correct", "answered_at", "elapsed_ms",
                   "chat_key", "quiz_id", "question_id", "daily_date"]
        for i in range(posts):
            chat, created, daily_date = meta[i]
            for person in rng.sample(range(people), 50):
                elapsed = rng.randrange(60_000)
                batch.append((i + 1, f"p:{person}", 0, rng.random() < 0.6,
                              created + timedelta(milliseconds=elapsed), elapsed, chat, "q",
                              "x", daily_date))
            if len(batch) >= 100_000:
                await db.copy_records_to_table("answers", columns=columns, records=batch)
                batch = []
        if batch:
            await db.copy_records_to_table("answers", columns=columns, records=batch)
    finally:
        await db.close()


async def mid_table(url: str, chat: str, period: str) -> tuple[str, int]:
    db = await asyncpg.connect(url)
    try:
        until = await db.fetchval("SELECT until FROM week_window")
        if period == "all":
            source, params = "totals WHERE chat_key = $1", [chat]
        elif period == "week":
            source, params = "week_scores WHERE chat_key = $1", [chat]
        else:
            source, params = "scores WHERE chat_key = $1 AND day = $2", [chat, until]
        size = await db.fetchval(f"SELECT count(*) FROM {source}", *params)
        key = await db.fetchval(
            f"SELECT person_key FROM {source} ORDER BY correct DESC, time_ms, person_key"
            f" OFFSET ${len(params) + 1} LIMIT 1", *params, size // 2)
    finally:
        await db.close()
    return ("nobody" if key is None else key), int(size)


async def boards(url: str, repeats: int) -> tuple[list[dict[str, Any]], dict[str, float]]:
    results = []
    async with PostgresStorage(url) as store:
        service = QuizService(load_catalog(ROOT / "content"), store, SystemClock(),
                              random.Random(1))
        floor: list[float] = []
        pool = store._pool
        for i in range(repeats):
            t0 = time.perf_counter()
            async with pool.acquire() as db:
                await db.fetchrow("SELECT correct, answered, time_ms FROM totals"
                                  " WHERE chat_key = $1 AND person_key = $2", "*", f"p:{i}")
            floor.append(time.perf_counter() - t0)
        for chat in (None, Chat("c:3", "chat 3")):
            for period in ("day", "week", "all"):
                key, size = await mid_table(url, "*" if chat is None else chat.key, period)
                for who in (None, Person(key, "")):
                    times = []
                    for _ in range(repeats):
                        t0 = time.perf_counter()
                        board = await service.leaderboard(chat, period, person=who)
                        times.append(time.perf_counter() - t0)
                    if who is not None and size > 20:
                        assert board.me is not None and board.me.rank > 10
                    results.append({
                        "board": f"{'global' if chat is None else 'one chat'} / {period}"
                                 f" / {'top 10' if who is None else 'mid-table rank'}",
                        "people": size, "p50_ms": ms(pct(times, 0.5)),
                        "p99_ms": ms(pct(times, 0.99)),
                        "rank": None if who is None or board.me is None else board.me.rank,
                    })
    return results, {"p50_ms": ms(pct(floor, 0.5)), "p99_ms": ms(pct(floor, 0.99))}


# the table ---------------------------------------------------------------------------------
async def server_info(server: str) -> dict[str, Any]:
    db = await asyncpg.connect(server)
    try:
        version = await db.fetchval("SHOW server_version")
        settings = {name: await db.fetchval(f"SHOW {name}") for name in
                    ("synchronous_commit", "shared_buffers", "max_connections")}
    finally:
        await db.close()
    return {"cpus": os.cpu_count(), "cpu": cpu_model(), "python": platform.python_version(),
            "postgresql": version, **settings, "asyncpg": asyncpg.__version__,
            "date": datetime.now(UTC).isoformat(timespec="seconds")}


NOT_LOCAL = ("the server's backends are not counted: the server is not on this machine (its"
             " backends' pids are not postgres processes here)")


def cpu_rows(label: str, runs: dict[str, list[dict[str, Any]]],
             kinds: dict[str, str]) -> list[Row]:
    """CPU per answer of the answering processes, of the server's backends, and of both,
    each beside the batched floor's from the same runs; quizbot's backends by what they
    serve in the note (medians over the runs). A server elsewhere: the processes' row only,
    saying so."""
    core, batched = runs["core"], runs["batched"]
    client = Row(f"CPU per answer, {label} (the processes, all threads)", "µs",
                 [r["cpu_us"] for r in core], [r["cpu_us"] for r in batched],
                 kinds["batched"])
    if not all(r["server_local"] for v in runs.values() for r in v):
        client.note = NOT_LOCAL
        return [client]
    roles = sorted({role for r in core for role in r["server_roles_us"]},
                   key=lambda role: -statistics.median(
                       r["server_roles_us"].get(role, 0.0) for r in core))
    split = ", ".join(
        f"{role} {statistics.median(r['server_roles_us'].get(role, 0.0) for r in core):.1f}"
        for role in roles)
    note = (f"quizbot's backends: {split} µs ({max(r['backends'] for r in core)} backends);"
            " what the materializer had not applied when the answering stopped took up to"
            f" {max(r['catch_up_ms'] for r in core) / 1000:.1f} s to apply, counted in every"
            " CPU row")
    if "floor" in runs:
        single = statistics.median(r["server_us"] for r in runs["floor"])
        note += f"; {kinds['floor']}: {single:.1f} µs"
    return [
        client,
        Row(f"CPU per answer, {label}, the server's backends", "µs",
            [r["server_us"] for r in core], [r["server_us"] for r in batched],
            kinds["batched"], note=note),
        Row(f"CPU per answer, {label}, client + server", "µs",
            [r["cpu_us"] + r["server_us"] for r in core],
            [r["cpu_us"] + r["server_us"] for r in batched], kinds["batched"]),
    ]


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small sizes, to try the script")
    parser.add_argument("--url", help="a PostgreSQL server (any database on it)")
    parser.add_argument("--json", type=Path, default=Path("bench_postgres.json"))
    parser.add_argument("--no-pin", action="store_true",
                        help="leave the server and the bench on every CPU")
    parser.add_argument("--answers-only", action="store_true",
                        help="leave out the boards (make bench does: they take minutes)")
    parser.add_argument("--worker", choices=["core", "floor", "batched"],
                        help=argparse.SUPPRESS)
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=5.0, help=argparse.SUPPRESS)
    parser.add_argument("--rate", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        await worker(args.worker, args.url, args.index, args.seconds, args.rate)
        return 0
    server = (args.url or os.environ.get("QUIZBOT_BENCH_POSTGRES_URL")
              or os.environ.get("QUIZBOT_TEST_POSTGRES_URL"))
    if not server:
        print("PostgreSQL bench skipped: no server (set QUIZBOT_BENCH_POSTGRES_URL or "
              "QUIZBOT_TEST_POSTGRES_URL, or pass --url)")
        write_json(args.json, {"quick": args.quick, "parts": [], "skipped": "no server"})
        return 0
    info = await server_info(server)
    print(f"PostgreSQL {info['postgresql']} at {redact(server)} (synchronous_commit="
          f"{info['synchronous_commit']}); asyncpg {info['asyncpg']}", flush=True)

    pinned = Pinned()
    if not args.no_pin:
        await pinned.pin(server)
    print(pinned.describe(), flush=True)
    try:
        return await measure(args, server, info, pinned)
    finally:
        pinned.unpin()


async def measure(args: argparse.Namespace, server: str, info: dict[str, Any],
                  pinned: Pinned) -> int:
    calibration = Calibration()
    seconds = 2.0 if args.quick else 5.0
    found: dict[str, list[dict[str, Any]]] = {}
    rows: list[Row] = []
    kinds = {"floor": "raw asyncpg, one INSERT per transaction (8 connections)",
             "batched": "raw asyncpg, rows queued meanwhile in one executemany and "
                        "transaction"}
    for count in (1,) if args.quick else (1, 2, 4):
        # the headline (one process) three times, floors and quizbot in turns
        runs: dict[str, list[dict[str, Any]]] = {"core": [], "floor": [], "batched": []}
        for _ in range(1 if args.quick or count > 1 else 3):
            for kind in ("floor", "batched", "core"):
                runs[kind].append(await processes(kind, server, count, seconds))
        found[str(count)] = [runs]
        print(f"{count} process(es): " + ", ".join(
            f"{k} {[round(r['rate']) for r in v]}/s p99 {[r['p99_ms'] for r in v]} ms"
            for k, v in runs.items()), flush=True)
        label = f"{count} process{'es' if count > 1 else ''}, {CONCURRENCY} answering at once"
        rates = [r["rate"] for r in runs["core"]]
        rows += [
            Row(f"answers/s, {label}", "answers/s", rates,
                [r["rate"] for r in runs["floor"]], kinds["floor"], better="higher",
                goal_ratio=2.0),
            Row(f"answers/s, {label}", "answers/s", rates,
                [r["rate"] for r in runs["batched"]], kinds["batched"], better="higher"),
            Row(f"p99 of an answer, {label}", "ms", [r["p99_ms"] for r in runs["core"]],
                [r["p99_ms"] for r in runs["batched"]], kinds["batched"], goal_ratio=2.0),
            *cpu_rows(label, runs, kinds),
        ]
    # a rate the platforms deliver to a busy bot, not saturation: is an answer still quick
    # while the materializer keeps up beside it?
    steady: dict[str, list[dict[str, Any]]] = {"core": [], "batched": []}
    for _ in range(1 if args.quick else 3):
        for kind in ("batched", "core"):
            steady[kind].append(await processes(kind, server, 1, seconds, STEADY_RATE))
    found["steady"] = [steady]
    print(f"steady {STEADY_RATE}/s: " + ", ".join(
        f"{k} p99 {[r['p99_ms'] for r in v]} ms" for k, v in steady.items()), flush=True)
    label = f"1 process, a steady {STEADY_RATE:,} answers/s"
    rows += [
        Row(f"p99 of an answer, {label}", "ms", [r["p99_ms"] for r in steady["core"]],
            [r["p99_ms"] for r in steady["batched"]], kinds["batched"],
            note="p50 " + ", ".join(f"{r['p50_ms']:.2f}" for r in steady["core"])
                 + " ms (floor " + ", ".join(f"{r['p50_ms']:.2f}" for r in steady["batched"])
                 + "); latency from each answer's due time"),
        *cpu_rows(label, steady, kinds),
    ]
    parts = [part("postgres", "The answer path (PostgreSQL)", calibration.end(), rows,
                  server=info, runs=found, setup=pinned.describe())]

    if args.answers_only:
        write_json(args.json, {"quick": args.quick, "parts": parts})
        print(f"written to {args.json}")
        return 0
    calibration = Calibration()
    answers, people = (100_000, 10_000) if args.quick else (1_000_000, 100_000)
    url = await create_database(server)
    try:
        async with PostgresStorage(url):
            pass
        t0 = time.perf_counter()
        await fill_boards(url, answers, people, 50, 60)
        filled = time.perf_counter() - t0
        t0 = time.perf_counter()
        async with PostgresStorage(url):  # opening applies the answers (the materializer)
            pass
        materialized = time.perf_counter() - t0
        db = await asyncpg.connect(url)
        try:
            await db.execute("VACUUM ANALYZE")  # what autovacuum does on a running server
        finally:
            await db.close()
        board_rows, floor = await boards(url, 50 if args.quick else 200)
    finally:
        await drop_database(server, url)
    print(f"boards: worst p99 {max(r['p99_ms'] for r in board_rows):.2f} ms", flush=True)
    rows = [Row(r["board"], "ms", [r["p99_ms"]], [floor["p99_ms"]],
                "one row read by primary key through the same pool", goal_value=5.0,
                note=f"p50 {r['p50_ms']:.2f} ms; {r['people']:,} people"
                     + (f", rank {r['rank']:,}" if r["rank"] else ""))
            for r in board_rows]
    parts.append(part("postgres-boards", f"Boards at {answers:,} answers, {people:,} people "
                      "(PostgreSQL)", calibration.end(), rows, boards=board_rows,
                      filled_s=round(filled, 1), materialized_s=round(materialized, 1)))
    write_json(args.json, {"quick": args.quick, "parts": parts})
    print(f"written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
