"""Which storage failures pass by themselves: the database is there but cannot be used now.

A connection lost (PostgreSQL restarted, a connection terminated), a full disk, a read-only
file system, a database locked or out of memory: nothing was stored, and the same call can
succeed later. An update or interaction that met one is to be handled again later, never
confirmed as done (Telegram keeps an unconfirmed update for a day). Any other failure (a bug,
a constraint the data breaks) would fail again the same way.

The drivers' errors are told apart by the codes their databases define, SQLite's result codes
(`sqlite_errorcode`, Python 3.11+) and PostgreSQL's SQLSTATE (`sqlstate`, asyncpg), so no
driver is imported here.
"""

from __future__ import annotations

# SQLite primary result codes (https://www.sqlite.org/rescode.html)
SQLITE_PASSING = frozenset({
    5,  # SQLITE_BUSY: another connection holds the lock past busy_timeout
    6,  # SQLITE_LOCKED
    7,  # SQLITE_NOMEM
    8,  # SQLITE_READONLY: the file or its file system became read-only
    10,  # SQLITE_IOERR
    13,  # SQLITE_FULL: the disk is full
    14,  # SQLITE_CANTOPEN
    15,  # SQLITE_PROTOCOL
})
# SQLSTATE classes and codes (https://www.postgresql.org/docs/current/errcodes-appendix.html)
SQLSTATE_CLASSES_PASSING = frozenset({
    "08",  # connection exception
    "53",  # insufficient resources: disk full, out of memory, too many connections
    "58",  # system error: I/O
})
SQLSTATES_PASSING = frozenset({
    "25006",  # read-only transaction (a standby, or default_transaction_read_only)
    "40001", "40P01",  # serialization failure, deadlock
    "55P03",  # lock not available
    "57014",  # query canceled (statement_timeout)
    "57P01", "57P02", "57P03",  # admin or crash shutdown, cannot connect now
})


def storage_unavailable(exc: BaseException) -> bool:
    """Whether `exc` (or what caused it) says the storage cannot be used for now."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if _passing(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def _passing(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in SQLITE_PASSING  # an extended code keeps its primary in the low byte
    state = getattr(exc, "sqlstate", None)
    if isinstance(state, str) and state:
        return state in SQLSTATES_PASSING or state[:2] in SQLSTATE_CLASSES_PASSING
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True  # the server cannot be reached, or gave no connection in time
    # asyncpg's own errors carry no SQLSTATE. "connection is closed" passes (a connection
    # terminated under a query), and so does InternalClientError: a pooled connection the
    # server terminated while its protocol was mid-way ("cannot switch to state 11; another
    # operation is in progress"), seen with connections terminated under a burst. Other
    # InterfaceErrors are our mistakes.
    names = {cls.__name__ for cls in type(exc).__mro__ if cls.__module__.startswith("asyncpg")}
    return "InternalClientError" in names or ("InterfaceError" in names and "closed" in str(exc))
