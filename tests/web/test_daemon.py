"""The dashboard in `quizbot run`: it listens only while the bot runs and only when
QUIZBOT_WEB_LISTEN is set; a taken port ends the start with one line; missing or weak
settings are refused by name, never quoting the secret."""

from __future__ import annotations

import asyncio
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bot.adapters import ConnectionLost
from bot.app import open_service, run_adapters
from bot.settings import Settings, SettingsError, load_settings

SECRET = "d" * 40
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def settings_for(tmp_path: Path, port: int | None, **overrides: object) -> Settings:
    web: dict[str, object] = {} if port is None else {
        "quizbot_web_listen": f"127.0.0.1:{port}", "quizbot_web_secret": SECRET,
        "quizbot_web_url": f"http://127.0.0.1:{port}"}
    return load_settings(quizbot_database=tmp_path / "quiz.db", quizbot_cache_dir="off",
                         _env_file=None, **web, **overrides)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def answers(port: int) -> int | None:
    """The status of a page that needs a session (403), None if nothing listens."""
    try:
        with NO_PROXY.open(f"http://127.0.0.1:{port}/chat/tg:-1/", timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code
    except (urllib.error.URLError, ConnectionError):
        return None


async def running(settings: Settings, port: int) -> tuple[int | None, int | None]:
    async with open_service(settings) as service:
        bot = asyncio.create_task(run_adapters(service, [], settings))
        try:
            for _ in range(20):  # a few turns of the loop bring the server up
                await asyncio.sleep(0)
            assert not bot.done()
            during = await asyncio.to_thread(answers, port)
        finally:
            bot.cancel()
            with pytest.raises(asyncio.CancelledError):
                await bot
        after = await asyncio.to_thread(answers, port)
    return during, after


async def test_the_dashboard_listens_only_while_the_bot_runs(tmp_path: Path) -> None:
    port = free_port()
    assert await running(settings_for(tmp_path, port), port) == (403, None)


async def test_unset_nothing_listens_and_dashboard_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("QUIZBOT_WEB_LISTEN", "QUIZBOT_WEB_URL", "QUIZBOT_WEB_SECRET"):
        monkeypatch.delenv(name, raising=False)
    port = free_port()
    settings = settings_for(tmp_path, None)
    assert settings.web is None
    async with open_service(settings) as service:
        assert not service.dashboard.enabled
    assert await running(settings, port) == (None, None)


async def test_a_taken_port_ends_the_start_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = settings_for(tmp_path, port)
        async with open_service(settings) as service:
            with pytest.raises(ConnectionLost, match=f"QUIZBOT_WEB_LISTEN=127.0.0.1:{port}"):
                await run_adapters(service, [], settings)


@pytest.mark.parametrize(("values", "line"), [
    ({"quizbot_web_listen": "127.0.0.1:8080", "quizbot_web_url": "http://127.0.0.1:8080"},
     "QUIZBOT_WEB_SECRET: required with QUIZBOT_WEB_LISTEN"),
    ({"quizbot_web_listen": "127.0.0.1:8080", "quizbot_web_url": "http://127.0.0.1:8080",
      "quizbot_web_secret": "short-secret"}, "QUIZBOT_WEB_SECRET: too short"),
    ({"quizbot_web_listen": "127.0.0.1:8080", "quizbot_web_secret": SECRET},
     "QUIZBOT_WEB_URL is required with QUIZBOT_WEB_LISTEN"),
    ({"quizbot_web_listen": "0.0.0.0:8080", "quizbot_web_secret": SECRET,
      "quizbot_web_url": "http://quiz.example.org"}, "QUIZBOT_WEB_URL: must be an https://"),
    ({"quizbot_web_listen": "8080", "quizbot_web_secret": SECRET,
      "quizbot_web_url": "https://quiz.example.org"}, "QUIZBOT_WEB_LISTEN: must be host:port"),
])
def test_bad_settings_are_refused_by_name(values: dict[str, str], line: str) -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings(_env_file=None, **values)
    text = str(refused.value)
    assert line in text and "short-secret" not in text and SECRET not in text


def test_the_secret_is_redacted_like_the_tokens() -> None:
    settings = load_settings(_env_file=None, quizbot_web_listen="127.0.0.1:8080",
                             quizbot_web_url="https://quiz.example.org",
                             quizbot_web_secret=SECRET)
    assert SECRET in settings.secrets()
