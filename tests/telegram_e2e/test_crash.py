"""kill -9 in the middle of a burst of poll answers and button presses: nothing confirmed is lost.

The bot is a process of its own (crash_bot.py: the real PTB, our adapter and core, a real
SQLite file) against the fake Bot API in this process. Each round pushes a burst of votes and
presses, SIGKILLs the bot at a random moment while it works through them, starts it again and
lets it drain. Then every update the fake saw confirmed (a getUpdates offset past it: Telegram never
sends it again) and every press whose answer the person saw (answerCallbackQuery) must be
stored exactly once, and the boards' aggregates must equal a recount from the raw answers.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from bot.storage import SqliteStorage
from tests.fakes.telegram_api import FakeTelegramAPI

ROOT = Path(__file__).resolve().parents[2]
PACKS = ROOT / "tests" / "data" / "packs"
GROUPS = (-1001000000001, -1001000000002, -1001000000003)
BUTTON_GROUP = -1001000000009
ROUNDS = 8
VOTES = 240  # per round, spread over the groups' polls
PRESSES = 60  # per round
START_WITHIN = 20.0  # seconds; only reached when something is broken
DRAIN_WITHIN = 20.0


class BotProcess:
    """crash_bot.py against the fake, on one database file; with `webhook` (URL, host:port,
    secret) it takes updates through its webhook endpoint instead of polling."""

    def __init__(self, fake: FakeTelegramAPI, db: Path, workdir: Path,
                 webhook: tuple[str, str, str] | None = None, name: str = "bot") -> None:
        self.fake = fake
        self.db = db
        self.workdir = workdir
        self.webhook = webhook
        self.name = name
        self.proc: asyncio.subprocess.Process | None = None
        self.starts = 0

    async def start(self) -> None:
        # up once it polls, or once it set its webhook (it listens before that)
        ready = "getUpdates" if self.webhook is None else "setWebhook"
        before = len(self.fake.calls_of(ready, ok_only=False))
        # the same instance after a restart: it resumes polling without waiting for the lease
        # its killed predecessor held to run out
        env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "PYTHONPATH": str(ROOT),
               "QUIZBOT_INSTANCE": self.name}
        self.starts += 1
        log = (self.workdir / f"{self.name}-{self.starts}.log").open("wb")
        hook = [] if self.webhook is None else list(self.webhook[:2])
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.telegram_e2e.crash_bot",
            self.fake.base_url, self.fake.token, str(self.db), str(PACKS), *hook,
            cwd=ROOT, env=env, stdin=asyncio.subprocess.PIPE, stdout=log, stderr=log,
        )
        log.close()
        assert self.proc.stdin is not None
        if self.webhook is not None:
            self.proc.stdin.write(f"{self.webhook[2]}\n".encode())
        self.proc.stdin.close()
        deadline = asyncio.get_running_loop().time() + START_WITHIN
        while len(self.fake.calls_of(ready, ok_only=False)) <= before:
            if self.proc.returncode is not None:
                raise AssertionError(f"the bot exited at start:\n{self.log()}")
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"the bot never called {ready}:\n{self.log()}")
            await asyncio.sleep(0.01)

    def log(self) -> str:
        return (self.workdir / f"{self.name}-{self.starts}.log").read_text(
            errors="replace")[-4000:]

    async def kill(self) -> None:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()
        self.proc = None

    async def stop(self) -> str:
        """SIGTERM, as a service manager stops it; returns its log."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
                raise AssertionError(f"the bot did not stop on SIGTERM:\n{self.log()}") from None
            self.proc = None
        return self.log()


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegramAPI]:
    fake = FakeTelegramAPI()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def bot(fake: FakeTelegramAPI, tmp_path: Path) -> AsyncIterator[BotProcess]:
    process = BotProcess(fake, tmp_path / "quiz.db", tmp_path)
    yield process
    if process.proc is not None:
        await process.kill()


async def drained(fake: FakeTelegramAPI) -> None:
    await fake.wait_all_confirmed(DRAIN_WITHIN)


@pytest.mark.slow
async def test_kill_9_during_bursts_loses_nothing_confirmed(fake, bot, tmp_path):
    await kill_9_during_bursts(fake, bot, tmp_path, ROUNDS,
                               confirmed=lambda update_id: update_id < fake.confirmed_below)


async def kill_9_during_bursts(
    fake: FakeTelegramAPI, bot: BotProcess, tmp_path: Path, rounds: int,
    confirmed: Callable[[int], bool],
) -> None:
    """Bursts of votes and presses, each with a SIGKILL at a random moment of it, a restart
    and a drain; then every update `confirmed` (Telegram never sends it again) and every
    press answered is stored exactly once, and the aggregates equal a recount."""
    seed = os.environ.get("CRASH_SEED") or str(random.randrange(10**6))  # to replay a failure
    rng = random.Random(seed)
    admin = fake.user(900, "Admin")
    groups = [fake.group(chat_id, f"Group {i}") for i, chat_id in enumerate(GROUPS)]
    button_group = fake.group(BUTTON_GROUP, "Buttons")
    await bot.start()

    for chat in groups:
        fake.command(chat, admin, "/quiz")
    fake.command(button_group, admin, "/quiz buttons")
    polls = [c.result["poll"] for c in await fake.wait_for("sendPoll", len(groups))]
    [keyboard] = await fake.wait_for("sendMessage", where=lambda c: "reply_markup" in c.params)
    buttons = keyboard.result
    data = [b["callback_data"] for row in buttons["reply_markup"]["inline_keyboard"]
            for b in row if b["callback_data"].startswith("a:")]
    await drained(fake)

    votes: dict[int, tuple[str, int]] = {}  # update id -> (poll id, user id)
    presses: dict[int, tuple[str, int]] = {}  # update id -> (callback query id, user id)
    mid_burst = 0  # rounds whose kill left part of the burst unconfirmed
    for round_no in range(rounds):
        users = [fake.user(10_000 + 1_000 * round_no + i, f"P{round_no}.{i}")
                 for i in range(VOTES + PRESSES)]
        burst: list[int] = []
        for i, user in enumerate(users):  # votes and presses interleaved, as a busy hour
            if i % ((VOTES + PRESSES) // PRESSES) == 0:
                update_id = fake.press(buttons, user, rng.choice(data))
                presses[update_id] = (fake._all_updates[-1]["callback_query"]["id"], user["id"])
            else:
                poll = polls[i % len(polls)]
                update_id = fake.answer_poll(poll["id"], user, [rng.randrange(3)])
                votes[update_id] = (poll["id"], user["id"])
            burst.append(update_id)
        # the kill lands while the bot works through the burst, at a random point of it
        last = fake._all_updates[-1]["update_id"]  # a `poll` update follows each vote
        everything = range(burst[0], last + 1)
        share = rng.randrange(len(everything))
        deadline = asyncio.get_running_loop().time() + DRAIN_WITHIN
        while sum(map(confirmed, everything)) < share:
            assert asyncio.get_running_loop().time() < deadline, f"stuck (CRASH_SEED={seed})"
            await asyncio.sleep(0.002)
        await asyncio.sleep(rng.uniform(0, 0.02))
        await bot.kill()
        mid_burst += not all(map(confirmed, everything))
        await bot.start()
        await drained(fake)

    log = await bot.stop()
    assert mid_burst, "every kill came after its burst was handled"

    async with SqliteStorage(bot.db) as store:
        await store.materialize()  # boards are caught up by a clean stop; make sure
        post_of = {}
        for poll in polls:
            post = await store.post_by_ref(f"tg-poll:{poll['id']}")
            assert post is not None
            post_of[poll["id"]] = post.id
        button_post = await store.post_by_ref(
            f"tg-msg:{buttons['chat']['id']}:{buttons['message_id']}"
        )
        assert button_post is not None
        stored: Counter[tuple[int, str]] = Counter()
        for post_id in [*post_of.values(), button_post.id]:
            for answer in await store.answers_for_post(post_id):
                stored[(post_id, answer.person_key)] += 1

    acknowledged = {c.params["callback_query_id"] for c in fake.calls_of("answerCallbackQuery")}
    expected = {(post_of[poll_id], f"tg:{user_id}") for poll_id, user_id in votes.values()}
    expected |= {(button_post.id, f"tg:{user_id}") for _, user_id in presses.values()}
    problems: dict[str, list[Any]] = {
        "never confirmed": [u for u in [*votes, *presses] if not confirmed(u)],
        "presses never answered": [q for q, _ in presses.values() if q not in acknowledged],
        "confirmed answers lost": sorted(expected - set(stored)),
        "answers nobody gave": sorted(set(stored) - expected),
        "answers stored twice": sorted(k for k, n in stored.items() if n > 1),
        "errors logged": errors_logged(tmp_path),
    }
    problems = {k: v for k, v in problems.items() if v}
    assert not problems, (
        f"{ {k: f'{len(v)}: {v[:5]}' for k, v in problems.items()} } of {len(expected)} "
        f"answers over {rounds} kills (CRASH_SEED={seed}); logs in {tmp_path}; last:\n{log}"
    )
    assert_aggregates_match_answers(bot.db)


def errors_logged(workdir: Path) -> list[str]:
    """ERROR and worse in the logs of every bot process run there."""
    return [line for f in sorted(workdir.glob("*.log"))
            for line in f.read_text(errors="replace").splitlines()
            if line.startswith(("ERROR", "CRITICAL", "Traceback"))]


def assert_aggregates_match_answers(db_path: Path) -> None:
    """The boards' per-day scores and all-time totals equal a recount of the answers."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        recount_totals: dict[tuple[str, str], tuple[int, int, int]] = {}
        recount_scores: dict[tuple[str, str, str], tuple[int, int, int]] = {}
        rows = db.execute(
            "SELECT chat_key, person_key, date(answered_at / 1000, 'unixepoch'), correct,"
            " elapsed_ms FROM answers"
        ).fetchall()
        for chat, person, day, correct, elapsed in rows:
            for key in (chat, "*"):
                c, a, t = recount_totals.get((key, person), (0, 0, 0))
                recount_totals[(key, person)] = (c + correct, a + 1, t + elapsed)
                c, a, t = recount_scores.get((key, day, person), (0, 0, 0))
                recount_scores[(key, day, person)] = (c + correct, a + 1, t + elapsed)
        totals = {(r[0], r[1]): tuple(r[2:]) for r in db.execute(
            "SELECT chat_key, person_key, correct, answered, time_ms FROM totals")}
        scores = {(r[0], r[1], r[2]): tuple(r[3:]) for r in db.execute(
            "SELECT chat_key, day, person_key, correct, answered, time_ms FROM scores")}
    finally:
        db.close()
    assert rows
    assert totals == recount_totals
    assert scores == recount_scores
