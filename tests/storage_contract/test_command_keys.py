"""A command's idempotency key (core/ports/ CommandKey), on every store: the write that is
its effect stores the key in the same transaction, so a redelivery of the command, in this
process or another on the same database, finds it (AlreadyHandled) and changes nothing; an
incidental write never claims the key; keys are pruned by age."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.ports import AlreadyHandled, command_key
from tests.storage_contract.backends import Backend, Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
AUTHOR = "tg:1001"
KEY = "tg:77:5001"


async def draft_of(store: Store, questions: int) -> None:
    for n in range(questions):
        await store.add_draft_question(AUTHOR, "en", f'"{n}"', f"m{n}", NOW)


async def undo(store: Store, key: str = KEY) -> int | None:
    """One delivery of /undo: its handling, under its key."""
    with command_key(key, NOW):
        return await store.undo_draft_question(AUTHOR)


async def test_a_redelivered_command_changes_nothing(store: Store) -> None:
    await draft_of(store, 3)
    assert await undo(store) == 3
    with pytest.raises(AlreadyHandled) as raised:
        await undo(store)
    assert raised.value.key == KEY
    draft = await store.get_draft(AUTHOR)
    assert draft is not None and len(draft.questions) == 2  # removed once
    assert await undo(store, "tg:77:5002") == 2  # another /undo is another command
    assert await store.undo_draft_question(AUTHOR) == 1  # no key: the scheduler, the CLI


async def test_the_first_effect_claims_the_key_and_the_rest_of_the_command_runs(
    store: Store,
) -> None:
    await draft_of(store, 3)
    with command_key(KEY, NOW) as command:
        await store.upsert_person(AUTHOR, "Ann")  # incidental: never claims
        assert not command.claimed
        assert await store.undo_draft_question(AUTHOR) == 3
        assert command.claimed
        assert await store.undo_draft_question(AUTHOR) == 2  # the same command goes on
    with pytest.raises(AlreadyHandled), command_key(KEY, NOW):
        await store.name_draft(AUTHOR, "Cats")
    draft = await store.get_draft(AUTHOR)
    assert draft is not None and draft.title is None


async def test_a_key_claimed_before_a_send_is_claimed_once(store: Store) -> None:
    assert await store.claim_command(KEY, NOW)
    assert not await store.claim_command(KEY, NOW + timedelta(seconds=1))
    with pytest.raises(AlreadyHandled), command_key(KEY, NOW):
        await store.set_person_locale(AUTHOR, "bn")
    assert await store.person_locale(AUTHOR) is None


async def test_two_processes_given_the_same_command_run_it_once(backend: Backend) -> None:
    """Behind a load balancer, or after a crash, two processes handle the same update."""
    async with backend.opened() as first, backend.opened() as second:
        await draft_of(first, 5)
        results = await asyncio.gather(undo(first), undo(second), return_exceptions=True)
        assert sorted(map(type, results), key=str) == sorted([int, AlreadyHandled], key=str)
        draft = await second.get_draft(AUTHOR)
        assert draft is not None and len(draft.questions) == 4


async def test_old_keys_are_pruned(store: Store) -> None:
    assert await store.claim_command("tg:77:1", NOW - timedelta(days=4))
    assert await store.claim_command("tg:77:2", NOW)
    assert await store.forget_commands(NOW - timedelta(days=3)) == 1
    assert await store.claim_command("tg:77:1", NOW)  # forgotten: a new claim
    assert not await store.claim_command("tg:77:2", NOW)
