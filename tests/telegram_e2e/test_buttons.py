"""Button mode: inline keyboards, alerts, refusing data that does not match a live post."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.content.limits import tg_len
from bot.i18n import translator
from tests.telegram_e2e.conftest import Harness


def keyboard_data(message: dict[str, Any]) -> list[str]:
    """The answer buttons' data (the ⚑ below them reports a problem: r:<question id>)."""
    return [b["callback_data"] for row in message["reply_markup"]["inline_keyboard"] for b in row
            if not b["callback_data"].startswith("r:")]


async def button_question(
    tg: Harness, chat: dict[str, Any], user: dict[str, Any] | None, text: str = "/quiz buttons"
) -> dict[str, Any]:
    before = len(tg.fake.calls_of("sendMessage"))
    await tg.command(chat, user, text)
    calls = await tg.fake.wait_for(
        "sendMessage", before + 1, where=lambda c: "reply_markup" in c.params
    )
    message: dict[str, Any] = calls[-1].result
    return message


async def test_press_gets_an_alert_and_a_second_press_changes_nothing(tg, group, alice):
    message = await button_question(tg, group, alice)
    post_id = await tg.post_of(message)
    shown = await tg.service.questions.show(post_id)
    assert shown.prompt in message["text"]
    data = keyboard_data(message)
    assert len(data) == len(shown.options)
    assert all(len(d.encode()) <= 64 for d in data)
    assert not tg.fake.calls_of("sendPoll")

    press = await tg.press(message, alice, data[shown.correct])
    assert press.params["show_alert"] is True
    alert = press.params["text"]
    assert alert.startswith("✅ Correct!") and shown.explanation in alert
    assert tg_len(alert) <= 200
    [answer] = await tg.service.storage.answers_for_post(post_id)
    assert answer.correct

    wrong = (shown.correct + 1) % len(shown.options)
    again = await tg.press(message, alice, data[wrong])
    assert again.params["show_alert"] is True
    assert again.params["text"].startswith("You already answered")
    assert await tg.service.storage.answers_for_post(post_id) == [answer]


async def test_forged_callback_data_is_refused_and_nothing_stored(tg, group, alice, bob):
    message = await button_question(tg, group, alice)
    post_id = await tg.post_of(message)
    await tg.command(tg.fake.group(-1003, "Elsewhere"), bob, "/quiz")  # another live post
    [poll] = await tg.fake.wait_for("sendPoll")
    other_post = await tg.service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")
    await tg.command(group, alice, "/help")
    help_message = tg.fake.calls_of("sendMessage")[-1].result

    refusals = [
        (message, f"a:{other_post}:0"),  # a live post, but not this message's
        (message, "a:999999:0"),  # no such post
        (message, "not-ours"),  # not our format at all
        (message, f"a:{post_id}:-1"),
        (help_message, f"a:{post_id}:0"),  # right post, wrong message
    ]
    for target, data in refusals:
        press = await tg.press(target, bob, data)
        assert press.params["show_alert"] is True
        assert press.params["text"] == "This question is no longer available.", data

    out_of_range = await tg.press(message, bob, f"a:{post_id}:9")
    assert out_of_range.params["text"] == "That is not one of the options."

    assert await tg.service.storage.answers_for_post(post_id) == []
    assert await tg.service.storage.answers_for_post(other_post) == []
    assert await tg.service.storage.person_name("tg:1002") is None


async def test_stale_button_on_a_closed_question(tg, group, alice):
    tg.fake.set_admins(group["id"], alice["id"])  # an admin replaces the open question
    old = await button_question(tg, group, alice)
    old_post = await tg.post_of(old)
    old_data = keyboard_data(old)
    await button_question(tg, group, alice)  # replaces it

    [edit] = tg.fake.calls_of("editMessageReplyMarkup")
    assert edit.params["message_id"] == old["message_id"]
    assert "reply_markup" not in edit.result  # the old keyboard is gone
    assert any("Question closed" in t for t in tg.texts(group))

    # a client that still shows the old keyboard
    press = await tg.press(old, alice, old_data[0])
    assert press.params["text"] == "This question is closed; answers are no longer counted."
    assert await tg.service.storage.answers_for_post(old_post) == []


async def test_channels_get_buttons_automatically(tg, channel, alice):
    message = await button_question(tg, channel, None, "/quiz")
    assert not tg.fake.calls_of("sendPoll")  # a non-anonymous poll is refused in channels
    post_id = await tg.post_of(message)
    shown = await tg.service.questions.show(post_id)

    press = await tg.press(message, alice, keyboard_data(message)[shown.correct])
    assert press.params["text"].startswith("✅ Correct!")
    [answer] = await tg.service.storage.answers_for_post(post_id)
    assert answer.person_key == "tg:1001"


async def test_scheduler_posts_into_a_channel_with_buttons(tg, channel, clock):
    """The core's scheduler posts through the adapter, which reads the chat's kind stored
    when its command was seen, with no lookup."""
    await tg.command(channel, None, "/daily 12:30")
    await tg.restart()  # forgets that the chat is a channel
    clock.set(datetime(2026, 3, 1, 12, 30, tzinfo=UTC))
    assert (await tg.tick()).posted == 1

    assert not tg.fake.calls_of("getChat")
    [sent] = await tg.fake.wait_for("sendMessage", where=lambda c: "reply_markup" in c.params)
    post = await tg.service.storage.get_post(await tg.post_of(sent.result))
    assert post.kind == "daily"


async def test_a_press_delivered_again_is_handled_once_even_after_a_restart(
    tg, group, alice, error_log
):
    message = await button_question(tg, group, alice)
    post_id = await tg.post_of(message)
    shown = await tg.service.questions.show(post_id)
    first = tg.fake.press(message, alice, keyboard_data(message)[shown.correct])
    await tg.send(first)
    await tg.send(tg.fake.redeliver(first))  # the same press (same query id) again
    assert len(tg.fake.calls_of("answerCallbackQuery")) == 1

    await tg.restart()  # a new process does not remember it; Telegram refuses a 2nd answer
    await tg.send(tg.fake.redeliver(first))
    assert [c.status for c in tg.fake.calls_of("answerCallbackQuery", ok_only=False)] \
        == [200, 400]
    [answer] = await tg.service.storage.answers_for_post(post_id)
    assert answer.correct
    assert not error_log.records


async def test_a_channel_hears_refusals_in_its_language(tg, fake_tg, channel):
    await tg.command(channel, None, "/lang hi")  # a channel post speaks for the channel
    assert await tg.service.storage.chat_locale(f"tg:{channel['id']}") == "hi"
    await tg.command(channel, None, "/quiz nonsense")
    hi = translator("hi")
    assert tg.texts(channel)[-1].startswith(
        hi.gettext("There is no quiz or topic called “{name}”.", name="nonsense")
    )
    assert not fake_tg.calls_of("sendPoll")
