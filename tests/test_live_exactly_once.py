"""Live and peer steps shown once (issue 38): each goes out through the durable deliveries.

A process killed after storing a step and before its send started leaves it unshown: the next
process's tick shows it (the question with its whole countdown again, as nobody saw it) and
does not close it unseen, and the podium counts it once. One killed while the send was on its
way (its send stored as started) is not shown again. A /next delivered twice with one key
(the platform's update or interaction id) moves a session or a peer round one step. Each
"kill" here is a QuizService dropped with its work half done and a new one started on the
same SQLite file (nothing in memory survives, as after kill -9); the kill -9 of a process
is tests/test_exactly_once_kill9.py's.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from bot.content import Catalog
from bot.core.delivery import SENT_STEP
from bot.core.live import SHOW_GRACE, Asked, Closed, LiveError, Podium, Revealed, shown_name
from bot.core.models import Chat, Person
from bot.core.peer import Revoting, Split
from bot.core.ports import AlreadyHandled, command_key
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from bot.storage import SqliteStorage
from tests.clock import FakeClock
from tests.test_live import LiveFakePort

pytestmark = pytest.mark.sqlite_only

GROUP = Chat("tg:-100", "Study group")
HOST, ADA, BO = (Person(f"tg:{i}", n) for i, n in enumerate(["Host", "Ada", "Bo"]))


def restarted(catalog: Catalog, storage: SqliteStorage, clock: FakeClock
              ) -> tuple[QuizService, LiveFakePort]:
    """A new process on the same database, its platform connected."""
    service = QuizService(catalog, storage, clock, random.Random(3))
    port = LiveFakePort(clock)
    port.attach(service)
    return service, port


async def hosted(service: QuizService, count: int = 2) -> None:
    await service.host(GROUP, HOST, "sample", count, allowed=True, seconds=20)
    for person in (ADA, BO):
        await service.live.join(GROUP.key, person)


async def test_a_question_stored_but_never_sent_is_shown_after_a_restart_and_counted_once(
    sample_catalog: Catalog, storage: SqliteStorage, service: QuizService, clock: FakeClock,
) -> None:
    await hosted(service, count=1)
    asked = await service.live_next(GROUP, HOST)  # stored; the process dies before the send
    assert isinstance(asked, Asked)
    clock.advance(60)  # long past its countdown before a process is back
    again, port = restarted(sample_catalog, storage, clock)
    scheduler = Scheduler(again)
    await scheduler.tick()  # seen unshown: left a moment to a process about to send it
    assert port.live == []
    record = await again.live.session(GROUP.key)
    assert record is not None and record.state == "open"  # not closed unseen
    clock.advance(SHOW_GRACE.total_seconds())
    await scheduler.tick()
    (shown,) = port.live
    assert isinstance(shown, Asked) and shown.question.post_id == asked.question.post_id
    assert shown.session.closes_at == clock.now() + timedelta(seconds=20)  # its whole time
    for _ in range(3):
        clock.advance(1)
        await scheduler.tick()
    assert len(port.live) == 1  # shown once
    q = shown.question
    assert (await again.live_answer(q.post_id, ADA, q.correct)).status == "accepted"
    clock.advance(20)
    await scheduler.tick()
    assert [type(e) for e in port.live] == [Asked, Revealed]
    podium = await again.live_next(GROUP, HOST)
    assert isinstance(podium, Podium) and podium.asked == 1
    assert [(s.name, s.right) for s in podium.top][:1] == [("Ada", 1)]
    record = await storage.get_live(podium.session.id)
    assert record is not None and len(record.steps) == 1


async def test_a_question_whose_send_had_started_is_not_sent_again(
    sample_catalog: Catalog, storage: SqliteStorage, service: QuizService, clock: FakeClock,
) -> None:
    await hosted(service)
    asked = await service.live_next(GROUP, HOST)
    assert isinstance(asked, Asked)
    # the send was stored as started, then the process died with the request in flight
    await storage.delivery_step_done(shown_name(asked.session), SENT_STEP, clock.now())
    again, port = restarted(sample_catalog, storage, clock)
    scheduler = Scheduler(again)
    for _ in range(3):
        clock.advance(SHOW_GRACE.total_seconds())
        await scheduler.tick()
    assert not any(isinstance(e, Asked) for e in port.live)
    clock.advance(20)
    await scheduler.tick()
    assert [type(e) for e in port.live] == [Revealed]  # it closed at its time


async def test_a_reveal_lost_with_its_process_is_shown_by_the_next(
    sample_catalog: Catalog, storage: SqliteStorage, service: QuizService, clock: FakeClock,
) -> None:
    await hosted(service)
    asked = await service.live_next(GROUP, HOST)
    assert isinstance(asked, Asked)
    await service.live.show(asked, nothing)
    await service.live_answer(asked.question.post_id, ADA, asked.question.correct)
    closed = await service.live_answer(asked.question.post_id, BO, asked.question.correct)
    assert closed.closed is not None  # everyone answered; the process dies before the reveal
    again, port = restarted(sample_catalog, storage, clock)
    scheduler = Scheduler(again)
    await scheduler.tick()
    clock.advance(SHOW_GRACE.total_seconds())
    await scheduler.tick()
    (revealed,) = port.live
    assert isinstance(revealed, Revealed) and revealed.summary.answered == 2
    await scheduler.tick()
    assert len(port.live) == 1


async def nothing(closed: Closed | None) -> None:
    """A send that reached its chat."""


async def test_a_redelivered_next_asks_one_question(
    service: QuizService, clock: FakeClock, storage: SqliteStorage,
) -> None:
    await hosted(service)
    with command_key("tg:1:501", clock.now()):
        assert isinstance(await service.live_next(GROUP, HOST), Asked)
    # refused as any /next while a question is open: nothing asked, nothing stored
    with command_key("tg:1:501", clock.now()), pytest.raises((AlreadyHandled, LiveError)):
        await service.live_next(GROUP, HOST)
    record = await service.live.session(GROUP.key)
    assert record is not None and len(record.steps) == 1 and record.state == "open"
    await service.live.skip(GROUP.key, HOST)  # closed: a /next now would ask the second
    with command_key("tg:1:501", clock.now()), pytest.raises(AlreadyHandled):
        await service.live_next(GROUP, HOST)
    record = await service.live.session(GROUP.key)
    assert record is not None and len(record.steps) == 1 and record.state == "shown"


async def test_a_redelivered_next_does_not_skip_the_discussion(
    sample_catalog: Catalog, service: QuizService, clock: FakeClock, storage: SqliteStorage,
) -> None:
    asked = await service.peer_round(GROUP, HOST, "sample", allowed=True)
    assert isinstance(asked, Asked)
    q = asked.question
    await service.live_answer(q.post_id, ADA, q.correct)
    await service.live_answer(q.post_id, BO, (q.correct + 1) % len(q.options))  # 50 %
    with command_key("dc:9001", clock.now()):
        assert isinstance(await service.live_next(GROUP, HOST), Split)
    for _ in range(2):  # delivered again, in this process or another one
        with command_key("dc:9001", clock.now()), pytest.raises(AlreadyHandled):
            await service.live_next(GROUP, HOST)
    again, _ = restarted(sample_catalog, storage, clock)
    with command_key("dc:9001", clock.now()), pytest.raises(AlreadyHandled):
        await again.live_next(GROUP, HOST)
    record = await service.live.session(GROUP.key)
    assert record is not None and record.state == "discuss"
    with command_key("dc:9002", clock.now()):  # the host's next /next: the revote
        assert isinstance(await service.live_next(GROUP, HOST), Revoting)


async def test_a_discussion_lost_with_its_process_is_shown_by_the_next(
    sample_catalog: Catalog, service: QuizService, clock: FakeClock, storage: SqliteStorage,
) -> None:
    asked = await service.peer_round(GROUP, HOST, "sample", allowed=True)
    assert isinstance(asked, Asked)
    await service.live.show(asked, nothing)
    q = asked.question
    await service.live_answer(q.post_id, ADA, q.correct)
    await service.live_answer(q.post_id, BO, (q.correct + 1) % len(q.options))
    assert isinstance(await service.live_next(GROUP, HOST), Split)  # then the process dies
    again, port = restarted(sample_catalog, storage, clock)
    scheduler = Scheduler(again)
    await scheduler.tick()
    clock.advance(SHOW_GRACE.total_seconds())
    await scheduler.tick()
    (split,) = port.live
    assert isinstance(split, Split) and split.voted == 2
    assert split.until == timedelta(minutes=2) - SHOW_GRACE  # what is left of it
    clock.advance(121)
    await scheduler.tick()
    assert [type(e) for e in port.live] == [Split, Revoting]
