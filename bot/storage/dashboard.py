"""The organiser's dashboard (bot/web), written once for every database: reads of one chat,
each a primary-key row or an index range (chat_figures and chat_day_figures; totals_rank;
answers_chat_person), never a scan of the whole table; and the per-chat generation that
`/dashboard revoke` bumps.

The figures (a chat's people, answers and right answers, all time and per UTC day) are kept
from the boards' aggregates by whoever writes those, in the same transaction, as rank_counts
is: the materializer from what its upserts return (sqlite/materializer.py; on PostgreSQL in
its one statement), a chat's move (recount_figures), a person's deletion (privacy.py). No
trigger fires per aggregate row.

Pages are keyset-paged: the next page starts after the last row's sort key, so page 1,000
costs what page 1 does.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta

from bot.core.ports import (
    AnswerCursor,
    AnswerRow,
    DayCount,
    PeopleCursor,
    PersonTotals,
    ProblemReportRecord,
)
from bot.storage.problem_reports import COLUMNS as REPORT_COLUMNS
from bot.storage.problem_reports import record_of
from bot.storage.sql import Sql

ANSWER_COLUMNS = (
    "a.id, a.person_key, COALESCE(p.name, ''), a.post_id, a.quiz_id, a.question_id, a.option,"
    " a.correct, a.answered_at, a.elapsed_ms, r.round_id, a.response"
)


# access -------------------------------------------------------------------------------------
async def generation(db: Sql, chat_key: str) -> int:
    value = await db.value(
        "SELECT generation FROM dashboard_access WHERE chat_key = $1", chat_key)
    return 0 if value is None else int(value)


async def revoke(db: Sql, chat_key: str) -> int:
    return int(await db.value(
        "INSERT INTO dashboard_access(chat_key, generation) VALUES ($1, 1)"
        " ON CONFLICT (chat_key) DO UPDATE SET generation = dashboard_access.generation + 1"
        " RETURNING generation", chat_key))


# the figures -------------------------------------------------------------------------------
FIGURES = (("chat_figures", "chat_key", "totals"), ("chat_day_figures", "chat_key, day", "scores"))


async def recount_figures(db: Sql, chat_key: str) -> None:
    """Count a chat's figures again from its aggregates (a chat's move: an index range)."""
    for table, columns, source in FIGURES:
        await db.run(f"DELETE FROM {table} WHERE chat_key = $1", chat_key)
        await db.run(
            f"INSERT INTO {table}({columns}, people, answered, correct) SELECT {columns},"
            f" count(*), sum(answered), sum(correct) FROM {source} WHERE chat_key = $1"
            f" GROUP BY {columns} ORDER BY {columns}", chat_key)


# overview -----------------------------------------------------------------------------------
async def chat_totals(db: Sql, chat_key: str) -> tuple[int, int, int]:
    row = await db.row(
        "SELECT people, answered, correct FROM chat_figures WHERE chat_key = $1", chat_key)
    return (0, 0, 0) if row is None else (int(row[0]), int(row[1]), int(row[2]))


async def chat_days(db: Sql, chat_key: str, since: date) -> list[DayCount]:
    rows = await db.rows(
        "SELECT day, answered, correct FROM chat_day_figures WHERE chat_key = $1"
        " AND day >= $2 AND answered > 0 ORDER BY day", chat_key, db.day(since))
    return [DayCount(db.on(r[0]), int(r[1]), int(r[2])) for r in rows]


# people -------------------------------------------------------------------------------------
PEOPLE = ("SELECT t.person_key, COALESCE(p.name, ''), t.answered, t.correct, t.time_ms"
          " FROM {table} t{indexed} LEFT JOIN persons p ON p.key = t.person_key"
          " WHERE t.chat_key = $1")
RANK_INDEX = {"totals": "totals_rank", "scores": "scores_rank", "week_scores": "week_rank"}
WEEK_DAYS = 7  # the materializers' week window: week_scores holds its days


async def chat_people(
    db: Sql, chat_key: str, after: PeopleCursor | None, limit: int
) -> list[PersonTotals]:
    return await _ranked(db, "totals", (chat_key,), after, limit)


async def board_people(
    db: Sql, chat_key: str, since: date | None, after: PeopleCursor | None, limit: int
) -> list[PersonTotals] | None:
    """A page of the board from `since` (None: all time; a day: that day's; the week
    window's first day: the week's) in rank order, after the cursor: a range of its rank
    index. None: no one table holds that board now (read it with the board's own read)."""
    if since is None:
        return await _ranked(db, "totals", (chat_key,), after, limit)
    value = await db.value("SELECT until FROM week_window WHERE id = 1")
    until = None if value is None else db.on(value)
    if until is None or since >= until:  # no scores row is later than `until`
        return await _ranked(db, "scores", (chat_key, db.day(since)), after, limit)
    if since == until - timedelta(days=WEEK_DAYS - 1):
        return await _ranked(db, "week_scores", (chat_key,), after, limit)
    return None


async def _ranked(
    db: Sql, table: str, key: tuple[object, ...], after: PeopleCursor | None, limit: int
) -> list[PersonTotals]:
    """Rows of `table` for `key` (the chat, and the day of scores) in rank order."""
    # SQLite (no row locks: for_update is "") is told the rank index: without statistics it
    # may take the primary key of (chat, day) and sort a whole day
    indexed = "" if db.for_update else f" INDEXED BY {RANK_INDEX[table]}"
    where = PEOPLE.format(table=table, indexed=indexed) + (
        " AND t.day = $2" if len(key) > 1 else "")
    n = len(key)
    if after is None:
        rows = await db.rows(f"{where} ORDER BY t.correct DESC, t.time_ms, t.person_key"
                             f" LIMIT ${n + 1}", *key, limit)
    else:
        # two seeks in the rank index, not one filter over the chat: the rest of the
        # cursor's `correct`, then the rows below it (a mixed-direction key has no single
        # range)
        correct, time_ms, person_key = after
        rows = await db.rows(
            f"{where} AND t.correct = ${n + 2} AND (t.time_ms, t.person_key) >"
            f" (${n + 3}, ${n + 4}) ORDER BY t.time_ms, t.person_key LIMIT ${n + 1}",
            *key, limit, correct, time_ms, person_key)
        if len(rows) < limit:
            rows += await db.rows(
                f"{where} AND t.correct < ${n + 2}"
                f" ORDER BY t.correct DESC, t.time_ms, t.person_key LIMIT ${n + 1}",
                *key, limit - len(rows), correct)
    return [PersonTotals(r[0], r[1], int(r[2]), int(r[3]), int(r[4])) for r in rows]


async def people_activity(
    db: Sql, chat_key: str, person_keys: Sequence[str]
) -> dict[str, tuple[datetime, dict[str, tuple[int, int]]]]:
    found: dict[str, tuple[datetime, dict[str, tuple[int, int]]]] = {}
    if not person_keys:
        return found
    # one statement, an index range per person (a page holds a few dozen people): one round
    # trip to PostgreSQL instead of one per person
    marks = ", ".join(f"${n + 2}" for n in range(len(person_keys)))
    rows = await db.rows(
        "SELECT person_key, quiz_id, count(*), count(*) FILTER (WHERE correct),"
        f" max(answered_at) FROM answers WHERE chat_key = $1 AND person_key IN ({marks})"
        " GROUP BY person_key, quiz_id", chat_key, *person_keys)
    for key, quiz, answered, right, last in rows:
        seen, quizzes = found.get(key, (db.at(last), {}))
        quizzes[quiz] = (int(answered), int(right))
        found[key] = (max(seen, db.at(last)), quizzes)
    return found


# answers ------------------------------------------------------------------------------------
async def chat_answers(
    db: Sql, chat_key: str, after: AnswerCursor | None, limit: int,
    person_key: str | None = None,
) -> list[AnswerRow]:
    values: list[object] = [chat_key, limit]
    clause, order = "", "a.person_key, a.answered_at, a.id"
    if person_key is not None:  # one person's, the newest first (the index read backwards)
        values.append(person_key)
        clause += f" AND a.person_key = ${len(values)}"
        order = "a.answered_at DESC, a.id DESC"
    if after is not None and person_key is not None:  # before the cursor's time
        values += [db.when(after[1]), after[2]]
        n = len(values)
        clause += f" AND (a.answered_at, a.id) < (${n - 1}, ${n})"
    elif after is not None:
        values += [after[0], db.when(after[1]), after[2]]
        n = len(values)
        clause += f" AND (a.person_key, a.answered_at, a.id) > (${n - 2}, ${n - 1}, ${n})"
    rows = await db.rows(
        f"SELECT {ANSWER_COLUMNS} FROM answers a LEFT JOIN persons p ON p.key = a.person_key"
        " LEFT JOIN round_posts r ON r.post_id = a.post_id"
        f" WHERE a.chat_key = $1{clause}"
        f" ORDER BY {order} LIMIT $2", *values)
    return [
        AnswerRow(int(r[0]), r[1], r[2], int(r[3]), r[4], r[5], int(r[6]), bool(r[7]),
                  db.at(r[8]), int(r[9]), None if r[10] is None else int(r[10]), r[11])
        for r in rows
    ]


# problem reports ----------------------------------------------------------------------------
async def open_reports(
    db: Sql, chat_key: str, after: int | None, limit: int
) -> list[ProblemReportRecord]:
    """A page of the chat's open reports by id (the partial index problem_reports_chat_open)."""
    rows = await db.rows(
        f"SELECT {REPORT_COLUMNS} FROM problem_reports WHERE chat_key = $1"
        " AND resolved_at IS NULL AND id > $2 ORDER BY id LIMIT $3",
        chat_key, -1 if after is None else after, limit)
    return [record_of(db, r) for r in rows]


async def open_report_count(db: Sql, chat_key: str) -> int:
    return int(await db.value(
        "SELECT count(*) FROM problem_reports WHERE chat_key = $1 AND resolved_at IS NULL",
        chat_key))


async def open_reports_per_question(db: Sql, chat_key: str, quiz_id: str) -> dict[str, int]:
    """How many open reports each question of `quiz_id` has in the chat (the chat's open
    reports: the partial index problem_reports_chat_open)."""
    rows = await db.rows(
        "SELECT question_id, count(*) FROM problem_reports WHERE chat_key = $1"
        " AND resolved_at IS NULL AND quiz_id = $2 GROUP BY question_id", chat_key, quiz_id)
    return {r[0]: int(r[1]) for r in rows}
