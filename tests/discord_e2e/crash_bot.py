"""The Discord bot as a process of its own, for the kill -9 and SIGTERM tests (test_crash.py).

    DISCORD_BOT_TOKEN=… DISCORD_API_BASE_URL=… DISCORD_GATEWAY_URL=… QUIZBOT_DATABASE=… \
    QUIZBOT_CONTENT_DIR=… python tests/discord_e2e/crash_bot.py

The production parts wired as `quizbot run` wires them (bot/app.py: `open_service` for the
content, the SQLite file and the core; `run_adapters` for the scheduler, SIGTERM/SIGINT and a
connection ending for good), with the real DiscordAdapter pointed at the fake. Only the
adapter's timings differ: READY at once after the fake's guilds, no wait between IDENTIFYs, and
a short live count interval. Its exit status is `run_adapters`'s (0 after SIGTERM). With
QUIZBOT_DISCORD_SHARD_COUNT and QUIZBOT_DISCORD_SHARDS it runs those shards (test_shards.py
runs several of these on one database).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot import logs
from bot.adapters import ConnectionLost, CredentialsRejected
from bot.adapters.discord import DiscordAdapter
from bot.app import exit_for, open_service, run_adapters
from bot.settings import Settings


async def main() -> int:
    settings = Settings(_env_file=None)
    logs.setup(settings.quizbot_log_level, settings.secrets())
    async with open_service(settings) as service:
        # the fake takes IDENTIFYs without Discord's 5 s window: shards start at once
        adapter = DiscordAdapter(service, settings, guild_ready_timeout=0.05,
                                 ready_timeout=20.0, live_interval=0.5, identify_interval=0.0)
        try:
            return int(await run_adapters(service, [adapter], settings))
        except (CredentialsRejected, ConnectionLost) as exc:
            print(f"crash_bot: {exc}", file=sys.stderr)
            return int(exit_for(exc) or 1)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
