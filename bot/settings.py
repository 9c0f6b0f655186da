"""Configuration from environment variables and an optional .env file (pydantic-settings)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AnyUrl,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.storage.postgres.url import DatabaseUrl

_SOURCE_CONTENT = Path(__file__).resolve().parent.parent / "content"
# a source checkout has content/ beside bot/; an installed package looks in the working directory
BUNDLED_CONTENT = _SOURCE_CONTENT if _SOURCE_CONTENT.is_dir() else Path("content")


def default_cache_dir() -> Path | None:
    """$XDG_CACHE_HOME/quizbot, else ~/.cache/quizbot; None when there is no home."""
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "quizbot"
    try:
        return Path.home() / ".cache" / "quizbot"
    except (RuntimeError, KeyError):  # no HOME and no passwd entry
        return None


CACHE_OFF = ("off", "none", "no", "false", "0")
MIN_WEB_SECRET = 32  # characters of QUIZBOT_WEB_SECRET


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        # `.env.example` ships lines like `DISCORD_GUILD_ID=`: an empty value means unset
        env_ignore_empty=True,
        arbitrary_types_allowed=True,  # DatabaseUrl
    )

    telegram_bot_token: SecretStr | None = None
    telegram_api_base_url: str = "https://api.telegram.org/bot"
    # Telegram webhooks instead of long polling (many processes behind a load balancer): the
    # public URL Telegram calls, where this process listens, the secret Telegram sends back
    quizbot_telegram_webhook_url: str | None = None
    quizbot_telegram_webhook_listen: str = "0.0.0.0:8443"
    quizbot_telegram_webhook_secret: SecretStr | None = Field(default=None, validate_default=True)
    discord_bot_token: SecretStr | None = None
    discord_api_base_url: str = "https://discord.com/api/v10"
    discord_gateway_url: str = "wss://gateway.discord.gg/"
    discord_guild_id: int | None = None
    # Discord sharding (discord.py's AutoShardedClient): the total number of shards across
    # every process, and the ones this process runs ("0-3", "0,2,5"; empty: all of them).
    # Both empty: one unsharded connection.
    quizbot_discord_shard_count: int | None = Field(default=None, ge=1, le=100_000)
    quizbot_discord_shards: str | None = None
    # a SQLite file, or a postgresql://user:password@host:5432/database URL (many processes
    # on one database); shown everywhere without its password
    quizbot_database: Path | DatabaseUrl = Path("data/quizbot.db")
    # SQLite: the boards and the other tables derived from the answers in the answers' file,
    # or `apart`, in a file of their own (`<database>-aggregates`) written by its own thread,
    # so an answer's commit never waits for them; a file once apart stays apart
    quizbot_sqlite_aggregates: Literal["inline", "apart"] = "inline"
    quizbot_content_dir: Path = BUNDLED_CONTENT
    # validated packs by the hash of their bytes (bot/content/cache.py); `off` disables it (an
    # empty value means the default, as for every variable)
    quizbot_cache_dir: Path | None = Field(default_factory=default_cache_dir)
    # how long a /quiz question stays open in a group or channel before its summary
    quizbot_question_seconds: int = Field(default=600, ge=10, le=2_628_000)
    # Telegram user ids who may write quizzes by sending quiz polls to the bot (empty: nobody)
    quizbot_authors: str = ""
    quizbot_log_level: str = "INFO"
    # this process among those on one database, the same across its restarts (a restarted
    # Telegram poller then resumes at once instead of waiting for its old lease to run out);
    # empty: host:pid
    quizbot_instance: str | None = Field(default=None, max_length=200)
    # host:port where Prometheus scrapes /metrics (bot/metrics.py); empty: nothing listens
    quizbot_metrics_listen: str | None = None
    # the organiser's web dashboard (bot/web, docs/dashboard.md): host:port to listen on (empty:
    # off), the public base URL its links use, and the key that signs links and sessions
    quizbot_web_listen: str | None = None
    quizbot_web_url: str | None = None
    quizbot_web_secret: SecretStr | None = Field(default=None, validate_default=True)

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, data: Any) -> Any:
        # whitespace-only values (and blank overrides) fall back to the default, like empty ones
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if not (isinstance(v, str) and not v.strip())}
        return data

    @field_validator("telegram_bot_token", "discord_bot_token", mode="before")
    @classmethod
    def _token_format(cls, value: object) -> object:
        # a stray space, newline or quote-pasted control character would only surface later as
        # a confusing rejection or a broken HTTP header; the message must not echo the token
        raw = value.get_secret_value() if isinstance(value, SecretStr) else value
        if isinstance(raw, str) and not all(33 <= ord(c) <= 126 for c in raw):
            raise ValueError(
                "contains spaces, line breaks or other characters a token never has "
                "(check for a stray newline or quote)"
            )
        return value

    @field_validator("quizbot_cache_dir", mode="before")
    @classmethod
    def _cache_off(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in CACHE_OFF:
            return None
        return value

    @field_validator("quizbot_database", mode="before")
    @classmethod
    def _database(cls, value: object) -> object:
        # a URL (scheme://…) must be PostgreSQL's; the message never quotes it (a password)
        if isinstance(value, str) and "://" in value:
            try:
                return DatabaseUrl(value.strip())
            except ValueError as exc:
                raise ValueError(
                    f"{exc}: use a file path or postgresql://user@host:5432/database"
                ) from None
        return value

    @field_validator("telegram_api_base_url", "discord_api_base_url", "discord_gateway_url")
    @classmethod
    def _url(cls, value: str, info: ValidationInfo) -> str:
        AnyUrl(value)  # raises a ValueError naming the problem
        if info.field_name == "telegram_api_base_url":
            # the token is appended as it is: ".../bot/" would put a slash before it, a 404
            # that python-telegram-bot reports as a rejected token
            return value.rstrip("/")
        return value

    @field_validator("quizbot_discord_shards")
    @classmethod
    def _shards(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        highest = max(high for _, high in shard_ranges(value))
        if "quizbot_discord_shard_count" not in info.data:
            return value  # the count itself is wrong, and said so
        count = info.data["quizbot_discord_shard_count"]
        if count is None:
            raise ValueError("needs QUIZBOT_DISCORD_SHARD_COUNT, the number of shards across "
                             "every process")
        if highest >= count:
            raise ValueError(f"shard {highest} does not exist: shard ids go from 0 to "
                             f"{count - 1} with QUIZBOT_DISCORD_SHARD_COUNT={count}")
        return value

    @property
    def discord_shards(self) -> tuple[list[int], int] | None:
        """The Discord shards this process runs and the shard count; None: unsharded."""
        count = self.quizbot_discord_shard_count
        if count is None:
            return None
        shards = self.quizbot_discord_shards
        return (parse_shard_ids(shards) if shards else list(range(count))), count

    @field_validator("quizbot_telegram_webhook_url")
    @classmethod
    def _webhook_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        url = AnyUrl(value)  # raises a ValueError naming the problem
        api = info.data.get("telegram_api_base_url") or ""
        local_api = not api.startswith("https://api.telegram.org/")
        if url.scheme != "https" and not (url.scheme == "http" and local_api):
            raise ValueError("must be an https:// URL (Telegram calls nothing else; http:// "
                             "works only with a local Bot API server in TELEGRAM_API_BASE_URL)")
        return value

    @field_validator("quizbot_telegram_webhook_listen", "quizbot_metrics_listen",
                     "quizbot_web_listen")
    @classmethod
    def _listen(cls, value: str | None) -> str | None:
        if value is not None:
            webhook_listen(value)
        return value

    @field_validator("quizbot_telegram_webhook_secret")
    @classmethod
    def _webhook_secret(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        # never quoted back: it is a credential
        if value is None:
            if info.data.get("quizbot_telegram_webhook_url") is not None:
                raise ValueError("required with QUIZBOT_TELEGRAM_WEBHOOK_URL: 1-256 characters "
                                 "of A-Z, a-z, 0-9, _ and -, which Telegram sends with every "
                                 "update")
            return None
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", value.get_secret_value(), re.ASCII):
            raise ValueError("must be 1-256 characters of A-Z, a-z, 0-9, _ and - (Telegram "
                             "allows no others)")
        return value

    @property
    def telegram_webhook(self) -> tuple[str, tuple[str, int], str] | None:
        """Webhook mode: (public URL, (host, port) to listen on, secret); None: long polling."""
        url, secret = self.quizbot_telegram_webhook_url, self.quizbot_telegram_webhook_secret
        if url is None or secret is None:
            return None
        return url, webhook_listen(self.quizbot_telegram_webhook_listen), \
            secret.get_secret_value()

    @field_validator("quizbot_web_url")
    @classmethod
    def _web_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        url = AnyUrl(value)  # raises a ValueError naming the problem
        local = url.host in ("127.0.0.1", "localhost", "::1", "[::1]")
        if url.scheme != "https" and not (url.scheme == "http" and local):
            raise ValueError("must be an https:// URL (http:// only for 127.0.0.1 or "
                             "localhost): the dashboard's links carry a key to a chat's data")
        return value.rstrip("/")

    @field_validator("quizbot_web_secret")
    @classmethod
    def _web_secret(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        # never quoted back: it signs every dashboard link
        on = info.data.get("quizbot_web_listen") is not None
        if value is None:
            if on:
                raise ValueError(f"required with QUIZBOT_WEB_LISTEN: at least {MIN_WEB_SECRET} "
                                 "random characters (e.g. `openssl rand -hex 32`), which sign "
                                 "the dashboard's links")
            return None
        if len(value.get_secret_value()) < MIN_WEB_SECRET:
            raise ValueError(f"too short: use at least {MIN_WEB_SECRET} random characters "
                             "(e.g. `openssl rand -hex 32`)")
        return value

    @model_validator(mode="after")
    def _web_needs_url(self) -> Settings:
        if self.quizbot_web_listen is not None and self.quizbot_web_url is None:
            raise ValueError("QUIZBOT_WEB_URL is required with QUIZBOT_WEB_LISTEN: the public "
                             "base URL of the dashboard (https://…) its links start with")
        return self

    @property
    def web(self) -> tuple[tuple[str, int], str, str] | None:
        """The dashboard: ((host, port) to listen on, public base URL, secret); None: off."""
        listen, url, secret = (self.quizbot_web_listen, self.quizbot_web_url,
                               self.quizbot_web_secret)
        if listen is None or url is None or secret is None:
            return None
        return webhook_listen(listen), url, secret.get_secret_value()

    @property
    def metrics_listen(self) -> tuple[str, int] | None:
        """(host, port) to serve /metrics on; None: no metrics endpoint."""
        text = self.quizbot_metrics_listen
        return None if text is None else webhook_listen(text)

    @field_validator("quizbot_authors")
    @classmethod
    def _authors(cls, value: str) -> str:
        for word in re.split(r"[,\s]+", value.strip()):
            if word and not re.fullmatch(r"(?:tg:)?\d+", word):
                raise ValueError(f"{word!r} is not a Telegram user id (digits, comma-separated)")
        return value

    @field_validator("quizbot_log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        if value.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
            raise ValueError("must be DEBUG, INFO, WARNING or ERROR")
        return value.upper()

    def secrets(self) -> list[str]:
        """The tokens, to be redacted from every log record and error line."""
        return [t.get_secret_value() for t in (self.telegram_bot_token, self.discord_bot_token,
                                               self.quizbot_telegram_webhook_secret,
                                               self.quizbot_web_secret)
                if t is not None]


def shard_ranges(text: str) -> list[tuple[int, int]]:
    """"0-3" or "0,2,5" (or both: "0-1,4") as (first, last) ranges; ValueError saying what is
    wrong."""
    ranges: list[tuple[int, int]] = []
    for part in (p.strip() for p in text.split(",")):
        match = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part, re.ASCII)
        if match is None:
            what = repr(part) if part else "an empty item"
            raise ValueError(f"{what} is not a shard id or a range (use e.g. 0-3 or 0,2,5)")
        low = int(match[1])
        high = int(match[2]) if match[2] is not None else low
        if high < low:
            raise ValueError(f"the range {low}-{high} is backwards")
        for other_low, other_high in ranges:
            if low <= other_high and other_low <= high:
                raise ValueError(f"shard {max(low, other_low)} is listed twice")
        ranges.append((low, high))
    return ranges


def parse_shard_ids(text: str) -> list[int]:
    """The shard ids of "0-3", "0,2,5" or "0-1,4", in order."""
    return sorted(i for low, high in shard_ranges(text) for i in range(low, high + 1))


def webhook_listen(text: str) -> tuple[str, int]:
    """"host:port" ("0.0.0.0:8443", "[::]:8443") as (host, port), for the webhook and the
    metrics endpoint; ValueError saying what is wrong."""
    host, sep, port = text.strip().rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isascii() or not port.isdigit() \
            or not 1 <= int(port) <= 65535:
        raise ValueError("must be host:port, e.g. 0.0.0.0:8443 (a port from 1 to 65535)")
    return host, int(port)


class SettingsError(Exception):
    """One line per bad variable, naming it; never the value (it may be a token)."""

    def __init__(self, lines: str | list[str]) -> None:
        self.lines = [lines] if isinstance(lines, str) else list(lines)
        super().__init__("\n".join(self.lines))


def _message(err: Any) -> str:
    # pydantic prefixes our own ValueErrors with "Value error, "; the variable name is enough
    msg = str(err["msg"])
    return msg.removeprefix("Value error, ")


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment and .env; SettingsError names each bad variable."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        lines: list[str] = []
        for err in exc.errors(include_input=False, include_url=False):
            name = str(err["loc"][0]).upper() if err["loc"] else "settings"
            line = f"{name}: {_message(err)}"
            if line not in lines:
                lines.append(line)
        raise SettingsError(lines) from None
    except (OSError, UnicodeDecodeError) as exc:
        # an unreadable or non-UTF-8 .env: say which file, not what is in it
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise SettingsError([f".env: cannot read the file ({reason})"]) from None
