"""Benchmark the organiser's dashboard (bot/web) at 1,000,000 answers by 100,000 people in one
chat, the worst case; writes bench_dashboard.json (rendered by scripts/bench_report.py),
asserts nothing.

    python scripts/bench_dashboard.py [--quick] [--dir DIR] [--postgres URL]
        [--json bench_dashboard.json]

The answers are written straight into the tables (posts of a bundled quiz, 50 answers each,
over 60 days, the first post of each day the daily question; some problem reports), then the
storage opens and its materializer applies them (boards, figures and item figures). The
dashboard is served by the bot's own aiohttp app on a local port and every page is requested
over HTTP with the session cookie of a `/dashboard` link, the pages taking turns, each page
`repeats` times (the Mini App's /progress with a signed launch of the board's top person): p50
and p99 from the client. Floor: a static file (the stylesheet) served by
the same aiohttp app in the same turns.

PostgreSQL (`--postgres` or QUIZBOT_BENCH_POSTGRES_URL or QUIZBOT_TEST_POSTGRES_URL, any
database on the server): the same data written with COPY into a new database, dropped
afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
from aiohttp import web  # noqa: E402
from bench_common import Calibration, Row, part  # noqa: E402

from bot.content import Catalog, load_catalog  # noqa: E402
from bot.core.clock import SystemClock  # noqa: E402
from bot.core.models import Chat, Person  # noqa: E402
from bot.core.ports import Storage  # noqa: E402
from bot.core.service import QuizService  # noqa: E402
from bot.storage import SqliteStorage  # noqa: E402
from bot.web.server import RUNNER_OPTIONS, build_app  # noqa: E402

CHAT = "tg:-100"
QUIZ = "mixed-precision"
SECRET = "bench-" + "s" * 40
BOT_TOKEN = "123456:bench-token"  # signs the Mini App launch of /progress
PER_POST = 50
DAYS = 60
GOAL_MS = 50.0
FLOOR = "a static file (the stylesheet) from the same aiohttp app"


def launch(user_id: int) -> str:
    """A Telegram Mini App launch for `user_id`, signed as Telegram documents it."""
    fields = {"auth_date": str(int(time.time())), "query_id": "AAH",
              "user": json.dumps({"id": user_id, "first_name": "Bench"})}
    check = "\n".join(f"{k}={v}" for k, v in sorted(fields.items()))
    key = hmac.new(b"WebAppData", BOT_TOKEN.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(key, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(fields)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def data(catalog: Catalog, answers: int, people: int) -> tuple[list[Any], list[Any]]:
    """Posts (id, question, order, created, daily day) and answers (post, person, option,
    correct, at, elapsed, daily day), times as aware datetimes. People answer better the
    higher their number, so the item analysis has something to find."""
    rng = random.Random(22)
    quiz = catalog.quizzes[QUIZ]
    end = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) \
        + timedelta(days=1, minutes=-2)
    span = timedelta(days=DAYS)
    posts_n = answers // PER_POST
    posts, rows = [], []
    days: set[str] = set()
    for i in range(posts_n):
        question = quiz.questions[i % len(quiz.questions)]
        created = end - span + span * i / posts_n
        day = created.date().isoformat()
        daily = day if day not in days else None
        days.add(day)
        order = list(range(len(question.options)))
        rng.shuffle(order)
        posts.append((i + 1, question.id, order, created, daily))
        for person in rng.sample(range(people), PER_POST):
            skill = person / people
            option = question.answer if rng.random() < 0.25 + 0.6 * skill else rng.randrange(
                len(question.options))
            elapsed = rng.randrange(2_000, 60_000)
            rows.append((i + 1, f"tg:{person + 1}", option, option == question.answer,
                         created + timedelta(milliseconds=elapsed), elapsed, daily))
    return posts, rows


def fill_sqlite(path: Path, posts: list[Any], rows: list[Any], people: int) -> None:
    def at(moment: datetime) -> int:
        return int(moment.timestamp() * 1000)

    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous=OFF")  # filling only; the timed reads don't depend on it
    db.execute("BEGIN")
    db.executemany("INSERT INTO persons(key, name) VALUES (?, ?)",
                   ((f"tg:{i + 1}", f"Person {i + 1}") for i in range(people)))
    db.execute("INSERT INTO chats(key, title) VALUES (?, 'bench')", (CHAT,))
    db.executemany(
        "INSERT INTO posts(id, chat_key, quiz_id, question_id, option_order, locale,"
        " created_at, kind, closed_at) VALUES (?, ?, ?, ?, ?, 'en', ?, ?, ?)",
        ((i, CHAT, QUIZ, q, json.dumps(order), at(c), "daily" if d else "quiz", at(c))
         for i, q, order, c, d in posts))
    db.executemany("INSERT INTO daily_posts(chat_key, local_date, post_id, claimed_at)"
                   " VALUES (?, ?, ?, ?)",
                   ((CHAT, d, i, at(c)) for i, _, _, c, d in posts if d))
    questions = {i: q for i, q, *_ in posts}
    db.executemany(
        "INSERT INTO answers(post_id, person_key, option, correct, answered_at, elapsed_ms,"
        " chat_key, quiz_id, question_id, daily_date) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ((p, who, o, c, at(when), e, CHAT, QUIZ, questions[p], d)
         for p, who, o, c, when, e, d in rows))
    db.execute("COMMIT")
    db.close()


async def fill_postgres(url: str, posts: list[Any], rows: list[Any], people: int) -> None:
    import asyncpg

    db = await asyncpg.connect(url)
    try:
        await db.execute("SET synchronous_commit = off")  # filling only
        await db.copy_records_to_table(
            "persons", columns=["key", "name"],
            records=[(f"tg:{i + 1}", f"Person {i + 1}") for i in range(people)])
        await db.execute("INSERT INTO chats(key, title) VALUES ($1, 'bench')", CHAT)
        await db.copy_records_to_table(
            "posts", columns=["id", "chat_key", "quiz_id", "question_id", "option_order",
                              "locale", "created_at", "kind", "closed_at"],
            records=[(i, CHAT, QUIZ, q, order, "en", c, "daily" if d else "quiz", c)
                     for i, q, order, c, d in posts])
        await db.execute("SELECT setval(pg_get_serial_sequence('posts', 'id'), $1)",
                         len(posts))
        await db.copy_records_to_table(
            "daily_posts", columns=["chat_key", "local_date", "post_id", "claimed_at"],
            records=[(CHAT, datetime.fromisoformat(d).date(), i, c)
                     for i, _, _, c, d in posts if d])
        questions = {i: q for i, q, *_ in posts}
        columns = ["post_id", "person_key", "option", "correct", "answered_at", "elapsed_ms",
                   "chat_key", "quiz_id", "question_id", "daily_date"]

        def records() -> Iterator[tuple[Any, ...]]:
            for p, who, o, c, when, e, d in rows:
                yield (p, who, o, c, when, e, CHAT, QUIZ, questions[p],
                       None if d is None else datetime.fromisoformat(d).date())

        batch: list[tuple[Any, ...]] = []
        for record in records():
            batch.append(record)
            if len(batch) >= 100_000:
                await db.copy_records_to_table("answers", columns=columns, records=batch)
                batch = []
        if batch:
            await db.copy_records_to_table("answers", columns=columns, records=batch)
        await db.execute("VACUUM ANALYZE")  # what autovacuum does on a running server
    finally:
        await db.close()


async def pages(store: Storage, catalog: Catalog, repeats: int) -> dict[str, list[float]]:
    """Each page's and the floor's request times (s), the pages taking turns."""
    service = QuizService(catalog, store, SystemClock(), random.Random(1),
                          web=(SECRET, "http://127.0.0.1:9"))
    quiz = catalog.quizzes[QUIZ]
    for n in range(5):
        await service.problem_reports.report(Person(f"tg:{n + 1}", f"Person {n + 1}"), Chat(CHAT),
                                             quiz.questions[n % len(quiz.questions)].id, "A typo")
    people = await store.chat_people(CHAT, None, 1)
    deep, after = await store.chat_people(CHAT, None, PER_POST * 1000 + 1), None
    if len(deep) > PER_POST * 1000:
        last = deep[PER_POST * 1000 - 1]
        after = f"{last.correct}.{last.time_ms}.{last.person_key}"
    runner = web.AppRunner(build_app(service, secure=False, bot_token=BOT_TOKEN),
                           **RUNNER_OPTIONS)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    base = f"http://127.0.0.1:{port}"
    urls = {
        "floor": "/static/dashboard.css",
        "overview": f"/chat/{CHAT}/",
        "people, first page": f"/chat/{CHAT}/people",
        "people, page 1,001": f"/chat/{CHAT}/people?after={after}" if after else None,
        "a person (the board's top)": f"/chat/{CHAT}/person/{people[0].person_key}",
        "questions (item analysis)": f"/chat/{CHAT}/questions",
        "reports": f"/chat/{CHAT}/reports",
        "settings": f"/chat/{CHAT}/settings",
        "progress (Mini App, the board's top)": "/me/progress",
    }
    times: dict[str, list[float]] = {k: [] for k, v in urls.items() if v}
    try:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            link = await service.dashboard.link(Chat(CHAT), allowed=True, locale="en")
            async with http.get(base + link.removeprefix("http://127.0.0.1:9"),
                                allow_redirects=False) as response:
                assert response.status == 303, response.status
            top = int(people[0].person_key.removeprefix("tg:"))
            async with http.post(base + "/app/session", data={"init_data": launch(top)},
                                 allow_redirects=False) as response:
                assert response.status == 303, response.status
            for _ in range(repeats + 3):  # the first turns warm the caches: left out
                for name in times:
                    url = urls[name]
                    assert url is not None
                    t0 = time.perf_counter()
                    async with http.get(base + url) as response:
                        await response.read()
                        assert response.status == 200, (name, response.status)
                    times[name].append(time.perf_counter() - t0)
    finally:
        await runner.cleanup()
    return {k: v[3:] for k, v in times.items()}


def rows_of(times: dict[str, list[float]]) -> list[Row]:
    floor = times.pop("floor")
    return [Row(name, "ms p99", [round(pct(t, 0.99) * 1000, 2)],
                [round(pct(floor, 0.99) * 1000, 2)], FLOOR, goal_value=GOAL_MS,
                note=f"p50 {pct(t, 0.5) * 1000:.2f} ms (floor {pct(floor, 0.5) * 1000:.2f})")
            for name, t in times.items()]


async def sqlite_part(base: Path, catalog: Catalog, answers: int, people: int,
                      repeats: int) -> dict[str, Any]:
    calibration = Calibration()
    path = base / "dashboard.db"
    async with SqliteStorage(path):
        pass
    posts, rows = data(catalog, answers, people)
    print(f"SQLite: {len(rows):,} answers made", flush=True)
    t0 = time.perf_counter()
    fill_sqlite(path, posts, rows, people)
    filled = time.perf_counter() - t0
    print(f"SQLite: filled in {filled:.0f} s; applying them", flush=True)
    t0 = time.perf_counter()
    async with SqliteStorage(path) as store:
        materialized = time.perf_counter() - t0  # opening applies every answer
        print(f"SQLite: applied in {materialized:.0f} s; requesting pages", flush=True)
        times = await pages(store, catalog, repeats)
    print(f"dashboard (SQLite): worst p99 "
          f"{max(pct(t, 0.99) for k, t in times.items() if k != 'floor') * 1000:.1f} ms",
          flush=True)
    return part("dashboard", f"Dashboard pages at {answers:,} answers, {people:,} people in one"
                " chat (SQLite)", calibration.end(), rows_of(times), answers=answers,
                people=people, filled_s=round(filled, 1), materialized_s=round(materialized, 1))


async def postgres_part(server: str, catalog: Catalog, answers: int, people: int,
                        repeats: int) -> dict[str, Any]:
    from bench_postgres import create_database, drop_database

    from bot.storage.postgres.storage import PostgresStorage

    calibration = Calibration()
    url = await create_database(server)
    try:
        async with PostgresStorage(url):
            pass
        posts, rows = data(catalog, answers, people)
        t0 = time.perf_counter()
        await fill_postgres(url, posts, rows, people)
        filled = time.perf_counter() - t0
        print(f"PostgreSQL: filled in {filled:.0f} s; applying them", flush=True)
        t0 = time.perf_counter()
        async with PostgresStorage(url) as store:
            materialized = time.perf_counter() - t0
            print(f"PostgreSQL: applied in {materialized:.0f} s; requesting pages", flush=True)
            times = await pages(store, catalog, repeats)
    finally:
        await drop_database(server, url)
    print(f"dashboard (PostgreSQL): worst p99 "
          f"{max(pct(t, 0.99) for k, t in times.items() if k != 'floor') * 1000:.1f} ms",
          flush=True)
    return part("dashboard-postgres", f"Dashboard pages at {answers:,} answers, {people:,}"
                " people in one chat (PostgreSQL)", calibration.end(), rows_of(times),
                answers=answers, people=people, filled_s=round(filled, 1),
                materialized_s=round(materialized, 1))


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small sizes, to try the script")
    parser.add_argument("--dir", type=Path, default=None, help="where the files go (on disk)")
    parser.add_argument("--postgres", help="a PostgreSQL server (any database on it)")
    parser.add_argument("--json", type=Path, default=Path("bench_dashboard.json"))
    args = parser.parse_args()
    answers, people, repeats = (50_000, 5_000, 30) if args.quick else (1_000_000, 100_000, 200)
    catalog = load_catalog(ROOT / "content")
    base = Path(tempfile.mkdtemp(prefix="quizbot-bench-", dir=args.dir))
    parts = [await sqlite_part(base, catalog, answers, people, repeats)]
    server = args.postgres or os.environ.get("QUIZBOT_BENCH_POSTGRES_URL") or os.environ.get(
        "QUIZBOT_TEST_POSTGRES_URL")
    if server:
        parts.append(await postgres_part(server, catalog, answers, people, repeats))
    else:
        print("dashboard (PostgreSQL) skipped: no server (set QUIZBOT_BENCH_POSTGRES_URL or "
              "pass --postgres)", flush=True)
    args.json.write_text(json.dumps({"quick": args.quick, "parts": parts}, indent=2,
                                    ensure_ascii=False) + "\n")
    print(f"written to {args.json}")


if __name__ == "__main__":
    asyncio.run(main())
