"""Benchmark the answer path, the boards and the content load (SQLite); writes bench.json
(rendered by scripts/bench_report.py), asserts nothing.

    python scripts/bench.py [--quick] [--dir DIR] [--json bench.json] [--content-only]
                           [--no-boards]

Every figure stands beside its floor, measured in the same run on the same disk (WAL,
synchronous=FULL, files in --dir, by default a temporary directory on disk); floor and quizbot
take turns, each run on a fresh file, and every run's value is kept. CPU is this process's,
every thread (getrusage). The machine's speed (`python -m timeit "sum(range(1000))"`) and
load average are taken at the start and end of each table.

1. content: 10,000 questions (100 packs made from the bundled ones) loaded cold (parsed and
   validated), then from the content cache; floor: json.loads of the same quizzes as JSON
   (their `content export` shape, one file per pack, read from disk). `--content-only` runs
   just this one (and 7).
7. question cards: CPU per card drawn (prompt, code, formula and options; en, bn, hi), then
   read back from the card cache; floor: the close summary chart of the same question, drawn
   by the same text path (bot/reports/png.py). Then /quiz latency through the real
   python-telegram-bot and the fake Bot API, from the update to the poll sent, in new
   groups: a card question (its photo re-sent by file_id) against a plain one in turns.
2. burst: 1,000 people answer one question at once through QuizService.answer (each a new
   person); floor: raw sqlite3 inserting the same rows, one commit per row. With Prometheus
   metrics on, the same burst's CPU per answer against itself with metrics off.
3. steady: 1,000 answers/s for 5 s, latency from each answer's due time to its commit, and
   CPU per answer; floor: bare sqlite3 group commit (a thread, one BEGIN…COMMIT per batch,
   one wake-up of the event loop per batch) on the same schema, driven by the same clock.
   Then the same with the aggregates in a file of their own (`aggregates_apart=True`).
4. CPU per durable answer at 200 concurrent (the materializer's share included); what the
   trigger of schema 5 cost inside each INSERT against the materializer now.
5. every board (global and one chat; day, week, all time; the top 10, and a mid-table
   person's rank) through QuizService.leaderboard with 1,000,000 answers by 100,000 people.

PostgreSQL: scripts/bench_postgres.py; storms and memory: scripts/bench_storm.py.
"""


from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_common import Calibration, Row, Steady, open_loop, part, self_cpu  # noqa: E402

from bot.content import load_catalog  # noqa: E402
from bot.core.answers import outcome_of, platform_of  # noqa: E402
from bot.core.clock import SystemClock  # noqa: E402
from bot.core.models import AnswerStatus, Chat, Person  # noqa: E402
from bot.core.ports import Meter  # noqa: E402
from bot.core.service import QuizService  # noqa: E402
from bot.metrics import METER  # noqa: E402
from bot.storage import SqliteStorage  # noqa: E402
from bot.storage.sqlite.connection import PRAGMAS  # noqa: E402
from bot.storage.sqlite.materializer import apply  # noqa: E402
from bot.storage.sqlite.migrations import MIGRATIONS, split_sql  # noqa: E402

INSERT = (
    "INSERT INTO answers(post_id, person_key, option, correct, answered_at, elapsed_ms,"
    " chat_key, quiz_id, question_id) VALUES (?, ?, 0, ?, ?, ?, ?, 'q', 'x')"
)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


# a database with the real schema, people and posts ------------------------------------------
async def create(path: Path) -> None:
    async with SqliteStorage(path):
        pass


def seed(path: Path, people: int, posts: int, chat: str = "bench:group") -> None:
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("BEGIN")
        db.executemany("INSERT OR IGNORE INTO persons(key, name) VALUES (?, ?)",
                       ((f"p:{i}", f"person {i}") for i in range(people)))
        db.execute("INSERT OR IGNORE INTO chats(key) VALUES (?)", (chat,))
        db.executemany(
            "INSERT INTO posts(id, chat_key, quiz_id, question_id, option_order, locale,"
            " created_at) VALUES (?, ?, 'q', 'x', '[0,1,2,3]', 'en', ?)",
            ((i + 1, chat, int(time.time() * 1000)) for i in range(posts)),
        )
        db.execute("COMMIT")


async def raw_one_commit_per_row(path: Path, rows: int) -> float:
    """The burst's floor: plain sqlite3, the same answers table, one INSERT and COMMIT each
    (the event loop waits meanwhile: nothing else runs)."""
    await create(path)
    seed(path, rows, 1)
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in PRAGMAS:
        db.execute(pragma)
    now = int(time.time() * 1000)
    start = time.perf_counter()
    for i in range(rows):
        db.execute("BEGIN IMMEDIATE")
        db.execute(INSERT, (1, f"p:{i}", i % 2, now, 1000, "bench:group"))
        db.execute("COMMIT")
    elapsed = time.perf_counter() - start
    db.close()
    return rows / elapsed


# 1. burst ----------------------------------------------------------------------------------
def service_for(store: SqliteStorage, meter: Meter | None = None) -> QuizService:
    return QuizService(load_catalog(ROOT / "content"), store, SystemClock(), random.Random(1),
                       meter=meter)


async def first_question(service: QuizService, chat: Chat) -> tuple[str, str]:
    quiz = next(iter(service.catalog))
    return quiz.id, quiz.questions[0].id


async def burst(
    path: Path, people: int, rounds: int, meter: Meter | None = None
) -> dict[str, Any]:
    rates: list[float] = []
    latencies: list[float] = []
    cpu: list[float] = []
    async with SqliteStorage(path) as store:
        service = service_for(store, meter)
        chat = Chat("bench:group", "bench")
        quiz_id, question_id = await first_question(service, chat)
        for r in range(rounds + 1):  # the first round warms up
            shown = await service.questions.post(chat, quiz_id, question_id, "en")
            crowd = [Person(f"r{r}:{i}", f"user {i}") for i in range(people)]
            done: list[float] = []

            async def one(
                person: Person, post_id: int = shown.post_id, done: list[float] = done
            ) -> None:
                result = await service.answer(post_id, person, 0)
                assert result.accepted, result
                done.append(time.perf_counter())

            c0, t0 = self_cpu()[0], time.perf_counter()
            await asyncio.gather(*(one(p) for p in crowd))
            elapsed = time.perf_counter() - t0
            cpu_used = self_cpu()[0] - c0
            if r:
                rates.append(people / elapsed)
                latencies.extend(t - t0 for t in done)
                cpu.append(cpu_used / people)
        await store.materialize()
    return {"rate": statistics.median(rates), "p50": pct(latencies, 0.5),
            "p99": pct(latencies, 0.99), "cpu": statistics.median(cpu), "rounds": rates}


def meter_cost(answers: int = 50_000, repeats: int = 5) -> float:
    """What metrics add to one answer, alone: QuizService.answer's two clock reads and
    labels, and the meter's count (seconds per answer; the best of `repeats`, as timeit:
    the other runs measure the machine's other work)."""
    person = Person("tg:1", "bench")
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(answers):
            t0 = time.perf_counter()
            METER.answered(platform_of(person), outcome_of(AnswerStatus.ACCEPTED),
                           time.perf_counter() - t0)
        best = min(best, (time.perf_counter() - started) / answers)
    return best


async def metrics_cost(base: Path, people: int, rounds: int, pairs: int) -> dict[str, Any]:
    """The burst with the core's meter counting into Prometheus (QUIZBOT_METRICS_LISTEN set)
    and without (NoMeter), taking turns on fresh files; medians compared. The SQLite writer's
    one histogram update per batch runs in both."""
    on: list[dict[str, Any]] = []
    off: list[dict[str, Any]] = []
    for i in range(pairs):
        off.append(await burst(base / f"metrics-off-{i}.db", people, rounds))
        on.append(await burst(base / f"metrics-on-{i}.db", people, rounds, METER))
    return {"on_runs": [b["rate"] for b in on], "off_runs": [b["rate"] for b in off],
            "cpu_on": [b["cpu"] for b in on], "cpu_off": [b["cpu"] for b in off]}


# 2. steady ---------------------------------------------------------------------------------
class BareGroupCommit:
    """The steady floor: what group commit costs with nothing else: one thread, one
    connection, each batch one transaction, one event-loop wake-up per batch."""

    def __init__(self, path: Path, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.cond = threading.Condition(threading.Lock())
        self.queue: list[tuple[tuple[Any, ...], asyncio.Future[None]]] = []
        self.stop = False
        self.thread = threading.Thread(target=self.run, args=(path,), daemon=True)
        self.thread.start()

    def insert(self, row: tuple[Any, ...]) -> asyncio.Future[None]:
        future: asyncio.Future[None] = self.loop.create_future()
        with self.cond:
            self.queue.append((row, future))
            self.cond.notify()
        return future

    def run(self, path: Path) -> None:
        db = sqlite3.connect(path, isolation_level=None)
        for pragma in PRAGMAS:
            db.execute(pragma)
        while True:
            with self.cond:
                while not self.queue and not self.stop:
                    self.cond.wait()
                batch, self.queue = self.queue, []
            if not batch:
                break
            db.execute("BEGIN IMMEDIATE")
            for row, _ in batch:
                db.execute(INSERT, row)
            db.execute("COMMIT")
            self.loop.call_soon_threadsafe(_resolve, [f for _, f in batch])
        db.close()

    def close(self) -> None:
        with self.cond:
            self.stop = True
            self.cond.notify()
        self.thread.join()


def _resolve(futures: list[asyncio.Future[None]]) -> None:
    for future in futures:
        if not future.done():
            future.set_result(None)


async def steady_floor(path: Path, rate: int, seconds: float, people: int) -> Steady:
    await create(path)
    posts = int(rate * seconds) // people + 1
    seed(path, people, posts)
    writer = BareGroupCommit(path, asyncio.get_running_loop())
    now = int(time.time() * 1000)

    async def fire(i: int) -> None:
        await writer.insert((i // people + 1, f"p:{i % people}", i % 2, now, 1000,
                             "bench:group"))

    try:
        return await open_loop(fire, rate, seconds)
    finally:
        writer.close()


async def steady_core(path: Path, rate: int, seconds: float, people: int,
                      apart: bool = False) -> Steady:
    """Answers at `rate` through the core on SQLite, the aggregates inline or `apart` (their
    own file, bot/storage/sqlite/aggregates_file.py)."""
    async with SqliteStorage(path, aggregates_apart=apart) as store:
        service = service_for(store)
        chat = Chat("bench:group", "bench")
        quiz_id, question_id = await first_question(service, chat)
        posts = [(await service.questions.post(chat, quiz_id, question_id, "en")).post_id
                 for _ in range(int(rate * seconds) // people + 1)]
        crowd = [Person(f"p:{i}", f"person {i}") for i in range(people)]

        async def fire(i: int) -> None:
            result = await service.answer(posts[i // people], crowd[i % people], i % 3)
            assert result.accepted, result

        return await open_loop(fire, rate, seconds)


# 3. CPU at 200 concurrent ------------------------------------------------------------------
async def cpu_per_answer(path: Path, answers: int, concurrency: int) -> dict[str, float]:
    people = 1000
    async with SqliteStorage(path) as store:
        service = service_for(store)
        chat = Chat("bench:group", "bench")
        quiz_id, question_id = await first_question(service, chat)
        posts = [(await service.questions.post(chat, quiz_id, question_id, "en")).post_id
                 for _ in range(answers // people + 1)]
        crowd = [Person(f"p:{i}", f"person {i}") for i in range(people)]
        for person in crowd:  # known people, as in a chat that has been running a while
            await service.answer(posts[-1], person, 0)
        await store.materialize()
        jobs = iter(range(answers))

        async def worker() -> None:
            for i in jobs:
                result = await service.answer(posts[i // people], crowd[i % people], i % 3)
                assert result.accepted

        (c0, s0), t0 = self_cpu(), time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        c1, t1 = self_cpu()[0], time.perf_counter()
        await store.materialize()  # the aggregates' share of the work
        c2, s2 = self_cpu()
    switches = s2 - s0
    return {"cpu": (c2 - c0) / answers, "path_cpu": (c1 - c0) / answers,
            "rate": answers / (t1 - t0), "switches": switches / answers}


# 4. the trigger before, the materializer now ----------------------------------------------
def aggregates_cost(base: Path, answers: int) -> dict[str, float]:
    people, chats, days = 2000, 5, 3
    rng = random.Random(4)
    now = int(time.time() * 1000)
    rows = [(i // 50 + 1, f"p:{rng.randrange(people)}", rng.random() < 0.6,
             now - days * 86_400_000 + (i * days * 86_400_000) // answers, rng.randrange(60_000),
             f"c:{(i // 50) % chats}") for i in range(answers)]
    results = {}
    for name, scripts in (("trigger", MIGRATIONS[:5]), ("none", MIGRATIONS)):
        path = base / f"agg-{name}.db"
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("BEGIN")
        for script in scripts:
            for statement in split_sql(script):
                db.execute(statement)
        db.executemany("INSERT INTO persons(key) VALUES (?)",
                       ((f"p:{i}",) for i in range(people)))
        db.executemany("INSERT INTO chats(key) VALUES (?)", ((f"c:{i}",) for i in range(chats)))
        db.executemany(
            "INSERT INTO posts(id, chat_key, quiz_id, question_id, option_order, locale,"
            " created_at) VALUES (?, ?, 'q', 'x', '[0,1]', 'en', 0)",
            ((i + 1, f"c:{i % chats}") for i in range(answers // 50 + 1)),
        )
        db.execute("COMMIT")
        db.execute("BEGIN")
        t0 = time.perf_counter()
        for row in rows:
            db.execute("INSERT OR IGNORE " + INSERT[len("INSERT "):], row)
        results[name] = (time.perf_counter() - t0) / answers
        db.execute("COMMIT")
        if name == "none":
            t0 = time.perf_counter()
            while True:
                db.execute("BEGIN IMMEDIATE")
                count, _ = apply(db)
                db.execute("COMMIT")
                if not count:
                    break
            results["materializer"] = (time.perf_counter() - t0) / answers
        db.close()
    return results


# 4b. the difficulty model's share of the materializer (bot/storage/difficulty.py) -----------
def difficulty_cost(base: Path, answers: int, repeats: int = 3) -> dict[str, list[float]]:
    """The materializer's time per answer over the same answers with the difficulty model
    (kept.KEPT as it is) and without it (KEPT without bot.storage.difficulty), each on a
    copy of one file, taking turns."""
    from bot.storage import difficulty, kept

    people, questions = 2000, 300
    rng = random.Random(5)
    now = int(time.time() * 1000)
    seeded = base / "difficulty-seed.db"
    db = sqlite3.connect(seeded, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("BEGIN")
    for script in MIGRATIONS:
        for statement in split_sql(script):
            db.execute(statement)
    db.executemany("INSERT INTO persons(key) VALUES (?)", ((f"p:{i}",) for i in range(people)))
    db.execute("INSERT INTO chats(key) VALUES ('c:0')")
    db.executemany(
        "INSERT INTO posts(id, chat_key, quiz_id, question_id, option_order, locale,"
        " created_at) VALUES (?, 'c:0', 'q', ?, '[0,1]', 'en', 0)",
        ((i + 1, f"x{i % questions}") for i in range(answers // 20 + 1)))
    db.executemany(
        "INSERT OR IGNORE INTO answers(post_id, person_key, option, correct, answered_at,"
        " elapsed_ms, chat_key, quiz_id, question_id)"
        " VALUES (?, ?, 0, ?, ?, 1000, 'c:0', 'q', ?)",
        ((i // 20 + 1, f"p:{rng.randrange(people)}", rng.random() < 0.6, now - answers + i,
          f"x{(i // 20) % questions}") for i in range(answers)))
    answers = int(db.execute("SELECT count(*) FROM answers").fetchone()[0])
    db.execute("COMMIT")
    db.close()
    with_model = tuple(kept.KEPT)
    without = tuple(k for k in with_model if k is not difficulty)
    results: dict[str, list[float]] = {"with": [], "without": []}
    try:
        for r in range(repeats):
            for name, chosen in (("without", without), ("with", with_model)):
                path = base / f"difficulty-{name}-{r}.db"
                shutil.copyfile(seeded, path)
                kept.KEPT = chosen
                db = sqlite3.connect(path, isolation_level=None)
                t0 = time.perf_counter()
                while True:
                    db.execute("BEGIN IMMEDIATE")
                    count, _ = apply(db)
                    db.execute("COMMIT")
                    if not count:
                        break
                results[name].append((time.perf_counter() - t0) / answers)
                db.close()
    finally:
        kept.KEPT = with_model
    return results


# 5. boards at a million answers ------------------------------------------------------------
def fill_boards(path: Path, answers: int, people: int, chats: int, days: int) -> None:
    """`answers` answers of `people` people in `chats` chats over `days` days up to now, 50
    per post, the first post of each chat and day a daily question; written straight into
    the tables with executemany (the materializer applies them when the storage opens)."""
    rng = random.Random(5)
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    posts = answers // 50
    span = days * 86_400_000  # whole UTC days, today the last: every board has a full day
    end = int(today.timestamp() * 1000) + 86_400_000 - 120_000
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous=OFF")  # filling only; the timed reads don't depend on it
    db.execute("BEGIN")
    db.executemany("INSERT INTO persons(key, name) VALUES (?, ?)",
                   ((f"p:{i}", f"person {i}") for i in range(people)))
    db.executemany("INSERT INTO chats(key, title) VALUES (?, ?)",
                   ((f"c:{i}", f"chat {i}") for i in range(chats)))
    post_rows, daily_rows, meta = [], [], []
    seen_days: set[tuple[str, str]] = set()
    for i in range(posts):
        chat = f"c:{i % chats}"
        created = end - span + (span * i) // posts
        local = datetime.fromtimestamp(created / 1000, UTC).date().isoformat()
        daily = (chat, local) not in seen_days
        seen_days.add((chat, local))
        post_rows.append((i + 1, chat, created, "daily" if daily else "quiz"))
        if daily:
            daily_rows.append((chat, local, i + 1, created))
        meta.append((chat, created, local if daily else None))
    db.executemany(
        "INSERT INTO posts(id, chat_key, quiz_id, question_id, option_order, locale,"
        " created_at, kind, closed_at) VALUES (?, ?, 'q', 'x', '[0,1,2,3]', 'en', ?, ?, 0)",
        post_rows,
    )
    db.executemany("INSERT INTO daily_posts(chat_key, local_date, post_id, claimed_at)"
                   " VALUES (?, ?, ?, ?)", daily_rows)

    def rows() -> Any:
        for i in range(posts):
            chat, created, daily = meta[i]
            for person in rng.sample(range(people), 50):
                elapsed = rng.randrange(60_000)
                yield (i + 1, f"p:{person}", rng.random() < 0.6, created + elapsed, elapsed,
                       chat, daily)

    db.executemany(
        "INSERT INTO answers(post_id, person_key, option, correct, answered_at, elapsed_ms,"
        " chat_key, quiz_id, question_id, daily_date) VALUES (?, ?, 0, ?, ?, ?, ?, 'q', 'x', ?)",
        rows(),
    )
    db.execute("COMMIT")
    db.close()


def mid_table(path: Path, chat: str, period: str) -> tuple[str, int]:
    """The person in the middle of a board, and how many people it ranks."""
    with sqlite3.connect(path) as db:
        until = db.execute("SELECT until FROM week_window").fetchone()[0]
        params: tuple[Any, ...]
        if period == "all":
            source, params = "totals WHERE chat_key=?", (chat,)
        elif period == "week":
            source, params = "week_scores WHERE chat_key=?", (chat,)
        else:
            source, params = "scores WHERE chat_key=? AND day=?", (chat, until)
        size = db.execute(f"SELECT COUNT(*) FROM {source}", params).fetchone()[0]
        row = db.execute(
            f"SELECT person_key FROM {source} ORDER BY correct DESC, time_ms, person_key"
            " LIMIT 1 OFFSET ?", (*params, size // 2),
        ).fetchone()
    return ("nobody" if row is None else row[0]), size


async def boards(path: Path, repeats: int) -> list[dict[str, Any]]:
    results = []
    async with SqliteStorage(path) as store:
        service = service_for(store)
        for chat in (None, Chat("c:3", "chat 3")):
            for period in ("day", "week", "all"):
                key, size = mid_table(path, "*" if chat is None else chat.key, period)
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
    return results


# 6. content at scale ---------------------------------------------------------------------------
def content_packs(out: Path, questions: int, per_pack: int = 100) -> int:
    """`questions` questions in packs of `per_pack`, made from the bundled packs' questions
    with new ids (about 7 kB each: three languages, details); returns the number of packs."""
    sources = []
    for path in sorted((ROOT / "content").glob("*.yaml")):
        head, _, body = path.read_text(encoding="utf-8").partition("\nquestions:\n")
        sources.append((head, re.split(r"(?m)^(?=  - id: )", body)[1:]))
    out.mkdir(parents=True)
    shutil.copytree(ROOT / "content" / "images", out / "images")  # the packs' pictures
    made = packs = 0
    while made < questions:
        head, blocks = sources[packs % len(sources)]
        count = min(per_pack, questions - made)
        head = re.sub(r"(?m)^id: (\S+)", rf"id: \g<1>-{packs}", head, count=1)
        chosen = [blocks[j % len(blocks)] for j in range(count)]
        # a question's pair: names its partner by its new id in this pack, or goes when the
        # partner is not in it (the validator refuses a pair naming no question of the pack)
        renamed: dict[str, str] = {}
        for j, block in enumerate(chosen):
            if (found := re.match(r"  - id: (\S+)", block)) is not None:
                renamed.setdefault(found.group(1), f"q{packs}-{j}")

        def paired(match: re.Match[str], renamed: dict[str, str] = renamed) -> str:
            new = renamed.get(match.group(2))
            return "" if new is None else f"{match.group(1)}{new}{match.group(3)}"

        body = "".join(re.sub(r"(?m)^(    pair: )(\S+)(.*\n)", paired,
                              re.sub(r"^  - id: \S+", f"  - id: q{packs}-{j}", block, count=1))
                       for j, block in enumerate(chosen))
        (out / f"pack-{packs:03}.yaml").write_text(f"{head}\nquestions:\n{body}",
                                                   encoding="utf-8")
        made += count
        packs += 1
    return packs


def content_load(base: Path, questions: int, repeats: int) -> dict[str, Any]:
    """Cold (no cache), cold storing the cache, then cached, beside the JSON floor."""
    packs = base / f"content-{questions}"
    count = content_packs(packs, questions)
    cache_dir = base / "content-cache"

    def timed(run: Callable[[], Any]) -> float:
        t0 = time.perf_counter()
        result = run()
        elapsed = time.perf_counter() - t0
        del result  # freeing the catalog is not part of loading it
        return elapsed

    cold = timed(lambda: load_catalog(packs))
    storing = timed(lambda: load_catalog(packs, cache_dir))
    catalog = load_catalog(packs, cache_dir)
    assert sum(len(q.questions) for q in catalog) == questions
    json_dir = base / f"content-{questions}-json"
    json_dir.mkdir()
    for quiz in catalog:
        (json_dir / f"{quiz.id}.json").write_text(
            json.dumps(quiz.export(), ensure_ascii=False), encoding="utf-8")
    files = sorted(json_dir.iterdir())

    def floor() -> list[Any]:
        return [json.loads(path.read_bytes()) for path in files]

    # taking turns, so a busy moment of the machine hits both alike
    cached_runs, floor_runs = [], []
    for _ in range(repeats):
        cached_runs.append(timed(lambda: load_catalog(packs, cache_dir)))
        floor_runs.append(timed(floor))
    pack_bytes = sum(p.stat().st_size for p in packs.iterdir())
    cache_bytes = sum(p.stat().st_size for p in (cache_dir / "content").iterdir())
    return {"packs": count, "cold": cold, "storing": storing,
            "cached": statistics.median(cached_runs), "floor": statistics.median(floor_runs),
            "cached_runs": cached_runs, "floor_runs": floor_runs,
            "pack_mb": pack_bytes / 1e6, "cache_mb": cache_bytes / 1e6,
            "json_mb": sum(p.stat().st_size for p in files) / 1e6}


def content_rows(base: Path, quick: bool) -> list[Row]:
    questions = 1000 if quick else 10_000
    c = content_load(base, questions, 3 if quick else 5)
    floor_name = "json.loads of the same quizzes (export shape), read from disk"
    sizes = (f"{c['packs']} packs, {c['pack_mb']:.0f} MB of YAML, cache {c['cache_mb']:.0f} MB,"
             f" JSON {c['json_mb']:.0f} MB")
    print(f"content: cold {c['cold']:.2f} s, cached {c['cached']:.2f} s, "
          f"floor {c['floor']:.2f} s", flush=True)
    return [
        Row(f"load of {questions:,} questions, cold (parsed and validated)", "s", [c["cold"]],
            [c["floor"]], floor_name, note=f"{sizes}; storing the cache {c['storing']:.2f} s"),
        Row(f"load of {questions:,} questions from the content cache", "s", c["cached_runs"],
            c["floor_runs"], floor_name, goal_value=1.0, note="cached and floor take turns"),
    ]


async def answer_rows(base: Path, quick: bool) -> tuple[list[Row], dict[str, Any]]:
    crowd, runs = 1000, 3 if quick else 5
    floors, bursts = [], []
    for i in range(runs):  # floor and quizbot take turns, each on a fresh file
        floors.append(await raw_one_commit_per_row(base / f"raw-{i}.db", crowd))
        bursts.append(await burst(base / f"burst-{i}.db", crowd, 1))
    print(f"burst: {[round(b['rate']) for b in bursts]} answers/s, floor "
          f"{[round(f) for f in floors]}", flush=True)
    rows = [Row("burst of 1,000 concurrent answers through the core", "answers/s",
                [b["rate"] for b in bursts], floors, "raw sqlite3, one commit per row",
                better="higher", goal_ratio=5.0,
                note="p99 latency " + ", ".join(f"{ms(b['p99']):.0f}" for b in bursts) + " ms")]

    m = await metrics_cost(base, crowd, 1, 2 if quick else 3)
    rows.append(Row("burst, CPU per answer with Prometheus metrics on", "µs",
                    [c * 1e6 for c in m["cpu_on"]], [c * 1e6 for c in m["cpu_off"]],
                    "the same burst with metrics off", goal_ratio=1.05,
                    note=f"the meter alone: {meter_cost() * 1e6:.2f} µs per answer"))

    # the disk's fsync tail moves a p99 a lot from run to run: floor and core take turns;
    # quizbot with its aggregates in the answers' file, then in a file of their own (issue 36)
    rate, seconds = 1000, 2.0 if quick else 5.0
    floor_runs, core_runs, apart_runs = [], [], []
    for r in range(2 if quick else 3):
        floor_runs.append(await steady_floor(base / f"steady-floor-{r}.db", rate, seconds, 1000))
        core_runs.append(await steady_core(base / f"steady-core-{r}.db", rate, seconds, 1000))
        apart_runs.append(await steady_core(base / f"steady-apart-{r}.db", rate, seconds, 1000,
                                            apart=True))
    print(f"steady p99 ms: {[ms(pct(c.latencies, 0.99)) for c in core_runs]}, apart "
          f"{[ms(pct(c.latencies, 0.99)) for c in apart_runs]}, floor "
          f"{[ms(pct(f.latencies, 0.99)) for f in floor_runs]}", flush=True)
    group = "bare sqlite3 group commit, same schema"
    floor_p99 = [ms(pct(f.latencies, 0.99)) for f in floor_runs]
    floor_cpu = [f.cpu * 1e6 for f in floor_runs]

    def switches(runs: list[Steady]) -> str:
        return ", ".join(f"{c.switches:.2f}" for c in runs)

    rows += [
        Row("steady 1,000 answers/s, p99", "ms", [ms(pct(c.latencies, 0.99)) for c in core_runs],
            floor_p99, group, goal_ratio=2.0,
            note="p50 " + ", ".join(f"{ms(pct(c.latencies, 0.5)):.2f}" for c in core_runs)
            + " ms (floor " + ", ".join(f"{ms(pct(f.latencies, 0.5)):.2f}" for f in floor_runs)
            + ")"),
        Row("steady 1,000 answers/s, CPU per answer (all threads)", "µs",
            [c.cpu * 1e6 for c in core_runs], floor_cpu, group, goal_ratio=3.0,
            note=f"context switches per answer {switches(core_runs)} (floor "
                 f"{switches(floor_runs)})"),
        Row("steady 1,000 answers/s, p99, the aggregates in a file of their own", "ms",
            [ms(pct(c.latencies, 0.99)) for c in apart_runs], floor_p99, group, goal_ratio=2.0,
            note="SqliteStorage(aggregates_apart=True); p50 "
            + ", ".join(f"{ms(pct(c.latencies, 0.5)):.2f}" for c in apart_runs) + " ms"),
        Row("steady 1,000 answers/s, CPU per answer, the aggregates in a file of their own "
            "(all threads)", "µs", [c.cpu * 1e6 for c in apart_runs], floor_cpu, group,
            goal_ratio=3.0, note=f"context switches per answer {switches(apart_runs)}"),
    ]

    c = await cpu_per_answer(base / "cpu.db", 5000 if quick else 20_000, 200)
    rows.append(Row("CPU per durable answer, 200 concurrent (all threads, aggregates "
                    "included)", "µs", [c["cpu"] * 1e6],
                    note=f"the answer path alone {c['path_cpu'] * 1e6:.0f} µs, "
                         f"{c['rate']:.0f} answers/s, {c['switches']:.2f} context switches"))

    agg = aggregates_cost(base, 5000 if quick else 20_000)
    rows.append(Row("aggregates per answer, materializer (off the path)", "µs",
                    [agg["materializer"] * 1e6], [(agg["trigger"] - agg["none"]) * 1e6],
                    "the trigger inside each INSERT (schema 5)",
                    note=f"INSERT now {agg['none'] * 1e6:.1f} µs"))
    # the difficulty model on (kept.KEPT) beside off, the same answers, taking turns
    cost = difficulty_cost(base, 5000 if quick else 20_000)
    rows.append(Row("materializer per answer, difficulty model on", "µs",
                    [v * 1e6 for v in cost["with"]], [v * 1e6 for v in cost["without"]],
                    "the same materializer without the difficulty model",
                    note="2000 people, 300 questions; bot/storage/difficulty.py"))
    return rows, {"burst_p99_ms": [ms(b["p99"]) for b in bursts]}


async def board_rows(base: Path, quick: bool) -> tuple[list[Row], dict[str, Any]]:
    answers, people = (100_000, 10_000) if quick else (1_000_000, 100_000)
    path = base / "boards.db"
    await create(path)
    t0 = time.perf_counter()
    fill_boards(path, answers, people, 50, 60)
    filled = time.perf_counter() - t0
    t0 = time.perf_counter()
    await create(path)  # opening applies the answers (the materializer catches up)
    materialized = time.perf_counter() - t0
    found = await boards(path, 50 if quick else 200)
    rows = [Row(f"{r['board']}", "ms", [r["p99_ms"]], goal_value=5.0,
                note=f"p50 {r['p50_ms']:.2f} ms; {r['people']:,} people"
                     + (f", rank {r['rank']:,}" if r["rank"] else ""))
            for r in found]
    worst = max(r["p99_ms"] for r in found)
    print(f"boards: worst p99 {worst:.2f} ms", flush=True)
    return rows, {"answers": answers, "people": people, "filled_s": round(filled, 1),
                  "materialized_s": round(materialized, 1), "boards": found}


# 7. question cards ----------------------------------------------------------------------------
def card_rows(base: Path, quick: bool) -> list[Row]:
    """CPU per card (every script's), drawn and from the card cache, beside the chart."""
    from bot.reports import summary_png
    from bot.reports.cards import PngCards
    from tests.test_cards_golden import CARDS
    from tests.test_charts import question, summary

    repeats, runs = (5, 2) if quick else (20, 3)
    shown = [question(locale, card.prompt, card.options) for locale, card in CARDS.items()]
    shown = [replace(q, code=c.code, code_language=c.code_language, formula=c.formula)
             for q, c in zip(shown, CARDS.values(), strict=True)]
    cards = PngCards(None)
    cards.question_card(shown[0])  # imports, fonts and mathtext's parser: once per process

    def cpu(job: Any) -> float:
        start = time.process_time()  # all threads of this process
        for _ in range(repeats):
            for q in shown:
                job(q)
        return (time.process_time() - start) / (repeats * len(shown))

    cached = PngCards(base / "cards-cache")
    for q in shown:
        cached.question_card(q)
    drawn, charts, read = [], [], []
    for _ in range(runs):  # card and chart take turns, each run's pair from the same moment
        drawn.append(cpu(cards.question_card) * 1e3)
        charts.append(cpu(lambda q: summary_png(summary(q))) * 1e3)
        read.append(cpu(cached.question_card) * 1e6)
    floor = "the same question's summary chart (Pillow, the same text path)"
    return [
        Row("question card drawn (prompt, code, formula, options; en, bn, hi)", "ms CPU",
            drawn, charts, floor),
        Row("question card from the card cache", "µs CPU", read,
            [c * 1e3 for c in charts], floor),
    ]


# 8. /quiz with a card ---------------------------------------------------------------------------
async def quiz_rows(base: Path, quick: bool) -> list[Row]:
    """/quiz in a new group through the real python-telegram-bot and the fake Bot API, from
    the update pushed to the poll sent: a question with a card (its photo re-sent by file_id,
    one more call before sendPoll) against a plain one, taking turns; the card's first post
    (drawn, uploaded) once."""
    import logging

    from bot.adapters.telegram import TelegramAdapter
    from bot.reports.cards import PngCards
    from bot.settings import Settings
    from tests.fakes.telegram_api import FakeTelegramAPI

    logging.getLogger("bot").setLevel(logging.WARNING)
    runs, per_run = (2, 5) if quick else (3, 20)
    fake = FakeTelegramAPI()
    await fake.start()
    user = fake.user(1001, "Alice", language_code="en")
    groups = iter(range(-1_002_000_000_000, 0))
    try:
        async with SqliteStorage(base / "quiz.db") as store:
            service = QuizService(load_catalog(ROOT / "tests" / "data" / "cards"), store,
                                  SystemClock(), random.Random(1),
                                  cards=PngCards(base / "quiz-cache"))
            adapter = TelegramAdapter(service, Settings(
                _env_file=None, telegram_bot_token=fake.token,
                telegram_api_base_url=fake.base_url))
            await adapter.start()
            try:
                async def latency(quiz: str) -> float:
                    """Seconds from /quiz pushed to its sendPoll, in a new group."""
                    group = fake.group(next(groups), "Bench")
                    sent = len(fake.calls_of("sendPoll"))
                    start = time.monotonic()
                    fake.command(group, user, f"/quiz {quiz}")
                    call = (await fake.wait_for("sendPoll", sent + 1, within=30))[sent]
                    return call.at - start

                first = await latency("cards") * 1e3  # drawn and uploaded
                await latency("plain")
                card: list[float] = []
                plain: list[float] = []
                for _ in range(runs):
                    pairs = [(await latency("cards"), await latency("plain"))
                             for _ in range(per_run)]
                    card.append(statistics.median(c for c, _ in pairs) * 1e3)
                    plain.append(statistics.median(p for _, p in pairs) * 1e3)
            finally:
                await adapter.stop()
    finally:
        await fake.stop()
    print(f"/quiz: card {statistics.median(card):.1f} ms, plain "
          f"{statistics.median(plain):.1f} ms (median of medians); first card {first:.0f} ms",
          flush=True)
    floor = "a plain question's /quiz, the same run (one call less: no sendPhoto)"
    return [
        Row(f"/quiz to its poll sent, card re-sent by file_id (median of {per_run} new groups)",
            "ms", card, plain, floor,
            note=f"the card's first post (drawn, uploaded): {first:.0f} ms"),
    ]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small sizes, to try the script")
    parser.add_argument("--dir", type=Path, default=None, help="where the files go (on disk)")
    parser.add_argument("--json", type=Path, default=Path("bench.json"))
    parser.add_argument("--content-only", action="store_true",
                        help="only the content figure (no database)")
    parser.add_argument("--no-boards", action="store_true",
                        help="leave out the boards at a million answers (minutes to fill)")
    args = parser.parse_args()
    quick = args.quick
    base = Path(tempfile.mkdtemp(prefix="quizbot-bench-", dir=args.dir))
    print(f"files in {base} (SQLite WAL, synchronous=FULL)", flush=True)
    parts = []
    calibration = Calibration()
    rows = content_rows(base, quick)
    parts.append(part("content", "Content load", calibration.end(), rows))
    calibration = Calibration()
    parts.append(part("cards", "Question cards", calibration.end(),
                      [*card_rows(base, quick), *await quiz_rows(base, quick)]))
    if not args.content_only:
        calibration = Calibration()
        rows, more = await answer_rows(base, quick)
        parts.append(part("sqlite", "The answer path (SQLite)", calibration.end(), rows,
                          **more))
    if not args.content_only and not args.no_boards:
        calibration = Calibration()
        rows, more = await board_rows(base, quick)
        parts.append(part("boards", f"Boards at {more['answers']:,} answers, "
                          f"{more['people']:,} people, 50 chats, 60 days (SQLite)",
                          calibration.end(), rows, **more))
    args.json.write_text(json.dumps({"quick": quick, "parts": parts}, indent=2,
                                    ensure_ascii=False) + "\n")
    print(f"written to {args.json}")


if __name__ == "__main__":
    asyncio.run(main())
