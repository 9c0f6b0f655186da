"""The aggregates in a file of their own (bot/storage/sqlite/aggregates_file.py): the storage
contract's recounts, deletions, moves and crashes run again on a SQLite file whose aggregates
were moved out, read by a connection that attaches both files (another process's view); and
what opening does with an aggregates file that is missing, damaged, left dirty or ahead."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.core.ports import AnswerRecord
from bot.storage.backup import backup_database, restore_database
from bot.storage.copy import copy_database
from bot.storage.sqlite import aggregates_file
from bot.storage.sqlite.storage import SqliteStorage
from tests.storage_contract import (
    test_boards,
    test_cards,
    test_dashboard,
    test_difficulty,
    test_materializer,
    test_privacy,
)
from tests.storage_contract.backends import Rows, SqliteBackend, Store, _qmarks
from tests.storage_contract.test_storage import NOW

# the contract's tests of these modules, collected here again with this module's `backend`;
# not the one that applies on a connection of its own to the answers' file alone
LEFT_OUT = {"test_applying_again_from_the_stored_position_adds_nothing"}
for _module in (test_boards, test_cards, test_dashboard, test_difficulty, test_materializer,
                test_privacy):
    for _name, _value in vars(_module).items():
        if not _name.startswith("_") and _name not in LEFT_OUT:
            globals().setdefault(_name, _value)


class ApartBackend(SqliteBackend):
    """SQLite with the aggregates apart: every store of it keeps them in their own file."""

    def store(self, **options: Any) -> Store:
        return SqliteStorage(self.path, aggregates_apart=True, **options)

    async def fetch(self, sql: str, *args: Any) -> Rows:
        with sqlite3.connect(self.path, timeout=10) as db:
            if aggregates_file.path_of(self.path).exists():
                db.execute("ATTACH DATABASE ? AS agg", (str(aggregates_file.path_of(self.path)),))
            return [tuple(r) for r in db.execute(_qmarks(sql), args).fetchall()]

    async def stored(self) -> dict[str, Rows]:
        stored = await super().stored()
        stored["streaks"] = sorted(await self.fetch(
            "SELECT p.key, COALESCE(s.current_streak, 0), COALESCE(s.best_streak, 0)"
            " FROM persons AS p LEFT JOIN streaks AS s ON s.person_key = p.key"))
        return stored


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[ApartBackend]:
    chosen = ApartBackend(tmp_path / "quiz.db")
    async with chosen.opened():  # a new file: its aggregates move out at once
        pass
    yield chosen


@pytest.fixture
async def store(backend: ApartBackend) -> AsyncIterator[Store]:
    async with backend.opened() as opened:
        yield opened


def held_in_main(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return sorted(names & set(aggregates_file.DERIVED))


async def some_answers(store: Store, people: int = 30) -> None:
    post = await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
    for p in range(people):
        await store.record_answer(AnswerRecord(post.id, f"tg:{p}", p % 3, p % 2 == 0, NOW,
                                               100 + p, name=f"p{p}"))


async def test_the_aggregates_leave_the_answers_file(backend: ApartBackend) -> None:
    assert held_in_main(backend.path) == []
    assert aggregates_file.apart(backend.path)
    async with backend.opened() as store:
        await some_answers(store)
        await store.materialize()
    # a store that is not asked to keeps them apart too: the file decides
    async with SqliteStorage(backend.path) as store:
        await some_answers(store, 5)
        await store.materialize()
    assert await backend.stored() == await backend.recount()
    await backend.check_rank_counts()


async def test_an_inline_file_moves_its_aggregates_with_their_rows(tmp_path: Path) -> None:
    inline = SqliteBackend(tmp_path / "old.db")
    async with inline.opened() as store:
        await some_answers(store)
        await store.materialize()
    before = await inline.stored()
    assert before["totals"] and any(s[1] for s in before["streaks"])
    apart = ApartBackend(inline.path)
    async with apart.opened():
        pass
    assert held_in_main(inline.path) == []
    assert await apart.stored() == before == await apart.recount()


@pytest.mark.parametrize("damage", ["missing", "garbage", "dirty", "ahead"])
async def test_opening_rebuilds_aggregates_it_cannot_trust(backend: ApartBackend,
                                                           damage: str) -> None:
    async with backend.opened() as store:
        await some_answers(store)
        await store.materialize()
    agg = aggregates_file.path_of(backend.path)
    if damage == "missing":
        aggregates_file.remove(backend.path)
    elif damage == "garbage":
        aggregates_file.remove(backend.path)
        agg.write_bytes(b"not a database at all" * 100)
    else:
        with sqlite3.connect(agg) as db:
            if damage == "dirty":  # a write of both files that did not finish
                db.execute("UPDATE aggregate_state SET dirty = 1")
                db.execute("DELETE FROM totals")
            else:  # the answers' file put back from an older copy
                db.execute("UPDATE materialized SET position = position + 1000")
    async with backend.opened():
        assert await backend.unapplied() == 0
    assert await backend.stored() == await backend.recount()
    await backend.check_rank_counts()
    await backend.check_figures()
    with sqlite3.connect(agg) as db:
        assert db.execute("SELECT dirty FROM aggregate_state").fetchone() == (0,)


async def test_a_write_of_both_files_leaves_them_clean(backend: ApartBackend) -> None:
    async with backend.opened() as store:
        await some_answers(store)
        assert await store.delete_person("tg:3")
        assert await store.migrate_chat("tg:-1", "tg:-100")
        await store.materialize()
    with sqlite3.connect(aggregates_file.path_of(backend.path)) as db:
        assert db.execute("SELECT dirty FROM aggregate_state").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM streaks WHERE person_key = 'tg:3'"
                          ).fetchone() == (0,)
    assert await backend.stored() == await backend.recount()


async def test_a_backup_restored_rebuilds_its_aggregates(backend: ApartBackend,
                                                         tmp_path: Path) -> None:
    async with backend.opened() as store:
        await some_answers(store, 20)
        await store.materialize()
    file = tmp_path / "backup.db"
    await backup_database(backend.path, file)  # the answers' file: the aggregates derive
    async with backend.opened() as store:
        await some_answers(store, 40)  # after the backup: gone with the restore
        await store.materialize()
    await restore_database(backend.path, file)
    assert not aggregates_file.path_of(backend.path).exists()
    async with backend.opened() as store:
        assert await backend.count("answers") == 20
        board, _ = await store.leaderboard(None, None, 50, None)
        assert len(board) == 20
    assert await backend.stored() == await backend.recount()


async def test_a_copy_from_and_to_a_split_file(backend: ApartBackend, tmp_path: Path) -> None:
    async with backend.opened() as store:
        await some_answers(store)
        await store.materialize()
    copy = ApartBackend(tmp_path / "copy.db")
    report = await copy_database(backend.path, copy.path, say=lambda _: None)
    assert report is not None
    async with copy.opened():
        pass
    assert await copy.stored() == await backend.stored()
    await copy_database(copy.path, backend.path, force=True, say=lambda _: None)
    async with backend.opened():
        pass
    assert await backend.stored() == await copy.stored()


@pytest.mark.parametrize(("setting", "apart"), [("apart", True), ("inline", False)])
async def test_the_setting_chooses_where_a_new_file_keeps_its_aggregates(
    tmp_path: Path, setting: str, apart: bool
) -> None:
    from bot.app import open_service
    from bot.settings import load_settings

    database = tmp_path / "quiz.db"
    settings = load_settings(quizbot_database=database, quizbot_cache_dir="off",
                             quizbot_sqlite_aggregates=setting, _env_file=None)
    async with open_service(settings):
        pass
    assert aggregates_file.path_of(database).is_file() is apart
    assert (held_in_main(database) == []) is apart

