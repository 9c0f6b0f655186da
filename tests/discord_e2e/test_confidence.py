"""The confidence tap on Discord (/settings confidence on), through the real discord.py and
the fake API: a press asks "How sure are you?" and records nothing; the tap records the
answer with its confidence and edits the prompt into the result; the buttons carry the first
step, so a restart in between loses nothing; a forged tap is refused and records nothing;
with the setting off a press answers at once. A typed answer's form asks in a select. Also
/settings' confidence and typed time."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

from bot.adapters.discord import DiscordAdapter
from bot.core.confidence_ask import SETTING_SECONDS
from bot.core.models import Confidence
from bot.core.ports import ChatSettingsRecord, Storage
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.discord_e2e.conftest import StartBot
from tests.discord_e2e.helpers import bound_post, click, post_quiz, wrong
from tests.discord_e2e.test_kinds import asked, component
from tests.fakes.discord_api import (
    DEFERRED_UPDATE,
    EPHEMERAL,
    MANAGE_GUILD,
    MODAL,
    UPDATE_MESSAGE,
    FakeDiscord,
    Reply,
    User,
    all_components_of,
)
from tests.fakes.discord_limits import LABEL, STRING_SELECT

LABELS = ["Sure", "Think so", "Guessing", "Skip"]


def first(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    return messages[0] if messages else None


async def confidence_on(fake: FakeDiscord, admin: User) -> Reply:
    reply = await fake.reply(await fake.slash("settings", {"confidence": True}, user=admin,
                                              permissions=MANAGE_GUILD))
    assert "Ask how sure with each answer: on" in reply.text
    return reply


async def stored(service: QuizService, post_id: int, who: User) -> Any:
    return await service.storage.answer_of(post_id, f"dc:{who.id}")


def prompt_buttons(prompt: Reply) -> dict[str, str]:
    """Label -> custom_id of the prompt's four buttons."""
    return {b["label"]: b["custom_id"] for b in all_components_of(prompt.message)
            if b.get("type") == 2}


async def tap(fake: FakeDiscord, prompt: Reply, custom_id: str, who: User,
              **kwargs: Any) -> Reply:
    """Tap a button of the prompt: the prompt itself becomes the reply."""
    it = await fake.click(prompt.id, custom_id, user=who, **kwargs)
    await fake.ack(it)
    assert it.callback is not None
    if it.callback["type"] == UPDATE_MESSAGE:
        return Reply(fake.messages[prompt.id])
    return await fake.reply(it)


async def test_a_press_asks_how_sure_and_the_tap_records_the_answer_with_it(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
) -> None:
    await confidence_on(fake, alice)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    prompt = await click(fake, reply, q.correct, bob)
    assert prompt.ephemeral and prompt.content == "How sure are you?"
    buttons = prompt_buttons(prompt)
    assert list(buttons) == LABELS
    assert all(len(c) <= 100 and c.startswith(f"qc:{q.post_id}:{reply.id}:o{q.correct}:")
               for c in buttons.values())
    assert await stored(service, q.post_id, bob) is None  # the press recorded nothing
    shown = copy.deepcopy(prompt.message["components"])
    done = await tap(fake, prompt, buttons["Sure"], bob)
    assert "Correct" in done.content and done.ephemeral
    assert prompt_buttons(done) == {}  # the prompt became the result, buttons gone
    answer = await stored(service, q.post_id, bob)
    assert answer is not None and answer.correct and answer.confidence == Confidence.SURE
    # the first answer is final: another tap of the same prompt changes nothing
    again = await tap(fake, prompt, buttons["Guessing"], bob, components=shown)
    assert "already" in again.text
    assert (await stored(service, q.post_id, bob)).confidence == Confidence.SURE


async def test_skip_stores_the_answer_without_a_confidence(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
) -> None:
    await confidence_on(fake, alice)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    prompt = await click(fake, reply, wrong(q), bob)
    done = await tap(fake, prompt, prompt_buttons(prompt)["Skip"], bob)
    assert "❌" in done.text or "Wrong" in done.text or "Not quite" in done.text, done.text
    answer = await stored(service, q.post_id, bob)
    assert answer is not None and not answer.correct and answer.confidence is None


async def test_a_restart_between_the_press_and_the_tap_loses_nothing(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, alice: User, bob: User,
) -> None:
    first = await start_bot()
    await confidence_on(fake, alice)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    prompt = await click(fake, reply, wrong(q), bob)
    await first.stop()
    await start_bot()  # a new process: nothing of the press is in memory
    done = await tap(fake, prompt, prompt_buttons(prompt)["Think so"], bob)
    assert done.ephemeral and prompt_buttons(done) == {}
    answer = await stored(service, q.post_id, bob)
    assert answer is not None and answer.option >= 0
    assert answer.confidence == Confidence.THINK_SO


async def test_a_forged_tap_is_refused_and_records_nothing(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
) -> None:
    await confidence_on(fake, alice)
    old, q1 = await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")
    reply, q = await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")
    prompt = await click(fake, reply, q.correct, bob)
    forged_ids = [
        f"qc:{q.post_id}:{reply.id}:o{q.correct}:3",  # a confidence outside 0-2
        f"qc:{q.post_id}:{reply.id}:o{len(q.options) + 3}:2",  # an option outside it
        f"qc:{q.post_id}:{reply.id}:o:2",  # no option at all
        f"qc:{q.post_id}:{old.id}:o{q.correct}:2",  # another post's message
        f"qc:{q1.post_id}:{reply.id}:o{q1.correct}:2",  # another post on this message
        f"qc:{q.post_id}:{reply.id}:m01:2",  # picks on a one-choice question
    ]
    for custom_id in forged_ids:
        forged = [{"type": 1, "components": [
            {"type": 2, "style": 1, "label": "Sure", "custom_id": custom_id}]}]
        refused = await tap(fake, prompt, custom_id, bob, components=forged)
        assert refused.ephemeral and "Correct" not in refused.text, custom_id
    assert await stored(service, q.post_id, bob) is None
    assert await stored(service, q1.post_id, bob) is None
    # the real tap still counts: nothing was recorded before it
    done = await tap(fake, prompt, prompt_buttons(prompt)["Sure"], bob)
    assert "Correct" in done.content


async def test_with_the_setting_off_a_press_answers_at_once(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    answer = await click(fake, reply, q.correct, bob)
    assert "Correct" in answer.content and not prompt_buttons(answer)
    assert (await stored(service, q.post_id, bob)).confidence is None
    # switched on, then off again: a press answers at once again
    await confidence_on(fake, alice)
    off = await fake.reply(await fake.slash("settings", {"confidence": False}, user=alice,
                                            permissions=MANAGE_GUILD))
    assert "Ask how sure with each answer: off" in off.text
    reply, q = await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")
    answer = await click(fake, reply, q.correct, bob)
    assert "Correct" in answer.content and not prompt_buttons(answer)


async def test_a_multis_select_and_an_orders_submit_ask_too(
    tmp_path: Path, storage: Storage, clock: FakeClock, fake: FakeDiscord,
    start_bot: StartBot, alice: User, bob: User,
) -> None:
    service, reply, q = await asked("k-multi", tmp_path, storage, clock, fake, start_bot,
                                    alice)
    await confidence_on(fake, alice)
    menu = component(fake.messages[reply.id], f"qm:{q.post_id}")
    right = [str(i) for i in q.correct_set]
    prompt = await fake.reply(await fake.click(reply.id, menu["custom_id"], user=bob,
                                               values=right))
    assert prompt.flags & EPHEMERAL and prompt.content == "How sure are you?"
    sure = prompt_buttons(prompt)["Sure"]
    assert f":m{''.join(sorted(right))}:" in sure
    assert await stored(service, q.post_id, bob) is None
    done = await tap(fake, prompt, sure, bob)
    assert "✅" in done.text
    assert (await stored(service, q.post_id, bob)).confidence == Confidence.SURE

    service, reply, q = await asked("k-order", tmp_path, storage, clock, fake, start_bot,
                                    alice)
    seq = "".join(str(i) for i in q.correct_set)
    custom_id = f"qo:{q.post_id}:{reply.id}:{seq}:s"
    submit = [{"type": 1, "components": [
        {"type": 2, "style": 3, "label": "Submit", "custom_id": custom_id}]}]
    prompt = await fake.reply(await fake.click(reply.id, custom_id, user=bob,
                                               components=submit))
    assert prompt.content == "How sure are you?"
    guessing = prompt_buttons(prompt)["Guessing"]
    assert f":s{seq}:0" in guessing
    done = await tap(fake, prompt, guessing, bob)
    assert "✅" in done.text
    assert (await stored(service, q.post_id, bob)).confidence == Confidence.GUESSING


async def test_settings_take_a_typed_time_and_the_confidence_option(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
) -> None:
    [put] = fake.find("PUT", rf"/applications/{fake.app_id}/commands")
    options = {o["name"]: o for o in next(c for c in put.json
                                          if c["name"] == "settings")["options"]}
    assert options["time"]["type"] == 3 and options["confidence"]["type"] == 5
    chat_key = f"dc:{fake.channel_id}"
    for typed, seconds in (("90", 90), ("10m", 600), ("2h", 7200), ("3d", 259200)):
        reply = await fake.reply(await fake.slash("settings", {"time": typed}, user=alice,
                                                  permissions=MANAGE_GUILD))
        assert (await service.chat_settings.get(chat_key)).question_seconds == seconds
        assert f"{seconds:,} s" in reply.text
    bad = await fake.reply(await fake.slash("settings", {"time": "5 weeks"}, user=alice,
                                            permissions=MANAGE_GUILD))
    assert bad.ephemeral and "30 days" in bad.text
    assert (await service.chat_settings.get(chat_key)).question_seconds == 259200
    refused = await fake.reply(await fake.slash("settings", {"confidence": True}, user=bob))
    assert refused.ephemeral
    assert not (await service.chat_settings.get(chat_key)).confidence
    shown = await confidence_on(fake, alice)
    assert "confidence" in shown.text  # the admins' line names it
    assert (await service.chat_settings.get(chat_key)).confidence


async def test_a_typed_answers_form_asks_how_sure_in_a_select(
    tmp_path: Path, storage: Storage, clock: FakeClock, fake: FakeDiscord,
    start_bot: StartBot, alice: User, bob: User,
) -> None:
    service, reply, q = await asked("k-text", tmp_path, storage, clock, fake, start_bot,
                                    alice)
    # off: the form has the answer alone
    opened = await fake.click(reply.id, f"qt:{q.post_id}", user=bob)
    assert len((await fake.ack(opened))["data"]["components"]) == 1
    await confidence_on(fake, alice)
    opened = await fake.click(reply.id, f"qt:{q.post_id}", user=bob)
    form = await fake.ack(opened)
    assert form["type"] == MODAL
    _, label = form["data"]["components"]
    assert label["type"] == LABEL and label["label"] == "How sure are you?"
    select = label["component"]
    assert select["type"] == STRING_SELECT and select["required"] is False
    assert (select["min_values"], select["max_values"]) == (0, 1)
    assert [(o["label"], o["value"]) for o in select["options"]] == \
        [("Sure", "2"), ("Think so", "1"), ("Guessing", "0")]
    # a forged choice (outside 0-2, or two of them) is refused and records nothing
    for forged in (["3"], ["2", "1"], ["n"]):
        refused = await fake.reply(await fake.submit_modal(
            opened, {"answer": "recomputation", "confidence": forged}, user=bob))
        assert refused.ephemeral and "✅" not in refused.text, forged
    assert await stored(service, q.post_id, bob) is None
    await start_bot(service=service)  # a new process takes the submission
    ok = await fake.reply(await fake.submit_modal(
        opened, {"answer": "recomputation", "confidence": ["1"]}, user=bob))
    assert "✅" in ok.text
    assert (await stored(service, q.post_id, bob)).confidence == Confidence.THINK_SO
    # left empty, it skips
    opened = await fake.click(reply.id, f"qt:{q.post_id}", user=alice)
    await fake.ack(opened)
    done = await fake.reply(await fake.submit_modal(
        opened, {"answer": "recomputation", "confidence": []}, user=alice))
    assert "✅" in done.text
    answer = await stored(service, q.post_id, alice)
    assert answer is not None and answer.confidence is None


async def test_a_private_run_in_a_dm_asks_each_answer_and_goes_on(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User,
) -> None:
    on = await fake.reply(await fake.slash("settings", {"confidence": True}, user=alice,
                                           dm=True))
    assert "Ask how sure with each answer: on" in on.text
    reply = await fake.reply(await fake.slash("quiz", {"quiz": "sample"}, user=alice,
                                              dm=True))
    for n in (1, 2, 3):
        q = await service.questions.show(await bound_post(service, reply.id))
        assert q is not None and q.run_id is not None
        prompt = await click(fake, reply, q.correct, alice)
        assert not prompt.ephemeral and prompt.content == "How sure are you?"  # a DM's own
        it = await fake.click(prompt.id, prompt_buttons(prompt)["Sure"], user=alice)
        await fake.ack(it)
        done = Reply(fake.messages[prompt.id])
        assert "Correct" in done.content and prompt_buttons(done) == {}
        assert (await stored(service, q.post_id, alice)).confidence == Confidence.SURE
        if n < 3:  # the next question comes as a message of its own
            reply = Reply(await fake.until(functools.partial(first, it.followups)))
            assert f"question {n + 1} of 3" in reply.embeds[0]["title"]
        else:
            assert "Sample Quiz: 3 of 3 right" in done.text


async def test_a_late_tap_is_deferred_and_then_edits_the_prompt(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
) -> None:
    """A tap handled past the responder's budget (made 10 s ago, as in a storm) is deferred
    without "thinking…" (Discord's deferred update) and the prompt edited once answered."""
    await confidence_on(fake, alice)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    prompt = await click(fake, reply, q.correct, bob)
    it = await fake.click(prompt.id, prompt_buttons(prompt)["Sure"], user=bob, age=10.0)
    assert (await fake.ack(it))["type"] == DEFERRED_UPDATE
    await fake.until(lambda: "Correct" in Reply(fake.messages[prompt.id]).content)
    assert prompt_buttons(Reply(fake.messages[prompt.id])) == {}
    assert not it.followups  # no message of its own: the prompt is the answer
    assert (await stored(service, q.post_id, bob)).confidence == Confidence.SURE


async def test_a_change_made_elsewhere_shows_within_the_settings_time(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, clock: FakeClock,
    alice: User, bob: User,
) -> None:
    """A press reads the chat's setting once per SETTING_SECONDS (the core's); a change
    another process made (here: straight into the store, this process not told) is seen
    once that time has passed."""
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    carol = User(900_000_000_000_000_003, "Carol")
    assert "Correct" in (await click(fake, reply, q.correct, bob)).content  # read: off
    await service.storage.set_chat_settings(
        ChatSettingsRecord(f"dc:{fake.channel_id}", confidence=True), clock.now())
    clock.advance(SETTING_SECONDS - 1)
    assert "Correct" in (await click(fake, reply, q.correct, carol)).content
    clock.advance(2)
    dan = User(900_000_000_000_000_004, "Dan")
    assert (await click(fake, reply, q.correct, dan)).content == "How sure are you?"
