"""Writing the kinds of question in a private chat, through the real python-telegram-bot
against the fake Bot API: /question lists the kinds and shows a kind's form; a form filled
in adds that kind to the draft, a form with a problem is refused with every problem and
nothing stored; a quiz poll with several right options is a select-all question; the
published pack holds each kind, and a group is asked its select-all question as a quiz poll
with every right option."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bot.content import Catalog
from bot.content.items import Kind
from bot.core.service import QuizService
from bot.storage import SqliteStorage
from tests.clock import FakeClock
from tests.telegram_e2e.conftest import Harness

NUMERIC = ("/question numeric\nprompt: About how many GB per layer?\nanswer: ০.৪\n"
           "tolerance: 0.05\nunit: GB\nexplanation: 24 × 4,096 × 4,096 bytes.")
ORDER = ("/question order\nprompt: Put a stage's steps in order.\nitem: Receive\n"
         "item: Forward\nitem: Backward\nexplanation: Forward, then backward.")


@pytest.fixture
def service(sample_catalog: Catalog, storage: SqliteStorage, clock: FakeClock) -> QuizService:
    """Alice (1001) is an author."""
    return QuizService(sample_catalog, storage, clock, random.Random(7), authors={"tg:1001"})


async def said(tg: Harness, chat: dict[str, Any], user: dict[str, Any], text: str) -> str:
    """Send a command; the bot's one reply."""
    before = len(tg.texts(chat))
    await tg.command(chat, user, text)
    texts = tg.texts(chat)
    assert len(texts) == before + 1, texts[before:]
    return texts[-1]


async def test_an_author_writes_a_number_and_an_order_by_their_forms(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any],
) -> None:
    kinds = await said(tg, alice_dm, alice, "/question")
    assert all(f"/question {kind.value} — " in kinds for kind in Kind)
    form = await said(tg, alice_dm, alice, "/question numeric")
    assert "/question numeric\nprompt: <the question>\nanswer: <the right number>\n" in form

    assert (await said(tg, alice_dm, alice, NUMERIC)).startswith("Question 1 added")
    refused = await said(tg, alice_dm, alice, ORDER.replace("item: Forward\nitem: Backward\n", ""))
    assert refused.splitlines() == [
        "Not added; nothing changed. Fix these and send it again:",
        "• This kind takes 2 to 6 options; the form has 1.",
    ]
    assert (await said(tg, alice_dm, alice, ORDER)).startswith("Question 2 added")
    draft = await said(tg, alice_dm, alice, "/draft")
    assert "Questions: 2." in draft
    assert "1. [number] About how many" in draft and "2. [order] Put a stage" in draft

    await said(tg, alice_dm, alice, "/name Memory kinds")
    published = await said(tg, alice_dm, alice, "/publish")
    assert published.startswith("Published “Memory kinds” (questions: 2).")
    number, order = tg.service.catalog.quizzes["memory-kinds"].questions
    assert (number.kind, order.kind) == (Kind.NUMERIC, Kind.ORDER)
    assert number.numeric is not None and (number.numeric.low, number.numeric.high) == (
        0.35, 0.45)
    assert [o.text.get("en") for o in order.options] == ["Receive", "Forward", "Backward"]


async def test_a_quiz_poll_with_several_right_options_is_asked_with_all_of_them(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any], group: dict[str, Any],
    bob: dict[str, Any],
) -> None:
    before = len(tg.texts(alice_dm))
    await tg.send(tg.fake.send_poll(
        alice_dm, alice, "Which grow activation memory?",
        ["A longer sequence", "A lower learning rate", "More layers"], correct=[0, 2],
        explanation="Length and depth grow it."))
    assert tg.texts(alice_dm)[before:] == [
        "Question 1 added to your draft.\nSend the next one, or /name the draft and /publish "
        "it."]
    assert "1. [several right] Which grow" in await said(tg, alice_dm, alice, "/draft")
    await said(tg, alice_dm, alice, "/name Select all")
    assert "(questions: 1)" in await said(tg, alice_dm, alice, "/publish")

    await tg.command(group, bob, "/quiz select-all")
    [call] = await tg.fake.wait_for("sendPoll")
    assert call.params["chat_id"] == group["id"]
    options = [o["text"] for o in call.params["options"]]
    right = sorted(options[i] for i in call.params["correct_option_ids"])
    assert right == ["A longer sequence", "More layers"]
