"""A PostgreSQL URL shown in logs and error lines never shows its password, whatever
characters the password holds and whether or not it was percent-encoded."""

from __future__ import annotations

from urllib.parse import quote

from hypothesis import example, given
from hypothesis import strategies as st

from bot.storage.postgres.url import DatabaseUrl, redact

# every printable character, "@", "/", ":", "?", "#", "%" and "&" among them
PASSWORDS = st.text(st.characters(categories=("L", "M", "N", "P", "S", "Zs")), min_size=1)
USERS = st.text(st.characters(min_codepoint=ord("a"), max_codepoint=ord("z")), min_size=1)
HOST = "db.example.org:5432"


@given(user=USERS, password=PASSWORDS)
@example(user="quizbot", password="Sup@er/Secret")  # the issue's: shown as …:***@er/Secret
def test_a_percent_encoded_password_is_hidden(user: str, password: str) -> None:
    url = f"postgresql://{user}:{quote(password, safe='')}@{HOST}/quiz"
    assert redact(url) == f"postgresql://{user}:***@{HOST}/quiz"
    assert str(DatabaseUrl(url)) == f"postgresql://{user}:***@{HOST}/quiz"


@given(user=USERS, password=PASSWORDS)
@example(user="quizbot", password="Sup@er/Secret")
@example(user="u", password="a/b?c#d@e:f%40")
def test_a_password_written_as_typed_is_hidden_too(user: str, password: str) -> None:
    url = f"postgresql://{user}:{password}@{HOST}/quiz?sslmode=require"
    expected = f"postgresql://{user}:***@{HOST}/quiz?sslmode=require"
    if "password=" in password.lower():  # it may be a query's password: more is hidden
        assert redact(url) in (expected, f"postgresql://{user}:***")
    else:
        assert redact(url) == expected


@given(user=USERS, password=PASSWORDS)
def test_a_password_in_the_query_is_hidden(user: str, password: str) -> None:
    url = f"postgresql://{user}@{HOST}/quiz?sslmode=require&password={quote(password, safe='')}"
    assert redact(url) == f"postgresql://{user}@{HOST}/quiz?sslmode=require&password=***"


@given(password=PASSWORDS.filter(lambda p: "&" not in p))  # libpq ends the value at "&"
@example(password="x@y")
def test_a_password_typed_into_the_query_is_hidden(password: str) -> None:
    redacted = redact(f"postgresql://{HOST}/quiz?user=me&password={password}")
    # an "@" in it could also end a user's password: everything from the port on is hidden
    assert redacted == (f"postgresql://{HOST.partition(':')[0]}:***" if "@" in password
                        else f"postgresql://{HOST}/quiz?user=me&password=***")


def test_urls_without_a_password_are_shown_as_they_are() -> None:
    for url in ("postgresql://quizbot@db/quiz", "postgresql://db:5432/quiz?sslmode=require",
                "postgres://[::1]:5432/quiz"):
        assert redact(url) == url
