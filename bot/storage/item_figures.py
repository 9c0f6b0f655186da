"""The item analysis's inputs, kept by the materializer for the dashboard's Questions page, so
the page reads a few rows per question instead of a chat's first answers (hundreds of
thousands in a big chat). Written once for both databases, like dashboard.py.

Four tables, with no trigger:

- item_firsts: each person's first answer to each question in each chat (what /analysis
  counts: later answers came after seeing the answer), one row per (chat, quiz, question,
  person): its option and whether it was right;
- item_options: how many first answers each option of each question got (the kinds not
  answered with one option count as option -1);
- item_responses: how many first answers of those kinds gave each canonical response (a
  multi's picks, a number, a text, an order: bot/core/grading.py), which the core reads as
  the picks per option and the most common answers;
- item_groups: per question, the people who answered it grouped by their first answers in the
  quiz: (answered, correct) there and right or wrong on this question. Discrimination is a
  correlation over people between right-here and their share right on the quiz's *other*
  questions, (correct - right) / (answered - 1): a sum over these groups gives it exactly.

Each application of the materializer inserts its chunk's answers into item_firsts (ON CONFLICT
DO NOTHING: only a first answer is new), then, for each person with a new first answer in a
quiz, moves their older questions' rows from their old (answered, correct) group to the new
one and adds the new questions' (apply_chunk). Inserting an answer that is already counted
changes nothing, so a chunk applied after a recount (a migration's, a chat's move) is never
counted twice. Rightness is the answer's as scored when it was given; the option counts
follow the pack's current key (bot/core/item_stats.py).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from bot.core.ports import ItemFigures, ItemGroup
from bot.storage.sql import Sql

# (chat, quiz, question, answered, correct, right) -> people to add
GroupDelta = Counter[tuple[str, str, str, int, int, int]]
# (chat, quiz, question, option) -> first answers to add
OptionDelta = Counter[tuple[str, str, str, int]]
# (chat, quiz, question, response) -> first answers to add
ResponseDelta = Counter[tuple[str, str, str, str]]
# (chat, quiz, person, question, right)
First = tuple[str, str, str, str, int]

INSERT_FIRSTS = (
    "INSERT INTO item_firsts(chat_key, quiz_id, question_id, person_key, option, correct,"
    " response) SELECT chat_key, quiz_id, question_id, person_key, option,"
    " CASE WHEN correct THEN 1 ELSE 0 END, response FROM answers WHERE {where}"
    " ORDER BY {order} ON CONFLICT DO NOTHING"
    " RETURNING chat_key, quiz_id, person_key, question_id, option, response"
)
TOUCHED = (  # every first answer, in the quiz, of each person the chunk answered for
    "SELECT chat_key, quiz_id, person_key, question_id, correct FROM item_firsts"
    " WHERE (chat_key, quiz_id, person_key) IN"
    " (SELECT chat_key, quiz_id, person_key FROM answers WHERE {where})"
)
GROUP_KEY = "chat_key, quiz_id, question_id, answered, correct, item_right"
OPTION_KEY = "chat_key, quiz_id, question_id, option"
RESPONSE_KEY = "chat_key, quiz_id, question_id, response"
TYPED = {  # each table's columns with their types (Sql.upsert)
    "item_options": "chat_key text, quiz_id text, question_id text, option integer,"
                    " people integer",
    "item_responses": "chat_key text, quiz_id text, question_id text, response text,"
                      " people integer",
    "item_groups": "chat_key text, quiz_id text, question_id text, answered integer,"
                   " correct integer, item_right integer, people integer",
}
# recounted from the answers (a chat's move; the migration does it for every chat)
RECOUNT_FIRSTS = (
    "INSERT INTO item_firsts(chat_key, quiz_id, question_id, person_key, option, correct,"
    " response) SELECT a.chat_key, a.quiz_id, a.question_id, a.person_key, a.option,"
    " CASE WHEN a.correct THEN 1 ELSE 0 END, a.response FROM answers AS a"
    " JOIN (SELECT min(id) AS id FROM answers WHERE chat_key = $1"
    " GROUP BY person_key, quiz_id, question_id) AS f ON f.id = a.id"
)
RECOUNT_OPTIONS = (
    "INSERT INTO item_options(chat_key, quiz_id, question_id, option, people)"
    " SELECT chat_key, quiz_id, question_id, option, count(*) FROM item_firsts"
    " WHERE chat_key = $1 GROUP BY chat_key, quiz_id, question_id, option"
)
RECOUNT_RESPONSES = (
    "INSERT INTO item_responses(chat_key, quiz_id, question_id, response, people)"
    " SELECT chat_key, quiz_id, question_id, response, count(*) FROM item_firsts"
    " WHERE chat_key = $1 AND response IS NOT NULL"
    " GROUP BY chat_key, quiz_id, question_id, response"
)
RECOUNT_GROUPS = (
    "INSERT INTO item_groups(chat_key, quiz_id, question_id, answered, correct, item_right,"
    " people) SELECT chat_key, quiz_id, question_id, answered, right_in_quiz, correct, count(*)"
    " FROM (SELECT chat_key, quiz_id, question_id, correct,"
    " count(*) OVER (PARTITION BY quiz_id, person_key) AS answered,"
    " sum(correct) OVER (PARTITION BY quiz_id, person_key) AS right_in_quiz"
    " FROM item_firsts WHERE chat_key = $1) AS f"
    " GROUP BY chat_key, quiz_id, question_id, answered, right_in_quiz, correct"
)
TABLES = ("item_firsts", "item_options", "item_groups", "item_responses")


def group_deltas(firsts: Iterable[First], new: set[tuple[str, str, str, str]]
                 ) -> GroupDelta:
    """How item_groups changes when the `new` (chat, quiz, person, question) first answers
    join `firsts` (every first answer of the people concerned, the new ones included): each
    person's older questions move from their old (answered, correct) to the new one."""
    people: dict[tuple[str, str, str], list[tuple[str, int]]] = defaultdict(list)
    for chat, quiz, person, question, right in firsts:
        people[(chat, quiz, person)].append((question, int(right)))
    delta: GroupDelta = Counter()
    for (chat, quiz, person), rows in people.items():
        added = [(q, r) for q, r in rows if (chat, quiz, person, q) in new]
        if not added:
            continue
        answered, correct = len(rows), sum(r for _, r in rows)
        before = (answered - len(added), correct - sum(r for _, r in added))
        for question, right in rows:
            if (chat, quiz, person, question) not in new:
                delta[(chat, quiz, question, *before, right)] -= 1
            delta[(chat, quiz, question, answered, correct, right)] += 1
    return delta


def figures_of(
    firsts: Iterable[tuple[str, str, str, int, bool, str | None]],
) -> ItemFigures:
    """The figures of (quiz, question, person, option, right, response) first answers (what
    the contract suite recounts them as)."""
    options: Counter[tuple[str, str, int]] = Counter()
    responses: Counter[tuple[str, str, str]] = Counter()
    people: dict[tuple[str, str], list[tuple[str, int]]] = defaultdict(list)
    for quiz, question, person, option, right, response in firsts:
        options[(quiz, question, option)] += 1
        if response is not None:
            responses[(quiz, question, response)] += 1
        people[(quiz, person)].append((question, int(right)))
    groups: Counter[tuple[str, str, int, int, int]] = Counter()
    for (quiz, _person), rows in people.items():
        correct = sum(r for _, r in rows)
        for question, scored in rows:
            groups[(quiz, question, len(rows), correct, scored)] += 1
    return ItemFigures(tuple((*k, n) for k, n in sorted(options.items())),
                       tuple(ItemGroup(*k, n) for k, n in sorted(groups.items())),
                       tuple((*k, n) for k, n in sorted(responses.items())))


async def _add(db: Sql, table: str, key: str, delta: Counter[Any]) -> None:
    """Add `delta` (key -> people) to `table` in one upsert; rows left with no one
    go."""
    rows = [(*k, n) for k, n in sorted(delta.items()) if n]
    await db.upsert(table, TYPED[table], rows, key,
                    f"people = {table}.people + excluded.people")
    for chat, quiz in sorted({(r[0], r[1]) for r in rows if r[-1] < 0}):
        await db.run(f"DELETE FROM {table} WHERE chat_key = $1 AND quiz_id = $2"
                     " AND people <= 0", chat, quiz)


async def apply_chunk(db: Sql, where: str, order: str, *args: object) -> None:
    """Add the answers `where` selects (a materializer's chunk, its arguments `args`, in
    `order`) to the figures, inside the caller's transaction."""
    added = await db.rows(INSERT_FIRSTS.format(where=where, order=order), *args)
    if not added:
        return
    options: OptionDelta = Counter((r[0], r[1], r[3], int(r[4])) for r in added)
    responses: ResponseDelta = Counter(
        (r[0], r[1], r[3], r[5]) for r in added if r[5] is not None)
    new = {(r[0], r[1], r[2], r[3]) for r in added}
    touched = await db.rows(TOUCHED.format(where=where), *args)
    await _add(db, "item_options", OPTION_KEY, options)
    if responses:
        await _add(db, "item_responses", RESPONSE_KEY, responses)
    await _add(db, "item_groups", GROUP_KEY, group_deltas(
        ((r[0], r[1], r[2], r[3], int(r[4])) for r in touched), new))


async def recount(db: Sql, chat_key: str) -> None:
    """Count a chat's figures again from its answers (a chat's move)."""
    for table in TABLES:
        await db.run(f"DELETE FROM {table} WHERE chat_key = $1", chat_key)
    for sql in (RECOUNT_FIRSTS, RECOUNT_OPTIONS, RECOUNT_GROUPS, RECOUNT_RESPONSES):
        await db.run(sql, chat_key)


async def forget_person(db: Sql, person_key: str) -> None:
    """Take a person's first answers out of every chat's figures (their deletion)."""
    rows = await db.rows(
        "SELECT chat_key, quiz_id, person_key, question_id, correct, option, response"
        " FROM item_firsts WHERE person_key = $1", person_key)
    if not rows:
        return
    groups: GroupDelta = Counter()
    people: dict[tuple[str, str], list[tuple[str, int]]] = defaultdict(list)
    for r in rows:
        people[(r[0], r[1])].append((r[3], int(r[4])))
    for (chat, quiz), answered in people.items():
        correct = sum(right for _, right in answered)
        for question, right in answered:
            groups[(chat, quiz, question, len(answered), correct, right)] -= 1
    options: OptionDelta = Counter()
    for r in rows:
        options[(r[0], r[1], r[3], int(r[5]))] -= 1
    responses: ResponseDelta = Counter(
        (r[0], r[1], r[3], r[6]) for r in rows if r[6] is not None)
    for key in responses:
        responses[key] = -responses[key]
    await _add(db, "item_options", OPTION_KEY, options)
    await _add(db, "item_groups", GROUP_KEY, groups)
    if responses:
        await _add(db, "item_responses", RESPONSE_KEY, responses)
    await db.run("DELETE FROM item_firsts WHERE person_key = $1", person_key)


async def item_quizzes(db: Sql, chat_key: str) -> list[str]:
    rows = await db.rows("SELECT DISTINCT quiz_id FROM item_options WHERE chat_key = $1"
                         " AND people > 0 ORDER BY quiz_id", chat_key)
    return [r[0] for r in rows]


async def item_figures(db: Sql, chat_key: str, quiz_id: str | None = None) -> ItemFigures:
    where, args = ("chat_key = $1", [chat_key]) if quiz_id is None else (
        "chat_key = $1 AND quiz_id = $2", [chat_key, quiz_id])
    options = await db.rows(
        f"SELECT quiz_id, question_id, option, people FROM item_options WHERE {where}"
        " AND people > 0 ORDER BY quiz_id, question_id, option", *args)
    groups = await db.rows(
        "SELECT quiz_id, question_id, answered, correct, item_right, people FROM item_groups"
        f" WHERE {where} AND people > 0"
        " ORDER BY quiz_id, question_id, answered, correct, item_right", *args)
    responses = await db.rows(
        f"SELECT quiz_id, question_id, response, people FROM item_responses WHERE {where}"
        " AND people > 0 ORDER BY quiz_id, question_id, response", *args)
    return ItemFigures(
        tuple((r[0], r[1], int(r[2]), int(r[3])) for r in options),
        tuple(ItemGroup(r[0], r[1], int(r[2]), int(r[3]), int(r[4]), int(r[5]))
              for r in groups),
        tuple((r[0], r[1], r[2], int(r[3])) for r in responses))

