"""A card's platform file id is kept by its key, the latest wins, and a reopened database
still has it."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.storage_contract.backends import Backend, Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


async def test_an_upload_is_kept_by_its_key(store: Store) -> None:
    assert await store.get_upload("tg:card:abc") is None
    await store.set_upload("tg:card:abc", "file-1", NOW)
    await store.set_upload("dc:card:abc", "https://cdn/x.png", NOW)
    assert await store.get_upload("tg:card:abc") == "file-1"
    await store.set_upload("tg:card:abc", "file-2", NOW)
    assert await store.get_upload("tg:card:abc") == "file-2"
    assert await store.get_upload("dc:card:abc") == "https://cdn/x.png"


async def test_an_upload_survives_a_reopen(backend: Backend) -> None:
    async with backend.opened() as store:
        await store.set_upload("tg:card:abc", "file-1", NOW)
    async with backend.opened() as store:
        assert await store.get_upload("tg:card:abc") == "file-1"
