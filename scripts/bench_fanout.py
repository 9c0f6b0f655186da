"""Benchmark the daily question's fan-out (issue 36): N chats due at the same minute, sent by
`quizbot run` (1 process on SQLite, 2 processes on one PostgreSQL database and one token)
against the fake Bot API enforcing Telegram's flood limits (tests/fakes/telegram_limits.py:
30 messages/s per token, 20/min per group, about 1/s per chat; 429 with retry_after), in a
process of its own; writes bench_fanout.json (scripts/bench_report.py's format), asserts
nothing.

    python scripts/bench_fanout.py [--quick] [--chats 2000] [--postgres URL]
        [--json bench_fanout.json]

Each run: the fake starts with N groups; the bot processes start and run; then the chats'
schedules (and their kinds, as updates would have left them) are written for the next
minute boundary at least a few seconds ahead, so every process sees them due at once. The
figure is the time from that moment to the last question the fake accepted, beside its floor
N/30 s (the token's rate); with each run's 429s, and chats missed or sent twice.

The reminders row (1 process, SQLite): N people who answered a question wrong the day before
(a review card due) and want their review reminder at that minute; the figure is the time to
the last reminder the fake accepted, beside the same floor.

PostgreSQL (`--postgres`, QUIZBOT_BENCH_POSTGRES_URL or QUIZBOT_TEST_POSTGRES_URL, any
database on the server): a new database per run, dropped afterwards; without one the
2-process run is skipped with a line saying so.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_common import Calibration, Row, calibration_line, part  # noqa: E402
from bench_postgres import create_database, drop_database  # noqa: E402

from bot.core.models import Schedule  # noqa: E402
from tests.fakes.telegram_api import FakeTelegramAPI  # noqa: E402
from tests.fakes.telegram_limits import FloodLimits  # noqa: E402

PACKS = ROOT / "tests" / "data" / "packs"
FIRST_GROUP = -1_005_000_000_000
FIRST_PERSON = 7_000_000
DAILY, REMINDERS = "daily", "reminders"
RATE = 30.0  # Telegram's messages a second per token: the floor's rate
GOAL = 1.15  # issue 36: within 1.15 x N/30
AHEAD = 8.0  # seconds at least between writing the schedules and their minute
WITHIN = 600.0  # seconds; only reached when something is broken


# the fake, in its own process ------------------------------------------------------------
async def serve_fake(chats: int, portfile: Path, result: Path, until: float,
                     kind: str = DAILY) -> None:
    """Serve the limiting fake until `chats` questions (or reminders: `kind`) were accepted
    (and 2 s more, to see any sent twice) or the wall clock passes `until`; write what it saw
    to `result`."""
    fake = FakeTelegramAPI()
    fake.limits = limits = FloodLimits(clock=time.time)
    await fake.start()
    for i in range(chats):
        if kind == DAILY:
            fake.group(FIRST_GROUP - i, f"Group {i}")
        else:
            fake.private_chat(fake.user(FIRST_PERSON + i, f"P{i}"))
    method = "sendPoll" if kind == DAILY else "sendMessage"
    write(portfile, str(fake.port))
    try:
        while time.time() < until:  # else its time ran out: what it saw is written
            if len(fake.calls_of(method)) >= chats:
                break
            await asyncio.sleep(0.2)
        await asyncio.sleep(2.0)
    finally:
        polls = fake.calls_of(method)
        sent = Counter(c.params["chat_id"] for c in polls)
        accepted = sorted(at for at, _ in limits.accepted)
        write(result, json.dumps({
            "refused": limits.refused, "first": accepted[0] if accepted else None,
            "last": max(c.at for c in polls) if polls else None,
            "last_accepted": accepted[-1] if accepted else None,
            "posted": len(sent), "twice": sum(1 for n in sent.values() if n > 1),
            "calls": Counter(c.method for c in fake.calls),
        }))
        await fake.stop()


# the bots ----------------------------------------------------------------------------------
def bot_env(port: int, database: str, name: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("TELEGRAM_", "DISCORD_", "QUIZBOT_"))}
    return base | {
        "NO_PROXY": "127.0.0.1,localhost", "PYTHONPATH": str(ROOT),
        "TELEGRAM_BOT_TOKEN": FakeTelegramAPI().token,
        "TELEGRAM_API_BASE_URL": f"http://127.0.0.1:{port}/bot",
        "QUIZBOT_DATABASE": database, "QUIZBOT_CONTENT_DIR": str(PACKS),
        "QUIZBOT_LOG_LEVEL": "WARNING", "QUIZBOT_INSTANCE": name,
    }


def write(path: Path, text: str) -> None:
    path.write_text(text)


def written(path: Path) -> str:
    """The file's text ("" while it does not exist)."""
    return path.read_text(errors="replace") if path.exists() else ""


async def until_file(path: Path, within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not written(path):
        if time.monotonic() > deadline:
            raise SystemExit(f"bench_fanout: {what}")
        await asyncio.sleep(0.05)


async def schedule_all(database: str, chats: int, at: datetime) -> None:
    """Every chat's daily question at `at` (UTC), its kind known (as an update leaves it)."""
    from bot.core.ports import Storage

    store: Storage
    if database.startswith("postgresql://"):
        from bot.storage.postgres.storage import PostgresStorage
        store = PostgresStorage(database)
    else:
        from bot.storage import SqliteStorage
        store = SqliteStorage(Path(database))
    await store.open()
    try:
        set_at = datetime.now(UTC)

        async def one(i: int) -> None:
            key = f"tg:{FIRST_GROUP - i}"
            await store.upsert_chat(key, f"Group {i}")
            await store.set_chat_kind(key, "supergroup")
            await store.set_schedule(Schedule(key, at.time(), "UTC", updated_at=set_at))

        for start in range(0, chats, 200):
            await asyncio.gather(*(one(i) for i in range(start, min(start + 200, chats))))
    finally:
        await store.close()


async def remind_all(database: str, people: int, at: datetime) -> None:
    """Every person answered a question wrong a day before `at` (a review card due at `at`)
    and wants their review reminder at `at` (UTC). Written through the core, on a clock of
    its own, as the answers would have been."""
    import random

    from bot.content import load_catalog
    from bot.core.models import Chat, Person
    from bot.core.service import QuizService
    from bot.storage import SqliteStorage
    from tests.clock import FakeClock

    store = SqliteStorage(Path(database))
    await store.open()
    try:
        clock = FakeClock(at - timedelta(days=1, minutes=5))
        service = QuizService(load_catalog(PACKS), store, clock, random.Random(7))
        question = await service.questions.post(Chat("tg:-1", "Group"), "sample", "s-one",
                                                "en")
        wrong = (question.correct + 1) % len(question.options)

        async def one(i: int) -> None:
            person = Person(f"tg:{FIRST_PERSON + i}", f"P{i}")
            await service.answer(question.post_id, person, wrong)
            await service.spaced.set_reminder(person, at.strftime("%H:%M"), "UTC")

        for start in range(0, people, 200):
            await asyncio.gather(*(one(i) for i in range(start, min(start + 200, people))))
    finally:
        await store.close()


async def one_run(chats: int, processes: int, database: str, workdir: Path,
                  kind: str = DAILY) -> dict[str, Any]:
    portfile, result = workdir / "fake.port", workdir / "fake.json"
    for path in (portfile, result):
        path.unlink(missing_ok=True)
    deadline = time.time() + WITHIN
    fake = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--serve-fake", str(chats), str(portfile), str(result),
        str(deadline), kind, env=os.environ | {"PYTHONPATH": str(ROOT)})
    bots: list[asyncio.subprocess.Process] = []
    try:
        await until_file(portfile, 60, "the fake did not start")
        port = int(portfile.read_text())
        logs = [workdir / f"bot-{n}.log" for n in range(processes)]
        for n, log in enumerate(logs):
            with log.open("wb") as out:
                bots.append(await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "bot.cli", "run", cwd=workdir,
                    env=bot_env(port, database, f"bot-{n}") | {"QUIZBOT_LOG_LEVEL": "INFO"},
                    stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out))
        started = time.monotonic()
        while not all("is running" in log.read_text(errors="replace") for log in logs):
            if time.monotonic() - started > 60:
                raise SystemExit("bench_fanout: a bot did not start")
            await asyncio.sleep(0.1)
        now = datetime.now(UTC)
        due = (now + timedelta(seconds=AHEAD + chats / 200)).replace(second=0, microsecond=0) \
            + timedelta(minutes=1)
        if kind == DAILY:
            await schedule_all(database, chats, due)
        else:
            await remind_all(database, chats, due)
        late = datetime.now(UTC) > due
        await asyncio.wait_for(fake.wait(), WITHIN)
        seen = json.loads(result.read_text())
    finally:
        for bot in bots:
            if bot.returncode is None:
                bot.send_signal(signal.SIGTERM)
        for bot in bots:
            try:
                await asyncio.wait_for(bot.wait(), 20)
            except TimeoutError:
                bot.kill()
        if fake.returncode is None:
            fake.kill()
            await fake.wait()
    errors = [line for log in logs for line in log.read_text(errors="replace").splitlines()
              if " ERROR " in line or "Traceback" in line]
    took = (seen["last_accepted"] - due.timestamp()) if seen["last_accepted"] else math.inf
    return {"took": round(took, 2), "floor": round(chats / RATE, 2), "refused": seen["refused"],
            "missed": chats - seen["posted"], "twice": seen["twice"], "late": late,
            "errors": len(errors), "calls": seen["calls"]}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="300 chats, one round")
    parser.add_argument("--chats", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--postgres")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    chats = 300 if args.quick else args.chats
    server = args.postgres or os.environ.get("QUIZBOT_BENCH_POSTGRES_URL") \
        or os.environ.get("QUIZBOT_TEST_POSTGRES_URL")
    calibration = Calibration()
    rows: list[Row] = []
    for processes in (1, 2):
        if processes == 2 and not server:
            print("fan-out with 2 processes skipped: no PostgreSQL server (set "
                  "QUIZBOT_BENCH_POSTGRES_URL or QUIZBOT_TEST_POSTGRES_URL)")
            continue
        runs = []
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory(prefix="bench_fanout_") as tmp:
                workdir = Path(tmp)
                if processes == 1:
                    runs.append(await one_run(chats, 1, str(workdir / "quiz.db"), workdir))
                else:
                    assert server is not None
                    database = await create_database(server)
                    try:
                        runs.append(await one_run(chats, 2, database, workdir))
                    finally:
                        await drop_database(server, database)
            run = runs[-1]
            print(f"{processes} process(es), {chats} chats: last question {run['took']} s "
                  f"after it was due (floor {run['floor']} s, {run['took'] / run['floor']:.2f}x"
                  f"; goal <= {GOAL}x); 429s {run['refused']}, missed {run['missed']}, "
                  f"twice {run['twice']}, errors logged {run['errors']}"
                  f"{', schedules written late' if run['late'] else ''}")
        store = "SQLite" if processes == 1 else "PostgreSQL, one token"
        rows.append(Row(
            name=f"{chats} chats' daily question, {processes} process"
                 f"{'es' if processes > 1 else ''} ({store})",
            unit="s", value=[r["took"] for r in runs], floor=[r["floor"] for r in runs],
            floor_name=f"N/{RATE:.0f} s, the token's rate", goal_ratio=GOAL,
            note="429s " + "/".join(str(r["refused"]) for r in runs) + "; missed "
                 + "/".join(str(r["missed"]) for r in runs) + "; twice "
                 + "/".join(str(r["twice"]) for r in runs),
            extra={"runs": runs},
        ))
    runs = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="bench_fanout_") as tmp:
            workdir = Path(tmp)
            runs.append(await one_run(chats, 1, str(workdir / "quiz.db"), workdir, REMINDERS))
        run = runs[-1]
        print(f"review reminders of {chats} people, 1 process: last {run['took']} s after "
              f"they were due (floor {run['floor']} s, {run['took'] / run['floor']:.2f}x; goal "
              f"<= {GOAL}x); 429s {run['refused']}, missed {run['missed']}, twice "
              f"{run['twice']}, errors logged {run['errors']}"
              f"{', reminders written late' if run['late'] else ''}")
    rows.append(Row(
        name=f"{chats} people's review reminders at one minute, 1 process (SQLite)",
        unit="s", value=[r["took"] for r in runs], floor=[r["floor"] for r in runs],
        floor_name=f"N/{RATE:.0f} s, the token's rate", goal_ratio=GOAL,
        note="429s " + "/".join(str(r["refused"]) for r in runs) + "; missed "
             + "/".join(str(r["missed"]) for r in runs) + "; twice "
             + "/".join(str(r["twice"]) for r in runs),
        extra={"runs": runs},
    ))
    end = calibration.end()
    print(calibration_line(end))
    if args.json:
        fanout = part("fanout", "Fan-outs against Telegram's limits (issue 36)",
                      end, rows)
        args.json.write_text(json.dumps({"quick": args.quick, "parts": [fanout]}, indent=2))


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "--serve-fake":
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve_fake(int(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]),
                                   float(sys.argv[5]), sys.argv[6]))
    else:
        asyncio.run(main())
