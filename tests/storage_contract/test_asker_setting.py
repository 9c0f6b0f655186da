"""/settings quiz admins|anyone, peer PERCENT and discussion TIME are stored with the chat's
other settings, on every backend."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.ports import ChatSettingsRecord
from tests.storage_contract.backends import Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


async def test_who_may_ask_is_kept_with_the_other_settings(store: Store) -> None:
    await store.set_chat_settings(ChatSettingsRecord("tg:-1", 45, None, admins_only=True), NOW)
    await store.set_chat_settings(ChatSettingsRecord("tg:-2", None, "polls"), NOW)
    assert await store.get_chat_settings("tg:-1") == ChatSettingsRecord(
        "tg:-1", 45, None, None, admins_only=True)
    assert (await store.get_chat_settings("tg:-2") or ChatSettingsRecord("")).admins_only is None
    await store.set_chat_settings(ChatSettingsRecord("tg:-1", 45, None, admins_only=False), NOW)
    assert (await store.get_chat_settings("tg:-1") or ChatSettingsRecord("")).admins_only is False


async def test_the_peer_settings_are_kept_with_the_other_settings(store: Store) -> None:
    await store.set_chat_settings(ChatSettingsRecord(
        "tg:-1", 45, None, peer_threshold=80, peer_discussion=90), NOW)
    assert await store.get_chat_settings("tg:-1") == ChatSettingsRecord(
        "tg:-1", 45, None, peer_threshold=80, peer_discussion=90)
    await store.set_chat_settings(ChatSettingsRecord("tg:-1", 45, None, peer_threshold=60), NOW)
    kept = await store.get_chat_settings("tg:-1") or ChatSettingsRecord("")
    assert (kept.peer_threshold, kept.peer_discussion) == (60, None)
