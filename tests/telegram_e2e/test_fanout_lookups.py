"""Issue 36: no lookup spends the send budget, and a lookup that fails never blocks a daily
question. The chat's kind, seen in an update, is stored with the chat, so another process
(a restart) posts without getChat; a chat never seen is looked up once, and a refused or
unreadable answer (python-telegram-bot raises TypeError) gives buttons, logged once. A kind
learned just before a stop is stored by the stop, which a hung database holds only so long."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.adapters.telegram import adapter
from bot.core.models import Chat
from tests.fakes.telegram_api import FakeTelegramAPI
from tests.telegram_e2e.conftest import Harness

AT = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)


async def daily_in(tg: Harness, *chats: dict[str, Any]) -> None:
    """A daily question at 12:30 UTC in chats the bot has seen no update from (set by the
    core directly, as another process or `db copy` would leave them)."""
    for chat in chats:
        await tg.service.daily.set(Chat(f"tg:{chat['id']}"), "12:30", "UTC", allowed=True)


def buttons_in(fake: FakeTelegramAPI, chat: dict[str, Any]) -> list[dict[str, Any]]:
    return [c.result for c in fake.calls_of("sendMessage")
            if c.params["chat_id"] == chat["id"] and "reply_markup" in c.params
            and "?start=" not in str(c.params["reply_markup"])]  # not /help's quiz links


def lookup_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "could not look up" in r.getMessage()]


async def test_a_chat_seen_in_an_update_is_posted_without_a_lookup_after_a_restart(
    tg, fake_tg, group, channel, alice, clock
):
    await tg.command(group, alice, "/help")
    await tg.command(channel, None, "/help")
    assert tg.adapter is not None
    await tg.adapter.poster.stored()
    assert await tg.service.chat_kind(f"tg:{channel['id']}") == "channel"
    await daily_in(tg, group, channel)
    await tg.restart()  # a new process: it remembers nothing but the database

    clock.set(AT)
    assert (await tg.tick()).posted == 2
    assert not fake_tg.calls_of("getChat")
    [poll] = fake_tg.calls_of("sendPoll")
    assert poll.params["chat_id"] == group["id"]
    assert len(buttons_in(fake_tg, channel)) == 1


async def test_a_chat_never_seen_is_looked_up_once_and_its_kind_kept(tg, fake_tg, channel,
                                                                     clock):
    await daily_in(tg, channel)
    clock.set(AT)
    assert (await tg.tick()).posted == 1
    [lookup] = fake_tg.calls_of("getChat")
    assert lookup.params["chat_id"] == channel["id"]
    assert await tg.service.chat_kind(f"tg:{channel['id']}") == "channel"
    assert len(buttons_in(fake_tg, channel)) == 1


async def test_a_refused_lookup_gives_buttons_logged_once(
    tg, fake_tg, group, other_group, clock, caplog
):
    await daily_in(tg, group, other_group)
    fake_tg.fail_next("getChat", status=400, description="Bad Request: something odd",
                      times=2)
    clock.set(AT)
    with caplog.at_level(logging.WARNING, "bot.adapters.telegram.publish"):
        assert (await tg.tick()).posted == 2
    assert len(fake_tg.calls_of("getChat", ok_only=False)) == 2
    assert not fake_tg.calls_of("sendPoll")
    assert len(buttons_in(fake_tg, group)) == len(buttons_in(fake_tg, other_group)) == 1
    [line] = lookup_lines(caplog)  # the second is counted, not logged
    assert "BadRequest" in line
    # nothing was learned: the kind stays unknown, and the next question looks again
    assert await tg.service.chat_kind(f"tg:{group['id']}") is None


async def test_an_unreadable_lookup_gives_buttons_that_answer(
    tg, fake_tg, group, alice, clock, caplog
):
    await daily_in(tg, group)
    fake_tg.answer_next("getChat", {"id": group["id"], "title": "no type"})
    clock.set(AT)
    with caplog.at_level(logging.WARNING, "bot.adapters.telegram.publish"):
        assert (await tg.tick()).posted == 1
    [line] = lookup_lines(caplog)
    assert "TypeError" in line
    [message] = buttons_in(fake_tg, group)
    shown = await tg.service.questions.show(await tg.post_of(message))
    data = message["reply_markup"]["inline_keyboard"][0][shown.correct]["callback_data"]
    press = await tg.press(message, alice, data)
    assert press.params["text"].startswith("✅ Correct!")


def gated_kinds(tg: Harness, monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Chats' kinds are stored only once the returned event is set."""
    go = asyncio.Event()
    store = tg.service.chat_seen_as

    async def gated(chat_key: str, kind: str) -> None:
        await go.wait()
        await store(chat_key, kind)

    monkeypatch.setattr(tg.service, "chat_seen_as", gated)
    return go


async def test_a_kind_learned_just_before_a_stop_is_stored_by_the_stop(
    tg, group, alice, monkeypatch
):
    go = gated_kinds(tg, monkeypatch)
    disconnect = tg.service.delivery.disconnect

    def disconnected(port: Any) -> None:  # updates stopped: the store may go now
        disconnect(port)
        go.set()

    monkeypatch.setattr(tg.service.delivery, "disconnect", disconnected)
    await tg.command(group, alice, "/help")
    assert await tg.service.chat_kind(f"tg:{group['id']}") is None  # not yet
    await tg.stop()
    assert await tg.service.chat_kind(f"tg:{group['id']}") == "supergroup"


async def test_a_store_that_hangs_holds_the_stop_only_its_bound(
    tg, group, alice, monkeypatch, caplog
):
    monkeypatch.setattr(adapter, "STORED_WITHIN", 0.2)
    go = gated_kinds(tg, monkeypatch)
    await tg.command(group, alice, "/help")
    assert tg.adapter is not None
    poster = tg.adapter.poster
    with caplog.at_level(logging.WARNING, "bot.adapters.telegram.adapter"):
        await tg.stop()
    assert any("not stored within 0.2 s" in r.getMessage() for r in caplog.records)
    go.set()  # the database answers at last: the store ends before the test does
    await poster.stored()
