"""The outbox on its own (no Discord): lanes, order, cancellation, yielding."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from bot.adapters.discord import outbox
from bot.adapters.discord.outbox import Kind, Outbox


async def test_at_most_lanes_in_flight_and_follow_ups_before_edits() -> None:
    box = Outbox(lanes=2)
    gate = asyncio.Event()
    started: list[str] = []

    def call(name: str) -> Callable[[], Awaitable[str]]:
        async def run() -> str:
            started.append(name)
            await gate.wait()
            return name
        return run

    sends = [asyncio.create_task(box.send(kind, call(name)))
             for kind, name in [(Kind.EDIT, "e1"), (Kind.EDIT, "e2"), (Kind.EDIT, "e3"),
                                (Kind.FOLLOW_UP, "f1"), (Kind.EDIT, "e4"),
                                (Kind.FOLLOW_UP, "f2")]]
    while box.queued < 4:  # noqa: ASYNC110
        await asyncio.sleep(0)
    assert started == ["e1", "e2"] and box.busy == 2
    gate.set()
    assert await asyncio.gather(*sends) == ["e1", "e2", "e3", "f1", "e4", "f2"]
    assert started == ["e1", "e2", "f1", "f2", "e3", "e4"]
    assert box.busy == 0 and box.queued == 0


async def test_a_cancelled_send_frees_its_place_and_its_lane() -> None:
    box = Outbox(lanes=1)
    gate = asyncio.Event()

    async def wait() -> None:
        await gate.wait()

    first = asyncio.create_task(box.send(Kind.FOLLOW_UP, wait))
    queued = asyncio.create_task(box.send(Kind.FOLLOW_UP, wait))
    while box.queued < 1:  # noqa: ASYNC110
        await asyncio.sleep(0)
    queued.cancel()
    first.cancel()
    await asyncio.gather(first, queued, return_exceptions=True)
    assert box.busy == 0 and box.queued == 0
    assert await box.send(Kind.EDIT, lambda: asyncio.sleep(0, "sent")) == "sent"


async def test_sends_wait_for_first_responses_but_not_forever(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    box = Outbox(lanes=4)
    box.unanswered.add()
    sent = asyncio.create_task(box.send(Kind.FOLLOW_UP, lambda: asyncio.sleep(0, "sent")))
    for _ in range(10):
        await asyncio.sleep(0)
    assert not sent.done() and box.busy == 0
    box.unanswered.remove()
    assert await sent == "sent"
    monkeypatch.setattr(outbox, "PATIENCE", 0.0)
    box.unanswered.add()  # never answered: the send goes after PATIENCE
    assert await box.send(Kind.EDIT, lambda: asyncio.sleep(0, "late")) == "late"
