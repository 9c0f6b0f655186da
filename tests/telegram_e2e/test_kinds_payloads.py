"""What the kinds of question send to the Bot API (the real PTB against the fake): a multi
as a quiz poll with every right id, sorted, and allows_multiple_answers; true/false as two
options in their order; a prompt too long for a poll's question whole in its description;
an order's keyboard with the sequence in its callback_data, within 64 bytes; a typed
answer as a reply to the question itself."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.adapters.telegram import app as tg_app
from bot.content import Catalog, load_catalog
from bot.core.ports import Storage
from bot.core.service import QuizService
from bot.settings import Settings
from tests.clock import FakeClock
from tests.fakes.telegram_api import FakeTelegramAPI
from tests.telegram_e2e.conftest import Harness

KINDS = Path(__file__).parent.parent / "data" / "kinds" / "kinds.yaml"
# at the content's 300-character limit: "1/2 · " in a round takes it over a poll's question
LONG = ("Which of these grow activation memory in a long training run? " * 5)[:299] + "?"


@pytest.fixture
def service(storage: Storage, clock: FakeClock, tmp_path: Path) -> QuizService:
    pack = yaml.safe_load(KINDS.read_text(encoding="utf-8"))
    for question in pack["questions"]:
        if question["id"] == "k-multi":
            long = [{**question, "id": f"k-long-{i}", "prompt": {k: LONG for k in
                                                                   question["prompt"]}}
                    for i in (1, 2)]
            one = {"id": "k-long", "title": "k-long", "questions": long}
            (tmp_path / "k-long.yaml").write_text(  # copies: the dumper writes no aliases
                yaml.safe_dump(json.loads(json.dumps(one)), allow_unicode=True),
                encoding="utf-8")
        one = {"id": question["id"], "title": question["id"],
               "questions": [{**question, "id": question["id"] + "-q"}]}
        (tmp_path / f"{question['id']}.yaml").write_text(yaml.safe_dump(one, allow_unicode=True),
                                                          encoding="utf-8")
    catalog: Catalog = load_catalog(tmp_path)
    return QuizService(catalog, storage, clock, random.Random(7))


def buttons(message: dict[str, Any]) -> list[str]:
    return [b["callback_data"] for row in (message.get("reply_markup") or {}).get(
        "inline_keyboard", []) for b in row]


async def test_a_multi_is_a_quiz_poll_with_every_right_id(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    await tg.command(group, alice, "/quiz k-multi")
    [poll] = tg.fake.calls_of("sendPoll")
    shown = await tg.service.questions.show(await tg.post_of(poll.result))
    assert shown is not None
    assert poll.params["correct_option_ids"] == sorted(shown.correct_set)
    assert len(poll.params["correct_option_ids"]) == 3
    assert poll.params["allows_multiple_answers"] is True
    assert poll.result["poll"]["correct_option_ids"] == sorted(shown.correct_set)
    assert "correct_option_id" not in poll.params  # the deprecated single id


async def test_a_true_false_is_a_poll_of_true_and_false(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    await tg.command(group, alice, "/quiz k-tf")
    [poll] = tg.fake.calls_of("sendPoll")
    assert [o["text"] for o in poll.result["poll"]["options"]] == ["True", "False"]
    assert poll.params["correct_option_ids"] == [1]
    assert not poll.params.get("allows_multiple_answers")


async def test_a_long_prompt_goes_whole_in_the_polls_description(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    await tg.command(group, alice, "/quiz k-long 2")
    [poll] = tg.fake.calls_of("sendPoll")
    assert len(LONG) == 300
    assert len(poll.params["question"]) == 300 and poll.params["question"].startswith("1/2 · ")
    assert poll.params["question"].endswith("…")
    assert poll.result["poll"]["description"] == LONG


async def test_a_short_prompt_has_no_description(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    await tg.command(group, alice, "/quiz k-multi")
    [poll] = tg.fake.calls_of("sendPoll")
    assert "description" not in poll.params


async def test_an_orders_keyboard_carries_the_sequence_in_64_bytes(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any]
) -> None:
    await tg.command(alice_dm, alice, "/quiz k-order")
    [sent] = [c for c in tg.fake.calls_of("sendMessage") if "inline_keyboard" in
              (c.params.get("reply_markup") or {})]
    post = await tg.post_of(sent.result)
    assert buttons(sent.result)[:4] == [f"o:{post}:{i}" for i in range(4)]
    await tg.press(sent.result, alice, f"o:{post}:2")
    now = tg.fake.messages[(alice_dm["id"], sent.result["message_id"])]
    offered = buttons(now)
    assert offered[:3] == [f"o:{post}:20", f"o:{post}:21", f"o:{post}:23"]
    assert f"o:{post}:" in offered  # start over
    assert any(d.startswith("r:") for d in offered)  # the ⚑ stays
    assert all(len(d.encode()) <= 64 for d in offered)
    assert await tg.service.storage.answer_of(post, f"tg:{alice['id']}") is None


async def test_a_reply_to_the_question_answers_it_in_a_group(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any], bob: dict[str, Any]
) -> None:
    await tg.command(group, alice, "/quiz k-num")
    [sent] = [c for c in tg.fake.calls_of("sendMessage") if "inline_keyboard" in
              (c.params.get("reply_markup") or {})]
    post = await tg.post_of(sent.result)
    await tg.send(tg.fake.reply(sent.result, bob, "0.4"))
    answer = await tg.service.storage.answer_of(post, f"tg:{bob['id']}")
    assert answer is not None and answer.correct
    # a message in the group that replies to nothing is no answer
    await tg.send(tg.fake.say(group, alice, "0.4"))
    assert await tg.service.storage.answer_of(post, f"tg:{alice['id']}") is None


async def test_forged_presses_are_refused_and_record_nothing(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any], bob: dict[str, Any],
    alice_dm: dict[str, Any],
) -> None:
    tg.fake.set_admins(group["id"], alice["id"])
    await tg.command(group, alice, "/settings mode buttons")
    await tg.command(group, alice, "/quiz k-multi")
    [multi] = [c.result for c in tg.fake.calls_of("sendMessage")
               if any(d.startswith("t:") for d in buttons(c.result))]
    post = await tg.post_of(multi)
    await tg.command(alice_dm, alice, "/quiz k-order")
    [order] = [c.result for c in tg.fake.calls_of("sendMessage")
               if any(d.startswith("o:") for d in buttons(c.result))]
    order_post = await tg.post_of(order)
    refused = "This question is no longer available."
    for message, data in [
        (multi, f"t:{order_post}:0"),  # another post's data on this message
        (multi, f"t:{post}:4"),  # a fifth option of four
        (multi, f"o:{post}:0"),  # an order's press on a multi
        (multi, f"w:{post}"),  # a typed answer's prompt on a multi
        (order, f"o:{order_post}:11"),  # an option twice
        (order, f"o:{order_post}:7"),  # an option it does not have
        (order, f"o:{order_post}:0123456789012"),  # longer than the pattern takes
    ]:
        press = await tg.press(message, bob if message is multi else alice, data)
        assert press.params.get("show_alert") and press.params["text"] == refused, data
    assert await tg.service.storage.answer_of(post, f"tg:{bob['id']}") is None
    assert await tg.service.storage.answer_of(order_post, f"tg:{alice['id']}") is None
    # Submit with nothing toggled records nothing either, and says what to do
    empty = await tg.press(multi, bob, f"s:{post}")
    assert "Pick one or more options first" in empty.params["text"]
    assert await tg.service.storage.answer_of(post, f"tg:{bob['id']}") is None


async def test_an_order_sent_with_no_reply_is_bound_by_its_first_press(
    fake_tg: FakeTelegramAPI, service: QuizService, tg_settings: Settings,
    monkeypatch: pytest.MonkeyPatch, alice: dict[str, Any], alice_dm: dict[str, Any],
) -> None:
    """A timeout after the send: the question may be there, is not sent again, and its
    first press binds it (publish.py, unconfirmed.py)."""
    monkeypatch.setattr(tg_app, "SEND_TIMEOUT", 0.5)
    tg = Harness(fake_tg, service, tg_settings)
    await tg.start()
    try:
        fake_tg.delay_next("sendMessage", 1.5)
        await tg.command(alice_dm, alice, "/quiz k-order")
        [sent] = fake_tg.calls_of("sendMessage", ok_only=False)
        assert await service.questions.post_id_for(
            f"tg-msg:{alice_dm['id']}:{sent.result['message_id']}") is None
        first = buttons(sent.result)[0]
        press = await tg.press(sent.result, alice, first)
        assert "no longer available" not in (press.params.get("text") or "")
        post = await tg.post_of(sent.result)
        assert first.startswith(f"o:{post}:")
    finally:
        await tg.stop()


async def test_toggles_show_their_picks_in_a_private_chat(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any]
) -> None:
    await tg.command(alice_dm, alice, "/settings mode buttons")
    await tg.command(alice_dm, alice, "/quiz k-multi")
    [sent] = [c for c in tg.fake.calls_of("sendMessage")
              if any(d.startswith("t:") for d in buttons(c.result))]
    post = await tg.post_of(sent.result)
    shown = await tg.service.questions.show(post)
    assert shown is not None

    def labels() -> list[str]:
        now = tg.fake.messages[(alice_dm["id"], sent.result["message_id"])]
        return [b["text"] for row in now["reply_markup"]["inline_keyboard"] for b in row]

    first, second = sorted(shown.correct_set)[:2]
    toast = await tg.press(sent.result, alice, f"t:{post}:{first}")
    assert not toast.params.get("show_alert")
    await tg.press(sent.result, alice, f"t:{post}:{second}")
    letters = "ABCD"
    assert [label for label in labels() if label.startswith("✓ ")][:2] == [
        f"✓ {letters[first]}", f"✓ {letters[second]}"]
    assert "⚑" in labels()
    await tg.press(sent.result, alice, f"s:{post}")
    answer = await tg.service.storage.answer_of(post, f"tg:{alice['id']}")
    assert answer is not None and not answer.correct  # two of three right: all or nothing
    assert [label for label in labels() if label.startswith("✓ ")] == ["✓ Submit"]
