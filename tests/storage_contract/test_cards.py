"""Review cards as the dashboard reads them (person_cards, chat_cards) on every store equal
/review's replay of the same answers (bot/core/deck.py's Deck over review_answers), whatever
order the answers arrive and are applied in: several chats, shared and personal questions, an
answer committed late (answered before its card's last review, applied after it), a chat's
move and a person's deletion. On the databases the table itself is checked too
(Backend.check_cards: every column, and card_days against the cards)."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta

import pytest

from bot.core.deck import Deck
from bot.core.ports import AnswerRecord
from tests.storage_contract.backends import Backend, Store

DAY0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
CHATS = ("tg:-1", "tg:-2", "tg:-3")
PEOPLE = tuple(f"tg:{n}" for n in range(5))
QUESTIONS = ("s-0", "s-1", "s-2", "s-3")


async def answer(store: Store, chat: str, person: str, question: str, correct: bool,
                 when: datetime, personal: bool, elapsed_ms: int) -> None:
    post = await store.create_post(chat, "sample", question, (0, 1, 2), "en", when,
                                   owner_key=person if personal else None)
    await store.record_answer(AnswerRecord(post.id, person, 0 if correct else 1, correct,
                                           when, elapsed_ms, name=person.upper()))


async def expected(store: Store, chats: dict[tuple[str, str], str], person: str
                   ) -> list[tuple[str, str, str, datetime, float | None]]:
    """The person's cards as /review replays them, with the chat of each card's last
    answer (`chats`: the test's own record), the soonest due first."""
    deck = Deck()
    for a in await store.review_answers(person):
        deck.apply(a)
    return sorted(((quiz, question, chats[(person, question)], card.due, card.stability)
                   for (quiz, question), card in deck.cards.items()),
                  key=lambda c: (c[3], c[0], c[1]))


async def check(store: Store, last: dict[tuple[str, str], tuple[datetime, str]],
                today: date) -> None:
    await store.materialize()
    chats = {key: chat for key, (_, chat) in last.items()}
    per_chat: dict[str, list[datetime]] = {}
    for person in PEOPLE:
        cards = await store.person_cards(person)
        want = await expected(store, chats, person)
        assert [(c.quiz_id, c.question_id, c.chat_key, c.due, c.stability) for c in cards
                ] == want
        for _, _, chat, due, _ in want:
            per_chat.setdefault(chat, []).append(due)
    for chat in (*CHATS, "tg:-9"):
        dues = per_chat.get(chat, [])
        assert await store.chat_cards(chat, today) == (
            len(dues), sum(d.date() <= today for d in dues))


@pytest.mark.parametrize("seed", [1, 2])
async def test_kept_cards_are_the_replay_of_the_answers(
    backend: Backend, store: Store, seed: int
) -> None:
    rng = random.Random(seed)
    # (person, question) -> (answered_at, chat) of the card's last answer so far
    last: dict[tuple[str, str], tuple[datetime, str]] = {}
    moments = rng.sample(range(60 * 24 * 40), 120)  # distinct minutes over 40 days
    for n, minute in enumerate(moments):
        when = DAY0 + timedelta(minutes=minute)
        person, question, chat = rng.choice(PEOPLE), rng.choice(QUESTIONS), rng.choice(CHATS)
        await answer(store, chat, person, question, rng.random() < 0.6, when,
                     rng.random() < 0.4, rng.choice((4000, 30_000, 90_000)))
        if last.get((person, question), (when,))[0] <= when:
            last[(person, question)] = (when, chat)
        if n % 17 == 16:  # applied now: the later answers of an earlier minute come late
            await store.materialize()
    today = (DAY0 + timedelta(days=20)).date()
    await check(store, last, today)
    await backend.check_aggregates()

    assert await store.migrate_chat("tg:-1", "tg:-4")
    last = {key: (when, "tg:-4" if chat == "tg:-1" else chat)
            for key, (when, chat) in last.items()}
    assert await store.delete_person("tg:2")
    last = {key: value for key, value in last.items() if key[0] != "tg:2"}
    late = DAY0 + timedelta(minutes=min(moments) - 1)  # before every card's last review
    for person in ("tg:1", "tg:3"):
        await answer(store, "tg:-4", person, "s-0", False, late, False, 5000)
        last.setdefault((person, "s-0"), (late, "tg:-4"))
    await check(store, last, today)
    assert await store.chat_cards("tg:-1", today) == (0, 0)
    assert await store.person_cards("tg:2") == []
    await backend.check_aggregates()


async def test_recent_answers_are_the_newest_first(store: Store) -> None:
    for n in range(5):
        await answer(store, "tg:-1", "tg:1", f"s-{n}", n % 2 == 0,
                     DAY0 + timedelta(minutes=10 - n), False, 1000)
    recent = await store.recent_answers("tg:1", 3)
    assert [a.question_id for a in recent] == ["s-0", "s-1", "s-2"]
    assert await store.recent_answers("tg:404", 3) == []


async def test_opening_replays_the_people_a_migration_left_pending(backend: Backend) -> None:
    """The migration marks every person with answers as pending (FSRS is not SQL); the next
    open replays them, and a later answer moves their cards from there."""
    async with backend.opened() as store:
        for n in range(6):
            await answer(store, CHATS[n % 2], PEOPLE[n % 3], QUESTIONS[n % 4], n % 3 != 0,
                         DAY0 + timedelta(hours=n), n % 2 == 0, 8000)
        await store.materialize()
        await backend.check_cards()
    for sql in ("DELETE FROM cards", "DELETE FROM card_days",
                "INSERT INTO cards_pending(person_key) SELECT DISTINCT person_key FROM answers"):
        await backend.fetch(sql)
    assert await backend.count("cards_pending") == 3
    async with backend.opened() as store:
        await backend.check_cards()
        await answer(store, "tg:-1", "tg:0", "s-0", True, DAY0 + timedelta(days=3), False,
                     1000)
        await store.materialize()
        await backend.check_aggregates()


async def test_moving_many_cards_gives_the_event_loop_turns(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FSRS is Python: on PostgreSQL the materializer shares the event loop with the
    answers, so a chunk's cards are moved in slices with a turn for the loop between them
    (Sql.breathe; nothing on SQLite, whose materializer has a thread of its own)."""
    from bot.storage import cards
    from bot.storage.postgres.sql import PgSql
    from bot.storage.sqlite.sql import SqliteSql

    turns = [0]

    async def breathe(self: object) -> None:
        turns[0] += 1

    monkeypatch.setattr(SqliteSql, "breathe", breathe)
    monkeypatch.setattr(PgSql, "breathe", breathe)
    people = 4 * cards.SLICE
    for n in range(people):
        await answer(store, "tg:-1", f"tg:{100 + n}", "s-0", True, DAY0, False, 5000)
    await store.materialize()
    assert turns[0] >= people // cards.SLICE - 1
