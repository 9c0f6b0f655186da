"""What a click storm sends to Discord: REST calls and connections per click, and what goes
first. Counted at the fake (requests, the TCP connections it accepted), never timed.

A click answered within its budget costs one REST call (the response); discord.py's REST calls
go through a bounded pool of kept-alive connections (client.REST_CONNECTIONS); the follow-ups
of deferred clicks wait in the outbox (outbox.py), behind commands and first responses.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.adapters.discord import client, outbox, replies
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.discord_e2e.conftest import StartBot
from tests.discord_e2e.helpers import post_quiz
from tests.fakes.discord_api import (
    CHANNEL_MESSAGE,
    DEFERRED_MESSAGE,
    FakeDiscord,
    Interaction,
    Request,
    User,
    buttons_of,
)

PEOPLE = [User(900_000_000_000_001_000 + i, f"P{i}") for i in range(30)]


def calls_for(fake: FakeDiscord, it: Interaction) -> list[Request]:
    """Every REST call made for one interaction: its callback, follow-ups, edits."""
    return [r for r in fake.requests
            if r.path.startswith((f"/interactions/{it.id}/", f"/webhooks/{fake.app_id}/"
                                                              f"{it.token}"))]


async def stored(service: QuizService, post_id: int, people: list[User]) -> None:
    """Until the answer of every one of `people` to the post is stored."""
    for person in people:
        while await service.storage.answer_of(post_id, f"dc:{person.id}") is None:  # noqa: ASYNC110
            await asyncio.sleep(0.01)


async def storm(fake: FakeDiscord, message_id: int, custom_id: str, people: list[User],
                **kwargs: Any) -> list[Interaction]:
    """Everyone clicks at once (the events are sent before any is answered)."""
    return [await fake.click(message_id, custom_id, user=p, **kwargs) for p in people]


async def test_clicks_answered_in_time_cost_one_rest_call_each_on_a_bounded_pool(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, alice: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """30 clicks at once: each answered by its response alone (no deferral, no follow-up),
    and the burst never opens more connections than the pool holds (discord.py's own
    connector opens one per concurrent call). The budget is long: in time however loaded the
    machine running the test."""
    monkeypatch.setattr(client, "REST_CONNECTIONS", 4)
    monkeypatch.setattr(replies, "DEADLINE_BUDGET", 60.0)
    await start_bot(live_interval=60.0)  # no count edit in between
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    clicks = await storm(fake, reply.id, reply.buttons[q.correct]["custom_id"], PEOPLE)
    for it in clicks:
        assert "Correct" in (await fake.reply(it)).content
    for it in clicks:
        assert it.callback_type == CHANNEL_MESSAGE and not it.followups
        assert len(calls_for(fake, it)) == 1
    assert fake.rest_connections <= 4


async def test_one_connection_is_kept_alive_for_many_rest_calls(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, alice: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(replies, "DEADLINE_BUDGET", 60.0)  # one call per click, however slow
    await start_bot(live_interval=60.0)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    before = len(fake.requests)
    for person in PEOPLE[:10]:
        it = await fake.click(reply.id, reply.buttons[q.correct]["custom_id"], user=person)
        await fake.reply(it)
    during = fake.requests[before:]
    assert len(during) == 10
    assert len({r.connection for r in during}) == 1


async def test_a_command_is_answered_while_a_storms_follow_ups_wait(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, alice: User, bob: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Discord holds every follow-up (a slow webhook route): the follow-ups of 8 late clicks
    fill the outbox's 2 lanes and queue behind them, and a /stats still gets its response;
    without the outbox the held follow-ups would take every connection of the pool. Only
    then do the queued follow-ups go out."""
    monkeypatch.setattr(client, "REST_CONNECTIONS", 4)
    monkeypatch.setattr(outbox, "LANES", 2)
    await start_bot(live_interval=60.0)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    held = fake.hold("POST", rf"/webhooks/{fake.app_id}/[^/]+")
    late = await storm(fake, reply.id, reply.buttons[q.correct]["custom_id"], PEOPLE[:8],
                       age=61.0)
    for it in late:  # past the budget: deferred at once
        assert (await fake.ack(it))["type"] == DEFERRED_MESSAGE
    await stored(service, q.post_id, PEOPLE[:8])
    await held.arrived.wait()
    stats = await fake.slash("stats", user=bob)
    assert (await fake.reply(stats)).ephemeral
    assert stats.callback_type == CHANNEL_MESSAGE
    box = outbox.outbox()
    assert len(held.held) == 2 and box.queued == 6  # none of them went before it
    held.release()
    for it in late:
        assert "Correct" in (await fake.reply(it)).content
        assert len(calls_for(fake, it)) == 2  # the deferral and the follow-up


async def test_a_deferred_commands_follow_up_goes_before_the_clicks_follow_ups(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, alice: User, bob: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The outbox is paused: one click's answer is held, so that click has no response yet
    and the follow-ups of late clicks yield to it. A /stats made long ago is deferred, and
    its follow-up is sent while theirs still wait (it does not yield)."""
    monkeypatch.setattr(replies, "DEADLINE_BUDGET", 60.0)  # the held click is not deferred
    monkeypatch.setattr(outbox, "PATIENCE", 60.0)
    await start_bot(live_interval=60.0)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    custom_id = reply.buttons[q.correct]["custom_id"]
    holder, late_people = PEOPLE[0], PEOPLE[1:6]
    gate, entered = asyncio.Event(), asyncio.Event()
    real = service.answer

    async def held(post_id: int, person: Any, *args: Any, **kwargs: Any) -> Any:
        if person.key == f"dc:{holder.id}":
            entered.set()
            await gate.wait()
        return await real(post_id, person, *args, **kwargs)

    monkeypatch.setattr(service, "answer", held)
    fresh = await fake.click(reply.id, custom_id, user=holder)
    await entered.wait()
    late = await storm(fake, reply.id, custom_id, late_people, age=61.0)
    await stored(service, q.post_id, late_people)  # every late answer is stored...
    box = outbox.outbox()
    await fake.until(lambda: box.unanswered.count == 1)
    stats = await fake.slash("stats", user=bob, age=61.0)
    answer = await fake.reply(stats)
    assert stats.callback_type == DEFERRED_MESSAGE and answer.message is stats.followups[0]
    assert not any(it.followups for it in late)  # ...but their follow-ups still wait
    gate.set()
    for it in late:
        assert "Correct" in (await fake.reply(it)).content
    assert fresh.callback_type == CHANNEL_MESSAGE
    paths = [r.path for r in fake.requests]
    first_click_follow_up = min(paths.index(f"/webhooks/{fake.app_id}/{it.token}")
                                for it in late)
    assert paths.index(f"/webhooks/{fake.app_id}/{stats.token}") < first_click_follow_up


async def test_a_commands_response_is_not_queued_behind_a_storms_responses(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, alice: User, bob: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Discord holds every interaction response: the responses of 8 clicks fill the 2 lanes
    clicks may use and the rest wait for one, and the response of a /stats made after them
    still reaches Discord; without the lanes the held responses would take every
    connection of the pool."""
    monkeypatch.setattr(client, "REST_CONNECTIONS", 4)
    monkeypatch.setattr(outbox, "CLICK_RESPONSES", 2)
    monkeypatch.setattr(replies, "DEADLINE_BUDGET", 60.0)  # no deferral however slow
    await start_bot(live_interval=60.0)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    held = fake.hold("POST", r"/interactions/\d+/[^/]+/callback")
    clicks = await storm(fake, reply.id, reply.buttons[q.correct]["custom_id"], PEOPLE[:8])
    await stored(service, q.post_id, PEOPLE[:8])
    await fake.until(lambda: len(held.held) >= 2)
    stats = await fake.slash("stats", user=bob)
    await fake.until(lambda: any(r.path.startswith(f"/interactions/{stats.id}/")
                                 for r in held.held), what="the /stats response at Discord")
    assert len(held.held) == 3  # two clicks' responses, then the command's
    held.release()
    assert (await fake.reply(stats)).ephemeral
    for it in clicks:
        assert "Correct" in (await fake.reply(it)).content
        assert len(calls_for(fake, it)) == 1


async def test_a_count_edit_waiting_for_a_lane_is_dropped_by_the_closing_edit(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, scheduler: Scheduler,
    clock: FakeClock, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The outbox's one lane is held by a late click's follow-up (Discord holds it), so the
    count edit after Bob's answer waits for a lane; the question closes meanwhile: the
    closing edit is the message's only edit, and the waiting count edit is never sent."""
    monkeypatch.setattr(outbox, "LANES", 1)
    bot = await start_bot()  # the count edited 0.2 s after an answer
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    custom_id = reply.buttons[q.correct]["custom_id"]
    held = fake.hold("POST", rf"/webhooks/{fake.app_id}/[^/]+")
    late = await fake.click(reply.id, custom_id, user=PEOPLE[0], age=61.0)
    assert (await fake.ack(late))["type"] == DEFERRED_MESSAGE
    await held.arrived.wait()
    assert "Correct" in (await fake.reply(await fake.click(reply.id, custom_id, user=bob))).content
    box = outbox.outbox()
    await fake.until(lambda: box.queued == 1, what="the count edit waiting for the lane")
    clock.advance(seconds=600)
    # bounded: a closing edit that waited for the queued count edit would never end
    assert (await asyncio.wait_for(scheduler.tick(), 10)).closed == 1
    assert box.queued == 0 and bot.publisher.idle
    [closing] = fake.edits(reply.id)
    assert all(b.get("disabled") for b in buttons_of(closing.json))
    held.release()
    assert "Correct" in (await fake.reply(late)).content
    assert len(fake.edits(reply.id)) == 1
