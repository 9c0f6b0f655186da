"""The operator's ways into the dashboard: `quizbot dashboard` prints a chat's signed link (or
ends them all), and `quizbot run` with no token serves the dashboard beside the console quiz
and says the console chat's link."""

from __future__ import annotations

import asyncio
import http.cookiejar
import os
import socket
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from urllib.parse import unquote

import pytest

from bot.cli import DASHBOARD_OFF, main
from bot.core.clock import SystemClock
from bot.core.dashboard import DashboardAccess, Denied
from bot.storage import SqliteStorage
from tests.conftest import SAMPLE_PACKS

SECRET = "operator-" + "k" * 40


def web_env(port: int = 9) -> dict[str, str]:
    return {"QUIZBOT_WEB_LISTEN": f"127.0.0.1:{port}",
            "QUIZBOT_WEB_URL": f"http://127.0.0.1:{port}", "QUIZBOT_WEB_SECRET": SECRET}


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A database where the bot has posted in one Telegram group."""
    db = tmp_path / "quiz.db"
    for name, value in {"QUIZBOT_DATABASE": str(db), "QUIZBOT_CONTENT_DIR": str(SAMPLE_PACKS),
                        "QUIZBOT_CACHE_DIR": str(tmp_path / "cache"),
                        "TELEGRAM_BOT_TOKEN": "", "DISCORD_BOT_TOKEN": ""}.items():
        monkeypatch.setenv(name, value)

    async def fill() -> None:
        async with SqliteStorage(db) as storage:
            await storage.upsert_chat("tg:-100", "Study group")
    asyncio.run(fill())
    return db


def grant_chat(db: Path, link: str) -> str:
    """The chat a printed link opens, as the dashboard checks it; Denied if it opens none."""
    async def check() -> str:
        async with SqliteStorage(db) as storage:
            access = DashboardAccess(storage, SystemClock(), SECRET, "http://127.0.0.1:9")
            token = unquote(link.rpartition("/open/")[2])
            return (await access.grant_of("link", token)).chat_key
    return asyncio.run(check())


def test_the_command_prints_a_chats_link_and_revoke_ends_it(
        database: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in web_env().items():
        monkeypatch.setenv(name, value)
    assert main(["dashboard", "--chat", "-100", "--lang", "bn"]) == 0
    out, err = capsys.readouterr()
    link = out.strip()
    assert link.startswith("http://127.0.0.1:9/open/") and "24 hours" in err
    assert grant_chat(database, link) == "tg:-100"
    assert main(["dashboard", "--chat", "tg:-100", "--revoke"]) == 0
    assert "has ended" in capsys.readouterr().out
    with pytest.raises(Denied):
        grant_chat(database, link)


def test_the_command_refuses_an_unknown_chat_and_a_dashboard_that_is_off(
        database: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["dashboard", "--chat", "tg:-100"]) == 2
    assert capsys.readouterr().err.strip() == DASHBOARD_OFF
    for name, value in web_env().items():
        monkeypatch.setenv(name, value)
    assert main(["dashboard", "--chat", "tg:-999"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "no chat tg:-999 (quizbot chats lists the chat keys)" in err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_run_with_no_token_serves_the_console_quizs_dashboard(tmp_path: Path) -> None:
    import pty

    port = free_port()
    env = {**os.environ, "QUIZBOT_DATABASE": str(tmp_path / "c.db"),
           "QUIZBOT_CONTENT_DIR": str(SAMPLE_PACKS), "TELEGRAM_BOT_TOKEN": "",
           "DISCORD_BOT_TOKEN": "", **web_env(port)}
    primary, secondary = pty.openpty()  # `run` takes the console quiz only from a terminal
    proc = subprocess.Popen([sys.executable, "-m", "bot", "run", "--quiz", "sample"],
                            stdin=secondary, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    os.close(secondary)
    said: list[str] = []
    found = threading.Event()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            said.append(line)
            if "dashboard:" in line:
                found.set()
    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert found.wait(60), "".join(said)
        link = next(line for line in said if "dashboard:" in line).split(": ", 1)[1].strip()
        assert link.startswith(f"http://127.0.0.1:{port}/open/")
        os.write(primary, b"A\n")  # an answer, while the pages are served
        browser = urllib.request.build_opener(
            urllib.request.ProxyHandler({}),
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with browser.open(link, timeout=30) as page:  # the link, its cookie, the overview
            assert page.url == f"http://127.0.0.1:{port}/chat/console/"
            assert "Dashboard · console" in page.read().decode()
        os.write(primary, b"\x04")  # Ctrl-D: progress saved, the dashboard stops with it
        out, _err = proc.communicate(timeout=60)
    finally:
        os.close(primary)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    assert proc.returncode == 0, "".join(said)
    assert "question 1 of 3" in out and "TELEGRAM_BOT_TOKEN" in "".join(said)
