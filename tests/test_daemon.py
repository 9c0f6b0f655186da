"""`quizbot run` as a supervisor sees it: one line and a distinct exit status for each start-up
failure, no traceback, nothing left hanging, files untouched."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.app import Exit

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_PACKS = ROOT / "tests" / "data" / "packs"


def run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("TELEGRAM_", "DISCORD_", "QUIZBOT_"))}
    defaults = {"QUIZBOT_DATABASE": str(tmp_path / "q.db"),
                "QUIZBOT_CONTENT_DIR": str(SAMPLE_PACKS)}
    return subprocess.run(
        [sys.executable, "-m", "bot", *(args or ("run",))], capture_output=True, text=True,
        timeout=60, cwd=tmp_path, env={**base, **defaults, **env}, stdin=subprocess.DEVNULL,
    )


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_no_token_and_no_terminal_fails_instead_of_looking_healthy(tmp_path: Path) -> None:
    proc = run(tmp_path)
    assert proc.returncode == Exit.CONFIG
    assert "TELEGRAM_BOT_TOKEN" in one_line(proc) and proc.stdout == ""


def test_a_bad_setting_names_the_variable(tmp_path: Path) -> None:
    proc = run(tmp_path, DISCORD_GUILD_ID="not-a-number")
    assert proc.returncode == Exit.CONFIG
    assert "DISCORD_GUILD_ID" in one_line(proc)


def test_a_token_with_a_newline_is_refused_without_showing_it(tmp_path: Path) -> None:
    token = "123456:AAsecret-token-value"
    proc = run(tmp_path, TELEGRAM_BOT_TOKEN=token + "\nx")
    assert proc.returncode == Exit.CONFIG
    assert "TELEGRAM_BOT_TOKEN" in one_line(proc)
    assert "secret-token" not in proc.stderr + proc.stdout


def test_env_example_works_as_shipped(tmp_path: Path) -> None:
    shutil.copy(ROOT / ".env.example", tmp_path / ".env")
    assert run(tmp_path, "db", "migrate").returncode == 0  # a reading command needs a database
    proc = run(tmp_path, "leaderboard")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("kind", ["directory", "text file", "under a file", "foreign database"])
def test_an_unusable_database_is_one_line_and_exit_4(tmp_path: Path, kind: str) -> None:
    if kind == "directory":
        path = tmp_path / "db"
        path.mkdir()
    elif kind == "text file":
        path = tmp_path / "notes.txt"
        path.write_text("my notes\n")
    elif kind == "under a file":
        (tmp_path / "file").write_text("x")
        path = tmp_path / "file" / "q.db"
    else:
        import sqlite3

        path = tmp_path / "theirs.db"
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE t(x)")
    before = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    proc = run(tmp_path, "leaderboard", QUIZBOT_DATABASE=str(path))
    assert proc.returncode == Exit.STORAGE
    assert str(path) in one_line(proc)
    if before is not None:
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_invalid_content_names_the_files_and_exits_1(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    packs.mkdir()
    (packs / "bad.yaml").write_text("id: [unclosed\n")
    assert run(tmp_path, "db", "migrate").returncode == 0
    proc = run(tmp_path, "leaderboard", QUIZBOT_CONTENT_DIR=str(packs))
    assert proc.returncode == Exit.CONTENT
    assert "Traceback" not in proc.stderr
    assert "bad.yaml:" in proc.stderr and "nothing was loaded" in proc.stderr


def test_health_needs_a_fresh_heartbeat(tmp_path: Path) -> None:
    from bot import health

    db = tmp_path / "q.db"
    assert run(tmp_path, "db", "migrate", QUIZBOT_DATABASE=str(db)).returncode == 0
    assert run(tmp_path, "health", "--database-only", QUIZBOT_DATABASE=str(db)).returncode == 0
    stale = run(tmp_path, "health", QUIZBOT_DATABASE=str(db))
    assert stale.returncode == 1 and "not running" in one_line(stale)
    health.beat(db, ["Telegram"])
    assert run(tmp_path, "health", QUIZBOT_DATABASE=str(db)).returncode == 0
    late = health.check(db, now=time.time() + 3600)
    assert late is not None and late.startswith("no heartbeat for 36")
