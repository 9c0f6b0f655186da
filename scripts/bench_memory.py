"""Memory of a real bot process (issue 36, decision 1): `quizbot run` against the fake Bot API
and the fake Discord, each in a process of its own; writes bench_memory.json
(scripts/bench_report.py's format), asserts nothing.

    python scripts/bench_memory.py [--quick] [--answers 1000000] [--questions 10000]
        [--skip-discord] [--skip-telegram] [--json bench_memory.json]

Per platform:
1. The floor: a bare python-telegram-bot (stock Updater) or discord.py bot on the same fake,
   its RSS after start-up and 100 presses (scripts/bench_storm.py's bare bots).
2. quizbot with the bundled content: `quizbot run` (the real process, its scheduler too),
   then a soak: an admin's /quiz in a group, `BATCH` people press an answer, the next /quiz
   closes it (its summary), and so on until N answers were accepted. The people are a pool
   of `POOL`, each answering every question, so people, chats and posts repeat as in a real
   chat while the answers (and the database) grow. The process's RSS (VmRSS) is sampled
   after every batch: the figure is the RSS after the first batch, and the soak's growth
   from its first tenth to its end (the allocator warm, every cache filled) in percent.
3. quizbot with 10,000 generated questions (scripts/bench.py's packs, loaded from the
   content cache as a restarted bot finds them): its RSS after one batch.

Goals: <= 100 MB with the bundled content, <= 128 MB at 10,000 questions, <= 5% growth over
the soak (1M answers; --quick: 20,000).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")

from bench_common import (  # noqa: E402
    Calibration,
    Row,
    calibration_line,
    commands,
    part,
    proc_status,
    say,
)

BUNDLED = ROOT / "content"
PACKS = ROOT / "tests" / "data" / "packs"
BATCH = 500  # answers to one question
POOL = 5000  # people who answer, in turn
GROUP_ID = -1_006_000_000_000
HOST_ID = 6001
FIRST_PERSON = 8_000_000
WARM = 0.1  # the share of the soak after which the growth is measured from
GOALS = {"bundled": 100.0, "big": 128.0, "growth": 5.0}
STARTED = {"telegram": "Telegram bot @", "discord": "Discord: connected as"}


async def until(predicate: Any, within: float, what: Any) -> None:
    """Until `predicate()`; past `within` s, ends this process with `what` (or what()) said."""
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"bench_memory: {what() if callable(what) else what}")
        await asyncio.sleep(0.02)


# the fakes, each in a process of its own ---------------------------------------------------
async def keyboard(fake: Any, group: dict[str, Any], host: dict[str, Any]) -> Any:
    """An admin's /quiz buttons until the question it posts has answer buttons (a typed
    question has none); the last such message."""
    for _ in range(20):
        fake.command(group, host, "/quiz buttons")
        try:
            await until(lambda: posted(fake) is not None, 10, "")
        except SystemExit:
            continue
        return posted(fake)
    raise SystemExit("bench_memory: no question with answer buttons posted")


def posted(fake: Any) -> Any:
    return next((c.result for c in reversed(fake.calls) if c.method == "sendMessage" and c.ok
                 and '"a:' in json.dumps(c.result.get("reply_markup", ""))), None)


async def soak_telegram() -> None:
    """Answers `batch` commands: an admin's /quiz buttons, then n presses on its keyboard by
    the pool's people in turn; says when every press was answered. What the fake records is
    dropped after each batch, so that its own memory stays flat."""
    from tests.fakes.telegram_api import FakeTelegramAPI

    fake = FakeTelegramAPI()
    await fake.start()
    group = fake.group(GROUP_ID, "Soak")
    host = fake.user(HOST_ID, "Host", language_code="en")
    fake.set_admins(GROUP_ID, HOST_ID, owner=HOST_ID)
    people = [fake.user(FIRST_PERSON + i, f"P{i}") for i in range(POOL)]
    say({"base_url": fake.base_url, "token": fake.token})
    turn = 0
    async for cmd in commands():
        if cmd["cmd"] != "batch":
            break
        fake.calls.clear()
        fake._all_updates.clear()
        message = await keyboard(fake, group, host)
        data = [b["callback_data"] for row in message["reply_markup"]["inline_keyboard"]
                for b in row if b["callback_data"].startswith("a:")]  # answers
        n = cmd["n"]
        for i in range(n):
            fake.press(message, people[(turn + i) % POOL], data[i % len(data)])
        turn += n

        def answered() -> int:
            return sum(1 for c in fake.calls if c.method == "answerCallbackQuery")

        await until(lambda n=n: answered() >= n, 60 + n / 10, "presses not answered")
        say({"answered": answered()})
    await fake.stop()


async def soak_discord() -> None:
    """The same on the fake Discord: an admin's /quiz, then n clicks on its buttons."""
    from tests.fakes.discord_api import ALL_PERMISSIONS, FakeDiscord, User, buttons_of

    fake = FakeDiscord()
    await fake.start()
    host = User(900_000_000_000_000_001, "Host")
    people = [User(900_000_000_010_000_000 + i, f"P{i}") for i in range(POOL)]
    say({"api_base": fake.api_base, "gateway_url": fake.gateway_url, "token": fake.token})
    turn = 0
    async for cmd in commands():
        if cmd["cmd"] != "batch":
            break
        fake.requests.clear()
        fake.interactions.clear()
        ids: list[str] = []
        while not ids:  # a typed question has no answer buttons: the next /quiz
            reply = await fake.reply(await fake.slash("quiz", {}, user=host,
                                                      permissions=ALL_PERMISSIONS, within=60),
                                     within=60)
            ids = [b["custom_id"] for b in buttons_of(reply.message)
                   if b["custom_id"].startswith("qz:")]
        n, clicks = cmd["n"], []
        for i in range(n):
            clicks.append(await fake.click(reply.id, ids[i % len(ids)],
                                           user=people[(turn + i) % POOL], within=60))
        turn += n
        await until(lambda clicks=clicks: all(c.callback_type is not None for c in clicks),
                    60 + n / 10,
                    "clicks not answered")
        for message_id in [m for m in fake.messages if m != reply.id]:
            del fake.messages[message_id]  # the earlier questions and their summaries
        say({"answered": len(clicks)})
    await fake.close()


# the bot: `quizbot run` --------------------------------------------------------------------
class Child:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def ask(self, cmd: dict[str, Any], within: float = 600) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(cmd).encode() + b"\n")
        await self.proc.stdin.drain()
        return await self.read(within)

    async def read(self, within: float = 60) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), within)
        if not line:
            raise SystemExit(f"bench_memory: the fake ended ({await self.proc.wait()})")
        found: dict[str, Any] = json.loads(line)
        return found

    async def stop(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(Exception):
                assert self.proc.stdin is not None
                self.proc.stdin.write(b'{"cmd": "stop"}\n')
                await self.proc.stdin.drain()
                await asyncio.wait_for(self.proc.wait(), 20)
            if self.proc.returncode is None:
                self.proc.kill()
                await self.proc.wait()


def bot_env(platform: str, fake: dict[str, Any], content: Path, db: Path, cache: Path
            ) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("TELEGRAM_", "DISCORD_", "QUIZBOT_"))}
    env = base | {"PYTHONPATH": str(ROOT), "QUIZBOT_DATABASE": str(db),
                  "QUIZBOT_CONTENT_DIR": str(content), "QUIZBOT_CACHE_DIR": str(cache),
                  "QUIZBOT_LOG_LEVEL": "INFO"}
    if platform == "telegram":
        return env | {"TELEGRAM_BOT_TOKEN": fake["token"],
                      "TELEGRAM_API_BASE_URL": fake["base_url"]}
    return env | {"DISCORD_BOT_TOKEN": fake["token"], "DISCORD_API_BASE_URL": fake["api_base"],
                  "DISCORD_GATEWAY_URL": fake["gateway_url"]}


async def soak(platform: str, content: Path, answers: int, tmp: Path) -> dict[str, Any]:
    """`quizbot run` on `content` through `answers` answers; its RSS after each batch."""
    fake = Child(await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--role", platform, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, env=os.environ | {"PYTHONPATH": str(ROOT)}))
    log = tmp / f"bot-{platform}-{time.monotonic_ns()}.log"
    db = tmp / f"{time.monotonic_ns()}.db"
    bot: asyncio.subprocess.Process | None = None
    try:
        info = await fake.read()
        with log.open("wb") as out:
            bot = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.cli", "run", cwd=tmp,
                env=bot_env(platform, info, content, db, tmp / "cache"),
                stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out)
        started = time.monotonic()
        await until(lambda: STARTED[platform] in log.read_text(errors="replace"), 180,
                    f"the {platform} bot did not start (see its log)")
        ready = proc_status(bot.pid)
        samples: list[tuple[int, float]] = []  # (answers so far, RSS MB)
        done = 0
        while done < answers:
            n = min(BATCH, answers - done)
            done += (await fake.ask({"cmd": "batch", "n": n}))["answered"]
            samples.append((done, round(proc_status(bot.pid)["VmRSS"] / 1024, 1)))
        took = time.monotonic() - started
        hwm = proc_status(bot.pid)["VmHWM"] / 1024
        stored = stored_answers(db)
    except BaseException:
        if log.exists():  # what the bot said before it failed
            print("\n".join(log.read_text(errors="replace").splitlines()[-30:]),
                  file=sys.stderr)
        raise
    finally:
        if bot is not None and bot.returncode is None:
            bot.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(bot.wait(), 30)
            except TimeoutError:
                bot.kill()
        await fake.stop()
    text = log.read_text(errors="replace")
    errors = sum(1 for line in text.splitlines() if " ERROR " in line or "Traceback" in line)
    warm = next(rss for n, rss in samples if n >= WARM * answers)
    return {"ready_mb": round(ready["VmRSS"] / 1024, 1), "first_mb": samples[0][1],
            "warm_mb": warm, "end_mb": samples[-1][1], "max_mb": max(r for _, r in samples),
            "hwm_mb": round(hwm, 1), "answers": done, "stored": stored, "seconds": round(took, 1),
            "growth_pct": round((samples[-1][1] - warm) / warm * 100, 2), "errors": errors,
            "samples": samples[:: max(1, len(samples) // 100)] + samples[-1:]}


def stored_answers(db: Path) -> int:
    """Answers the bot stored (a press on a select-all question's option is a pick, not yet
    an answer; one on a closed question none)."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        count: int = conn.execute("SELECT count(*) FROM answers").fetchone()[0]
    return count


async def bare(platform: str, tmp: Path) -> dict[str, Any]:
    """The bare library's bot on the same fake (bench_storm's), after 100 presses."""
    import bench_storm

    return await bench_storm.one_run(platform, "bare", bench_storm.MEMORY_CLICKS, tmp, PACKS,
                                     {})


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="20,000 answers, 1,000 generated questions")
    parser.add_argument("--answers", type=int)
    parser.add_argument("--questions", type=int)
    parser.add_argument("--skip-telegram", action="store_true")
    parser.add_argument("--skip-discord", action="store_true")
    parser.add_argument("--json", type=Path, default=Path("bench_memory.json"))
    args = parser.parse_args()
    answers = args.answers or (20_000 if args.quick else 1_000_000)
    questions = args.questions or (1000 if args.quick else 10_000)
    platforms = [p for p in ("telegram", "discord") if not getattr(args, f"skip_{p}")]
    calibration = Calibration()
    rows: list[Row] = []
    runs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench_memory_") as tmp_dir:
        tmp = Path(tmp_dir)
        from bench import content_packs

        from bot.content import load_catalog

        packs = tmp / f"content-{questions}"
        content_packs(packs, questions)
        load_catalog(packs, tmp / "cache")  # the cache a restarted bot finds
        for platform in platforms:
            floor = await bare(platform, tmp)
            bundled = await soak(platform, BUNDLED, answers, tmp)
            big = await soak(platform, packs, BATCH, tmp)
            runs[platform] = {"bare": floor, "bundled": bundled, f"q{questions}": big}
            name = platform.capitalize()
            library = "bare discord.py" if platform == "discord" else "bare PTB (stock Updater)"
            print(f"{name}: bare {floor['rss_mb']} MB; bundled {bundled['first_mb']} MB after "
                  f"{BATCH} answers, {bundled['warm_mb']} → {bundled['end_mb']} MB over "
                  f"{bundled['answers']:,} presses ({bundled['stored']:,} answers stored, "
                  f"{bundled['growth_pct']:+.2f}%, max "
                  f"{bundled['max_mb']} MB, {bundled['seconds']} s, errors "
                  f"{bundled['errors']}); {questions:,} questions {big['first_mb']} MB",
                  flush=True)
            rows += [
                Row(f"{name} process RSS, bundled content", "MB", [bundled["first_mb"]],
                    [floor["rss_mb"]], library, goal_value=GOALS["bundled"],
                    note=f"`quizbot run` after start-up and {BATCH} answers (floor: after "
                         "100 presses)"),
                Row(f"{name} process RSS, {questions:,} questions", "MB", [big["first_mb"]],
                    [floor["rss_mb"]], library, goal_value=GOALS["big"],
                    note=f"loaded from the content cache; after {BATCH} answers"),
                Row(f"{name} RSS growth over a soak of {bundled['answers']:,} answers", "%",
                    [bundled["growth_pct"]], goal_value=GOALS["growth"],
                    note=f"bundled content; {bundled['warm_mb']} MB after the first tenth, "
                         f"{bundled['end_mb']} MB at the end, at most {bundled['max_mb']} MB; "
                         f"{bundled['seconds']} s; {BATCH} presses a question by a pool of "
                         f"{POOL:,} people, {bundled['stored']:,} answers stored"),
            ]
    end = calibration.end()
    print(calibration_line(end))
    args.json.write_text(json.dumps({"quick": args.quick, "parts": [
        part("memory_soak", "Memory of `quizbot run` (issue 36)", end, rows, runs=runs)]},
        indent=2, ensure_ascii=False) + "\n")
    print(f"written to {args.json}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--role":
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(soak_telegram() if sys.argv[2] == "telegram" else soak_discord())
    else:
        asyncio.run(main())
