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
pending (difficulty_pending); opening the storage replays them in order (count_pending), at
most REPLAY_CHUNK answers per transaction, so a large database's open holds neither the
writer nor the materializer's lock for long. How far it got is a row of `materialized`
(REPLAY): a process that stops midway leaves it, and the next open goes on from there.
Meanwhile the materializer leaves the ratings alone (the replay reaches its answers in their
order); the chunk that catches up with the materializer's position ends the replay.
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
REPLAY_CHUNK = 10_000  # answers replayed in one transaction at open (count_pending): ~0.3 s
REPLAY = "difficulty_replay"  # its row of `materialized`: the last answer replayed


async def apply_chunk(db: Sql, where: str, order: str, *args: Any) -> None:
    """Move the ratings through the answers `where` selects, in `order` (a materializer's
    chunk, its arguments `args`), inside the caller's transaction; nothing while the replay
    at open is under way (it reaches these answers itself, in order)."""
    if await db.value("SELECT count(*) FROM difficulty_pending"):
        return
    await _apply(db, where, order, *args)


async def _apply(db: Sql, where: str, order: str, *args: Any) -> int:
    """apply_chunk's work; how many answers it read."""
    answers = await db.rows(CHUNK.format(where=where, order=order), *args)
    if not answers:
        return 0
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
    return len(answers)


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


async def count_pending(db: Sql, limit: int | None = None) -> int:
    """If the migration left answers to replay: the next `limit` answers the materializer
    applied already (its position held meanwhile), in its order, the first chunk from
    nothing; how many answers that was (0: nothing left, call until then). In the caller's
    transaction."""
    if not await db.value("SELECT count(*) FROM difficulty_pending"):
        return 0
    limit = REPLAY_CHUNK if limit is None else limit
    if db.for_update:  # PostgreSQL's materializer orders answers by (tx, id)
        row = await db.row("SELECT tx, id FROM materialized WHERE name = 'scores' FOR UPDATE")
        upto: tuple[int, ...] = (int(row[0]), int(row[1])) if row else (0, 0)
        columns = order = "tx, id"
        within = "(tx, id) > ($1::xid8, $2::bigint) AND (tx, id) <= ($3::xid8, $4::bigint)"
        done = await db.row(f"SELECT tx, id FROM materialized WHERE name = '{REPLAY}'")
        start: tuple[int, ...] | None = None if done is None else (int(done[0]), int(done[1]))
        begun = "INSERT INTO materialized(name, tx, id) VALUES ($1, '0', 0)"
        moved = "UPDATE materialized SET tx = $2::xid8, id = $3 WHERE name = $1"
    else:
        upto = (int(await db.value(
            "SELECT position FROM materialized WHERE name = 'scores'") or 0),)
        columns = order = "id"
        within = "id > $1 AND id <= $2"
        done = await db.row(f"SELECT position FROM materialized WHERE name = '{REPLAY}'")
        start = None if done is None else (int(done[0]),)
        begun = "INSERT INTO materialized(name, position) VALUES ($1, 0)"
        moved = "UPDATE materialized SET position = $2 WHERE name = $1"
    if start is None:  # the first chunk: from nothing
        for table in ("difficulty_people", "difficulty_questions", "difficulty_firsts"):
            await db.run(f"DELETE FROM {table}")
        await db.run(begun, REPLAY)
        start = (0,) * len(upto)
    # the chunk's last answer: the limit-th after the last replayed, or the position
    last = await db.row(
        f"SELECT {columns} FROM answers WHERE {within} ORDER BY {order}"
        f" LIMIT 1 OFFSET {max(limit - 1, 0)}", *start, *upto)
    end = upto if last is None or tuple(int(v) for v in last) >= upto \
        else tuple(int(v) for v in last)
    replayed = await _apply(db, within, order, *start, *end)
    if end == upto:  # caught up with the materializer: it keeps the ratings from here
        await db.run(f"DELETE FROM materialized WHERE name = '{REPLAY}'")
        await db.run("DELETE FROM difficulty_pending")
    else:
        await db.run(moved, REPLAY, *end)
    return max(replayed, 1)


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
