"""PostgreSQL URLs: told apart from a file path, and shown without their password.

No asyncpg here: settings and error lines use this without loading the driver.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

SCHEMES = ("postgresql", "postgres")


def is_postgres_url(text: str) -> bool:
    """`postgresql://…` or `postgres://…` (what libpq and asyncpg accept)."""
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


def redact(url: str) -> str:
    """The URL with its password replaced by `***`, the user's and any `?password=`.

    A password should be percent-encoded, and urlsplit reads such a URL right. One written as
    typed may hold "@", "/", ":", "?", "#" or "%", and urlsplit then ends the user part at its
    first "/" and shows the rest as the path ("…:***@er/Secret@db"). What is hidden is
    everything that is a password in any reading: from the first ":" to the last "@" (a
    user's password may hold every other character), and each `password=` value up to the
    next "&" (where libpq ends it). A URL that holds an "@" elsewhere loses more than its
    password in the log line, never less."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    hidden = [False] * len(rest)
    at, colon = rest.rfind("@"), rest.find(":")
    if 0 <= colon < at:
        hidden[colon + 1:at] = [True] * (at - colon - 1)
    for match in _QUERY_PASSWORD.finditer(rest):
        hidden[match.start(1):match.end(1)] = [True] * (match.end(1) - match.start(1))
    shown = "".join("***" if secret else text for secret, text in _runs(rest, hidden))
    return f"{scheme}{sep}{shown}"


_QUERY_PASSWORD = re.compile(r"[?&]password=([^&]*)", re.IGNORECASE)


def _runs(text: str, hidden: list[bool]) -> Iterator[tuple[bool, str]]:
    """`text` cut where `hidden` changes: (hidden, piece) pairs."""
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or hidden[i] != hidden[start]:
            yield hidden[start], text[start:i]
            start = i


def database_name(url: str) -> str:
    """The database a URL names (its path), '' if none."""
    return urlsplit(url).path.lstrip("/")


def with_database(url: str, name: str) -> str:
    """The same server and credentials, another database."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


class DatabaseUrl:
    """A PostgreSQL URL as a setting: str() and repr() hide the password, like SecretStr;
    get_secret_value() is what the driver gets."""

    __slots__ = ("_url",)

    def __init__(self, url: str) -> None:
        if not is_postgres_url(url):
            raise ValueError("is not a postgresql:// URL")
        parts = urlsplit(url)
        if not parts.hostname and "host=" not in parts.query:
            raise ValueError("names no host")
        if not database_name(url):
            raise ValueError("names no database")
        try:
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number
        except ValueError:
            raise ValueError("has a port that is not a number") from None
        self._url = url

    def get_secret_value(self) -> str:
        return self._url

    def __str__(self) -> str:
        return redact(self._url)

    def __repr__(self) -> str:
        return f"DatabaseUrl({redact(self._url)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DatabaseUrl) and other._url == self._url

    def __hash__(self) -> int:
        return hash(self._url)
