"""A whole quiz of every kind run in a private chat (the real PTB against the fake): each
question is asked after the one before is answered, the way its kind needs (a quiz poll for
a choice, true/false and several right answers; a message with buttons for an order; a
message for a number and a text, answered by typing), through to the run's score."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from bot.content import load_catalog
from bot.content.items import Kind
from bot.core.ports import Storage
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.telegram_e2e.conftest import Harness

KINDS = Path(__file__).parent.parent / "data" / "kinds"
RIGHT_TYPED = {"k-num": "০.৪", "k-text": "Punargonona"}  # Bengali digits; a Latin spelling


@pytest.fixture
def service(storage: Storage, clock: FakeClock) -> QuizService:
    return QuizService(load_catalog(KINDS), storage, clock, random.Random(3))


def questions_sent(tg: Harness) -> list[dict[str, Any]]:
    return [c.result for c in tg.fake.calls if c.ok and (
        c.method == "sendPoll" or (c.method == "sendMessage" and any(
            str(b.get("callback_data", "")).startswith(("o:", "w:", "t:", "a:"))
            for row in (c.params.get("reply_markup") or {}).get("inline_keyboard", [])
            for b in row)))]


async def test_a_private_run_through_every_kind(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any]
) -> None:
    await tg.command(alice_dm, alice, "/quiz kinds")
    seen: list[Kind] = []
    for _ in range(6):
        message = questions_sent(tg)[-1]
        ref = (f"tg-poll:{message['poll']['id']}" if "poll" in message
               else f"tg-msg:{alice_dm['id']}:{message['message_id']}")
        post = await tg.service.questions.post_id_for(ref)
        assert post is not None
        shown = await tg.service.questions.show(post)
        assert shown is not None
        seen.append(shown.kind)
        if shown.kind in (Kind.CHOICE, Kind.TRUEFALSE):
            assert "poll" in message
            await tg.send(tg.fake.answer_poll(message["poll"]["id"], alice, [shown.correct]))
        elif shown.kind is Kind.MULTI:
            assert "poll" in message and message["poll"]["allows_multiple_answers"]
            await tg.send(tg.fake.answer_poll(message["poll"]["id"], alice,
                                              sorted(shown.correct_set)))
        elif shown.kind is Kind.ORDER:
            sequence = ""
            for option in shown.correct_set:
                sequence += str(option)
                now = tg.fake.messages[(alice_dm["id"], message["message_id"])]
                await tg.press(now, alice, f"o:{post}:{sequence}")
        else:
            await tg.send(tg.fake.say(alice_dm, alice, RIGHT_TYPED[shown.question_id]))
        answer = await tg.service.storage.answer_of(post, f"tg:{alice['id']}")
        assert answer is not None and answer.correct, shown.kind
    assert sorted(k.value for k in seen) == sorted(k.value for k in Kind)
    assert "6/6" in tg.texts(alice_dm)[-1] or "6 of 6" in tg.texts(alice_dm)[-1]
