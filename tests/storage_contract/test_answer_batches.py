"""Answers recorded at once (on PostgreSQL one batch, one statement: postgres/writer.py) each
get the outcome they would get alone: inserted, a duplicate naming the first answer (also one
from the same batch), closed, or an error for a post that does not exist, and only the answers
a post takes create or rename their person."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.core.ports import AnswerRecord
from tests.storage_contract.backends import Backend, Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def answer(post: int, person: str, option: int, name: str = "", *,
           at: datetime = NOW) -> AnswerRecord:
    return AnswerRecord(post, person, option, option == 0, at, 500, name=name)


async def test_answers_at_once_get_each_their_own_outcome(backend: Backend, store: Store) -> None:
    open_post = (await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)).id
    closed = (await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)).id
    await store.close_post(closed, NOW)
    timed = (await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW,
                                     closes_at=NOW + timedelta(seconds=30))).id
    assert (await store.record_answer(answer(open_post, "tg:1", 2, "Ada")))[0] == "inserted"
    await store.upsert_person("tg:5", "Old name")
    calls = [
        answer(open_post, "tg:2", 1, "Bea"),
        answer(open_post, "tg:2", 0, "Bea"),  # the same person again, in the same batch
        answer(open_post, "tg:1", 0, "Ada"),  # answered before this batch
        answer(closed, "tg:3", 0, "Cy"),
        answer(open_post + closed + timed, "tg:4", 0, "Di"),  # no such post
        answer(open_post, "tg:5", 1, "New name"),
        answer(timed, "tg:6", 1, "Ed", at=NOW + timedelta(seconds=29)),
        answer(timed, "tg:7", 1, "Flo", at=NOW + timedelta(seconds=30)),  # at its close
    ]
    results = await asyncio.gather(*(store.record_answer(a) for a in calls),
                                   return_exceptions=True)
    outcomes = [r[0] if isinstance(r, tuple) else r for r in results]
    assert outcomes[:4] == ["inserted", "duplicate", "duplicate", "closed"]
    assert isinstance(outcomes[4], LookupError)
    assert outcomes[5:] == ["inserted", "inserted", "closed"]
    earlier = [r[1] if isinstance(r, tuple) else None for r in results]
    assert earlier[1] is not None and earlier[1].option == 1  # Bea's first, in the batch
    assert earlier[2] is not None and earlier[2].option == 2  # Ada's, stored before
    assert await backend.count("answers") == 4
    assert (await store.answer_of(open_post, "tg:2")).option == 1  # type: ignore[union-attr]
    assert await store.person_name("tg:3") is None  # refused: no trace
    assert await store.person_name("tg:4") is None
    assert await store.person_name("tg:5") == "New name"
    assert await store.person_name("tg:6") == "Ed"
    assert await store.person_name("tg:7") is None
