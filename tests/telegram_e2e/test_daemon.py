"""`quizbot run` with Telegram, as a supervisor sees it: the real `python -m bot run` against the
fake Bot API. A token refused at start or revoked while running ends the process with one line
naming the setting, never the token, and the exit status bot.app documents; SIGTERM drains and
exits 0."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from pathlib import Path

from bot.app import Exit
from tests.fakes.telegram_api import FakeTelegramAPI

ROOT = Path(__file__).resolve().parents[2]
PACKS = ROOT / "tests" / "data" / "packs"
WITHIN = 30.0  # seconds; only reached when something is broken


async def quizbot_run(
    tmp_path: Path, fake: FakeTelegramAPI, **env: str
) -> asyncio.subprocess.Process:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("TELEGRAM_", "DISCORD_", "QUIZBOT_"))}
    settings = {
        "TELEGRAM_BOT_TOKEN": fake.token,
        "TELEGRAM_API_BASE_URL": fake.base_url,
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
    for secret in secrets:
        assert secret not in stderr + out.decode()
    assert proc.returncode is not None
    return proc.returncode, lines[0]


async def test_a_rejected_token_is_one_line_and_exit_3(
    fake_tg: FakeTelegramAPI, tmp_path: Path
) -> None:
    wrong = "123456789:AAwrong-token-that-telegram-refuses-xyz"
    proc = await quizbot_run(tmp_path, fake_tg, TELEGRAM_BOT_TOKEN=wrong)
    code, line = await one_line(proc, wrong, fake_tg.token)
    assert code == Exit.CREDENTIALS
    assert "TELEGRAM_BOT_TOKEN" in line


async def test_a_wrong_api_path_never_shows_the_token(
    fake_tg: FakeTelegramAPI, tmp_path: Path
) -> None:
    """PTB reports a 404 as a rejected token and quotes the token in it."""
    proc = await quizbot_run(tmp_path, fake_tg,
                             TELEGRAM_API_BASE_URL=fake_tg.base_url + "/wrong/")
    code, line = await one_line(proc, fake_tg.token)
    assert code in (Exit.CREDENTIALS, Exit.CONNECTION)
    assert "TELEGRAM_" in line


async def test_an_api_url_with_a_trailing_slash_is_used_without_it(
    fake_tg: FakeTelegramAPI, tmp_path: Path
) -> None:
    """`…/bot/` would put a slash before the token (a 404, which PTB calls a rejected token)."""
    proc = await quizbot_run(tmp_path, fake_tg, TELEGRAM_API_BASE_URL=fake_tg.base_url + "/")
    await fake_tg.wait_for("getUpdates", within=WITHIN)
    proc.send_signal(signal.SIGTERM)
    _, err = await asyncio.wait_for(proc.communicate(), WITHIN)
    assert proc.returncode == 0, err.decode()


async def test_an_unreachable_api_names_the_setting_and_exits_5(
    fake_tg: FakeTelegramAPI, tmp_path: Path
) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/bot"
    proc = await quizbot_run(tmp_path, fake_tg, TELEGRAM_API_BASE_URL=url)
    code, line = await one_line(proc, fake_tg.token)
    assert code == Exit.CONNECTION
    assert f"TELEGRAM_API_BASE_URL={url}" in line, line
    assert "rejected" not in line, line


async def test_a_token_revoked_while_running_ends_the_process_with_exit_3(
    fake_tg: FakeTelegramAPI, tmp_path: Path
) -> None:
    proc = await quizbot_run(tmp_path, fake_tg)
    await fake_tg.wait_for("getUpdates", within=WITHIN)
    fake_tg.fail_next("getUpdates", status=401, description="Unauthorized", times=100)
    code, line = await one_line(proc, fake_tg.token)
    assert code == Exit.CREDENTIALS
    assert "TELEGRAM_BOT_TOKEN" in line


async def test_sigterm_drains_and_exits_0(
    fake_tg: FakeTelegramAPI, tmp_path: Path
) -> None:
    proc = await quizbot_run(tmp_path, fake_tg)
    await fake_tg.wait_for("getUpdates", within=WITHIN)
    proc.send_signal(signal.SIGTERM)
    out, err = await asyncio.wait_for(proc.communicate(), WITHIN)
    assert proc.returncode == 0, err.decode()
    assert "Traceback" not in err.decode() and fake_tg.token not in err.decode() + out.decode()
