"""Configuration from environment variables and an optional .env file.

Read by hand rather than with pydantic-settings: the bot's process then never imports
pydantic (about 8 MB of its memory; the content schema, which needs it, is validated by the
content commands and by a child process at a cold start, bot/content/loader.py). The
behaviour is pydantic-settings' as this module used it: the arguments, then the environment
(names in any case), then `.env`, then the default; an empty or blank value means unset; each
bad variable gives one line naming it, in pydantic's words for a type or a bound.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

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


class SecretStr:
    """A credential: str() and repr() hide it (pydantic's SecretStr, whose shape callers
    use); get_secret_value() is the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __str__(self) -> str:
        return "**********" if self._value else ""

    def __repr__(self) -> str:
        return f"SecretStr('{self}')"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretStr) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


# --- reading one value: each returns it parsed or raises ValueError saying what is wrong -------
# `earlier`: the variables above it that were valid (some depend on another)

Parse = Callable[[object, dict[str, Any]], object]


def _text(value: object, earlier: dict[str, Any]) -> object:
    if not isinstance(value, str):
        raise ValueError("Input should be a valid string")
    return value


def _secret(value: object, earlier: dict[str, Any]) -> SecretStr:
    if isinstance(value, SecretStr):
        return value
    if isinstance(value, str):
        return SecretStr(value)
    reveal = getattr(value, "get_secret_value", None)  # pydantic's own SecretStr
    if callable(reveal) and not isinstance(value, DatabaseUrl):
        return SecretStr(str(reveal()))
    raise ValueError("Input should be a valid string")


def _integer(low: int | None = None, high: int | None = None) -> Parse:
    def parse(value: object, earlier: dict[str, Any]) -> int:
        if isinstance(value, str):
            text = value.strip()
            # as pydantic reads it: "1_000" and "60.0" too
            whole = re.fullmatch(r"([+-]?\d+)\.0*", text, re.ASCII)
            try:
                number = int(whole[1] if whole else text) if text.isascii() else int("x")
            except ValueError:
                raise ValueError("Input should be a valid integer, unable to parse string as "
                                 "an integer") from None
        elif isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, float) and value.is_integer():
            number = int(value)
        else:
            raise ValueError("Input should be a valid integer")
        if low is not None and number < low:
            raise ValueError(f"Input should be greater than or equal to {low}")
        if high is not None and number > high:
            raise ValueError(f"Input should be less than or equal to {high}")
        return number
    return parse


def _path(value: object, earlier: dict[str, Any]) -> Path:
    if isinstance(value, Path):
        return value
    if isinstance(value, str):
        return Path(value)
    raise ValueError("Input is not a valid path")


_SPECIAL_SCHEMES = ("http", "https", "ws", "wss", "ftp")


@dataclass(frozen=True)
class _Url:
    scheme: str
    host: str | None


def url(value: str) -> _Url:
    """What pydantic's AnyUrl checked: a scheme, and for the web's schemes a host and a
    port that is a number; ValueError in its words."""
    found = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", value.strip())
    if found is None:
        raise ValueError("Input should be a valid URL, relative URL without a base")
    scheme = found[1].lower()
    parts = urlsplit(value.strip())
    if scheme in _SPECIAL_SCHEMES:  # "http:/host" and "http:host" name the host too
        parts = urlsplit("//" + value.strip()[found.end():].lstrip("/\\"))
        if not parts.netloc.rpartition("@")[2] or not parts.hostname:
            raise ValueError("Input should be a valid URL, empty host")
        if re.search(r"[\s<>^|%]", parts.hostname):
            raise ValueError("Input should be a valid URL, invalid international domain name")
        try:
            port = parts.port
        except ValueError:
            raise ValueError("Input should be a valid URL, invalid port number") from None
        if port is not None and not 0 <= port <= 65535:
            raise ValueError("Input should be a valid URL, invalid port number")
    return _Url(scheme, parts.hostname)


def _token(value: object, earlier: dict[str, Any]) -> SecretStr:
    # a stray space, newline or quote-pasted control character would only surface later as
    # a confusing rejection or a broken HTTP header; the message must not echo the token
    secret = _secret(value, earlier)
    if not all(33 <= ord(c) <= 126 for c in secret.get_secret_value()):
        raise ValueError(
            "contains spaces, line breaks or other characters a token never has "
            "(check for a stray newline or quote)"
        )
    return secret


def _api_url(name: str) -> Parse:
    def parse(value: object, earlier: dict[str, Any]) -> str:
        text = str(_text(value, earlier))
        url(text)  # raises a ValueError naming the problem
        if name == "telegram_api_base_url":
            # the token is appended as it is: ".../bot/" would put a slash before it, a 404
            # that python-telegram-bot reports as a rejected token
            return text.rstrip("/")
        return text
    return parse


def _optional(parse: Parse) -> Parse:
    def optional(value: object, earlier: dict[str, Any]) -> object:
        return None if value is None else parse(value, earlier)
    return optional


def _cache_dir(value: object, earlier: dict[str, Any]) -> Path | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in CACHE_OFF):
        return None
    return _path(value, earlier)


def _database(value: object, earlier: dict[str, Any]) -> Path | DatabaseUrl:
    # a URL (scheme://…) must be PostgreSQL's; the message never quotes it (a password)
    if isinstance(value, DatabaseUrl):
        return value
    if isinstance(value, str) and "://" in value:
        try:
            return DatabaseUrl(value.strip())
        except ValueError as exc:
            raise ValueError(
                f"{exc}: use a file path or postgresql://user@host:5432/database"
            ) from None
    return _path(value, earlier)


def _shards(value: object, earlier: dict[str, Any]) -> str:
    text = str(_text(value, earlier))
    highest = max(high for _, high in shard_ranges(text))
    if "quizbot_discord_shard_count" not in earlier:
        return text  # the count itself is wrong, and said so
    count = earlier["quizbot_discord_shard_count"]
    if count is None:
        raise ValueError("needs QUIZBOT_DISCORD_SHARD_COUNT, the number of shards across "
                         "every process")
    if highest >= count:
        raise ValueError(f"shard {highest} does not exist: shard ids go from 0 to "
                         f"{count - 1} with QUIZBOT_DISCORD_SHARD_COUNT={count}")
    return text


def _webhook_url(value: object, earlier: dict[str, Any]) -> str:
    text = str(_text(value, earlier))
    found = url(text)  # raises a ValueError naming the problem
    api = earlier.get("telegram_api_base_url") or ""
    local_api = not api.startswith("https://api.telegram.org/")
    if found.scheme != "https" and not (found.scheme == "http" and local_api):
        raise ValueError("must be an https:// URL (Telegram calls nothing else; http:// "
                         "works only with a local Bot API server in TELEGRAM_API_BASE_URL)")
    return text


def _listen(value: object, earlier: dict[str, Any]) -> str:
    text = str(_text(value, earlier))
    webhook_listen(text)
    return text


def _webhook_secret(value: object, earlier: dict[str, Any]) -> SecretStr | None:
    # never quoted back: it is a credential
    if value is None:
        if earlier.get("quizbot_telegram_webhook_url") is not None:
            raise ValueError("required with QUIZBOT_TELEGRAM_WEBHOOK_URL: 1-256 characters "
                             "of A-Z, a-z, 0-9, _ and -, which Telegram sends with every "
                             "update")
        return None
    secret = _secret(value, earlier)
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", secret.get_secret_value(), re.ASCII):
        raise ValueError("must be 1-256 characters of A-Z, a-z, 0-9, _ and - (Telegram "
                         "allows no others)")
    return secret


def _web_url(value: object, earlier: dict[str, Any]) -> str:
    text = str(_text(value, earlier))
    found = url(text)  # raises a ValueError naming the problem
    local = found.host in ("127.0.0.1", "localhost", "::1", "[::1]")
    if found.scheme != "https" and not (found.scheme == "http" and local):
        raise ValueError("must be an https:// URL (http:// only for 127.0.0.1 or "
                         "localhost): the dashboard's links carry a key to a chat's data")
    return text.rstrip("/")


def _web_secret(value: object, earlier: dict[str, Any]) -> SecretStr | None:
    # never quoted back: it signs every dashboard link
    if value is None:
        if earlier.get("quizbot_web_listen") is not None:
            raise ValueError(f"required with QUIZBOT_WEB_LISTEN: at least {MIN_WEB_SECRET} "
                             "random characters (e.g. `openssl rand -hex 32`), which sign "
                             "the dashboard's links")
        return None
    secret = _secret(value, earlier)
    if len(secret.get_secret_value()) < MIN_WEB_SECRET:
        raise ValueError(f"too short: use at least {MIN_WEB_SECRET} random characters "
                         "(e.g. `openssl rand -hex 32`)")
    return secret


def _instance(value: object, earlier: dict[str, Any]) -> str:
    text = str(_text(value, earlier))
    if len(text) > 200:
        raise ValueError("String should have at most 200 characters")
    return text


def _authors(value: object, earlier: dict[str, Any]) -> str:
    text = str(_text(value, earlier))
    for word in re.split(r"[,\s]+", text.strip()):
        if word and not re.fullmatch(r"(?:tg:)?\d+", word):
            raise ValueError(f"{word!r} is not a Telegram user id (digits, comma-separated)")
    return text


def _level(value: object, earlier: dict[str, Any]) -> str:
    text = str(_text(value, earlier))
    if text.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise ValueError("must be DEBUG, INFO, WARNING or ERROR")
    return text.upper()


@dataclass(frozen=True)
class Field:
    """One variable: its default (`factory` makes it), how a given value is read, and whether
    a missing one is checked too (a secret another variable requires)."""

    default: object
    parse: Parse
    factory: Callable[[], object] | None = None
    check_default: bool = False

    def missing(self) -> object:
        return self.factory() if self.factory is not None else self.default


# In the order they are checked: a variable that depends on another comes after it.
FIELDS: dict[str, Field] = {
    "telegram_bot_token": Field(None, _optional(_token)),
    "telegram_api_base_url": Field("https://api.telegram.org/bot",
                                   _api_url("telegram_api_base_url")),
    # Telegram webhooks instead of long polling (many processes behind a load balancer): the
    # public URL Telegram calls, where this process listens, the secret Telegram sends back
    "quizbot_telegram_webhook_url": Field(None, _optional(_webhook_url)),
    "quizbot_telegram_webhook_listen": Field("0.0.0.0:8443", _listen),
    "quizbot_telegram_webhook_secret": Field(None, _webhook_secret, check_default=True),
    "discord_bot_token": Field(None, _optional(_token)),
    "discord_api_base_url": Field("https://discord.com/api/v10",
                                  _api_url("discord_api_base_url")),
    "discord_gateway_url": Field("wss://gateway.discord.gg/", _api_url("discord_gateway_url")),
    "discord_guild_id": Field(None, _optional(_integer())),
    # Discord sharding (discord.py's AutoShardedClient): the total number of shards across
    # every process, and the ones this process runs ("0-3", "0,2,5"; empty: all of them).
    # Both empty: one unsharded connection.
    "quizbot_discord_shard_count": Field(None, _optional(_integer(1, 100_000))),
    "quizbot_discord_shards": Field(None, _optional(_shards)),
    # a SQLite file, or a postgresql://user:password@host:5432/database URL (many processes
    # on one database); shown everywhere without its password
    "quizbot_database": Field(Path("data/quizbot.db"), _database),
    "quizbot_content_dir": Field(BUNDLED_CONTENT, _path),
    # validated packs by the hash of their bytes (bot/content/cache.py); `off` disables it (an
    # empty value means the default, as for every variable)
    "quizbot_cache_dir": Field(None, _cache_dir, factory=default_cache_dir),
    # how long a /quiz question stays open in a group or channel before its summary
    "quizbot_question_seconds": Field(600, _integer(10, 2_628_000)),
    # Telegram user ids who may write quizzes by sending quiz polls to the bot (empty: nobody)
    "quizbot_authors": Field("", _authors),
    "quizbot_log_level": Field("INFO", _level),
    # this process among those on one database, the same across its restarts (a restarted
    # Telegram poller then resumes at once instead of waiting for its old lease to run out);
    # empty: host:pid
    "quizbot_instance": Field(None, _optional(_instance)),
    # host:port where Prometheus scrapes /metrics (bot/metrics.py); empty: nothing listens
    "quizbot_metrics_listen": Field(None, _optional(_listen)),
    # the organiser's web dashboard (bot/web, docs/dashboard.md): host:port to listen on (empty:
    # off), the public base URL its links use, and the key that signs links and sessions
    "quizbot_web_listen": Field(None, _optional(_listen)),
    "quizbot_web_url": Field(None, _optional(_web_url)),
    "quizbot_web_secret": Field(None, _web_secret, check_default=True),
}


class SettingsInvalid(ValueError):
    """(variable or None for the whole, message) of each bad variable."""

    def __init__(self, errors: list[tuple[str | None, str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(message for _, message in errors))


def _dotenv(path: Path | str | None) -> dict[str, str]:
    """The file's variables by lower-case name (OSError, UnicodeDecodeError if unreadable)."""
    if path is None or not Path(path).is_file():
        return {}
    from dotenv import dotenv_values  # only with a .env to read

    found = dotenv_values(path, encoding="utf-8")
    return {k.lower(): v for k, v in found.items() if v is not None}


class Settings:
    """Every variable as an attribute; `Settings(**values)` takes values before the
    environment and `.env` (`_env_file`: another file, or None for none) and raises
    SettingsInvalid (load_settings turns it into lines)."""

    model_fields: ClassVar[dict[str, Field]] = FIELDS

    telegram_bot_token: SecretStr | None
    telegram_api_base_url: str
    quizbot_telegram_webhook_url: str | None
    quizbot_telegram_webhook_listen: str
    quizbot_telegram_webhook_secret: SecretStr | None
    discord_bot_token: SecretStr | None
    discord_api_base_url: str
    discord_gateway_url: str
    discord_guild_id: int | None
    quizbot_discord_shard_count: int | None
    quizbot_discord_shards: str | None
    quizbot_database: Path | DatabaseUrl
    quizbot_content_dir: Path
    quizbot_cache_dir: Path | None
    quizbot_question_seconds: int
    quizbot_authors: str
    quizbot_log_level: str
    quizbot_instance: str | None
    quizbot_metrics_listen: str | None
    quizbot_web_listen: str | None
    quizbot_web_url: str | None
    quizbot_web_secret: SecretStr | None

    def __init__(self, _env_file: Path | str | None = ".env", **values: object) -> None:
        given: dict[str, object] = {}
        given |= {k: v for k, v in _dotenv(_env_file).items() if v != ""}
        # `.env.example` ships lines like `DISCORD_GUILD_ID=`: an empty value means unset
        given |= {k.lower(): v for k, v in os.environ.items() if v != ""}
        given |= {k.lower(): v for k, v in values.items()}
        # whitespace-only values (and blank arguments) fall back to the default, like empty ones
        given = {k: v for k, v in given.items() if not (isinstance(v, str) and not v.strip())}
        found: dict[str, Any] = {}
        errors: list[tuple[str | None, str]] = []
        for name, field in FIELDS.items():
            if name in given:
                value = given[name]
            elif field.check_default:
                value = field.missing()
            else:
                found[name] = field.missing()
                continue
            try:
                found[name] = field.parse(value, found)
            except ValueError as exc:
                errors.append((name, str(exc)))
        if not errors and found["quizbot_web_listen"] is not None \
                and found["quizbot_web_url"] is None:
            errors.append((None, "QUIZBOT_WEB_URL is required with QUIZBOT_WEB_LISTEN: the "
                                 "public base URL of the dashboard (https://…) its links start "
                                 "with"))
        if errors:
            raise SettingsInvalid(errors)
        self.__dict__.update(found)

    def model_dump(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FIELDS}

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Settings:
        """A copy with some values replaced, not checked again (as pydantic's)."""
        copy = object.__new__(Settings)
        copy.__dict__.update(self.__dict__)
        copy.__dict__.update(update or {})
        return copy

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Settings) and other.model_dump() == self.model_dump()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "Settings(" + ", ".join(f"{k}={v!r}" for k, v in self.model_dump().items()) + ")"

    @property
    def discord_shards(self) -> tuple[list[int], int] | None:
        """The Discord shards this process runs and the shard count; None: unsharded."""
        count = self.quizbot_discord_shard_count
        if count is None:
            return None
        shards = self.quizbot_discord_shards
        return (parse_shard_ids(shards) if shards else list(range(count))), count

    @property
    def telegram_webhook(self) -> tuple[str, tuple[str, int], str] | None:
        """Webhook mode: (public URL, (host, port) to listen on, secret); None: long polling."""
        url, secret = self.quizbot_telegram_webhook_url, self.quizbot_telegram_webhook_secret
        if url is None or secret is None:
            return None
        return url, webhook_listen(self.quizbot_telegram_webhook_listen), \
            secret.get_secret_value()

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


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment and .env; SettingsError names each bad variable."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except SettingsInvalid as exc:
        lines: list[str] = []
        for name, message in exc.errors:
            line = f"{name.upper() if name else 'settings'}: {message}"
            if line not in lines:
                lines.append(line)
        raise SettingsError(lines) from None
    except (OSError, UnicodeDecodeError) as exc:
        # an unreadable or non-UTF-8 .env: say which file, not what is in it
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise SettingsError([f".env: cannot read the file ({reason})"]) from None
