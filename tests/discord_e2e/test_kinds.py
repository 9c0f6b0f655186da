"""Every kind of question on Discord, through the real discord.py and the fake API: what the
question message carries (a select with min/max values, True/False buttons, Answer, Put in
order), the form a typed answer is written in, the ephemeral order picker (Components V2)
whose buttons carry the order so far, and the refusals of what a modified client could send.
Each test runs a pack of one question of tests/data/kinds/kinds.yaml."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import yaml

from bot.adapters.discord.embeds import clip
from bot.content import Catalog, load_catalog
from bot.core.ports import Storage
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.discord_e2e.conftest import StartBot
from tests.discord_e2e.helpers import post_quiz
from tests.fakes.discord_api import (
    EPHEMERAL,
    MODAL,
    UPDATE_MESSAGE,
    FakeDiscord,
    Reply,
    User,
    all_components_of,
    flag_of,
)
from tests.fakes.discord_limits import IS_COMPONENTS_V2, LABEL, STRING_SELECT

KINDS = Path(__file__).parent.parent / "data" / "kinds" / "kinds.yaml"


def one_question(tmp_path: Path, question_id: str) -> Catalog:
    """The kinds pack with only `question_id` in it: /quiz asks that one."""
    pack = yaml.safe_load(KINDS.read_text(encoding="utf-8"))
    pack["questions"] = [q for q in pack["questions"] if q["id"] == question_id]
    assert pack["questions"], question_id
    folder = tmp_path / question_id
    folder.mkdir()
    (folder / "kinds.yaml").write_text(yaml.safe_dump(pack, allow_unicode=True),
                                       encoding="utf-8")
    return load_catalog(folder)


async def asked(question_id: str, tmp_path: Path, storage: Storage, clock: FakeClock,
                fake: FakeDiscord, start_bot: StartBot, alice: User,
                ) -> tuple[QuizService, Reply, Any]:
    service = QuizService(one_question(tmp_path, question_id), storage, clock,
                          random.Random(7))
    await start_bot(service=service)
    reply, q = await post_quiz(fake, service, alice, quiz="kinds")
    return service, reply, q


def component(message: dict[str, Any], prefix: str) -> dict[str, Any]:
    [found] = [c for c in all_components_of(message)
               if str(c.get("custom_id", "")).startswith(prefix)]
    return found


async def text_reply(fake: FakeDiscord, it: Any) -> Reply:
    reply = await fake.reply(it)
    assert reply.ephemeral, reply.message
    return reply


async def test_several_right_answers_are_one_select_with_min_and_max(
    tmp_path: Path, storage: Storage, clock: FakeClock, fake: FakeDiscord,
    start_bot: StartBot, alice: User, bob: User,
) -> None:
    service, reply, q = await asked("k-multi", tmp_path, storage, clock, fake, start_bot,
                                    alice)
    message = fake.messages[reply.id]
    menu = component(message, f"qm:{q.post_id}")
    assert menu["type"] == STRING_SELECT
    assert (menu["min_values"], menu["max_values"]) == (1, len(q.options))
    assert [o["value"] for o in menu["options"]] == [str(i) for i in range(len(q.options))]
    assert menu["options"][0]["label"] == f"A) {q.options[0]}"
    assert flag_of(message) is not None  # the ⚑ on its own row
    assert "menu below" in message["embeds"][0]["description"]
    right = [str(i) for i in q.correct_set]
    wrong = [v for v in map(str, range(len(q.options))) if v not in right][:1] + right[:1]
    first = await text_reply(fake, await fake.click(reply.id, menu["custom_id"], user=bob,
                                                    values=wrong))
    assert "❌" in first.text
    again = await text_reply(fake, await fake.click(reply.id, menu["custom_id"], user=bob,
                                                    values=right))
    assert "already" in again.text and "✅" not in again.text  # the first answer is final
    ok = await text_reply(fake, await fake.click(reply.id, menu["custom_id"], user=alice,
                                                 values=right))
    assert "✅" in ok.text
    assert await service.questions.live_count(q.post_id) == 2


async def test_a_pick_outside_the_options_is_refused_and_changes_nothing(
    tmp_path: Path, storage: Storage, clock: FakeClock, fake: FakeDiscord,
    start_bot: StartBot, alice: User, bob: User,
) -> None:
    service, reply, q = await asked("k-multi", tmp_path, storage, clock, fake, start_bot,
                                    alice)
    for values in (["0", "9"], ["x"], []):
        refused = await text_reply(fake, await fake.click(reply.id, f"qm:{q.post_id}",
                                                          user=bob, values=values))
        assert "✅" not in refused.text and "❌" not in refused.text
    assert await service.questions.live_count(q.post_id) == 0
    ok = await text_reply(fake, await fake.click(
        reply.id, f"qm:{q.post_id}", user=bob, values=[str(i) for i in q.correct_set]))
    assert "✅" in ok.text  # nothing was recorded before: the real answer still counts


async def test_true_false_buttons_say_true_and_false_in_the_chats_language(
    tmp_path: Path, storage: Storage, clock: FakeClock, fake: FakeDiscord,
    start_bot: StartBot, alice: User,
) -> None:
    _, reply, q = await asked("k-tf", tmp_path, storage, clock, fake, start_bot, alice)
    labels = [b["label"] for b in reply.buttons]
    assert labels == ["True", "False"] == list(q.options)  # never shuffled


async def test_a_number_is_typed_in_a_form_in_bengali_digits(
    tmp_path: Path, storage: Storage, clock: FakeClock, fake: FakeDiscord,
    start_bot: StartBot, alice: User, bob: User,
) -> None:
    _, reply, q = await asked("k-num", tmp_path, storage, clock, fake, start_bot, alice)
    button = component(fake.messages[reply.id], f"qt:{q.post_id}")
    assert button["type"] == 2 and button["label"] == "Answer"
    assert "GB" in fake.messages[reply.id]["embeds"][0]["description"]
    opened = await fake.click(reply.id, button["custom_id"], user=bob)
    form = (await fake.ack(opened))
    assert form["type"] == MODAL
    [label] = form["data"]["components"]
    assert label["type"] == LABEL and label["label"] == "Your answer"
    assert label["description"] == clip(q.prompt, 100)
    assert label["component"]["placeholder"] == "A number in GB"
    bad = await text_reply(fake, await fake.submit_modal(opened, {"answer": "about half"},
                                                         user=bob))
    assert "number" in bad.text  # says what is expected, and lets them try again
    again = await fake.click(reply.id, button["custom_id"], user=bob)
    await fake.ack(again)
    ok = await text_reply(fake, await fake.submit_modal(again, {"answer": "০.৪ GB"},
                                                        user=bob))
    assert "✅" in ok.text


async def test_a_form_from_another_message_is_refused(
    tmp_path: Path, storage: Storage, clock: FakeClock, fake: FakeDiscord,
    start_bot: StartBot, alice: User, bob: User,
) -> None:
    service, _, q = await asked("k-num", tmp_path, storage, clock, fake, start_bot, alice)
    other = fake.post_message(fake.channel_id, "not the question")
    refused = await text_reply(fake, await fake.forged_modal(
        f"qtm:{q.post_id}", {"answer": "0.4"}, user=bob, message=other))
    assert "✅" not in refused.text
    assert await service.questions.live_count(q.post_id) == 0


async def test_a_typed_text_in_latin_letters_is_accepted(
    tmp_path: Path, storage: Storage, clock: FakeClock, fake: FakeDiscord,
    start_bot: StartBot, alice: User, bob: User,
) -> None:
    _, reply, q = await asked("k-text", tmp_path, storage, clock, fake, start_bot, alice)
    opened = await fake.click(reply.id, f"qt:{q.post_id}", user=bob)
    form = await fake.ack(opened)
    assert form["data"]["components"][0]["component"]["placeholder"] == "A word or a few"
    ok = await text_reply(fake, await fake.submit_modal(opened, {"answer": "Punargonona"},
                                                        user=bob))
    assert "✅" in ok.text


async def picker_step(fake: FakeDiscord, picker: Reply, custom_id: str, user: User) -> Reply:
    it = await fake.click(picker.id, custom_id, user=user)
    await fake.ack(it)
    assert it.callback_type == UPDATE_MESSAGE, it.callback
    return Reply(fake.messages[picker.id])


async def test_an_order_is_built_on_an_ephemeral_v2_picker_and_survives_a_restart(
    tmp_path: Path, storage: Storage, clock: FakeClock, fake: FakeDiscord,
    start_bot: StartBot, alice: User, bob: User,
) -> None:
    service, reply, q = await asked("k-order", tmp_path, storage, clock, fake, start_bot,
                                    alice)
    assert list(q.correct_set) != list(range(len(q.options)))  # shown out of order
    opened = await fake.click(reply.id, f"qo:{q.post_id}:::n", user=bob)
    picker = await fake.reply(opened)
    assert picker.flags & EPHEMERAL and picker.flags & IS_COMPONENTS_V2
    assert not picker.content and not picker.embeds  # V2: text displays only
    assert all(o in picker.text for o in q.options) and "—" in picker.text
    submit = component(picker.message, f"qo:{q.post_id}:{reply.id}::s")
    assert submit["disabled"]
    seq = ""
    for n, i in enumerate(q.correct_set):
        if n == 2:  # a new process between two presses: the picker carries the order
            await start_bot(service=service)
        picker = await picker_step(fake, picker, f"qo:{q.post_id}:{reply.id}:{seq}:{i}", bob)
        seq += str(i)
        assert f"qo:{q.post_id}:{reply.id}:{seq}:s" in [
            c.get("custom_id") for c in all_components_of(picker.message)]
    assert " → ".join("ABCDEF"[i] for i in q.correct_set) in picker.text
    done = await text_reply(fake, await fake.click(
        picker.id, f"qo:{q.post_id}:{reply.id}:{seq}:s", user=bob))
    assert "✅" in done.text
    assert all(len(c.get("custom_id", "")) <= 100 for c in all_components_of(picker.message))


async def test_an_order_that_is_no_permutation_is_refused(
    tmp_path: Path, storage: Storage, clock: FakeClock, fake: FakeDiscord,
    start_bot: StartBot, alice: User, bob: User,
) -> None:
    service, reply, q = await asked("k-order", tmp_path, storage, clock, fake, start_bot,
                                    alice)
    n = len(q.options)
    for seq, act in (("0" * n, "s"), ("01", "1"), ("012", "s"), ("", "9")):
        custom_id = f"qo:{q.post_id}:{reply.id}:{seq}:{act}"
        forged = [{"type": 1, "components": [
            {"type": 2, "style": 1, "label": "x", "custom_id": custom_id}]}]
        refused = await text_reply(fake, await fake.click(reply.id, custom_id, user=bob,
                                                          components=forged))
        assert "✅" not in refused.text and "❌" not in refused.text
    # a sequence naming another message than the question's
    other = fake.post_message(fake.channel_id, "…")
    custom_id = f"qo:{q.post_id}:{other['id']}::0"
    await text_reply(fake, await fake.click(reply.id, custom_id, user=bob, components=[
        {"type": 1, "components": [{"type": 2, "style": 1, "label": "x",
                                    "custom_id": custom_id}]}]))
    assert await service.questions.live_count(q.post_id) == 0


async def test_closed_questions_disable_their_components(
    tmp_path: Path, storage: Storage, clock: FakeClock, fake: FakeDiscord,
    start_bot: StartBot, alice: User,
) -> None:
    for question_id, prefix in (("k-multi", "qm:"), ("k-num", "qt:"), ("k-order", "qo:")):
        service = QuizService(one_question(tmp_path, question_id), storage, clock,
                              random.Random(7))
        adapter = await start_bot(service=service)
        reply, q = await post_quiz(fake, service, alice, quiz="kinds", permissions=1 << 5)
        summary = await service.questions.close(q.post_id)
        assert summary is not None
        await adapter.close_question(summary)
        message = fake.messages[reply.id]
        own = component(message, prefix)
        assert own["disabled"], question_id
        assert message["embeds"][0]["title"].startswith("⏱")
        if question_id == "k-multi":
            assert own["placeholder"] == "✅ " + ", ".join("ABCD"[i] for i in q.correct_set)
        await adapter.stop()


async def test_a_form_opened_before_a_restart_is_answered_after_it(
    tmp_path: Path, storage: Storage, clock: FakeClock, fake: FakeDiscord,
    start_bot: StartBot, alice: User, bob: User,
) -> None:
    service, reply, q = await asked("k-text", tmp_path, storage, clock, fake, start_bot,
                                    alice)
    opened = await fake.click(reply.id, f"qt:{q.post_id}", user=bob)
    assert (await fake.ack(opened))["type"] == MODAL
    await start_bot(service=service)  # a new process takes the submission
    ok = await text_reply(fake, await fake.submit_modal(opened, {"answer": "recomputation"},
                                                        user=bob))
    assert "✅" in ok.text
    assert await service.questions.live_count(q.post_id) == 1
