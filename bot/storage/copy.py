"""`quizbot db copy SRC DST`: move a community between SQLite and PostgreSQL (either way).

What is copied are the rows the community wrote: people, chats, runs, posts and their platform
references, answers, schedules and daily claims, every id kept. The boards' aggregates and
streaks are derived from the answers, so the destination's materializer builds them again
from the copied answers when it is opened at the end (its position starts at zero).

- Each table is copied in key order (keys compared by code point on both backends), in
  batches; each batch and the position it reached are written to the destination in one
  transaction (table `copy_progress`), so an interrupted copy (kill -9, a lost connection)
  continues where it stopped when run again.
- A destination that holds a community already is refused, unless `force`: then it is
  emptied first (its quizbot tables dropped and created again). A destination that another
  program uses, or a newer quizbot wrote, is refused as always.
- Then the destination builds its boards from the copied answers, and every table's rows
  are counted on both sides; any difference is an error. The progress record goes only after
  both, so a copy killed while building or verifying is finished by running it again.
- A source that does not exist, or is not a quizbot database (another program's, an empty
  file or database), is refused before anything is written: a SQLite source is looked at
  read-only (`mode=ro`), a PostgreSQL one by reading its catalog. A SQLite source is then
  only read, unless it is of an older schema or its boards miss answers: then it is opened
  with its Storage first, as any quizbot start would (a PostgreSQL source always is). The
  destination is opened (and so created or migrated) with its own Storage.

Stop the bots before copying: rows written to the source during a copy may be missed. A
`snapshot` copy (what `db backup` does for PostgreSQL without pg_dump) reads the source in one
REPEATABLE READ transaction instead, so it is consistent while a bot writes; it compares the
copied tables only, since a live source's boards may lag behind its answers.
"""


from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bot.core.ports import StorageError
from bot.i18n import translator
from bot.storage.copy_rows import BATCH, NOT_COPIED, REBUILT, TABLES, Progress, Side
from bot.storage.postgres.copy_side import PostgresSide
from bot.storage.postgres.url import DatabaseUrl, is_postgres_url, redact
from bot.storage.sqlite.copy_side import SqliteSide
from bot.storage.sqlite.verify import quizbot_file

log = logging.getLogger(__name__)
EN = translator("en")  # the operator's English, plurals through the catalog


@dataclass
class Report:
    source: str
    destination: str
    counts: dict[str, tuple[int, int]]  # table -> (source rows, destination rows)
    resumed: bool


class CopyError(StorageError):
    """The copy cannot start or did not verify: one line saying why."""


def describe(database: str | Path | DatabaseUrl) -> str:
    if isinstance(database, DatabaseUrl):
        return str(database)
    if isinstance(database, str) and is_postgres_url(database):
        return redact(database)
    return str(Path(database).resolve())


def side_for(database: str | Path | DatabaseUrl, *, source: bool = False,
             snapshot: bool = False) -> Side:
    """`source`: read only (a SQLite file opened `mode=ro`); `snapshot`: a PostgreSQL source
    read in one REPEATABLE READ transaction."""
    if isinstance(database, DatabaseUrl):
        return PostgresSide(database.get_secret_value(), snapshot)
    if isinstance(database, str) and is_postgres_url(database):
        return PostgresSide(database, snapshot)
    return SqliteSide(Path(database), read_only=source)


# the copy ---------------------------------------------------------------------------------
async def _refuse_not_ours(source: str | Path | DatabaseUrl) -> None:
    """A source that is missing, another program's or empty: refused, nothing written to it
    (a mistyped path must not become an empty database that copies "equal")."""
    side = side_for(source, source=True)
    if isinstance(side, SqliteSide):
        try:
            quizbot_file(side.path)
        except StorageError as exc:
            raise CopyError(f"the source is refused: {exc}; nothing was created or "
                            "copied") from None
        return
    assert isinstance(side, PostgresSide)
    problem = await not_ours(side.url)
    if problem is not None:
        raise CopyError(f"the source is refused: {problem}; nothing was written to it or "
                        "copied")


async def not_ours(url: str) -> str | None:
    """Why a PostgreSQL database is not a quizbot database holding data, found by reading
    its catalog (None: it is one)."""
    from bot.storage.postgres.storage import check_database

    problem = await check_database(url)
    return None if problem is None else problem.split("; set QUIZBOT_DATABASE")[0]


async def in_use(database: str | Path | DatabaseUrl) -> str | None:
    """Why another process may be writing to the database (None: nothing says so)."""
    side = side_for(database, source=True)
    await side.connect()
    try:
        return await side.in_use()
    finally:
        await side.close()


async def _refuse_live(source: str | Path | DatabaseUrl, name: str) -> None:
    reason = await in_use(source)
    if reason is not None:
        raise CopyError(f"the source {name} is being written to ({reason}): stop the bot "
                        "first, or add --live-ok to copy it anyway")


async def _open_and_close(database: str | Path | DatabaseUrl) -> None:
    """Check the database is ours and bring it to the newest schema (its own Storage)."""
    from bot.storage import storage_for

    store = storage_for(database)
    await store.open()
    await store.close()


def _up_to_date(database: str | Path | DatabaseUrl) -> bool:
    """A SQLite source with nothing for its Storage to do (newest schema, every answer in
    the boards): then the copy only reads it, through a read-only connection."""
    side = side_for(database, source=True)
    return isinstance(side, SqliteSide) and side.up_to_date()


async def _refuse_unknown_rows(side: Side) -> None:
    """A table this copy does not know (a newer feature's) with rows in it would be left
    behind: refuse before anything is written."""
    known = {t.name for t in TABLES} | NOT_COPIED
    unknown = sorted(
        [t for t in await side.tables() - known if await side.count(t)]
    )
    if unknown:
        raise CopyError(
            f"{side.where} holds rows in tables this copy does not move "
            f"({', '.join(unknown)}); nothing was copied"
        )


async def _holds_data(side: Side) -> bool:
    for table in TABLES:
        if await side.count(table.name):
            return True
    return False


PHASES = ("checking", "emptying", "rows", "boards", "verify", "done")


async def copy_database(
    source: str | Path | DatabaseUrl, destination: str | Path | DatabaseUrl, *,
    force: bool = False, batch: int = BATCH, say: Callable[[str], None] = print,
    after_batch: Callable[[str, int], None] | None = None, live_ok: bool = False,
    on_phase: Callable[[str], None] | None = None, snapshot: bool = False,
) -> Report:
    """Copy a community from `source` to `destination` (paths or postgresql:// URLs).
    CopyError (a StorageError: one line) when it must not or cannot: a source another process
    is writing to is refused unless `live_ok` (the copy reads table after table, so answers
    written meanwhile would be missing, or break the verification) or `snapshot` (a
    PostgreSQL source read in one transaction); `after_batch(table, rows copied so far)` is
    called after each committed batch, `on_phase(name)` as each of PHASES begins (the CLI
    says from it where a Ctrl-C stopped; tests interrupt there)."""
    said = on_phase or (lambda _: None)

    async def phase(name: str) -> None:
        said(name)
        await asyncio.sleep(0)  # a Ctrl-C (the task cancelled) lands here, at a known state

    await phase("checking")
    src_name, dst_name = describe(source), describe(destination)
    if src_name == dst_name:
        raise CopyError(f"the source and the destination are the same database ({src_name})")
    await _refuse_not_ours(source)
    if not (live_ok or snapshot):
        await _refuse_live(source, src_name)
    if not snapshot and not _up_to_date(source):
        # a quizbot database of an older schema, or with answers its boards miss: brought
        # up to date as any quizbot start would (a live source's own processes do that)
        await _open_and_close(source)
    await _open_and_close(destination)
    src = side_for(source, source=True, snapshot=snapshot)
    dst = side_for(destination)
    await src.connect()
    try:
        await dst.connect()
        await _refuse_unknown_rows(src)
        state = await dst.progress()
        resumed = state is not None and state[0] == src_name and not force
        if state is not None and state[0] != src_name and not force:
            raise CopyError(
                f"{dst.where} holds an unfinished copy from another database ({state[0]}); "
                "add --force to empty it and copy again"
            )
        if not resumed and (state is not None or await _holds_data(dst)):
            if not force:
                raise CopyError(
                    f"{dst.where} already holds a community; add --force to empty it and "
                    "copy again"
                )
            await phase("emptying")
            say(f"emptying {dst.where} (--force)")
            await dst.empty()
            await dst.close()
            await _open_and_close(destination)
            await dst.connect()
            state = None
        if resumed:
            assert state is not None
            progress = state[1]
            say(f"resuming the copy from {src.where} to {dst.where}")
        else:
            progress = {}
            await dst.start_progress(src_name)
            say(f"copying {src.where} to {dst.where}")
        await phase("rows")
        for table in TABLES:
            at = progress.get(table.name, Progress())
            while not at.done:
                rows = await src.batch(table, at.last, batch)
                at.copied += len(rows)
                if rows:
                    at.last = tuple(rows[-1][table.columns.index(k)] for k in table.key)
                at.done = len(rows) < batch
                await dst.write(table, rows, at, src_name)
                if after_batch is not None:
                    after_batch(table.name, at.copied)
                await asyncio.sleep(0)  # a Ctrl-C (the task cancelled) stops between batches
            copied = EN.ngettext("{n} row", "{n} rows", at.copied)
            say(f"  {table.name}: {copied}")
        await dst.finish()
        await dst.close()
        # the destination builds its boards from the copied answers as it opens
        await phase("boards")
        say("building the boards from the answers")
        await _open_and_close(destination)
        await phase("verify")
        await dst.connect()
        # a live source's boards may lag behind its answers: then only the rows are compared
        names = [t.name for t in TABLES] + ([] if snapshot else list(REBUILT))
        counts = {name: (await src.count(name), await dst.count(name)) for name in names}
        wrong = [f"{t} {a} ≠ {b}" for t, (a, b) in counts.items() if a != b]
        if wrong:
            raise CopyError(f"the copy to {dst.where} does not match: {', '.join(wrong)}; "
                            "it stays marked unfinished")
        await dst.forget_progress()  # only now: a rerun before this point verifies again
        await phase("done")
    finally:
        await src.close()
        await dst.close()
    return Report(src_name, dst_name, counts, resumed)


def interrupted(phase: str, destination: str) -> str:
    """What a Ctrl-C in `phase` left behind, and what to do (for the operator)."""
    if phase == "checking":
        return "interrupted before any row was copied"
    if phase == "emptying":
        return (f"interrupted while emptying {destination} (--force): run the same command "
                "again to empty it and copy")
    if phase == "rows":
        return ("interrupted while copying rows: the batches copied so far are kept; run the "
                "same command again to resume")
    if phase == "boards":
        return ("interrupted while building the boards: every row is copied, the copy is not "
                "verified yet; run the same command again to finish it")
    if phase == "verify":
        return ("interrupted while verifying: every row is copied and the boards are built; "
                "run the same command again to verify")
    return f"interrupted after the copy to {destination} was verified: it is complete"
