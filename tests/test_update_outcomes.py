"""Which failures hold an update back (Telegram sends it again) and which are done, and the
pause before held-back updates are asked for again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import asyncpg
import pytest

from bot.adapters.telegram import updates
from bot.adapters.telegram.polling import StorageBackoff
from bot.adapters.telegram.updates import Outcome, Redeliver, outcome_of
from bot.core.errors import BadPeriod
from bot.core.storage_faults import storage_unavailable


def sqlite_error(tmp_path: Path, sql: str, *, read_only: bool = False) -> sqlite3.Error:
    """The error SQLite itself raises for `sql` on a database with one unique column."""
    path = tmp_path / "t.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE IF NOT EXISTS t (x UNIQUE)")
        db.execute("INSERT OR IGNORE INTO t VALUES (1)")
    db = sqlite3.connect(f"file:{path}?mode=ro" if read_only else str(path), uri=read_only)
    try:
        db.execute(sql)
    except sqlite3.Error as exc:
        return exc
    finally:
        db.close()
    raise AssertionError(f"{sql} worked")


def test_a_read_only_sqlite_database_holds_the_update_back(tmp_path):
    error = sqlite_error(tmp_path, "INSERT INTO t VALUES (2)", read_only=True)
    assert error.sqlite_errorname == "SQLITE_READONLY"
    assert outcome_of(error) is Outcome.UNSTORED


def test_a_broken_constraint_is_a_failure_not_an_outage(tmp_path):
    error = sqlite_error(tmp_path, "INSERT INTO t VALUES (1)")
    assert error.sqlite_errorname.startswith("SQLITE_CONSTRAINT")
    assert outcome_of(error) is Outcome.FAILED
    assert outcome_of(sqlite_error(tmp_path, "SELECT nothing FROM t")) is Outcome.FAILED


@pytest.mark.parametrize("error", [
    asyncpg.exceptions.AdminShutdownError("terminating connection due to administrator command"),
    asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed in the middle of "
                                                   "operation"),
    asyncpg.exceptions.DiskFullError("could not extend file: No space left on device"),
    asyncpg.exceptions.ReadOnlySQLTransactionError("cannot execute INSERT in a read-only "
                                                   "transaction"),
    asyncpg.exceptions.TooManyConnectionsError("sorry, too many clients already"),
    asyncpg.exceptions.CannotConnectNowError("the database system is starting up"),
    asyncpg.exceptions.DeadlockDetectedError("deadlock detected"),
    asyncpg.exceptions.InterfaceError("cannot call Connection.fetch(): connection is closed"),
    asyncpg.exceptions._base.InternalClientError(
        "cannot switch to state 11; another operation (2) is in progress"),
    ConnectionRefusedError(111, "Connection refused"),
    TimeoutError(),
], ids=lambda e: type(e).__name__)
def test_postgresql_outages_hold_the_update_back(error):
    assert outcome_of(error) is Outcome.UNSTORED


@pytest.mark.parametrize("error", [
    asyncpg.exceptions.UniqueViolationError("duplicate key value"),
    asyncpg.exceptions.UndefinedColumnError("column does not exist"),
    asyncpg.exceptions.InterfaceError("the server expects 2 arguments, 1 was passed"),
    RuntimeError("a bug"),
    KeyError("a bug"),
], ids=lambda e: type(e).__name__)
def test_other_failures_are_failures(error):
    assert outcome_of(error) is Outcome.FAILED


def test_an_outage_wrapped_in_another_error_is_still_one(tmp_path):
    cause = sqlite_error(tmp_path, "INSERT INTO t VALUES (2)", read_only=True)
    try:
        try:
            raise cause
        except sqlite3.Error as exc:
            raise RuntimeError("could not record") from exc
    except RuntimeError as wrapped:
        assert storage_unavailable(wrapped)
        assert outcome_of(wrapped) is Outcome.UNSTORED


def test_refusals_and_redeliveries_keep_their_outcomes():
    assert outcome_of(BadPeriod("fortnight")) is Outcome.DONE
    assert outcome_of(Redeliver("poll 1 is bound to no question yet")) is Outcome.LATER
    assert outcome_of(None) is Outcome.DONE


def test_polling_and_webhooks_agree_on_what_comes_again():
    """Held back by polling means never 2xx to a webhook, and done is 200 to both."""
    for outcome in Outcome:
        if outcome not in updates.POLLING_CONFIRMS:
            assert updates.WEBHOOK_STATUS[outcome] >= 500
    assert updates.WEBHOOK_STATUS[Outcome.DONE] == 200
    assert Outcome.DONE in updates.POLLING_CONFIRMS
    assert Outcome.UNSTORED not in updates.POLLING_CONFIRMS


def test_an_outage_outranks_other_outcomes_of_the_same_update():
    box = [Outcome.DONE]
    token = updates._outcome.set(box)
    try:
        updates.mark(Outcome.UNSTORED)
        updates.mark(Outcome.FAILED)  # another handler of the update failed otherwise
        updates.mark(Outcome.LATER)
    finally:
        updates._outcome.reset(token)
    assert box == [Outcome.UNSTORED]


def test_the_storage_backoff_grows_to_a_bound_and_starts_over():
    backoff = StorageBackoff(first=0.5, most=4.0)
    assert [backoff.next() for _ in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    backoff.reset()
    assert backoff.next() == 0.5
