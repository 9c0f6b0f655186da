"""Configuration: `.env.example` works as shipped, blanks mean unset, bad values say which."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.settings import Settings, SettingsError, load_settings

ROOT = Path(__file__).resolve().parent.parent

VARIABLES = [name.upper() for name in Settings.model_fields]


@pytest.fixture(autouse=True)
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run each test in an empty directory with none of our variables in the environment."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_env_example_copied_as_is_loads(tmp_path: Path) -> None:
    shutil.copy(ROOT / ".env.example", tmp_path / ".env")
    settings = load_settings()
    assert settings.telegram_bot_token is None and settings.discord_bot_token is None
    assert settings.discord_guild_id is None
    assert settings.quizbot_database == Path("data/quizbot.db")
    assert settings.quizbot_question_seconds == 600


def test_env_example_names_every_variable() -> None:
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    for name in VARIABLES:
        assert name in text, f"{name} is missing from .env.example"


@pytest.mark.parametrize("name", VARIABLES)
@pytest.mark.parametrize("blank", ["", "   ", "\t"])
def test_a_blank_value_means_unset_for_every_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, blank: str
) -> None:
    monkeypatch.setenv(name, blank)
    assert load_settings() == Settings()


@pytest.mark.parametrize("name", VARIABLES)
def test_a_blank_line_in_dotenv_means_unset(tmp_path: Path, name: str) -> None:
    (tmp_path / ".env").write_text(f"{name}=\n", encoding="utf-8")
    assert load_settings() == Settings()


def test_values_are_read_from_dotenv(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "DISCORD_GUILD_ID=123\nQUIZBOT_QUESTION_SECONDS=60\nQUIZBOT_LOG_LEVEL=debug\n",
        encoding="utf-8",
    )
    settings = load_settings()
    assert settings.discord_guild_id == 123
    assert settings.quizbot_question_seconds == 60
    assert settings.quizbot_log_level == "DEBUG"


SECRET = "123456:SECRET-token-value"


@pytest.mark.parametrize("name", ["TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN"])
@pytest.mark.parametrize(
    "token",
    [
        f"{SECRET}\n",
        f" {SECRET}",
        f"{SECRET[:6]} {SECRET[6:]}",
        f"{SECRET}\r",
        f"{SECRET}\x00",
        f"{SECRET}\x1b[0m",
        f"{SECRET}\u200b",  # zero-width space, pasted from a chat
        f"{SECRET}é",
    ],
    ids=["newline", "leading-space", "inner-space", "cr", "nul", "esc", "zwsp", "non-ascii"],
)
def test_a_malformed_token_is_refused_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch, name: str, token: str
) -> None:
    if "\x00" in token:  # the environment cannot hold NUL; an override can
        with pytest.raises(SettingsError) as info:
            load_settings(**{name.lower(): token})
    else:
        monkeypatch.setenv(name, token)
        with pytest.raises(SettingsError) as info:
            load_settings()
    [line] = info.value.lines
    assert line.startswith(f"{name}: ")
    assert "SECRET" not in str(info.value) and "123456" not in str(info.value)
    assert "Value error" not in line


def test_a_well_formed_token_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", SECRET)
    monkeypatch.setenv("DISCORD_BOT_TOKEN", "MTA.abc_def-ghi")
    settings = load_settings()
    assert settings.telegram_bot_token is not None
    assert settings.telegram_bot_token.get_secret_value() == SECRET
    assert SECRET not in repr(settings)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DISCORD_GUILD_ID", "my-server"),
        ("QUIZBOT_QUESTION_SECONDS", "5"),
        ("QUIZBOT_QUESTION_SECONDS", "ten"),
        ("QUIZBOT_LOG_LEVEL", "LOUD"),
        ("QUIZBOT_SQLITE_AGGREGATES", "aside"),
        ("TELEGRAM_API_BASE_URL", "not a url"),
        ("DISCORD_API_BASE_URL", "no-scheme"),
        ("DISCORD_GATEWAY_URL", "::"),
    ],
)
def test_each_bad_variable_gives_one_line_naming_it_without_the_value(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as info:
        load_settings()
    [line] = info.value.lines
    assert line.startswith(f"{name}: ") and "\n" not in line
    assert value not in line.removeprefix(f"{name}: ")
    assert "Value error" not in line


def test_several_bad_variables_give_one_line_each(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_GUILD_ID", "x")
    monkeypatch.setenv("QUIZBOT_LOG_LEVEL", "LOUD")
    monkeypatch.setenv("DISCORD_BOT_TOKEN", "a b")
    with pytest.raises(SettingsError) as info:
        load_settings()
    names = sorted(line.split(":")[0] for line in info.value.lines)
    assert names == ["DISCORD_BOT_TOKEN", "DISCORD_GUILD_ID", "QUIZBOT_LOG_LEVEL"]
    assert str(info.value).count("\n") == 2


def test_an_unreadable_dotenv_names_the_file(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes(b"TELEGRAM_BOT_TOKEN=\xff\xfe\n")
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert str(info.value).startswith(".env: ")


def test_a_trailing_slash_on_the_telegram_api_url_is_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The token is appended as it is: `…/bot/` would be `…/bot/<token>`, a 404."""
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", "http://127.0.0.1:8081/bot//")
    assert load_settings().telegram_api_base_url == "http://127.0.0.1:8081/bot"
