"""`quizbot chats`, `leaderboard --chat` with a bare platform id, `--limit all` and `--csv`:
an operator finds a chat's key and prints or exports a whole board."""

from __future__ import annotations

import asyncio
import csv
import io
import random
from pathlib import Path

import pytest

from bot.cli import main
from bot.content import load_catalog
from bot.core.models import Chat, Person
from bot.core.service import QuizService
from bot.storage import SqliteStorage, migrate_database
from tests.clock import FakeClock
from tests.conftest import SAMPLE_PACKS

GROUP = Chat("tg:-100200300", "Study group")
OTHER = Chat("dc:555", "Server #quiz")
TWIN = Chat("dc:-100200300", "Same number")  # a bare id two platforms share


async def seed(path: Path, people: int, chats: tuple[Chat, ...] = (GROUP, OTHER)) -> None:
    """`people` people each answer one question right in GROUP; one in each other chat."""
    storage = SqliteStorage(path)
    await storage.open()
    try:
        service = QuizService(load_catalog(SAMPLE_PACKS), storage, FakeClock(),
                              random.Random(3))
        for chat in chats:
            async with service.asking.quiz(chat, None, "sample") as shown:
                pass
            n = people if chat is GROUP else 1
            for i in range(n):
                person = Person(f"tg:{1000 + i}", f"P{i:03d}")
                await service.answer(shown.post_id, person, shown.correct)
    finally:
        await storage.close()


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN", "QUIZBOT_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "quiz.db"
    asyncio.run(migrate_database(path))  # the reading commands refuse a file that is not there
    monkeypatch.setenv("QUIZBOT_DATABASE", str(path))
    monkeypatch.setenv("QUIZBOT_CONTENT_DIR", str(SAMPLE_PACKS))
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_chats_lists_each_key_with_its_name(
    database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "chats")[1] == f"no chats yet (database {database})\n"
    asyncio.run(seed(database, 1))
    code, out, _ = run(capsys, "chats")
    assert code == 0
    assert out.splitlines() == ["dc:555         Server #quiz", "tg:-100200300  Study group"]


def test_a_bare_id_names_the_one_chat_that_has_it(
    database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(seed(database, 2))
    code, out, err = run(capsys, "leaderboard", "--chat", "-100200300", "--csv")
    assert code == 0, err
    assert [row["person_key"] for row in csv.DictReader(io.StringIO(out))] == [
        "tg:1000", "tg:1001"]
    code, _, err = run(capsys, "leaderboard", "--chat", "-999")
    assert code == 1
    assert err == "quizbot: no chat has the id -999 (quizbot chats lists the chat keys)\n"


def test_a_key_without_a_platform_is_taken_as_it_is(
    database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    console = Chat("console", "console")  # what `quizbot chats` lists for the terminal quiz
    asyncio.run(seed(database, 1, (GROUP, console)))
    code, out, err = run(capsys, "leaderboard", "--chat", "console", "--csv")
    assert code == 0, err
    assert [row["person_key"] for row in csv.DictReader(io.StringIO(out))] == ["tg:1000"]


def test_a_bare_id_two_chats_share_is_refused_with_both_keys(
    database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(seed(database, 1, (GROUP, TWIN)))
    code, out, err = run(capsys, "leaderboard", "--chat", "-100200300")
    assert (code, out) == (1, "")
    assert err == ("quizbot: several chats have the id -100200300: give one of "
                   "dc:-100200300, tg:-100200300\n")
    assert run(capsys, "leaderboard", "--chat", "tg:-100200300", "--csv")[0] == 0


def test_limit_all_and_csv_print_the_whole_board(
    database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(seed(database, 105))
    code, out, _ = run(capsys, "leaderboard", "--chat", "tg:-100200300", "--limit", "all")
    assert code == 0
    assert all(f"P{i:03d}" in out for i in range(105))
    code, out, _ = run(capsys, "leaderboard", "--chat", "tg:-100200300", "--csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["rank", "name", "person_key", "correct", "answered", "time_ms",
                       "day_streak"]
    assert len(rows) == 1 + 105 and rows[1][1:5] == ["P000", "tg:1000", "1", "1"]
    # --limit still applies to CSV when given; the text board keeps its default of 10
    _, out, _ = run(capsys, "leaderboard", "--chat", "tg:-100200300", "--csv", "--limit", "3")
    assert len(out.splitlines()) == 1 + 3
    _, out, _ = run(capsys, "leaderboard", "--chat", "tg:-100200300")
    assert "P009" in out and "P010" not in out
