"""The confidence tap (/settings confidence on) through the real python-telegram-bot and the
fake Bot API: in a private chat an option's press asks "How sure are you?" on the question's
keyboard and records nothing; the tap records the answer with its confidence in one write and
shows the result. The step lives in the buttons' callback_data, so a restart between the press
and the tap loses nothing; a forged tap records nothing. Off, and in a group, nothing changes."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from bot.content import load_catalog
from bot.content.items import Kind
from bot.core.models import Confidence
from bot.core.ports import Storage
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.telegram_e2e.conftest import Harness

KINDS = Path(__file__).parent.parent / "data" / "kinds"
RIGHT_TYPED = {"k-num": "0.4", "k-text": "Punargonona"}


def buttons_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for row in message.get("reply_markup", {}).get("inline_keyboard", []) for b in row
            if not b["callback_data"].startswith("r:")]  # the ⚑ stays under every keyboard


def data_of(message: dict[str, Any]) -> list[str]:
    return [b["callback_data"] for b in buttons_of(message)]


def now(tg: Harness, message: dict[str, Any]) -> dict[str, Any]:
    """The message as the fake holds it now (its keyboard edited since it was sent)."""
    return tg.fake.messages[(message["chat"]["id"], message["message_id"])]


async def last_question(tg: Harness, count: int) -> dict[str, Any]:
    calls = await tg.fake.wait_for(
        "sendMessage", count,
        where=lambda c: any(str(b.get("callback_data", "")).startswith(("a:", "t:", "o:", "w:"))
                            for row in (c.params.get("reply_markup") or {})
                            .get("inline_keyboard", []) for b in row))
    message: dict[str, Any] = calls[-1].result
    return message


async def confidence_on(tg: Harness, chat: dict[str, Any], user: dict[str, Any]) -> None:
    await tg.command(chat, user, "/settings confidence on")
    assert (await tg.service.chat_settings.get(f"tg:{chat['id']}")).confidence


async def pressed(tg: Harness, message: dict[str, Any], user: dict[str, Any],
                  shown_option: int) -> tuple[int, dict[str, str]]:
    """Press an option; the post and the four buttons now on the keyboard (label -> data)."""
    post = await tg.post_of(message)
    press = await tg.press(message, user, f"a:{post}:{shown_option}")
    assert press.params.get("show_alert") is not True
    assert "How sure are you?" in press.params["text"]
    taps = {b["text"]: b["callback_data"] for b in buttons_of(now(tg, message))}
    assert list(taps) == ["🎯 Sure", "🤔 Think so", "🎲 Guessing", "Skip"]
    assert all(len(d.encode()) <= 64 for d in taps.values())
    assert await tg.service.storage.answers_for_post(post) == []  # the press records nothing
    return post, taps


async def test_a_press_asks_and_the_tap_records_sure_with_the_answer(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any]
) -> None:
    await confidence_on(tg, alice_dm, alice)
    await tg.command(alice_dm, alice, "/quiz sample")
    assert not tg.fake.calls_of("sendPoll")  # a poll would show the result at the vote
    q1 = await last_question(tg, 1)
    shown = await tg.service.questions.show(await tg.post_of(q1))
    assert shown is not None
    post, taps = await pressed(tg, q1, alice, shown.correct)

    tap = await tg.press(now(tg, q1), alice, taps["🎯 Sure"])
    assert tap.params["show_alert"] is True and tap.params["text"].startswith("✅ Correct!")
    [answer] = await tg.service.storage.answers_for_post(post)
    assert answer.correct and answer.confidence == int(Confidence.SURE)
    assert any(t.startswith("✅ Correct!") for t in tg.texts(alice_dm))
    assert data_of(now(tg, q1)) == [f"a:{post}:{i}" for i in range(len(shown.options))]
    q2 = await last_question(tg, 2)  # the run goes on, asking the same way
    assert q2["message_id"] != q1["message_id"] and "question 2 of 3" in q2["text"]

    again = await tg.press(now(tg, q1), alice, taps["🎲 Guessing"])  # the first is final
    assert again.params["text"].startswith("You already answered")
    assert await tg.service.storage.answers_for_post(post) == [answer]


async def test_skip_records_the_answer_with_no_confidence(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any]
) -> None:
    await confidence_on(tg, alice_dm, alice)
    await tg.command(alice_dm, alice, "/quiz sample")
    q1 = await last_question(tg, 1)
    post, taps = await pressed(tg, q1, alice, 0)
    await tg.press(now(tg, q1), alice, taps["Skip"])
    [answer] = await tg.service.storage.answers_for_post(post)
    assert answer.confidence is None


async def test_a_restart_between_the_press_and_the_tap_loses_nothing(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any]
) -> None:
    await confidence_on(tg, alice_dm, alice)
    await tg.command(alice_dm, alice, "/quiz sample")
    q1 = await last_question(tg, 1)
    post, taps = await pressed(tg, q1, alice, 1)
    await tg.restart()
    await tg.press(now(tg, q1), alice, taps["🤔 Think so"])
    [answer] = await tg.service.storage.answers_for_post(post)
    assert answer.confidence == int(Confidence.THINK_SO)
    shown = await tg.service.questions.show(post)
    assert shown is not None and answer.correct == (shown.correct == 1)


async def test_a_forged_tap_is_refused_and_records_nothing(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any], bob: dict[str, Any],
    group: dict[str, Any]
) -> None:
    await confidence_on(tg, alice_dm, alice)
    await tg.command(group, bob, "/quiz buttons")  # another live post, in a group
    other = await last_question(tg, 1)
    other_post = await tg.post_of(other)
    await tg.command(alice_dm, alice, "/quiz sample")
    q1 = await last_question(tg, 2)
    post, _ = await pressed(tg, q1, alice, 0)
    refused = [
        (q1, f"c:{other_post}:a0:2"),  # another post's
        (q1, f"c:{post}:a9:2"),  # an option the question has not
        (q1, f"c:{post}:a0:3"),  # a confidence outside 0-2
        (q1, f"c:{post}:m1:2"),  # a multi's picks on a choice
        (q1, f"c:{post}:o0:2"),  # an order's sequence on a choice
        (q1, f"c:{post}:a0"),  # no confidence at all
        (other, f"c:{other_post}:a0:2"),  # a group's question: never asked there
    ]
    for message, data in refused:
        tap = await tg.press(now(tg, message), alice, data)
        assert tap.params["show_alert"] is True
        assert tap.params["text"] == "This question is no longer available.", data
    assert await tg.service.storage.answers_for_post(post) == []
    assert await tg.service.storage.answers_for_post(other_post) == []


async def answer_with(tg: Harness, message: dict[str, Any], user: dict[str, Any],
                      option: int, tap: str) -> int:
    post, taps = await pressed(tg, message, user, option)
    await tg.press(now(tg, message), user, taps[tap])
    return post


async def test_review_cards_ask_too_and_a_sure_wrong_answer_is_stored_so(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any], clock: FakeClock
) -> None:
    await confidence_on(tg, alice_dm, alice)
    await tg.command(alice_dm, alice, "/quiz sample")
    missed = None
    for count in range(1, 4):
        message = await last_question(tg, count)
        shown = await tg.service.questions.show(await tg.post_of(message))
        assert shown is not None
        option = shown.correct if count > 1 else (shown.correct + 1) % len(shown.options)
        await answer_with(tg, message, alice, option, "🎯 Sure")
        missed = missed or shown.question_id
    assert any(t.startswith("🏁 Sample Quiz: 2 of 3 right") for t in tg.texts(alice_dm))
    clock.advance(120)  # the missed question is due again (FSRS's first step)
    await tg.command(alice_dm, alice, "/review")
    assert not tg.fake.calls_of("sendPoll")
    card = await last_question(tg, 4)
    post = await tg.post_of(card)
    shown = await tg.service.questions.show(post)
    assert shown is not None and shown.question_id == missed
    await answer_with(tg, card, alice, shown.correct, "🤔 Think so")
    [answer] = await tg.service.storage.answers_for_post(post)
    assert answer.correct and answer.confidence == int(Confidence.THINK_SO)


async def test_off_a_private_quiz_is_a_poll_and_a_press_answers_at_once(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any]
) -> None:
    await tg.command(alice_dm, alice, "/quiz sample")
    await tg.fake.wait_for("sendPoll")  # unchanged: a quiz poll
    await tg.command(alice_dm, alice, "/quiz buttons sample")
    q = await last_question(tg, 1)
    post = await tg.post_of(q)
    press = await tg.press(q, alice, f"a:{post}:0")
    assert press.params["show_alert"] is True and "How sure" not in press.params["text"]
    [answer] = await tg.service.storage.answers_for_post(post)
    assert answer.confidence is None


async def test_on_in_a_group_its_buttons_answer_at_once(
    tg: Harness, alice: dict[str, Any], group: dict[str, Any]
) -> None:
    tg.fake.set_admins(group["id"], alice["id"])
    await confidence_on(tg, group, alice)
    await tg.command(group, alice, "/quiz buttons")
    q = await last_question(tg, 1)
    post = await tg.post_of(q)
    press = await tg.press(q, alice, f"a:{post}:0")
    assert press.params["show_alert"] is True and "How sure" not in press.params["text"]
    [answer] = await tg.service.storage.answers_for_post(post)
    assert answer.confidence is None


async def test_on_in_private_polls_mode_asks_with_a_poll_as_before(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any]
) -> None:
    await confidence_on(tg, alice_dm, alice)
    await tg.command(alice_dm, alice, "/settings mode polls")
    await tg.command(alice_dm, alice, "/quiz sample")
    await tg.fake.wait_for("sendPoll")


class TestEveryKind:
    """A private run of the kinds pack: each kind answered with buttons asks; typed does not."""

    @pytest.fixture
    def service(self, storage: Storage, clock: FakeClock) -> QuizService:
        return QuizService(load_catalog(KINDS), storage, clock, random.Random(3))

    async def test_a_multis_submit_and_an_orders_last_press_ask_too(
        self, tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any]
    ) -> None:
        await confidence_on(tg, alice_dm, alice)
        await tg.command(alice_dm, alice, "/quiz kinds")
        seen: list[Kind] = []
        for count in range(1, 7):
            message = await last_question(tg, count)
            post = await tg.post_of(message)
            shown = await tg.service.questions.show(post)
            assert shown is not None
            seen.append(shown.kind)
            if shown.kind in (Kind.NUMERIC, Kind.TEXT):  # typed: answered at once, no tap
                await tg.send(tg.fake.say(alice_dm, alice, RIGHT_TYPED[shown.question_id]))
                [answer] = await tg.service.storage.answers_for_post(post)
                assert answer.correct and answer.confidence is None
                continue
            if shown.kind is Kind.MULTI:
                for option in shown.correct_set:
                    await tg.press(now(tg, message), alice, f"t:{post}:{option}")
                ask = await tg.press(now(tg, message), alice, f"s:{post}")
            elif shown.kind is Kind.ORDER:
                sequence = ""
                for option in shown.correct_set:
                    sequence += str(option)
                    ask = await tg.press(now(tg, message), alice, f"o:{post}:{sequence}")
            else:
                ask = await tg.press(message, alice, f"a:{post}:{shown.correct}")
            assert "How sure are you?" in ask.params["text"], shown.kind
            assert await tg.service.storage.answers_for_post(post) == []
            taps = {b["text"]: b["callback_data"] for b in buttons_of(now(tg, message))}
            await tg.press(now(tg, message), alice, taps["🎯 Sure"])
            [answer] = await tg.service.storage.answers_for_post(post)
            assert answer.correct and answer.confidence == int(Confidence.SURE), shown.kind
        assert sorted(k.value for k in seen) == sorted(k.value for k in Kind)
