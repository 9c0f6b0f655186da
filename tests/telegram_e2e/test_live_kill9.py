"""kill -9 between storing a live question and starting its send (issue 38): after the
restart the question is shown once, with its countdown, and the podium counts it once.

`quizbot run` is a process of its own (long polling, PostgreSQL, its scheduler ticking in
real time) against the fake Bot API in this process. The moment is made exact, not random:
the test holds an uncommitted row of the lease the question's delivery takes
(`live:<session>:1:open`), so the bot, once it has committed the question, waits on that
row's lock before it stores the send as started; the test sees it waiting
(pg_stat_activity), kills it there, and lets the row go. Before the fix the question was
never shown, and closed unseen at its time with a place on the podium.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests.database_copies import postgres_database
from tests.fakes.telegram_api import FakeTelegramAPI
from tests.telegram_e2e.test_webhook import QuizbotRun

ROOT = Path(__file__).resolve().parents[2]
PACKS = ROOT / "tests" / "data" / "packs"
GROUP, ADMIN, PLAYER = -1001000000301, 900, 2001
pytestmark = pytest.mark.slow


def bot_env(fake: FakeTelegramAPI, database: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "DISCORD_", "QUIZBOT_"))}
    return {
        **env, "NO_PROXY": "127.0.0.1,localhost", "PYTHONPATH": str(ROOT),
        "TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE_URL": fake.base_url,
        "QUIZBOT_DATABASE": database, "QUIZBOT_CONTENT_DIR": str(PACKS),
        "QUIZBOT_INSTANCE": "bot-1", "QUIZBOT_LOG_LEVEL": "INFO",
    }


async def until(check: Callable[[], Any], within: float, what: str) -> Any:
    deadline = asyncio.get_running_loop().time() + within
    while not (found := await check() if asyncio.iscoroutinefunction(check) else check()):
        assert asyncio.get_running_loop().time() < deadline, f"never saw {what}"
        await asyncio.sleep(0.05)
    return found


def questions(fake: FakeTelegramAPI) -> list[Any]:
    """The live questions the chat was sent (a message with "la:" buttons)."""
    return [c for c in fake.calls_of("sendMessage")
            if c.params["chat_id"] == GROUP
            and any(b.get("callback_data", "").startswith("la:")
                    for row in (c.params.get("reply_markup") or {}).get("inline_keyboard", [])
                    for b in row)]


async def test_a_question_killed_before_its_send_is_shown_once_after_the_restart(
    fake_tg: FakeTelegramAPI, tmp_path: Path
) -> None:
    fake = fake_tg
    async with postgres_database(False) as database:
        bot = QuizbotRun(fake, tmp_path, "bot", bot_env(fake, database), 0, ready="getUpdates")
        await bot.start()
        try:
            group, admin = fake.group(GROUP, "Live"), fake.user(ADMIN, "Admin")
            player = fake.user(PLAYER, "Pia")
            fake.set_admins(GROUP, ADMIN)
            fake.command(group, admin, "/host sample 1 10s")
            lobby = await until(lambda: next(
                (c for c in fake.calls_of("sendMessage") if c.params["chat_id"] == GROUP
                 and "reply_markup" in c.params), None), 20, "the lobby")
            fake.press(lobby.result, player, "lj")
            await until(lambda: fake.calls_of("answerCallbackQuery"), 20, "the join")
            held = await asyncpg.connect(database)
            watch = await asyncpg.connect(database)
            try:
                session = await watch.fetchval("SELECT id FROM live_sessions")
                hold = held.transaction()
                await hold.start()
                await held.execute("INSERT INTO leases(name, holder, until) VALUES ($1, $2, $3)",
                                   f"live:{session}:1:open", "test",
                                   datetime.now(UTC) + timedelta(days=1))
                fake.command(group, admin, "/next")

                async def waiting() -> bool:  # the question committed, its send not started
                    stored = await watch.fetchval(
                        "SELECT count(*) FROM live_steps WHERE session_id = $1", session)
                    blocked = await watch.fetchval(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                        " AND query LIKE '%INSERT INTO leases%' AND pid <> $1",
                        held.get_server_pid())
                    return bool(stored == 1 and blocked)

                await until(waiting, 20, "the bot waiting to deliver the stored question")
                await bot.kill()
                await hold.rollback()
                assert questions(fake) == []  # never shown
                started = await watch.fetchval(
                    "SELECT count(*) FROM delivery_steps WHERE name LIKE 'live:%'")
                assert started == 0  # and its send never stored as started
            finally:
                await held.close()
                await watch.close()
            await bot.start()
            (shown,) = await until(lambda: questions(fake), 30, "the question after the restart")
            assert "s left" in shown.params["text"]
            data = shown.params["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
            fake.press(shown.result, player, data)  # everyone has answered: it closes
            await until(lambda: any("Question closed" in c.params.get("text", "")
                                    or "/next shows the podium." in c.params.get("text", "")
                                    for c in fake.calls_of("sendMessage")), 20, "the reveal")
            fake.command(group, admin, "/next")
            podium = await until(lambda: next(
                (c.params["text"] for c in fake.calls_of("sendMessage")
                 if "Podium after" in c.params.get("text", "")), None), 20, "the podium")
            assert podium.startswith("🏆 Podium after 1 questions"), podium
            await asyncio.sleep(2)  # a few more ticks: nothing is shown again
            assert len(questions(fake)) == 1
        finally:
            if bot.proc is not None:
                assert await bot.stop() == 0, bot.log()
