"""PostgreSQL URLs: told apart from a file path, and shown without their password.

No asyncpg here: settings and error lines use this without loading the driver.
"""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit, urlunsplit

SCHEMES = ("postgresql", "postgres")


def is_postgres_url(text: str) -> bool:
    """`postgresql://…` or `postgres://…` (what libpq and asyncpg accept)."""
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


def redact(url: str) -> str:
    """The URL with its password replaced by `***` (also one given as `?password=`); a
    URL that cannot be parsed is reduced to its scheme and host part."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            user, has_password, _ = userinfo.partition(":")
            netloc = f"{user}:***@{host}" if has_password else f"{user}@{host}"
        query = "&".join(
            "password=***" if item.lower().startswith("password=") else item
            for item in parts.query.split("&")
        ) if parts.query else ""
        return urlunsplit(SplitResult(parts.scheme, netloc, parts.path, query, ""))
    except ValueError:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://{rest.rsplit('@', 1)[-1].split('/', 1)[0]}"


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
