"""/dashboard and /progress on Telegram, through python-telegram-bot and the fake Bot API: with
an https dashboard, the admin's private link comes with a Mini App (`web_app`) button that
opens it inside Telegram, and /progress gives anyone a button to their own page; the group
hears only that it was sent privately."""

from __future__ import annotations

from typing import Any

from bot.core.dashboard import DashboardAccess
from bot.core.service import QuizService

BASE = "https://quiz.example"


def switch_on(service: QuizService, base: str = BASE) -> None:
    service.dashboard = DashboardAccess(service.storage, service.clock, "t" * 40, base)


def buttons(call: Any) -> list[dict[str, Any]]:
    markup = call.params.get("reply_markup") or {}
    return [b for row in markup.get("inline_keyboard", []) for b in row]


async def test_an_admins_link_opens_inside_telegram(tg, group, alice):
    switch_on(tg.service)
    tg.fake.private_chat(alice)  # she started the bot
    tg.fake.set_admins(group["id"], alice["id"])
    await tg.command(group, alice, "/dashboard")
    [sent] = [c for c in tg.fake.calls_of("sendMessage") if c.params["chat_id"] == alice["id"]]
    [button] = buttons(sent)
    assert button["web_app"]["url"].startswith(f"{BASE}/open/")
    assert button["web_app"]["url"] in sent.params["text"]
    assert tg.texts(group)[-1] == "I sent it to you in our private chat."


async def test_someone_who_never_started_the_bot_is_told_to(tg, group, alice):
    switch_on(tg.service)
    tg.fake.set_admins(group["id"], alice["id"])  # no private chat: the bot cannot write
    await tg.command(group, alice, "/dashboard")
    assert tg.texts(group)[-1].startswith("Start a private chat with me first")
    assert not [c for c in tg.fake.calls_of("sendMessage") if BASE in c.params["text"]]


async def test_progress_gives_a_mini_app_button_privately(tg, group, alice):
    switch_on(tg.service)
    private = tg.fake.private_chat(alice)
    await tg.command(private, alice, "/progress")
    [sent] = [c for c in tg.fake.calls_of("sendMessage") if c.params["chat_id"] == alice["id"]]
    assert [b["web_app"]["url"] for b in buttons(sent)] == [f"{BASE}/app"]
    await tg.command(group, alice, "/progress")
    assert tg.texts(group)[-1] == "I sent it to you in our private chat."
    assert len([c for c in tg.fake.calls_of("sendMessage")
                if c.params["chat_id"] == alice["id"] and buttons(c)]) == 2


async def test_progress_without_an_https_dashboard_is_explained(tg, alice):
    private = tg.fake.private_chat(alice)
    await tg.command(private, alice, "/progress")  # off
    switch_on(tg.service, "http://127.0.0.1:8080")  # Telegram opens https pages only
    await tg.command(private, alice, "/progress")
    assert tg.texts(private)[-2:] == [
        "The web dashboard is not switched on for this bot."] * 2
