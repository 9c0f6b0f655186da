"""Leases: claims shared by every process on the database, on both backends."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.content import Catalog
from bot.core.models import Chat
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.ports import FakePort
from tests.storage_contract.backends import Backend

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
LATER = NOW + timedelta(seconds=30)


async def test_one_holder_at_a_time_until_it_expires_or_is_released(backend: Backend) -> None:
    a, b = backend.store(), backend.store()
    await asyncio.gather(a.open(), b.open())
    try:
        taken = await asyncio.gather(*(s.take_lease("x", name, LATER, NOW)
                                       for s, name in ((a, "A"), (b, "B"))))
        assert sorted(taken) == [False, True]
        winner, loser = ("A", "B") if taken[0] else ("B", "A")
        store = a if taken[0] else b
        assert await store.take_lease("x", winner, LATER, NOW)  # its holder renews it
        assert not await b.take_lease("x", loser, LATER, NOW + timedelta(seconds=29))
        assert await b.take_lease("x", loser, LATER + timedelta(seconds=30), LATER)  # expired
        await b.release_lease("x", winner)  # only its holder releases it
        assert not await a.take_lease("x", winner, LATER + timedelta(seconds=1), LATER)
        await b.release_lease("x", loser)
        assert await a.take_lease("x", winner, LATER + timedelta(seconds=1), LATER)
    finally:
        await asyncio.gather(a.close(), b.close())


async def test_four_processes_asking_at_once_leave_one_question_open(
    backend: Backend, sample_catalog: Catalog
) -> None:
    """/quiz in one chat through four processes (webhooks behind a load balancer): the chat's
    lease serialises them across processes as the in-process lock does within one."""
    clock = FakeClock(NOW)
    stores = [backend.store() for _ in range(4)]
    await asyncio.gather(*(s.open() for s in stores))
    try:
        services = [QuizService(sample_catalog, s, clock) for s in stores]
        ports = [FakePort(clock=clock).attach(service) for service in services]
        chat = Chat("tg:-42", "Group")

        async def ask(service: QuizService) -> int:
            async with service.asking.quiz(chat, None) as question:
                await asyncio.sleep(0.01)  # showing it takes a moment
                return question.post_id

        asked = await asyncio.gather(*(ask(s) for s in services))
        open_posts = await stores[0].open_posts(chat.key, kind="quiz")
        assert len(set(asked)) == 4 and len(open_posts) == 1
        closed = [s.post_id for port in ports for s in port.closed]
        assert sorted(closed) == sorted(set(asked) - {open_posts[0].id})  # each summary once
    finally:
        await asyncio.gather(*(s.close() for s in stores))
