"""Review cards kept by the materializer, for the dashboard (its overview, a person's page) and
the Mini App's /progress, so those read a person's cards (an index range) instead of replaying
every answer of theirs through FSRS. Written once for both databases, like day_runs.py; no
trigger.

- cards: one row per person and question, the FSRS state the person's answers give it with
  the rules of bot/core/deck.py (the same function as /review's replay, fuzzing off, with
  the person's fitted parameters where they have some: fsrs_params.py, whose refit replays
  the person's cards in the same transaction): due,
  stability, difficulty, state and step, the last review, and how many answers (reps) and
  lapses moved it; and chat_key, the chat of the answer that last moved it. **A chat's cards
  are the cards last answered in it**: a person's card lives in one chat at a time, the one
  where they last met the question.
- card_days: per chat and UTC due day, how many of its cards fall due that day, moved -1 and
  +1 as a card's due day or chat changes (rows at 0 go). The overview's "open" (every card of
  the chat) and "due today" (those due by the end of the UTC day) are a range of a chat's
  days, however many cards it has.

Each application of the materializer moves the cards its chunk's answers touch, in the order
of their answers (answered_at, id, as review.py replays them). An answer committed late, with
an answered_at not after its card's last review (another process's transaction that ended
late), cannot be appended: that one card is replayed from its answers. A replay reads every
answer of the card that is visible, even those the materializer has not reached yet; applying
those later replays the card again, to the same state, so nothing counts twice.

A chat's move gives its cards the chat of their last answer again (recount); a person's
deletion takes their cards out (forget_person). The migration that made these tables marks
every person with answers as pending (cards_pending); opening the storage replays them, a few
hundred people per transaction (count_pending), so the tables hold every card before the
first page is read.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from fsrs import Card, State
from fsrs import Scheduler as Fsrs

from bot.core.deck import FSRS, lapsed, moved, scheduler
from bot.core.ports import CardRecord, ReviewAnswer
from bot.storage import fsrs_params
from bot.storage.sql import Row, Sql

Key = tuple[str, str, str]  # person, quiz, question
SLICE = 32  # cards moved between two chances for the event loop to run others (~1 ms)
DayDelta = Counter[tuple[str, date]]  # (chat, UTC due day) -> cards to add

COLUMNS = ("person_key, quiz_id, question_id, chat_key, due, stability, difficulty, state,"
           " step, last_review, reps, lapses")
TYPED = ("person_key text, quiz_id text, question_id text, chat_key text, due timestamptz,"
         " stability double precision, difficulty double precision, state integer,"
         " step integer, last_review timestamptz, reps integer, lapses integer")
CHUNK = (  # a chunk's answers with what rates them (the post was the person's own)
    "SELECT a.id, a.person_key, a.quiz_id, a.question_id, a.chat_key, a.correct,"
    " a.answered_at, a.elapsed_ms, p.owner_key IS NOT NULL, a.confidence FROM (SELECT id,"
    " post_id, person_key, quiz_id, question_id, chat_key, correct, answered_at, elapsed_ms,"
    " confidence FROM answers WHERE {where}) AS a JOIN posts AS p ON p.id = a.post_id"
)
STORED = (
    f"SELECT {COLUMNS} FROM cards WHERE (person_key, quiz_id, question_id) IN"
    " (SELECT person_key, quiz_id, question_id FROM answers WHERE {where})"
)
ANSWERS = (  # a person's answers (to one question), as review.py's replay reads them
    "SELECT a.id, a.person_key, a.quiz_id, a.question_id, a.chat_key, a.correct,"
    " a.answered_at, a.elapsed_ms, p.owner_key IS NOT NULL, a.confidence FROM answers AS a"
    " JOIN posts AS p ON p.id = a.post_id WHERE a.person_key = $1{question}"
    " ORDER BY a.answered_at, a.id"
)
PENDING_PEOPLE = 200  # people replayed in one transaction at open
_unbreathed = [0]  # cards moved since the event loop last had a turn
REPLAY_SLICE = 512  # answers replayed between two turns for the event loop (~20 ms)


@dataclass(frozen=True, slots=True)
class Kept:
    """A card as the table keeps it."""

    chat_key: str
    card: Card
    reps: int
    lapses: int

    @property
    def day(self) -> date:
        return self.card.due.astimezone(UTC).date()


def step(kept: Kept | None, chat_key: str, answer: ReviewAnswer, fsrs: Fsrs = FSRS) -> Kept:
    """The card after one more answer (in `chat_key`), scheduled by the person's `fsrs`."""
    card = None if kept is None else kept.card
    return Kept(chat_key, moved(card, answer, fsrs=fsrs),
                1 + (0 if kept is None else kept.reps),
                int(lapsed(card, answer)) + (0 if kept is None else kept.lapses))


def _answer(db: Sql, r: Row) -> tuple[Key, str, ReviewAnswer]:
    return ((r[1], r[2], r[3]), r[4],
            ReviewAnswer(r[2], r[3], bool(r[5]), db.at(r[6]), int(r[7]), bool(r[8]),
                         None if r[9] is None else int(r[9])))


def _kept(db: Sql, r: Row) -> tuple[Key, Kept]:
    card = Card(card_id=1, state=State(int(r[7])), step=None if r[8] is None else int(r[8]),
                stability=None if r[5] is None else float(r[5]),
                difficulty=None if r[6] is None else float(r[6]),
                due=db.at(r[4]), last_review=db.at(r[9]))
    return (r[0], r[1], r[2]), Kept(r[3], card, int(r[10]), int(r[11]))


async def _replay(db: Sql, person_key: str, question: tuple[str, str] | None = None
                  ) -> dict[Key, Kept]:
    clause, args = ("", ()) if question is None else (
        " AND a.quiz_id = $2 AND a.question_id = $3", question)
    rows = await db.rows(ANSWERS.format(question=clause), person_key, *args)
    fsrs = scheduler(await fsrs_params.person_parameters(db, person_key))
    cards: dict[Key, Kept] = {}
    for n, r in enumerate(rows):
        if n % REPLAY_SLICE == REPLAY_SLICE - 1:  # a refit replays every answer of theirs
            await db.breathe()
        key, chat, answer = _answer(db, r)
        cards[key] = step(cards.get(key), chat, answer, fsrs)
    return cards


async def apply_chunk(db: Sql, where: str, order: str, *args: Any) -> None:
    """Move the cards the answers `where` selects (a materializer's chunk, its arguments
    `args`) touch, inside the caller's transaction. `order` (the chunk's) is not needed: each
    card's answers are taken in replay order."""
    rows = await db.rows(CHUNK.format(where=where), *args)
    if not rows:
        return
    touched: dict[Key, list[tuple[datetime, int, str, ReviewAnswer]]] = defaultdict(list)
    for r in rows:
        key, chat, answer = _answer(db, r)
        touched[key].append((answer.answered_at, int(r[0]), chat, answer))
    before = dict(_kept(db, r) for r in await db.rows(STORED.format(where=where), *args))
    fitted = await fsrs_params.chunk_parameters(db, where, *args)
    after: dict[Key, Kept | None] = {}
    for key, answers in touched.items():
        _unbreathed[0] += 1  # counted across chunks: a chunk may hold only a few cards
        if _unbreathed[0] >= SLICE:  # FSRS is Python: thousands of cards would hold the loop
            _unbreathed[0] = 0
            await db.breathe()
        answers.sort(key=lambda a: (a[0], a[1]))
        kept = before.get(key)
        last = None if kept is None else kept.card.last_review
        if last is not None and answers[0][0] <= last:  # committed late: replay the card
            after[key] = (await _replay(db, key[0], (key[1], key[2]))).get(key)
            continue
        fsrs = scheduler(fitted.get(key[0]))
        for _, _, chat, answer in answers:
            kept = step(kept, chat, answer, fsrs)
        after[key] = kept
    await _save(db, before, after)


async def _save(db: Sql, before: dict[Key, Kept], after: dict[Key, Kept | None]) -> None:
    """Write the cards of `after` (None: gone) over those of `before`, and move card_days."""
    days: DayDelta = Counter()
    for key, kept in after.items():
        old = before.get(key)
        if old is not None:
            days[(old.chat_key, old.day)] -= 1
        if kept is not None:
            days[(kept.chat_key, kept.day)] += 1
    rows = [(*key, kept.chat_key, db.when(kept.card.due), kept.card.stability,
             kept.card.difficulty, int(kept.card.state), kept.card.step,
             db.when(kept.card.last_review or kept.card.due), kept.reps, kept.lapses)
            for key, kept in sorted(after.items()) if kept is not None]
    await db.upsert(
        "cards", TYPED, rows, "person_key, quiz_id, question_id",
        ", ".join(f"{c} = excluded.{c}" for c in COLUMNS.split(", ")[3:]))
    for key in sorted(k for k, kept in after.items() if kept is None and k in before):
        await db.run("DELETE FROM cards WHERE person_key = $1 AND quiz_id = $2"
                     " AND question_id = $3", *key)
    await add_days(db, days)


async def add_days(db: Sql, days: DayDelta) -> None:
    """Add `days` to card_days; a row left at 0 goes."""
    rows = [(chat, db.day(day), n) for (chat, day), n in sorted(days.items()) if n]
    await db.upsert("card_days", "chat_key text, day date, cards integer", rows,
                    "chat_key, day", "cards = card_days.cards + excluded.cards")
    for chat, day, n in rows:
        if n < 0:
            await db.run("DELETE FROM card_days WHERE chat_key = $1 AND day = $2"
                         " AND cards <= 0", chat, day)


async def replay_person(db: Sql, person_key: str) -> None:
    """Write the person's cards as their answers give them (a pending person's)."""
    before = dict(_kept(db, r) for r in await db.rows(
        f"SELECT {COLUMNS} FROM cards WHERE person_key = $1", person_key))
    cards = await _replay(db, person_key)
    await _save(db, before, {key: cards.get(key) for key in {*before, *cards}})


async def count_pending(db: Sql) -> int:
    """Replay up to PENDING_PEOPLE pending people (the migration's), in the caller's
    transaction; how many. The materializer's position is held meanwhile (on PostgreSQL:
    no application interleaves)."""
    await db.value(f"SELECT name FROM materialized WHERE name = 'scores'{db.for_update}")
    people = [r[0] for r in await db.rows(
        "SELECT person_key FROM cards_pending ORDER BY person_key LIMIT $1", PENDING_PEOPLE)]
    for person in people:
        await replay_person(db, person)
        await db.run("DELETE FROM cards_pending WHERE person_key = $1", person)
    return len(people)


async def recount(db: Sql, chat_key: str) -> None:
    """A chat's move: its cards take the chat of their last answer again (the new chat's
    key), and its card_days are counted again from its cards."""
    await db.run(
        "UPDATE cards SET chat_key = COALESCE((SELECT a.chat_key FROM answers AS a"
        " WHERE a.person_key = cards.person_key AND a.quiz_id = cards.quiz_id"
        " AND a.question_id = cards.question_id ORDER BY a.answered_at DESC, a.id DESC"
        " LIMIT 1), chat_key) WHERE chat_key = $1", chat_key)
    await db.run("DELETE FROM card_days WHERE chat_key = $1", chat_key)
    days: DayDelta = Counter(
        (chat_key, db.at(r[0]).date())
        for r in await db.rows("SELECT due FROM cards WHERE chat_key = $1", chat_key))
    await add_days(db, days)


async def forget_person(db: Sql, person_key: str) -> None:
    """Take a person's cards out of their chats' counts, and delete them (their deletion)."""
    days: DayDelta = Counter()
    for chat, due in await db.rows(
            "SELECT chat_key, due FROM cards WHERE person_key = $1", person_key):
        days[(chat, db.at(due).date())] -= 1
    await add_days(db, days)
    await db.run("DELETE FROM cards WHERE person_key = $1", person_key)
    await db.run("DELETE FROM cards_pending WHERE person_key = $1", person_key)


# reads -------------------------------------------------------------------------------------
async def person_cards(db: Sql, person_key: str) -> list[CardRecord]:
    rows = await db.rows(
        "SELECT quiz_id, question_id, chat_key, due, stability FROM cards"
        " WHERE person_key = $1 ORDER BY due, quiz_id, question_id", person_key)
    return [CardRecord(r[0], r[1], r[2], db.at(r[3]), None if r[4] is None else float(r[4]))
            for r in rows]


async def chat_cards(db: Sql, chat_key: str, today: date) -> tuple[int, int]:
    row = await db.row(
        "SELECT sum(cards), sum(CASE WHEN day <= $2 THEN cards ELSE 0 END) FROM card_days"
        " WHERE chat_key = $1", chat_key, db.day(today))
    return (0, 0) if row is None else (int(row[0] or 0), int(row[1] or 0))
