"""`quizbot privacy export|delete --person KEY`: an operator answers a person's request to see
or delete their data; the deleted person leaves the board, the others stay."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.storage import SqliteStorage
from tests.test_cli_boards import GROUP, database, run, seed

__all__ = ["database"]  # the fixture, shared with the boards' CLI tests


async def names_on_board(path: Path) -> list[str]:
    storage = SqliteStorage(path)
    await storage.open()
    try:
        await storage.materialize()
        rows, _ = await storage.leaderboard(GROUP.key, None, 10, None)
        return [row.name for row in rows]
    finally:
        await storage.close()


def test_export_prints_the_persons_answers(
    database: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    asyncio.run(seed(database, 2))
    code, out, _ = run(capsys, "privacy", "export", "--person", "tg:1000")
    assert code == 0
    data = json.loads(out)
    assert data["person"] == {"key": "tg:1000", "name": "P000", "language": None}
    assert {(a["chat"], a["quiz"], a["correct"]) for a in data["answers"]} == {
        (GROUP.key, "sample", True), ("dc:555", "sample", True)}
    code, out, _ = run(capsys, "privacy", "export", "--person", "tg:1000",
                       "--out", str(tmp_path / "p.json"))
    assert code == 0
    written = json.loads((tmp_path / "p.json").read_text())
    assert (written["person"], written["answers"]) == (data["person"], data["answers"])


def test_delete_removes_the_person_and_only_them(
    database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(seed(database, 3))
    assert asyncio.run(names_on_board(database)) == ["P000", "P001", "P002"]
    code, out, _ = run(capsys, "privacy", "delete", "--person", "tg:1001")
    assert (code, out) == (0, "deleted everything stored about tg:1001\n")
    assert asyncio.run(names_on_board(database)) == ["P000", "P002"]
    code, out, _ = run(capsys, "privacy", "export", "--person", "tg:1001")
    assert json.loads(out)["answers"] == []
    code, out, _ = run(capsys, "privacy", "delete", "--person", "tg:1001")
    assert (code, out) == (1, "nothing is stored about tg:1001; nothing was deleted\n")


def test_a_bad_key_is_refused_and_nothing_changes(
    database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(seed(database, 2))
    with pytest.raises(SystemExit) as info:
        main(["privacy", "delete", "--person", "1001"])
    assert info.value.code == 2
    assert "is not a person key" in capsys.readouterr().err
    assert asyncio.run(names_on_board(database)) == ["P000", "P001"]
    with pytest.raises(SystemExit) as bare:
        main(["privacy"])
    assert bare.value.code == 0
