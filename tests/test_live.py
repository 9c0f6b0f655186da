"""Live sessions in the core, with no platform (live.py, peer.py): who hosts, joins and
answers; when a question closes; pause, skip, podium, teams, speed points; a restart
mid-countdown; the countdown's edit rate; a member's /quiz refused; peer rounds."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest

from bot.content import Catalog
from bot.core.analysis_text import analysis_blocks
from bot.core.errors import BadCount, NotAllowed, UnknownQuiz
from bot.core.live import (
    Asked,
    Closed,
    Countdown,
    LiveError,
    Lobby,
    Podium,
    Revealed,
    points,
)
from bot.core.models import Chat, Person, ShownQuestion
from bot.core.peer import PeerResult, Revoting, Split
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from bot.i18n import translator
from tests.clock import FakeClock
from tests.ports import FakePort
from tests.sqlite_in_loop import LoopStorage

pytestmark = pytest.mark.memory_store

GROUP = Chat("tg:-100", "Study group")
HOST, ADA, BO, CY = (Person(f"tg:{i}", n) for i, n in enumerate(["Host", "Ada", "Bo", "Cy"]))


class LiveFakePort(FakePort):
    """A FakePort that also shows live sessions (LivePort): a record of each call."""

    countdown_every = timedelta(seconds=5)

    def __init__(self, clock: FakeClock) -> None:
        super().__init__("tg:", clock)
        self.live: list[object] = []
        self.countdowns: list[Countdown] = []
        self.closes: list[Closed | None] = []  # the question message each step closed

    async def live_event(self, event: object) -> None:
        """As an adapter shows a step: through the durable deliveries (live.py `show`)."""
        async def record(closed: Closed | None) -> None:
            self.live.append(event)
            self.closes.append(closed)

        if self.service is None or getattr(event, "session", None) is None:
            self.live.append(event)
            return
        await self.service.live.show(event, record)

    async def live_countdown(self, countdown: Countdown) -> None:
        self.countdowns.append(countdown)


@pytest.fixture
def port(service: QuizService, clock: FakeClock) -> LiveFakePort:
    port = LiveFakePort(clock)
    port.attach(service)
    return port


async def lobby(
    service: QuizService, *players: Person, count: int = 3, **options: Any
) -> Lobby:
    opened = await service.host(GROUP, HOST, "sample", count, allowed=True, **options)
    for p in players:
        opened = await service.live.join(GROUP.key, p)
    return opened


async def ask(service: QuizService) -> ShownQuestion:
    """/next, shown as an adapter shows it (live.py `show`)."""
    asked = await service.live_next(GROUP, HOST)
    assert isinstance(asked, Asked)
    await service.live.show(asked, nothing)
    return asked.question


async def nothing(closed: Closed | None) -> None:
    """A send that reached its chat."""


def wrong(q: ShownQuestion) -> int:
    return (q.correct + 1) % len(q.options)


async def test_a_full_session_join_questions_pause_skip_podium(
    service: QuizService, port: LiveFakePort, clock: FakeClock
) -> None:
    opened = await lobby(service, ADA, BO, CY)
    assert opened.session.state == "lobby" and opened.joined == 3
    # question 1: everyone answers, so it closes at once
    q1 = await ask(service)
    assert (q1.number, q1.total) == (1, 3)
    assert q1.closes_at == clock.now() + timedelta(seconds=30)
    clock.advance(2)
    assert (await service.live_answer(q1.post_id, ADA, q1.correct)).points == 1000
    clock.advance(1)
    await service.live_answer(q1.post_id, BO, q1.correct)
    last = await service.live_answer(q1.post_id, CY, wrong(q1))
    assert last.closed is not None and last.closed.summary.answered == 3
    assert last.closed.summary.right == 2 and last.closed.summary.question.explanation
    # question 2: paused for a minute, the countdown keeps its 20 s, then closes at zero
    q2 = await ask(service)
    clock.advance(10)
    paused = await service.live.pause(GROUP.key, HOST)
    assert paused.remaining_ms == 20_000
    assert (await service.live_answer(q2.post_id, ADA, q2.correct)).status == "closed"
    clock.advance(60)
    await Scheduler(service).tick()
    assert port.live == []  # paused: nothing closed
    resumed = await service.live.pause(GROUP.key, HOST)
    assert resumed.remaining_ms is None
    assert resumed.session.closes_at == clock.now() + timedelta(seconds=20)
    await service.live_answer(q2.post_id, ADA, q2.correct)
    clock.advance(21)
    await Scheduler(service).tick()
    (closed,) = port.live
    assert isinstance(closed, Revealed) and closed.summary.answered == 1
    assert not closed.last
    # question 3: skipped, it counts for nobody
    q3 = await ask(service)
    await service.live_answer(q3.post_id, BO, q3.correct)
    skipped = await service.live.skip(GROUP.key, HOST)
    assert skipped.skipped and skipped.last
    podium = await service.live_next(GROUP, HOST)
    assert isinstance(podium, Podium) and podium.asked == 2
    assert [(s.rank, s.name, s.score, s.right) for s in podium.standings] == [
        (1, "Ada", 2000, 2), (2, "Bo", 1000, 1), (3, "Cy", 0, 0)]
    assert podium.standings[0].time_ms == 2_000 + 10_000  # the pause is not counted
    assert [s.name for s in podium.top] == ["Ada", "Bo", "Cy"]
    assert await service.live.session(GROUP.key) is None
    with pytest.raises(LiveError):
        await service.live_next(GROUP, HOST)  # over


async def test_only_admins_host_and_only_the_host_paces(service: QuizService) -> None:
    with pytest.raises(NotAllowed):
        await service.host(GROUP, ADA, "sample", allowed=False)
    with pytest.raises(LiveError):
        await service.host(Chat(ADA.key, "Ada", is_private=True), ADA, allowed=True)
    with pytest.raises(UnknownQuiz):
        await service.host(GROUP, HOST, "no-such-quiz", allowed=True)
    await lobby(service, ADA)
    for step in (service.live_next(GROUP, ADA), service.live.pause(GROUP.key, ADA),
                 service.live.skip(GROUP.key, ADA), service.live.end(GROUP.key, ADA)):
        with pytest.raises(NotAllowed):
            await step
    # the host left: another admin takes over with /host
    taken = await service.host(GROUP, BO, allowed=True)
    assert taken.took_over and taken.session.host_key == BO.key
    with pytest.raises(NotAllowed):
        await service.live_next(GROUP, HOST)
    assert isinstance(await service.live_next(GROUP, BO), Asked)


async def test_bad_options_change_nothing(service: QuizService) -> None:
    for options in ({"teams": 7}, {"teams": "x"}, {"seconds": 2}, {"seconds": "soon"}):
        with pytest.raises(LiveError):
            await lobby(service, **options)
    with pytest.raises(BadCount):
        await lobby(service, count=0)
    assert await service.live.session(GROUP.key) is None


async def test_only_joined_people_answer_once(service: QuizService) -> None:
    await lobby(service, ADA, BO)
    q = await ask(service)
    with pytest.raises(LiveError):
        await service.live_answer(q.post_id, CY, q.correct)
    assert (await service.live_answer(q.post_id, ADA, wrong(q))).status == "accepted"
    again = await service.live_answer(q.post_id, ADA, q.correct)
    assert again.status == "duplicate" and not again.correct
    with pytest.raises(LiveError):
        await service.live_next(GROUP, HOST)  # still open: Bo has not answered


async def test_speed_points_follow_the_formula(service: QuizService, clock: FakeClock) -> None:
    assert points(True, 0, 20, True) == 1000
    assert points(True, 10_000, 20, True) == 750
    assert points(True, 30_000, 20, True) == 500
    assert points(False, 0, 20, True) == 0 and points(True, 19_000, 20, False) == 1000
    await lobby(service, ADA, BO, seconds=20, speed=True)
    q = await ask(service)
    clock.advance(10)
    assert (await service.live_answer(q.post_id, ADA, q.correct)).points == 750


async def test_teams_split_evenly_and_score_their_average(service: QuizService) -> None:
    people = [Person(f"tg:{10 + i}", f"P{i}") for i in range(5)]
    await lobby(service, *people, teams=2, count=1)
    q = await ask(service)
    for i, p in enumerate(people):  # team 0: P0, P2, P4 (2 right); team 1: P1, P3 (1 right)
        await service.live_answer(q.post_id, p, q.correct if i in (0, 1, 2) else wrong(q))
    podium = await service.live.end(GROUP.key, HOST)
    assert [(t.rank, t.team, t.members, round(t.score)) for t in podium.teams] == [
        (1, 0, 3, 667), (2, 1, 2, 500)]


async def test_a_restart_mid_countdown_resumes_with_the_time_left(
    sample_catalog: Catalog, storage: LoopStorage, service: QuizService, clock: FakeClock,
    port: LiveFakePort,
) -> None:
    await lobby(service, ADA, BO)
    q = await ask(service)
    await service.live_answer(q.post_id, ADA, q.correct)
    clock.advance(10)
    # the process dies; a new one on the same database carries on
    again = QuizService(sample_catalog, storage, clock, random.Random(1))
    port = LiveFakePort(clock)
    port.attach(again)
    clock.advance(19)
    await Scheduler(again).tick()
    assert not any(isinstance(e, Revealed) for e in port.live)
    assert [c.remaining_s for c in port.countdowns] == [1]
    clock.advance(2)
    await Scheduler(again).tick()
    (closed,) = port.live
    assert isinstance(closed, Revealed) and closed.summary.answered == 1
    assert (await again.live_answer(q.post_id, BO, q.correct)).status == "closed"
    assert isinstance(await again.live_next(GROUP, HOST), Asked)


async def test_a_60_s_countdown_is_edited_at_the_allowed_rate(
    service: QuizService, port: LiveFakePort, clock: FakeClock
) -> None:
    await lobby(service, *(Person(f"tg:{20 + i}", f"P{i}") for i in range(10)), seconds=60)
    await ask(service)
    scheduler = Scheduler(service)
    for _ in range(120):  # a tick every half second
        clock.advance(0.5)
        await scheduler.tick()
    per_minute = 60 / port.countdown_every.total_seconds()
    assert 0 < len(port.countdowns) <= per_minute
    shown = [c.remaining_s for c in port.countdowns]
    assert shown == sorted(shown, reverse=True) and len(set(shown)) == len(shown)
    assert len([e for e in port.live if isinstance(e, Revealed)]) == 1


async def test_a_members_quiz_is_refused_during_a_session(service: QuizService) -> None:
    await lobby(service, ADA)

    async def no() -> bool:
        return False

    with pytest.raises(LiveError):
        async with service.asking.quiz(GROUP, ADA, is_admin=no):
            pass
    await service.live.end(GROUP.key, HOST)
    async with service.asking.quiz(GROUP, ADA, is_admin=no) as question:
        assert question.post_id


async def test_one_session_per_chat(service: QuizService) -> None:
    await lobby(service)
    again = await service.host(GROUP, HOST, "sample", allowed=True)
    assert again.took_over  # the host's own /host changes nothing but the host
    assert len(await service.live.storage.active_lives()) == 1


# peer instruction ----------------------------------------------------------------------------
async def peer(service: QuizService) -> ShownQuestion:
    asked = await service.peer_round(GROUP, HOST, "sample", allowed=True)
    assert isinstance(asked, Asked)
    return asked.question


async def test_a_split_peer_round_discusses_and_revotes(
    service: QuizService, port: LiveFakePort, clock: FakeClock
) -> None:
    q = await peer(service)
    people = [Person(f"tg:{30 + i}", f"P{i}") for i in range(5)]
    for i, p in enumerate(people):  # 2 of 5 right: 40 %
        assert (await service.live_answer(q.post_id, p, q.correct if i < 2 else wrong(q))
                ).status == "accepted"
    scheduler = Scheduler(service)
    clock.advance(61)
    await scheduler.tick()
    (split,) = port.live
    assert isinstance(split, Split) and split.voted == 5 and sum(split.per_option) == 5
    assert split.until == timedelta(minutes=2)
    # a late first vote does not count; the discussion has no vote
    assert (await service.live_answer(q.post_id, CY, q.correct)).status == "closed"
    clock.advance(121)
    await scheduler.tick()
    assert isinstance(port.live[-1], Revoting)
    for i, p in enumerate(people):  # 4 of 5 right now
        await service.live_answer(q.post_id, p, q.correct if i < 4 else wrong(q))
    assert (await service.live_answer(q.post_id, people[0], wrong(q))).status == "duplicate"
    clock.advance(61)
    await scheduler.tick()
    result = port.live[-1]
    assert isinstance(result, PeerResult)
    assert (result.first_right, result.second_right, result.revoted) == (0.4, 0.8, 5)
    assert result.summary.answered == 5  # the first vote is the post's answers
    # the first vote is what the review card saw: P0 right, P2 wrong
    answers = {a.person_key: a.correct
               for a in await service.storage.answers_for_post(q.post_id)}
    assert answers[people[0].key] and not answers[people[2].key]
    assert await service.live.session(GROUP.key) is None
    # item analysis: the discussion gain, 40 % right at first, 80 % after the revote
    analysis = await service.item_analysis.for_chat(GROUP, allowed=True)
    assert analysis.gains == {(q.quiz_id, q.question_id): pytest.approx(0.4)}
    text = "\n".join(analysis_blocks(analysis, translator("en")))
    assert "discussion gain: +40 percentage points" in text


async def test_a_peer_round_above_the_threshold_skips_the_discussion(
    service: QuizService, port: LiveFakePort, clock: FakeClock
) -> None:
    q = await peer(service)
    for i in range(4):  # 3 of 4 right: 75 %
        await service.live_answer(q.post_id, Person(f"tg:{40 + i}", "P"),
                                  q.correct if i else wrong(q))
    clock.advance(61)
    await Scheduler(service).tick()
    (result,) = port.live
    assert isinstance(result, PeerResult)
    assert result.second_right is None and result.first_right == 0.75
    assert (await service.item_analysis.for_chat(GROUP, allowed=True)).gains == {}  # no revote
    assert await service.live.session(GROUP.key) is None


async def test_the_host_moves_a_peer_round_on(service: QuizService) -> None:
    q = await peer(service)
    await service.live_answer(q.post_id, ADA, wrong(q))
    with pytest.raises(NotAllowed):
        await service.live_next(GROUP, ADA)
    assert isinstance(await service.live_next(GROUP, HOST), Split)
    assert isinstance(await service.live_next(GROUP, HOST), Revoting)


@pytest.mark.parametrize(("team", "shown"), [(2, "“3”"), (-1, "“0”"), ("x", "“x”")])
async def test_a_forged_team_is_refused_counted_from_one(
        service: QuizService, team: int | str, shown: str) -> None:
    await service.host(GROUP, HOST, "sample", 1, allowed=True, teams=2, choose=True)
    with pytest.raises(LiveError) as refused:
        await service.live.join(GROUP.key, ADA, team)
    text = str(refused.value)
    assert shown in text and "not one of this session's teams" in text
    lobby = await service.live.join(GROUP.key, ADA, 1)
    assert lobby.team == 1 and lobby.sizes == (0, 1)
