"""`quizbot health`: is the running bot alive? For a container HEALTHCHECK or a probe.

Each running process touches a heartbeat file of its own beside the database (a SQLite file;
for PostgreSQL in the temporary directory of its own machine) after each scheduler round
that reached the database, naming the platforms still connected. The file is named by the
process's instance (QUIZBOT_INSTANCE, else its pid), so processes sharing a database on one
machine never overwrite each other's. `quizbot health` checks the database is ours and
readable, lists every heartbeat, and is healthy when this instance's (QUIZBOT_INSTANCE or
--instance), or with none given any one, is fresh. (A platform connection that is gone for
good ends the process, so a fresh heartbeat also means connected platforms.)
"""

from __future__ import annotations

import asyncio
import glob
import hashlib
import json
import os
import re
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bot.storage.postgres.url import DatabaseUrl

FRESH = 90.0  # seconds; the scheduler beats every few seconds
FORGET = 7 * 86400.0  # a heartbeat this old is of a process long gone: removed by the next beat
_SUFFIX = ".alive-"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True)
class Heartbeat:
    instance: str
    pid: int | None
    at: float
    platforms: tuple[str, ...]

    def age(self, now: float) -> float:
        return now - self.at

    def line(self, now: float) -> str:
        state = "fresh" if self.age(now) <= FRESH else "stale"
        platforms = ", ".join(self.platforms) or "no platform"
        return (f"{self.instance} (pid {self.pid}): {state}, {self.age(now):.0f} s ago; "
                f"{platforms}")


def instance_name(instance: str | None = None) -> str:
    """The part of a heartbeat's file name naming its process: safe in any file system."""
    return _UNSAFE.sub("_", instance) if instance else str(os.getpid())


def _base(database: Path | DatabaseUrl) -> Path:
    if isinstance(database, DatabaseUrl):
        # no file beside a PostgreSQL database: the heartbeat stays on this machine (this
        # container), named after the database
        digest = hashlib.sha256(database.get_secret_value().encode()).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"quizbot-{digest}"
    return database


def heartbeat_path(database: Path | DatabaseUrl, instance: str | None = None) -> Path:
    """The heartbeat file of one process (`instance`; None: this process by its pid)."""
    base = _base(database)
    return base.with_name(base.name + _SUFFIX + instance_name(instance))


def beat(database: Path | DatabaseUrl, platforms: list[str], instance: str | None = None) -> None:
    """Record that this process is alive (atomically: a reader never sees half a file)."""
    path = heartbeat_path(database, instance)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"pid": os.getpid(), "at": time.time(), "platforms": platforms,
                               "instance": instance_name(instance)}))
    tmp.replace(path)


def forget_old(database: Path | DatabaseUrl, now: float | None = None) -> None:
    """Remove the heartbeats of processes gone for days (pid-named ones pile up)."""
    now = now or time.time()
    for heartbeat in heartbeats(database):
        if heartbeat.age(now) > FORGET:
            try:
                heartbeat_path(database, heartbeat.instance).unlink()
            except OSError:
                pass


def heartbeats(database: Path | DatabaseUrl) -> list[Heartbeat]:
    """Every process's heartbeat for this database on this machine, freshest first."""
    base = _base(database)
    name = re.compile(re.escape(base.name + _SUFFIX) + r"([A-Za-z0-9_-]+)")
    found = []
    try:
        paths = list(base.parent.glob(glob.escape(base.name + _SUFFIX) + "*"))
    except OSError:
        return []
    for path in paths:
        match = name.fullmatch(path.name)
        if match is None:
            continue  # another file, or a beat half-written
        try:
            state = json.loads(path.read_text())
            pid = state.get("pid")
            found.append(Heartbeat(match[1], pid if isinstance(pid, int) else None,
                                   float(state["at"]),
                                   tuple(str(p) for p in state.get("platforms", ()))))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return sorted(found, key=lambda h: -h.at)


def fresh(database: Path | DatabaseUrl, now: float | None = None) -> list[Heartbeat]:
    """The heartbeats of the processes running now."""
    now = now or time.time()
    return [h for h in heartbeats(database) if h.age(now) <= FRESH]


def check(
    database: Path | DatabaseUrl, *, running: bool = True, now: float | None = None,
    instance: str | None = None,
) -> str | None:
    """None when healthy, else one line saying what is wrong. `instance`: this process's
    heartbeat must be fresh; None: any one."""
    problem = _check_database(database)
    if problem is not None or not running:
        return problem
    now = now or time.time()
    beats = heartbeats(database)
    if instance is not None:
        beats = [h for h in beats if h.instance == instance_name(instance)]
        if not beats:
            return f"the bot instance {instance} is not running (no heartbeat)"
    if not beats:
        return "the bot is not running (no heartbeat)"
    age = min(h.age(now) for h in beats)
    if age > FRESH:
        return f"no heartbeat for {age:.0f} s"
    return None


def _check_database(database: Path | DatabaseUrl) -> str | None:
    from bot.storage.sqlite import APPLICATION_ID

    if isinstance(database, DatabaseUrl):
        from bot.storage.postgres.storage import check_database

        return asyncio.run(check_database(database.get_secret_value()))
    if not database.is_file():
        return f"no database at {database}"
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as db:
            app_id = db.execute("PRAGMA application_id").fetchone()[0]
    except sqlite3.Error as exc:
        return f"cannot read the database {database}: {exc}"
    if app_id != APPLICATION_ID:
        return f"{database} is not a quizbot database"
    return None


def running_bot(database: Path | DatabaseUrl) -> str | None:
    """A running quizbot's fresh heartbeat for this database (bot/health.py), as words."""
    now = time.time()
    live = fresh(database, now)
    if not live:
        return None
    return (f"a running quizbot (pid {live[0].pid}) uses it: its heartbeat is "
            f"{live[0].age(now):.0f} s old")
