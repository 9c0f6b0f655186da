"""`quizbot health` with several processes on one database: a heartbeat each (named by
QUIZBOT_INSTANCE, else the pid), every one listed; healthy when this instance's heartbeat, or
with no instance given any one, is fresh."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from bot import health
from bot.health import running_bot
from tests.test_daemon import run


def _stale(db: Path, instance: str, age: float) -> None:
    health.heartbeat_path(db, instance).write_text(json.dumps(
        {"pid": 4242, "at": time.time() - age, "platforms": ["Discord"]}))


def test_each_process_beats_on_its_own_and_health_lists_them(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    assert run(tmp_path, "db", "migrate", QUIZBOT_DATABASE=str(db)).returncode == 0
    health.beat(db, ["Telegram"], "bot-1")
    _stale(db, "bot-2", 600)
    assert {h.instance for h in health.heartbeats(db)} == {"bot-1", "bot-2"}

    either = run(tmp_path, "health", QUIZBOT_DATABASE=str(db))  # no instance: any live one
    assert either.returncode == 0, either.stderr
    lines = either.stdout.splitlines()
    assert lines[0] == "ok"
    assert lines[1].startswith(f"bot-1 (pid {os.getpid()}): fresh, ") and "Telegram" in lines[1]
    # 600 s old when written; a loaded machine may take seconds to run each `health`
    assert re.match(r"bot-2 \(pid 4242\): stale, 6\d\d s ago", lines[2]), lines[2]
    assert "Discord" in lines[2]

    mine = run(tmp_path, "health", QUIZBOT_DATABASE=str(db), QUIZBOT_INSTANCE="bot-2")
    assert mine.returncode == 1
    assert re.match(r"unhealthy: no heartbeat for 6\d\d s", mine.stderr.strip()), mine.stderr
    assert len(mine.stdout.splitlines()) == 2  # both still listed
    assert run(tmp_path, "health", "--instance", "bot-1", QUIZBOT_DATABASE=str(db),
               QUIZBOT_INSTANCE="bot-2").returncode == 0
    gone = run(tmp_path, "health", QUIZBOT_DATABASE=str(db), QUIZBOT_INSTANCE="bot-3")
    assert gone.returncode == 1
    assert gone.stderr.strip() == "unhealthy: the bot instance bot-3 is not running (no heartbeat)"

    health.heartbeat_path(db, "bot-1").unlink()  # only the stale one left
    alone = run(tmp_path, "health", QUIZBOT_DATABASE=str(db))
    assert alone.returncode == 1 and re.search(r"no heartbeat for 6\d\d s", alone.stderr)


def test_a_running_process_is_seen_by_db_copy_whichever_beats(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    _stale(db, "old", 600)
    assert running_bot(db) is None
    health.beat(db, ["Telegram"], "bot/2 ü")  # any name becomes a safe file name
    said = running_bot(db)
    assert said is not None and said.startswith(f"a running quizbot (pid {os.getpid()}) uses it")


def test_heartbeats_of_processes_long_gone_are_removed(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    _stale(db, "gone", health.FORGET + 60)
    _stale(db, "recent", 600)
    health.forget_old(db)
    assert [h.instance for h in health.heartbeats(db)] == ["recent"]
    # another database beside it is not this one's
    other = tmp_path / "q.db.before-restore"
    health.beat(other, ["Telegram"])
    assert [h.instance for h in health.heartbeats(db)] == ["recent"]
