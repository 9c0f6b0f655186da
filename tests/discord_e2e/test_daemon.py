"""`quizbot run` with Discord, as a supervisor sees it: the real `python -m bot run` against the
fake. A token refused at start or revoked while running, and a Discord API it cannot reach,
each end the process with one line on stderr naming the setting, never the token, and the
exit status bot.app documents."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from pathlib import Path

from bot.app import Exit
from tests.fakes.discord_api import TOKEN, FakeDiscord

ROOT = Path(__file__).resolve().parents[2]
PACKS = ROOT / "tests" / "data" / "packs"
WITHIN = 30.0  # seconds; only reached when something is broken


async def quizbot_run(tmp_path: Path, fake: FakeDiscord, **env: str) -> asyncio.subprocess.Process:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("TELEGRAM_", "DISCORD_", "QUIZBOT_"))}
    settings = {
        "DISCORD_BOT_TOKEN": TOKEN,
        "DISCORD_API_BASE_URL": fake.api_base,
        "DISCORD_GATEWAY_URL": fake.gateway_url,
        "QUIZBOT_DATABASE": str(tmp_path / "quiz.db"),
        "QUIZBOT_CONTENT_DIR": str(PACKS),
        "QUIZBOT_LOG_LEVEL": "WARNING",  # what a supervisor shows: only the problem
        "NO_PROXY": "127.0.0.1,localhost",
        "PYTHONPATH": str(ROOT),
    }
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "run", cwd=tmp_path, env=base | settings | env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def one_line(proc: asyncio.subprocess.Process, *secrets: str) -> tuple[int, str]:
    out, err = await asyncio.wait_for(proc.communicate(), WITHIN)
    stderr = err.decode()
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    for secret in (TOKEN, *secrets):
        assert secret not in stderr + out.decode()
    assert proc.returncode is not None
    return proc.returncode, lines[0]


async def test_a_rejected_token_is_one_line_and_exit_3(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    wrong = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gwrong.not-this-bots-token-at-all"
    proc = await quizbot_run(tmp_path, fake, DISCORD_BOT_TOKEN=wrong)
    code, line = await one_line(proc, wrong)
    assert code == Exit.CREDENTIALS
    assert line == "quizbot: DISCORD_BOT_TOKEN was rejected by Discord: check the token"
    assert not fake.identify_tokens


async def test_a_token_revoked_while_running_ends_the_process_with_exit_3(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    proc = await quizbot_run(tmp_path, fake)
    await fake.until(lambda: fake.commands, WITHIN, "the bot to be ready and synced")
    await fake.close_gateway(4004, "Authentication failed.")
    code, line = await one_line(proc)
    assert code == Exit.CREDENTIALS
    assert line == "quizbot: DISCORD_BOT_TOKEN was rejected by Discord: check the token"
    assert fake.connections == 1, "it did not try again with a token Discord refused"


async def test_an_unreachable_api_is_one_line_and_exit_5(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = await quizbot_run(tmp_path, fake,
                             DISCORD_API_BASE_URL=f"http://127.0.0.1:{port}/api/v10")
    code, line = await one_line(proc)
    assert code == Exit.CONNECTION
    assert "DISCORD_API_BASE_URL" in line, line


async def test_an_unreachable_gateway_names_the_setting_and_exits_5(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    """The REST API answers, the gateway does not: the line names DISCORD_GATEWAY_URL and the
    URL, never the token."""
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gateway = f"http://127.0.0.1:{port}/"
    proc = await quizbot_run(tmp_path, fake, DISCORD_GATEWAY_URL=gateway)
    code, line = await one_line(proc)
    assert code == Exit.CONNECTION
    assert f"DISCORD_GATEWAY_URL={gateway}" in line, line
    assert "token" not in line.lower(), line


async def test_bad_shard_settings_are_one_line_and_exit_2(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    proc = await quizbot_run(tmp_path, fake, QUIZBOT_DISCORD_SHARD_COUNT="4",
                             QUIZBOT_DISCORD_SHARDS="2-4")
    code, line = await one_line(proc)
    assert code == Exit.CONFIG
    assert line == ("quizbot: configuration error: QUIZBOT_DISCORD_SHARDS: shard 4 does not "
                    "exist: shard ids go from 0 to 3 with QUIZBOT_DISCORD_SHARD_COUNT=4")
    assert not fake.requests, "nothing was tried"


async def test_a_sharded_run_names_its_shards_when_it_starts(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    # one shard: a second would IDENTIFY after Discord's 5 s window
    proc = await quizbot_run(tmp_path, fake, QUIZBOT_DISCORD_SHARD_COUNT="4",
                             QUIZBOT_DISCORD_SHARDS="1", QUIZBOT_LOG_LEVEL="INFO")
    await fake.until(lambda: fake.commands, WITHIN, "the bot to be ready and synced")
    assert fake.identified_shards == [(1, 4)]
    proc.send_signal(signal.SIGTERM)
    _, err = await asyncio.wait_for(proc.communicate(), WITHIN)
    assert proc.returncode == Exit.OK
    stderr = err.decode()
    assert "running: Discord (shard 1 of 4);" in stderr, stderr
    assert "Traceback" not in stderr and TOKEN not in stderr
