"""The Telegram bot as a process of its own, for the kill -9 tests (test_crash.py,
test_webhook_processes.py).

    python -m tests.telegram_e2e.crash_bot API_BASE_URL TOKEN DATABASE CONTENT_DIR \
        [WEBHOOK_URL WEBHOOK_LISTEN]

The production parts (content, SQLite storage, the core, the Telegram adapter with its
polling loop, or its webhook endpoint when WEBHOOK_URL and WEBHOOK_LISTEN are given, with the
secret read from stdin's first line) wired as `quizbot run` wires them, without the scheduler
(time does not matter here) or anything read from the environment but QUIZBOT_INSTANCE (the
same name across restarts: the restarted poller need not wait for its old lease). SIGTERM and
SIGINT stop it cleanly; SIGKILL is what the tests send.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bot.adapters.telegram import TelegramAdapter
from bot.content import load_catalog
from bot.core.service import QuizService
from bot.settings import Settings
from bot.storage import SqliteStorage


async def main(base_url: str, token: str, database: Path, content: Path,
               webhook: dict[str, Any]) -> None:
    settings = Settings(
        _env_file=None, telegram_bot_token=SecretStr(token), telegram_api_base_url=base_url,
        **webhook,
    )
    storage = SqliteStorage(database)
    await storage.open()
    adapter = TelegramAdapter(QuizService(load_catalog(content), storage), settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await adapter.start()
        await stop.wait()
    finally:
        await adapter.stop()
        await storage.close()


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    url, key, db, packs = sys.argv[1:5]
    hook: dict[str, Any] = {}
    if len(sys.argv) > 5:
        hook = {"quizbot_telegram_webhook_url": sys.argv[5],
                "quizbot_telegram_webhook_listen": sys.argv[6],
                "quizbot_telegram_webhook_secret": SecretStr(sys.stdin.readline().strip())}
    asyncio.run(main(url, key, Path(db), Path(packs), hook))
