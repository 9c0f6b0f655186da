"""The difficulty model's ratings as the materializers keep them (bot/storage/difficulty.py),
on every store: equal to the ratings recounted from the answers alone, in the order the
materializer applies them (bot/core/difficulty.py's Ratings), however the answers were cut
into applications; read back by ability and question_difficulties; rebuilt the same at open
when a migration left them pending; a person's deletion forgets their ability and first
answers."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.difficulty import Ratings
from bot.core.ports import AnswerRecord
from bot.storage import difficulty
from tests.storage_contract.backends import Backend, Store

DAY0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
CHATS = ("tg:-1", "tg:-2", "tg:1")
PEOPLE = tuple(f"tg:{n}" for n in range(1, 7))
QUESTIONS = (*(("sample", f"s-{n}") for n in range(5)), ("other", "o-0"))
TABLES = {
    "difficulty_people": "SELECT person_key, ability, answers FROM difficulty_people",
    "difficulty_questions": "SELECT quiz_id, question_id, difficulty, answers"
                            " FROM difficulty_questions",
    "difficulty_firsts": "SELECT person_key, quiz_id, question_id, seq, logit, correct"
                         " FROM difficulty_firsts",
}


async def answers(store: Store, rng: random.Random, count: int) -> None:
    for n in range(count):
        person, (quiz, question) = rng.choice(PEOPLE), rng.choice(QUESTIONS)
        when = DAY0 + timedelta(minutes=n)
        post = await store.create_post(rng.choice(CHATS), quiz, question, (0, 1, 2), "en", when)
        correct = rng.random() < 0.6
        await store.record_answer(AnswerRecord(post.id, person, 0 if correct else 1, correct,
                                               when, 5000, name=person.upper()))
        if n % 13 == 12:  # applied now and then: the chunks fall anywhere
            await store.materialize()


async def recounted(backend: Backend) -> dict[str, list[tuple[object, ...]]]:
    """The tables as the answers alone give them, in the materializer's order."""
    order = "id" if backend.name == "sqlite" else "tx, id"
    ratings = Ratings()
    for person, quiz, question, correct in await backend.fetch(
            f"SELECT person_key, quiz_id, question_id, correct FROM answers ORDER BY {order}"):
        ratings.answer(person, quiz, question, bool(correct))
    return {
        "difficulty_people": sorted((p, r.value, r.answers) for p, r in ratings.people.items()),
        "difficulty_questions": sorted((*q, r.value, r.answers)
                                       for q, r in ratings.questions.items()),
        "difficulty_firsts": sorted((*k, f.seq, f.logit, int(f.correct))
                                    for k, f in ratings.firsts.items()),
    }


async def kept(backend: Backend) -> dict[str, list[tuple[object, ...]]]:
    return {table: sorted(tuple(int(v) if isinstance(v, bool) else v for v in row)
                          for row in await backend.fetch(sql))
            for table, sql in TABLES.items()}


def same(got: dict[str, list[tuple[object, ...]]], want: dict[str, list[tuple[object, ...]]]
         ) -> None:
    """Equal, floats to 1e-9 (SQLite reads them back through JSON text)."""
    assert got.keys() == want.keys()
    for table in want:
        assert len(got[table]) == len(want[table]), table
        for a, b in zip(got[table], want[table], strict=True):
            assert a == pytest.approx(b, abs=1e-9), table


@pytest.mark.parametrize("seed", [1, 2])
async def test_kept_ratings_equal_a_recount_from_the_answers(
    backend: Backend, store: Store, seed: int
) -> None:
    await answers(store, random.Random(seed), 90)
    await store.materialize()
    want = await recounted(backend)
    same(await kept(backend), want)
    assert len(want["difficulty_firsts"]) < 90  # later answers to a question moved nothing
    # the reads give the same numbers
    person = PEOPLE[0]
    mine = await store.ability(person)
    row = next(r for r in want["difficulty_people"] if r[0] == person)
    assert mine.ability is not None and mine.ability.answers == row[2]
    assert mine.ability.value == pytest.approx(row[1], abs=1e-9)
    assert [first.seq for _, first in mine.firsts] == list(range(len(mine.firsts)))
    assert {key for key, _ in mine.firsts} == {
        (r[1], r[2]) for r in want["difficulty_firsts"] if r[0] == person}
    rated = await store.question_difficulties(["sample"])
    same({"q": sorted((*key, r.value, r.answers) for key, r in rated.items())},
         {"q": [r for r in want["difficulty_questions"] if r[0] == "sample"]})
    assert (await store.ability("tg:404")).ability is None


async def test_ratings_left_pending_by_the_migration_are_replayed_at_open(
    backend: Backend,
) -> None:
    async with backend.opened() as store:
        await answers(store, random.Random(3), 40)
        await store.materialize()
    want = await recounted(backend)
    # as the migration leaves a database that had answers: pending, nothing rated yet
    await backend.fetch("DELETE FROM difficulty_people")
    await backend.fetch("DELETE FROM difficulty_firsts")
    await backend.fetch("INSERT INTO difficulty_pending(id) VALUES (1)")
    async with backend.opened() as store:
        same(await kept(backend), want)
        assert await backend.count("difficulty_pending") == 0
        await answers(store, random.Random(4), 20)  # and the materializer goes on from there
        await store.materialize()
    same(await kept(backend), await recounted(backend))


async def test_the_replay_at_open_goes_in_bounded_chunks_and_resumes_after_a_stop(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with backend.opened() as store:
        await answers(store, random.Random(5), 60)
        await store.materialize()
    want = await recounted(backend)
    await backend.fetch("DELETE FROM difficulty_people")
    await backend.fetch("DELETE FROM difficulty_firsts")
    await backend.fetch("INSERT INTO difficulty_pending(id) VALUES (1)")
    monkeypatch.setattr(difficulty, "REPLAY_CHUNK", 7)
    chunks: list[int] = []
    apply = difficulty._apply

    async def stopped_at_the_fourth(*args: object) -> int:  # the process stops midway
        if len(chunks) == 3:
            raise RuntimeError("stopped")
        chunks.append(await apply(*args))  # type: ignore[arg-type]
        return chunks[-1]

    monkeypatch.setattr(difficulty, "_apply", stopped_at_the_fourth)
    with pytest.raises(RuntimeError, match="stopped"):
        async with backend.opened():
            pass
    assert chunks == [7, 7, 7]  # each chunk its own transaction, bounded
    assert await backend.count("difficulty_pending") == 1
    partial = await kept(backend)  # the three chunks' firsts, kept
    assert 0 < len(partial["difficulty_firsts"]) < len(want["difficulty_firsts"])
    resumed: list[int] = []

    async def counted(*args: object) -> int:
        resumed.append(await apply(*args))  # type: ignore[arg-type]
        return resumed[-1]

    monkeypatch.setattr(difficulty, "_apply", counted)
    async with backend.opened() as store:  # goes on after the 21st answer, not from nothing
        assert sum(resumed) == 60 - 21 and max(resumed) == 7
        same(await kept(backend), want)
        assert await backend.count("difficulty_pending") == 0
        await answers(store, random.Random(6), 10)
        await store.materialize()
    same(await kept(backend), await recounted(backend))


async def test_a_persons_deletion_forgets_their_ability(
    backend: Backend, store: Store
) -> None:
    await answers(store, random.Random(5), 60)
    await store.materialize()
    gone = PEOPLE[1]
    questions = (await kept(backend))["difficulty_questions"]
    assert await store.delete_person(gone)
    await store.materialize()
    left = await kept(backend)
    assert gone not in {r[0] for r in left["difficulty_people"]}
    assert gone not in {r[0] for r in left["difficulty_firsts"]}
    assert {r[0] for r in left["difficulty_people"]} == set(PEOPLE) - {gone}
    # a question's difficulty says nothing about who answered it: it stays as it was
    assert left["difficulty_questions"] == questions
    assert (await store.ability(gone)).ability is None
