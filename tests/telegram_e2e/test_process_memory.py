"""What a started bot's process holds, checked by structure rather than by an RSS figure
(docs/performance.md, Memory): `quizbot run`'s modules and one adapter started as it starts
them, in a process of its own, against the fake Bot API (which has it register its commands
in every language). Pydantic (the settings) and Babel (the catalogs, numbers) are there, but
not the content schema's models (the catalog is read from the content cache and holds no
pydantic model), nor what the bot never uses (the webhook's aiohttp in polling mode, the
dashboard, the other adapter, the content formats, the drawing libraries); and its catalog
holds no question's text: every question reads its texts from the content cache's files when
asked for."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from tests.fakes.telegram_api import FakeTelegramAPI

ROOT = Path(__file__).resolve().parent.parent.parent

BOT = r"""
import asyncio, json, sys
from pathlib import Path

import bot.cli  # the module `quizbot run` runs in, and what it imports
from bot.adapters.telegram import TelegramAdapter
from bot.app import open_service
from bot.settings import Settings


async def main(base_url: str, token: str, database: str, cache: str) -> None:
    settings = Settings(_env_file=None, telegram_bot_token=token,
                        telegram_api_base_url=base_url, quizbot_database=Path(database),
                        quizbot_cache_dir=Path(cache))
    async with open_service(settings) as service:
        adapter = TelegramAdapter(service, settings)
        await adapter.start()
        try:
            questions = [q for quiz in service.catalog.quizzes.values() for q in quiz.questions]
            held = [q.id for q in questions
                    if q._texts is not None]
            from pydantic import BaseModel

            models = [type(o).__name__ for quiz in service.catalog.quizzes.values()
                      for o in (quiz, *quiz.questions) if isinstance(o, BaseModel)]
            print(json.dumps({"modules": sorted(sys.modules), "questions": len(questions),
                              "held": held, "models": models}))
        finally:
            await adapter.stop()


asyncio.run(main(*sys.argv[1:]))
"""

# top-level packages and bot modules the running bot does not need
NOT_LOADED = ("aiohttp", "discord", "yaml", "asyncpg", "PIL",
              "ziamath", "latex2mathml", "pygments", "genanki", "jinja2", "xlsxwriter",
              "defusedxml", "bot.web", "bot.adapters.discord", "bot.content.schema",
              "bot.content.validate", "bot.content.formats", "bot.storage.postgres.storage")


async def started_bot(fake: FakeTelegramAPI, tmp_path: Path) -> dict[str, object]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", BOT, fake.base_url, fake.token, str(tmp_path / "bot.db"),
        str(tmp_path / "cache"), cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    found: dict[str, object] = json.loads(out.decode().strip().splitlines()[-1])
    return found


async def test_a_started_telegram_bot_holds_only_what_it_uses(
    fake_tg: FakeTelegramAPI, tmp_path: Path
) -> None:
    for start in ("cold: the cache filled by a child", "warm: from the cache"):
        found = await started_bot(fake_tg, tmp_path)
        modules = found["modules"]
        assert isinstance(modules, list) and "bot.adapters.telegram.adapter" in modules
        loaded = [m for m in modules
                  if any(m == name or m.startswith(name + ".") for name in NOT_LOADED)]
        assert loaded == [], start
        assert found["questions"] and found["held"] == [] and found["models"] == [], start
