"""Quizzes started by a tap (issue 37): /start, /help and the welcome offer a button per quiz
instead of a list of ids. In the private chat a button starts the quiz there (callback data
within Telegram's 64 bytes); in a group it is a t.me/<bot>?start=<quiz id> link, so a tap
starts it in the reader's private chat and the group is sent nothing."""

from __future__ import annotations

from typing import Any

BOT_LINK = "https://t.me/quizbot_test_bot?start="


def buttons(call: Any) -> list[dict[str, Any]]:
    return [b for row in call.params["reply_markup"]["inline_keyboard"] for b in row]


def last_to(tg: Any, chat: dict[str, Any]) -> Any:
    return [c for c in tg.fake.calls_of("sendMessage") if c.params["chat_id"] == chat["id"]][-1]


async def test_a_private_start_is_short_and_a_tap_starts_the_quiz(tg, alice, alice_dm):
    await tg.command(alice_dm, alice, "/start")
    hello = last_to(tg, alice_dm)
    assert len(hello.params["text"].splitlines()) <= 3
    assert "For admins" not in hello.params["text"] and "/analysis" not in hello.params["text"]
    quizzes = tg.service.questions.quizzes()
    [button] = buttons(hello)
    [quiz] = quizzes
    assert button["text"] == f"{quiz.title} · {quiz.questions} questions"
    assert button["callback_data"] == f"go:{quiz.id}"
    assert len(button["callback_data"].encode()) <= 64

    polls = len(tg.fake.calls_of("sendPoll"))
    press = await tg.press(hello.result, alice, button["callback_data"])
    assert "text" not in press.params  # answered quietly: the question is the answer
    [poll] = (await tg.fake.wait_for("sendPoll", polls + 1))[polls:]
    assert poll.params["chat_id"] == alice["id"]
    assert poll.params["question"].startswith(f"1/{quiz.questions} · ")  # the whole quiz, run


async def test_a_groups_help_and_welcome_link_each_quiz_to_the_private_chat(tg, group, alice,
                                                                             alice_dm):
    await tg.command(group, alice, "/help")
    help_message = last_to(tg, group)
    [quiz] = tg.service.questions.quizzes()
    assert quiz.id not in help_message.params["text"].replace(f"{BOT_LINK}", "")
    [button] = buttons(help_message)
    assert button["url"] == BOT_LINK + quiz.id

    await tg.send(tg.fake.bot_added(group, alice))
    [welcome] = [c for c in tg.fake.calls_of("sendMessage") if c.params["chat_id"] == group["id"]
                 and "Hello!" in c.params["text"]]
    assert [b["url"] for b in buttons(welcome)] == [BOT_LINK + quiz.id]
    assert len(welcome.params["text"].splitlines()) <= 4

    await tg.command(alice_dm, alice, f"/start {quiz.id}")  # what the link sends
    [poll] = await tg.fake.wait_for("sendPoll", where=lambda c: c.params["chat_id"] == alice["id"])
    assert poll.params["question"].startswith("1/")


async def test_a_start_button_outside_the_private_chat_or_for_no_quiz_is_refused(
        tg, group, alice, alice_dm):
    await tg.command(group, alice, "/help")
    message = last_to(tg, group).result
    press = await tg.press(message, alice, "go:sample")  # forged: a group has links only
    assert press.params["text"] == "This button works in our private chat."
    await tg.command(alice_dm, alice, "/start")
    press = await tg.press(last_to(tg, alice_dm).result, alice, "go:no-such-quiz")
    assert "no-such-quiz" in press.params["text"]
    assert tg.fake.calls_of("sendPoll") == []


async def test_the_admins_commands_in_private_on_help_admin(tg, alice, alice_dm):
    await tg.command(alice_dm, alice, "/help")
    text = tg.texts(alice_dm)[-1]
    assert "For admins:" not in text and "/help admin lists what admins use in a group." in text
    await tg.command(alice_dm, alice, "/help admin")
    assert "For admins:" in tg.texts(alice_dm)[-1] and "/analysis" in tg.texts(alice_dm)[-1]
