"""The difficulty model's ratings (bot/core/difficulty.py), kept by the materializer for
choosing questions near a target success rate. Written once for both databases, like
cards.py; no trigger.

- difficulty_questions: each question's Elo difficulty and how many first answers made it
  (global: questions are shared content, whichever chat asked them);
- difficulty_people: each person's overall ability and first answers;
- difficulty_firsts: each person's first answer to each question as the model met it (their
  how-manieth, the logit predicted, right or not): it tells a first answer from a later
  one, and the core replays a person's concept abilities from it (concepts are the catalog's,
  which the storage does not hold).

Each application of the materializer moves the ratings through its chunk's answers in the
chunk's order (the materializer's: ids on SQLite, (tx, id) on PostgreSQL), so ratings
rebuilt from the answers in that order are the same numbers. A chat's move changes nothing
here (nothing is per chat). A person's deletion takes their ability and first answers out;
the questions' difficulties keep what those answers taught them, which says nothing about
the person. The migration that made these tables marks the answers stored before it as
pending (difficulty_pending); opening the storage replays them in order (count_pending).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.core.difficulty import First, Rating, Ratings
from bot.core.ports import AbilityRecord
from bot.storage.sql import Sql

CHUNK = ("SELECT person_key, quiz_id, question_id, correct FROM answers WHERE {where}"
         " ORDER BY {order}")
PEOPLE = ("SELECT person_key, ability, answers FROM difficulty_people WHERE person_key IN"
          " (SELECT person_key FROM answers WHERE {where})")
QUESTIONS = ("SELECT quiz_id, question_id, difficulty, answers FROM difficulty_questions"
             " WHERE (quiz_id, question_id) IN (SELECT quiz_id, question_id FROM answers"
             " WHERE {where})")
FIRSTS = ("SELECT person_key, quiz_id, question_id FROM difficulty_firsts"
          " WHERE (person_key, quiz_id, question_id) IN"
          " (SELECT person_key, quiz_id, question_id FROM answers WHERE {where})")
SEEN = First(-1, 0.0, False)  # a first answer already kept (only its presence matters)


async def apply_chunk(db: Sql, where: str, order: str, *args: Any) -> None:
    """Move the ratings through the answers `where` selects, in `order` (a materializer's
    chunk, its arguments `args`), inside the caller's transaction."""
    answers = await db.rows(CHUNK.format(where=where, order=order), *args)
    if not answers:
        return
    ratings = Ratings(
        {r[0]: Rating(float(r[1]), int(r[2]))
         for r in await db.rows(PEOPLE.format(where=where), *args)},
        {(r[0], r[1]): Rating(float(r[2]), int(r[3]))
         for r in await db.rows(QUESTIONS.format(where=where), *args)},
        {(r[0], r[1], r[2]): SEEN for r in await db.rows(FIRSTS.format(where=where), *args)})
    new: list[tuple[str, str, str]] = []
    for person, quiz, question, correct in answers:
        if ratings.answer(person, quiz, question, bool(correct)):
            new.append((person, quiz, question))
    await save(db, ratings, new)


async def save(db: Sql, ratings: Ratings, new: Sequence[tuple[str, str, str]]) -> None:
    """Write the ratings the `new` first answers moved, and those first answers."""
    people = sorted({key[0] for key in new})
    questions = sorted({(key[1], key[2]) for key in new})
    await db.upsert(
        "difficulty_people", "person_key text, ability double precision, answers integer",
        [(p, ratings.people[p].value, ratings.people[p].answers) for p in people],
        "person_key", "ability = excluded.ability, answers = excluded.answers")
    await db.upsert(
        "difficulty_questions",
        "quiz_id text, question_id text, difficulty double precision, answers integer",
        [(*q, ratings.questions[q].value, ratings.questions[q].answers) for q in questions],
        "quiz_id, question_id", "difficulty = excluded.difficulty, answers = excluded.answers")
    firsts = [(*key, ratings.firsts[key]) for key in sorted(new)]
    await db.upsert(
        "difficulty_firsts", "person_key text, quiz_id text, question_id text, seq integer,"
        " logit double precision, correct integer",
        [(p, quiz, q, f.seq, f.logit, int(f.correct)) for p, quiz, q, f in firsts],
        "person_key, quiz_id, question_id", "seq = excluded.seq")


async def count_pending(db: Sql) -> int:
    """If the migration left answers to replay: every answer the materializer applied
    already (its position held meanwhile), in its order, from nothing; how many first
    answers that was. In the caller's transaction."""
    if not await db.value("SELECT count(*) FROM difficulty_pending"):
        return 0
    if db.for_update:  # PostgreSQL's materializer orders answers by (tx, id)
        row = await db.row("SELECT tx, id FROM materialized WHERE name = 'scores' FOR UPDATE")
        upto, order = "(tx, id) <= ($1::xid8, $2::bigint)", "tx, id"
        args: tuple[Any, ...] = (int(row[0]), int(row[1])) if row else (0, 0)
    else:
        position = await db.value("SELECT position FROM materialized WHERE name = 'scores'")
        upto, order, args = "id <= $1", "id", (int(position or 0),)
    for table in ("difficulty_people", "difficulty_questions", "difficulty_firsts"):
        await db.run(f"DELETE FROM {table}")
    ratings = Ratings()
    new = [(r[0], r[1], r[2]) for r in await db.rows(CHUNK.format(where=upto, order=order),
                                                     *args)
           if ratings.answer(r[0], r[1], r[2], bool(r[3]))]
    await save(db, ratings, new)
    await db.run("DELETE FROM difficulty_pending")
    return len(new)


async def recount(db: Sql, chat_key: str) -> None:
    """A chat's move: nothing to do, no rating is per chat."""


async def forget_person(db: Sql, person_key: str) -> None:
    """Take a person's ability and first answers out (their deletion)."""
    await db.run("DELETE FROM difficulty_people WHERE person_key = $1", person_key)
    await db.run("DELETE FROM difficulty_firsts WHERE person_key = $1", person_key)


# reads -------------------------------------------------------------------------------------
async def ability(db: Sql, person_key: str) -> AbilityRecord:
    """A person's overall ability and first answers, as kept."""
    row = await db.row("SELECT ability, answers FROM difficulty_people WHERE person_key = $1",
                       person_key)
    firsts = await db.rows(
        "SELECT quiz_id, question_id, seq, logit, correct FROM difficulty_firsts"
        " WHERE person_key = $1 ORDER BY seq", person_key)
    return AbilityRecord(
        None if row is None else Rating(float(row[0]), int(row[1])),
        tuple(((r[0], r[1]), First(int(r[2]), float(r[3]), bool(r[4]))) for r in firsts))


async def question_difficulties(db: Sql, quiz_ids: Sequence[str]
                                ) -> dict[tuple[str, str], Rating]:
    """The kept difficulty of every rated question of these quizzes."""
    found: dict[tuple[str, str], Rating] = {}
    for quiz_id in quiz_ids:
        for r in await db.rows("SELECT question_id, difficulty, answers FROM"
                               " difficulty_questions WHERE quiz_id = $1", quiz_id):
            found[(quiz_id, r[0])] = Rating(float(r[1]), int(r[2]))
    return found
