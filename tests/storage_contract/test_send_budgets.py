"""A bot token's send budget shared by the processes on the database (token_budget.py), on
both backends: slices leased at once by two processes never overlap, none starts before the
time asked for, and a hold (count 0) moves the next slot past it."""

from __future__ import annotations

import asyncio
import itertools

from tests.storage_contract.backends import Backend

INTERVAL = 1 / 30
NOW = 1_780_000_000.0


async def test_two_processes_lease_slices_that_never_overlap(backend: Backend) -> None:
    a, b = backend.store(), backend.store()
    await asyncio.gather(a.open(), b.open())
    try:
        leases = [(s, 1 + i % 5) for i in range(40) for s in (a, b)]
        firsts = await asyncio.gather(*(s.lease_sends("telegram:1", NOW, count, INTERVAL)
                                        for s, count in leases))
        slices = sorted((first, first + count * INTERVAL)
                        for first, (_, count) in zip(firsts, leases, strict=True))
        assert slices[0][0] >= NOW - 1e-6
        for (_, end), (start, _) in itertools.pairwise(slices):
            assert start >= end - 1e-6  # one after the other
        total = sum(count for _, count in leases)
        assert abs(slices[-1][1] - NOW - total * INTERVAL) < 1e-6  # no slot lost between
        # another token has a budget of its own
        assert await a.lease_sends("telegram:2", NOW, 1, INTERVAL) == NOW
    finally:
        await asyncio.gather(a.close(), b.close())


async def test_a_hold_moves_the_next_slot_past_it_and_the_past_is_not_leased(
    backend: Backend
) -> None:
    store = backend.store()
    await store.open()
    try:
        await store.lease_sends("telegram:1", NOW, 3, INTERVAL)
        await store.lease_sends("telegram:1", NOW + 5, 0, INTERVAL)  # a 429's retry_after
        assert await store.lease_sends("telegram:1", NOW, 1, INTERVAL) == NOW + 5
        # an idle budget does not save slots up: a lease much later starts when asked
        assert await store.lease_sends("telegram:1", NOW + 60, 2, INTERVAL) == NOW + 60
    finally:
        await store.close()
