"""Benchmark the answer path and the leaderboard; prints figures, asserts nothing.

    python scripts/bench.py [--answers 2000] [--concurrency 1 50] [--board-rows 1000000]

1. Answers recorded per second and p50/p99 latency through QuizService.answer() on a SQLite
   file on disk, next to raw sqlite3 inserts of the same rows with the same durability
   settings (WAL, synchronous=FULL, one commit per acknowledged answer), in the same run.
2. Leaderboard latency with a million stored answers.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.content import load_catalog  # noqa: E402
from bot.core.clock import SystemClock  # noqa: E402
from bot.core.models import Chat, Person  # noqa: E402
from bot.core.service import QuizService  # noqa: E402
from bot.storage import SqliteStorage  # noqa: E402
from bot.storage.sqlite import PRAGMAS  # noqa: E402


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


async def core_answers(path: Path, answers: int, concurrency: int) -> tuple[float, list[float]]:
    catalog = load_catalog(ROOT / "content")
    async with SqliteStorage(path) as store:
        service = QuizService(catalog, store, SystemClock(), random.Random(1))
        chat = Chat("bench:group")
        posts = [await service.ask(chat) for _ in range(max(1, answers // 100))]
        people = [Person(f"bench:{i}", f"user {i}") for i in range(answers // len(posts) + 1)]
        for person in people:  # names are known before the timed part, as in a live chat
            await store.upsert_person(person.key, person.name)
        jobs = [(p, person) for p in posts for person in people][:answers]
        latencies: list[float] = []
        queue: asyncio.Queue[tuple[object, Person]] = asyncio.Queue()
        for job in jobs:
            queue.put_nowait(job)

        async def worker() -> None:
            while not queue.empty():
                post, person = queue.get_nowait()
                t0 = time.perf_counter()
                result = await service.answer(post.post_id, person, 0)  # type: ignore[attr-defined]
                latencies.append(time.perf_counter() - t0)
                assert result.accepted

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
    return len(jobs) / elapsed, latencies


def raw_inserts(path: Path, answers: int) -> tuple[float, list[float]]:
    """The floor: the same row and score upserts by plain sqlite3, one commit each."""
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in PRAGMAS:
        db.execute(pragma)
    db.execute(
        "CREATE TABLE answers (post_id INTEGER, person_key TEXT, option INTEGER, correct INTEGER,"
        " answered_at INTEGER, elapsed_ms INTEGER, chat_key TEXT, quiz_id TEXT,"
        " question_id TEXT, PRIMARY KEY (post_id, person_key))"
    )
    latencies = []
    start = time.perf_counter()
    for i in range(answers):
        t0 = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        db.execute(
            "INSERT INTO answers VALUES (?, ?, 0, 1, ?, 1000, 'bench:group', 'q', 'x')"
            " ON CONFLICT DO NOTHING",
            (i // 100, f"bench:{i}", int(time.time() * 1000)),
        )
        db.execute("COMMIT")
        latencies.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - start
    db.close()
    return answers / elapsed, latencies


def fill_million(path: Path, rows: int, people: int, chats: int) -> None:
    """Insert `rows` answers over 60 days through the real schema and triggers."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous=OFF")  # filling only; the timed reads don't depend on it
    db.execute("BEGIN")
    db.executemany(
        "INSERT OR IGNORE INTO persons(key, name) VALUES (?, ?)",
        ((f"p:{i}", f"person {i}") for i in range(people)),
    )
    db.executemany("INSERT OR IGNORE INTO chats(key) VALUES (?)",
                   ((f"c:{i}",) for i in range(chats)))
    now = datetime.now(UTC)
    posts = rows // 50
    rng = random.Random(5)
    post_chat = []
    for i in range(posts):
        chat = f"c:{i % chats}"
        created = int((now - timedelta(minutes=(posts - i) * 60 * 24 * 60 // posts)).timestamp()
                      * 1000)
        db.execute(
            "INSERT INTO posts(id, chat_key, quiz_id, question_id, option_order, locale,"
            " created_at) VALUES (?, ?, 'q', 'x', '[0,1,2,3]', 'en', ?)",
            (i + 1, chat, created),
        )
        post_chat.append((chat, created))

    def answers():  # type: ignore[no-untyped-def]
        for i in range(rows):
            post = i // 50
            chat, created = post_chat[post]
            person = f"p:{rng.randrange(people)}"
            yield (post + 1, person, 0, rng.random() < 0.6, created + 5000, rng.randrange(60000),
                   chat)

    db.executemany(
        "INSERT OR IGNORE INTO answers(post_id, person_key, option, correct, answered_at,"
        " elapsed_ms, chat_key, quiz_id, question_id) VALUES (?, ?, ?, ?, ?, ?, ?, 'q', 'x')",
        answers(),
    )
    db.execute("COMMIT")
    db.execute("ANALYZE")
    db.close()


async def board_latency(path: Path, repeats: int) -> dict[str, tuple[float, float]]:
    catalog = load_catalog(ROOT / "content")
    figures = {}
    async with SqliteStorage(path) as store:
        service = QuizService(catalog, store)
        for chat in (None, "c:3"):
            for period in ("day", "week", "all"):
                times = []
                for _ in range(repeats):
                    t0 = time.perf_counter()
                    await service.leaderboard(chat, period, person_key="p:777", limit=10)
                    times.append(time.perf_counter() - t0)
                figures[f"{'global' if chat is None else 'one chat'} / {period}"] = (
                    statistics.median(times), pct(times, 0.99)
                )
    return figures


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 50])
    parser.add_argument("--board-rows", type=int, default=1_000_000)
    parser.add_argument("--people", type=int, default=20_000)
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--dir", type=Path, default=None, help="where the files go (on disk)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="quizbot-bench-", dir=args.dir))
    print(f"files in {base} (SQLite WAL, synchronous=FULL)")
    print(f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}")

    raw_rate, raw_lat = raw_inserts(base / "raw.db", args.answers)
    print(f"\n1. {args.answers} answers, one commit per acknowledged answer")
    print(f"{'':32}{'answers/s':>12}{'p50 ms':>10}{'p99 ms':>10}{'vs raw':>9}")
    print(f"{'raw sqlite3 insert (floor)':32}{raw_rate:12.0f}{pct(raw_lat, .5) * 1e3:10.2f}"
          f"{pct(raw_lat, .99) * 1e3:10.2f}{1:9.2f}")
    for c in args.concurrency:
        rate, lat = await core_answers(base / f"core-{c}.db", args.answers, c)
        print(f"{f'QuizService.answer, {c} concurrent':32}{rate:12.0f}{pct(lat, .5) * 1e3:10.2f}"
              f"{pct(lat, .99) * 1e3:10.2f}{rate / raw_rate:9.2f}")

    path = base / "board.db"
    async with SqliteStorage(path):
        pass  # create the schema
    t0 = time.perf_counter()
    fill_million(path, args.board_rows, args.people, args.chats)
    print(f"\n2. leaderboard with {args.board_rows:,} answers, {args.people:,} people, "
          f"{args.chats} chats, 60 days (filled in {time.perf_counter() - t0:.0f} s)")
    print(f"{'board':24}{'p50 ms':>10}{'p99 ms':>10}")
    for name, (p50, p99) in (await board_latency(path, 30)).items():
        print(f"{name:24}{p50 * 1e3:10.2f}{p99 * 1e3:10.2f}")


if __name__ == "__main__":
    asyncio.run(main())
