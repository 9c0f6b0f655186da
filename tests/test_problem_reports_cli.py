"""`quizbot content reports [--all] [--quiz ID]` and `quizbot content reports resolve ID
[--note TEXT]`: reports stored through the core on a real SQLite file, listed and resolved
by the command line, with one-line errors and exit 1 for what it refuses."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from bot.content import load_catalog
from bot.core.models import Chat, Person
from bot.core.service import QuizService
from bot.storage import SqliteStorage, migrate_database
from tests.clock import FakeClock

ROOT = Path(__file__).resolve().parent
PACKS = ROOT / "data" / "packs"


def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("TELEGRAM_", "DISCORD_", "QUIZBOT_"))}
    database = tmp_path / "quiz.db"
    if not database.exists():  # the reading commands refuse a file that is not there
        asyncio.run(migrate_database(database))
    return {**clean, "QUIZBOT_DATABASE": str(database),
            "QUIZBOT_CONTENT_DIR": str(PACKS)}


def quizbot(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", "content", "reports", *args],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env=env(tmp_path))


async def seed(tmp_path: Path) -> None:
    async with SqliteStorage(tmp_path / "quiz.db") as storage:
        service = QuizService(load_catalog(PACKS), storage,
                              FakeClock(datetime(2026, 3, 1, 12, 30, tzinfo=UTC)))
        group = Chat("tg:-100", "Group")
        await service.problem_reports.report(Person("tg:1", "Ada"), group, "s-two",
                                             "Seven is a colour?")
        await service.problem_reports.report(Person("tg:1", "Ada"), group, "s-two", "and Dog")
        await service.problem_reports.report(Person("dc:2", "বব"), Chat("dc:9"), "s-one", "টাইপো")


async def test_reports_are_listed_and_resolved(tmp_path: Path) -> None:
    await seed(tmp_path)
    listed = quizbot(tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "#1  2026-03-01 12:30 UTC  sample/s-two  Ada (tg:1) in tg:-100  [open]",
        "    Seven is a colour?",
        "    and Dog",
        "#2  2026-03-01 12:30 UTC  sample/s-one  বব (dc:2) in dc:9  [open]",
        "    টাইপো",
        "2 reports, 2 open",
    ]
    done = quizbot(tmp_path, "resolve", "1", "--note", "Dog removed")
    assert (done.returncode, done.stdout, done.stderr) == (0, "report #1 resolved\n", "")
    assert "#1 " not in quizbot(tmp_path).stdout
    everything = quizbot(tmp_path, "--all", "--quiz", "sample").stdout
    assert "#1  2026-03-01 12:30 UTC  sample/s-two  Ada (tg:1) in tg:-100  [resolved " \
        in everything and ": Dog removed]" in everything
    assert everything.splitlines()[-1] == "2 reports, 1 open"


async def test_refusals_are_one_line_and_exit_1(tmp_path: Path) -> None:
    await seed(tmp_path)
    assert quizbot(tmp_path, "resolve", "2").returncode == 0
    again = quizbot(tmp_path, "resolve", "2")
    assert (again.returncode, again.stdout) == (1, "")
    assert again.stderr == "quizbot: Report 2 is resolved already.\n"
    unknown = quizbot(tmp_path, "resolve", "42")
    assert (unknown.returncode, unknown.stderr) == (1, "quizbot: There is no report 42.\n")
    quiz = quizbot(tmp_path, "--quiz", "nope")
    assert (quiz.returncode, quiz.stderr) == (1, f"quizbot: no quiz 'nope' in {PACKS}\n")
    bad = quizbot(tmp_path, "resolve", "two")
    assert bad.returncode == 2 and "invalid int value" in bad.stderr


def test_no_reports_yet(tmp_path: Path) -> None:
    empty = quizbot(tmp_path)
    assert (empty.returncode, empty.stdout) == (0, "no open problem reports\n")
    assert quizbot(tmp_path, "--all", "--quiz", "sample").stdout == "no problem reports\n"
