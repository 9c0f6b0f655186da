"""Admin output asked for in a group goes to the admin's private chat (issue 37): /analysis
(which marks every right answer) and /reports (reporters' names and words). The group gets one
line; an admin the bot cannot write to yet gets a button that opens the private chat."""

from __future__ import annotations

from typing import Any

import pytest

BOT_LINK = "https://t.me/quizbot_test_bot?start="


def to(tg: Any, chat: dict[str, Any]) -> list[Any]:
    return [c for c in tg.fake.calls if c.ok and c.method in ("sendMessage", "sendPhoto")
            and c.params["chat_id"] == chat["id"]]


async def answered_question(tg: Any, group: dict[str, Any], alice: dict[str, Any],
                            bob: dict[str, Any]) -> None:
    await tg.command(group, alice, "/quiz")
    [poll] = await tg.fake.wait_for("sendPoll")
    await tg.answer(poll, bob, poll.params["correct_option_ids"][0])


@pytest.mark.parametrize("command", ["/analysis", "/reports"])
async def test_asked_in_a_group_it_comes_privately(tg, group, alice, bob, command):
    tg.fake.set_admins(group["id"], alice["id"])
    alice_dm = tg.fake.private_chat(alice)  # she started the bot
    await answered_question(tg, group, alice, bob)
    await tg.command(group, bob, "/report the options overlap")  # bob's words, bob's name
    in_group = len(to(tg, group))

    await tg.command(group, alice, command)
    [note] = to(tg, group)[in_group:]
    assert note.params["text"] == "Sent to you in our private chat."
    private = [c.params.get("text") or "" for c in to(tg, alice_dm)]
    assert private[0].startswith("For Study Group:")
    if command == "/analysis":
        assert "Item analysis" in private[0]
        assert [c for c in to(tg, alice_dm) if c.method == "sendPhoto"]  # the chart too
    else:
        assert "the options overlap" in private[0] and "Bob" in private[0]


@pytest.mark.parametrize("command", ["/analysis", "/reports"])
@pytest.mark.parametrize("refusal", ["never started", "blocked"])
async def test_an_admin_the_bot_cannot_write_to_gets_a_link(tg, group, alice, bob, command,
                                                            refusal):
    tg.fake.set_admins(group["id"], alice["id"])
    await answered_question(tg, group, alice, bob)
    if refusal == "blocked":  # she started the bot once, then blocked it
        tg.fake.private_chat(alice)
        tg.fake.fail_next("sendMessage", status=403,
                          description="Forbidden: bot was blocked by the user")
    in_group = len(to(tg, group))
    await tg.command(group, alice, command)
    [told] = to(tg, group)[in_group:]
    assert told.params["text"] == (
        "I can only send this to you privately, and I cannot write to you yet: open our "
        f"private chat with the button, press Start, then send {command} here again.")
    [[button]] = told.params["reply_markup"]["inline_keyboard"]
    assert button["url"] == BOT_LINK + "hi_" + command[1:]
    assert not [c for c in tg.fake.calls if c.ok and c.params.get("chat_id") == alice["id"]]

    alice_dm = tg.fake.private_chat(alice)
    await tg.command(alice_dm, alice, f"/start hi_{command[1:]}")  # what the button sends
    assert tg.texts(alice_dm)[-1] == (f"Thank you: I can write to you here now. Send {command} "
                                      "in the group again and its answer comes here.")


async def test_a_member_is_still_refused_in_the_group(tg, group, alice, bob):
    tg.fake.private_chat(bob)
    await tg.command(group, bob, "/analysis")
    assert tg.texts(group)[-1].startswith("Only this chat's admins can see its item analysis.")
    assert tg.texts(bob) == []


async def test_in_the_private_chat_it_is_answered_there(tg, alice, alice_dm):
    await tg.command(alice_dm, alice, "/reports")
    assert tg.texts(alice_dm) == ["No open reports in this chat."]
