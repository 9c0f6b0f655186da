"""One Telegram poller at a time among the processes on one database (compose.yaml's three),
against the fake Bot API answering an older getUpdates 409 when a newer one comes, as
Telegram does.

- Three `quizbot run` on one PostgreSQL database: one polls, the others wait; kill -9 the
  leader in the middle of a burst of votes and another polls within TAKEOVER; every vote is
  stored once, no two getUpdates were ever open at once, and no process met a 409.
- A 409 the election does not explain (another program polls with the token) ends
  `quizbot run` with one line and exit 5; one it explains (this process no longer leads) only
  makes it wait.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.adapters.telegram import TelegramAdapter
from bot.adapters.telegram.polling import LEASE_NAME
from bot.app import Exit
from bot.core.leadership import LEASE, RETRY
from bot.core.service import QuizService
from bot.settings import Settings
from tests.fakes.telegram_api import FakeTelegramAPI
from tests.storage_contract.backends import backend_for
from tests.telegram_e2e.test_daemon import one_line, quizbot_run

ROOT = Path(__file__).resolve().parents[2]
PACKS = ROOT / "tests" / "data" / "packs"
# a killed leader's lease runs out within LEASE; a waiting process tries every RETRY seconds
TAKEOVER = LEASE.total_seconds() + RETRY + 1.0  # 1 s for a loaded machine
CONFLICT = ("Conflict: terminated by other getUpdates request; make sure that only one bot "
            "instance is running")


async def until(condition: Callable[[], bool], within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.02)


class Poller:
    """`quizbot run` in long-polling mode as a process of its own, named QUIZBOT_INSTANCE."""

    def __init__(self, fake: FakeTelegramAPI, workdir: Path, name: str, database: str) -> None:
        self.name = name
        self.path = workdir / f"{name}.log"
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TELEGRAM_", "DISCORD_", "QUIZBOT_"))}
        self.env = env | {
            "NO_PROXY": "127.0.0.1,localhost", "PYTHONPATH": str(ROOT),
            "TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE_URL": fake.base_url,
            "QUIZBOT_DATABASE": database, "QUIZBOT_CONTENT_DIR": str(PACKS),
            "QUIZBOT_LOG_LEVEL": "INFO", "QUIZBOT_INSTANCE": name,
        }
        self.workdir = workdir
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        with self.path.open("wb") as log:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.cli", "run", cwd=self.workdir, env=self.env,
                stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log,
            )

    def log(self) -> str:
        return self.path.read_text(errors="replace")

    @property
    def running(self) -> bool:
        return "is running (long polling)" in self.log()

    @property
    def leads(self) -> bool:
        """Its last word on the election: it leads."""
        said = [line for line in self.log().splitlines() if f"{LEASE_NAME}:" in line]
        return bool(said) and said[-1].endswith("leads")

    async def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()

    async def stop(self) -> int:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return await asyncio.wait_for(self.proc.wait(), 15)
        finally:
            if self.proc.returncode is None:
                self.proc.kill()
                await self.proc.wait()


@pytest.mark.slow
async def test_three_processes_poll_one_at_a_time_and_take_over_from_a_killed_leader(
    fake_tg: FakeTelegramAPI, tmp_path: Path
) -> None:
    fake = fake_tg
    fake.one_poller = True
    rng = random.Random(os.environ.get("CRASH_SEED") or random.randrange(10**6))
    async with backend_for("postgres", tmp_path) as backend:
        processes = [Poller(fake, tmp_path, f"bot-{n}", backend.database) for n in (1, 2, 3)]
        try:
            for process in processes:
                await process.start()
            await until(lambda: all(p.running for p in processes), 30, "a process never ran")
            await until(lambda: sum(p.leads for p in processes) == 1, 10, "nobody leads")
            [leader] = [p for p in processes if p.leads]

            admin = fake.user(900, "Admin")
            groups = [fake.group(-1003000000001 - i, f"Group {i}") for i in range(3)]
            for chat in groups:
                fake.command(chat, admin, "/quiz")
            polls = [c.result["poll"] for c in await fake.wait_for("sendPoll", 3, within=10)]
            await fake.wait_all_confirmed(10)

            votes: dict[int, tuple[str, int]] = {}  # update id -> (poll id, user id)
            for i in range(300):
                user = fake.user(30_000 + i, f"P{i}")
                poll = polls[i % len(polls)]
                votes[fake.answer_poll(poll["id"], user, [rng.randrange(3)])] = (
                    poll["id"], user["id"])
            share = rng.randrange(30, 150)
            first = min(votes)
            await until(lambda: fake.confirmed_below - first >= share, 20, "the burst stalled")
            await leader.kill()
            killed_at = time.monotonic()
            await fake.wait_all_confirmed(TAKEOVER + 20)
            took_over = min(c.at for c in fake.calls_of("getUpdates", ok_only=False)
                            if c.at > killed_at)
            alive = [p for p in processes if p is not leader]
            assert sum(p.leads for p in alive) == 1
            overlaps = fake.poll_overlaps  # before the stops below hand the lease over
            conflicts = [c for c in fake.calls_of("getUpdates", ok_only=False) if not c.ok]
            assert all(p.proc is not None and p.proc.returncode is None for p in alive)
            codes = [await p.stop() for p in alive]
        finally:
            for process in processes:
                if process.proc is not None and process.proc.returncode is None:
                    await process.kill()
        logs = {p.name: p.log() for p in processes}
        assert codes == [0, 0], logs
        assert took_over - killed_at <= TAKEOVER, (took_over - killed_at, logs)
        assert overlaps == 0, logs
        assert conflicts == [], logs
        # the message only: a timestamp's milliseconds can read ",409"; and 409 as a number
        # of its own, not inside the test database's random name ("t_5dd6df2409b6")
        said = [re.sub(r"^\S+ \S+,\d{3} ", "", line)
                for log in logs.values() for line in log.splitlines()]
        assert not [line for line in said
                    if line.startswith("ERROR ") or "Traceback" in line
                    or re.search(r"\b409\b", line) or "Conflict" in line], logs

        refs: dict[str, int] = dict(await backend.fetch("SELECT ref, post_id FROM post_refs"))
        stored = Counter(await backend.fetch("SELECT post_id, person_key FROM answers"))
        expected = {(refs[f"tg-poll:{poll_id}"], f"tg:{user_id}")
                    for poll_id, user_id in votes.values()}
        assert set(stored) == expected
        assert all(n == 1 for n in stored.values())


async def test_a_conflict_nothing_explains_is_one_line_and_exit_5(
    fake_tg: FakeTelegramAPI, tmp_path: Path
) -> None:
    fake_tg.fail_next("getUpdates", status=409, description=CONFLICT)
    proc = await quizbot_run(tmp_path, fake_tg)
    code, line = await one_line(proc, fake_tg.token)
    assert code == Exit.CONNECTION
    assert "409 Conflict" in line and "TELEGRAM_BOT_TOKEN" in line
    assert len(fake_tg.calls_of("getUpdates", ok_only=False)) == 1, "retried"


async def test_a_conflict_after_another_process_took_the_lease_only_waits(
    fake_tg: FakeTelegramAPI, service: QuizService, tg_settings: Settings
) -> None:
    adapter = TelegramAdapter(service, tg_settings)
    await adapter.start()
    try:
        await fake_tg.wait_for("getUpdates")
        leader = adapter.poller.leader
        assert leader is not None and leader.leading
        # taken behind its back (its view of the lease is still fresh), then a 409
        await service.storage.release_lease(LEASE_NAME, leader.holder)
        other = service.leadership(LEASE_NAME, "another-process")
        assert await other.claim()
        fake_tg.fail_next("getUpdates", status=409, description=CONFLICT)
        await until(lambda: not fake_tg.calls_of("getUpdates", ok_only=False)[-1].ok, 5,
                    "no 409 came")
        await asyncio.sleep(RETRY / 2)
        assert not leader.leading
        polled = len(fake_tg.calls_of("getUpdates", ok_only=False))
        await asyncio.sleep(1.5 * RETRY)  # a waiting process tries every RETRY
        assert len(fake_tg.calls_of("getUpdates", ok_only=False)) == polled, "polled anyway"
        assert not adapter.poller.failed.done()

        await other.release()  # the other stops cleanly: this one polls again
        await fake_tg.wait_for("getUpdates", polled + 1, within=3 * RETRY)
        alice = fake_tg.user(1, "Alice")
        fake_tg.command(fake_tg.private_chat(alice), alice, "/help")
        await fake_tg.wait_for("sendMessage", within=5)
    finally:
        await adapter.stop()
