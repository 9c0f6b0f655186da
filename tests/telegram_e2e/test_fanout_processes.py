"""Issue 36: one token, one budget across processes. Two `quizbot run` on one PostgreSQL
database share a bot token; the daily question of many chats comes due while both run, and
both send their share at once. The fake enforces Telegram's limits per token: paced each on
its own they would send at 60 a second and meet 429s; sharing the budget through the
database (send_budgets), they meet none, and every chat gets its question once."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from datetime import time as wall
from pathlib import Path

import pytest

from bot.core.models import Schedule
from tests.fakes.telegram_api import FakeTelegramAPI
from tests.fakes.telegram_limits import FloodLimits
from tests.storage_contract.backends import backend_for
from tests.telegram_e2e.test_leadership import Poller, until

CHATS = 150  # five seconds of the token's budget
# set before today's midnight UTC: today's question is due
SET_AT = datetime.combine(datetime.now(UTC).date(), wall(0, 0), UTC) - timedelta(minutes=1)


@pytest.mark.slow
async def test_two_processes_on_one_token_share_its_budget_and_meet_no_429(
    fake_tg: FakeTelegramAPI, tmp_path: Path
) -> None:
    fake = fake_tg
    fake.limits = limits = FloodLimits()
    ids = [-1_004_000_000_000 - i for i in range(CHATS)]
    for chat_id in ids:
        fake.group(chat_id, f"Group {chat_id}")
    async with backend_for("postgres", tmp_path) as backend:
        processes = [Poller(fake, tmp_path, f"bot-{n}", backend.database) for n in (1, 2)]
        try:
            for process in processes:
                await process.start()
            await until(lambda: all(p.running for p in processes), 30, "a process never ran")
            store = backend.store()
            await store.open()
            try:  # due since midnight UTC: both processes see them at their next tick
                for chat_id in ids:
                    key = f"tg:{chat_id}"
                    await store.upsert_chat(key, f"Group {chat_id}")
                    await store.set_chat_kind(key, "supergroup")
                    await store.set_schedule(Schedule(key, wall(0, 0), "UTC",
                                                      updated_at=SET_AT))
            finally:
                await store.close()
            await until(lambda: len(fake.calls_of("sendPoll")) >= CHATS, 60,
                        "not every daily question was sent")
            codes = [await p.stop() for p in processes]
        finally:
            for process in processes:
                if process.proc is not None and process.proc.returncode is None:
                    await process.kill()
        logs = {p.name: p.log() for p in processes}
        assert codes == [0, 0], logs
        assert limits.refused == 0, logs  # paced together: the fake refuses a burst past 30/s
        sent = Counter(c.params["chat_id"] for c in fake.calls_of("sendPoll"))
        assert sorted(sent) == sorted(ids) and set(sent.values()) == {1}
        # both sent: each process's log names the daily questions it claimed (the claims
        # are the database's), and the budget was leased by both
        leased = await backend.fetch("SELECT name FROM send_budgets")
        assert [tuple(r) for r in leased] == [("telegram:123456789",)]
