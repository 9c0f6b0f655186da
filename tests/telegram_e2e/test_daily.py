"""/daily end to end: admin checks through getChatMember, bad input, status, and the core's
Scheduler posting through the adapter (quiz polls in groups, buttons in channels)."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.core import render
from bot.core.models import Chat
from bot.i18n import translator
from tests.fakes.telegram_api import ANONYMOUS_ADMIN, Call, FakeTelegramAPI
from tests.telegram_e2e.conftest import Harness

KOLKATA = ZoneInfo("Asia/Kolkata")
EN = translator("en")


def chat_of(chat) -> Chat:
    return Chat(f"tg:{chat['id']}")


async def posted(tg: Harness) -> int:
    """One scheduler round; how many daily questions it posted."""
    return (await tg.tick()).posted


def summaries(fake: FakeTelegramAPI, chat: dict[str, Any]) -> list[Call]:
    return [c for c in fake.calls_of("sendMessage")
            if c.params["chat_id"] == chat["id"] and "Question closed" in c.params["text"]]


@pytest.fixture
def admin_alice(fake_tg, group, alice):
    fake_tg.set_admins(group["id"], alice["id"])
    return alice


async def test_a_non_admins_change_is_refused_after_asking_telegram(tg, fake_tg, group,
                                                                    admin_alice, bob):
    await tg.command(group, bob, "/daily 09:00")

    [check] = fake_tg.calls_of("getChatMember")
    assert check.params == {"chat_id": group["id"], "user_id": bob["id"]}
    assert tg.texts(group)[-1] == "Only this chat's admins can change its daily question."
    assert await tg.service.daily.status(chat_of(group)) is None

    await tg.command(group, bob, "/daily off")  # turning it off is a change too
    assert tg.texts(group)[-1] == "Only this chat's admins can change its daily question."
    assert len(fake_tg.calls_of("getChatMember")) == 1  # cached for a short while

    await tg.command(group, bob, "/daily")  # anyone may look
    status = tg.texts(group)[-1]
    assert status.startswith("This chat has no daily question.")
    assert "Only the group's admins can change it." in status
    assert "Usage: /daily HH:MM [Time/Zone] [quiz]" in status
    assert len(fake_tg.calls_of("getChatMember")) == 1  # looking needs no check


async def test_an_admin_sets_it_and_the_status_shows_the_next_post_in_its_zone(
    tg, fake_tg, group, admin_alice, bob
):
    # 12:00 UTC on Sunday 1 March is 17:30 in Kolkata: today's 09:00 has passed
    await tg.command(group, admin_alice, "/daily 09:00 Asia/Kolkata sample")

    [check] = fake_tg.calls_of("getChatMember")
    assert check.params == {"chat_id": group["id"], "user_id": admin_alice["id"]}
    status = await tg.service.daily.status(chat_of(group))
    assert (status.schedule.at, status.schedule.tz, status.schedule.selector) == (
        time(9, 0), "Asia/Kolkata", "sample"
    )
    assert status.next_post == datetime(2026, 3, 2, 9, 0, tzinfo=KOLKATA)
    reply = tg.texts(group)[-1]
    assert reply.startswith("Done: this chat gets a daily question.")
    assert "📅 A daily question at 09:00 (Asia/Kolkata)." in reply
    assert "Quiz or topic: sample" in reply
    assert "Next question: Mon, Mar 2, 2026, 09:00" in reply

    await tg.command(group, bob, "/daily")
    shown = tg.texts(group)[-1]
    assert shown.startswith(render.schedule_status_text(status, EN))

    # the admin changes it again: no second getChatMember within the cache's lifetime;
    # a zone typed in lower case is still found, and no zone means UTC
    await tg.command(group, admin_alice, "/daily 7:05 asia/dhaka")
    status = await tg.service.daily.status(chat_of(group))
    assert (status.schedule.at, status.schedule.tz, status.schedule.selector) == (
        time(7, 5), "Asia/Dhaka", None
    )
    await tg.command(group, admin_alice, "/daily 18:30")
    status = await tg.service.daily.status(chat_of(group))
    assert (status.schedule.tz, status.next_post) == (
        "UTC", datetime(2026, 3, 1, 18, 30, tzinfo=ZoneInfo("UTC"))
    )
    assert "Next question: Sun, Mar 1, 2026, 18:30" in tg.texts(group)[-1]
    assert len(fake_tg.calls_of("getChatMember")) == 1


@pytest.mark.parametrize("existing", [False, True])
async def test_bad_time_zone_or_quiz_get_clear_replies_and_change_nothing(
    tg, group, admin_alice, existing
):
    if existing:
        await tg.command(group, admin_alice, "/daily 08:15 Asia/Dhaka basics")
    before = await tg.service.daily.status(chat_of(group))
    cases = [
        ("/daily 25:00", "“25:00” is not a time: use HH:MM, 24-hour"),
        ("/daily 9am Asia/Kolkata", "“9am” is not a time"),
        ("/daily 09:00 Mars/Base", "“Mars/Base” is not a time zone: use an IANA name"),
        ("/daily 09:00 Kolkata sample", "Did you mean: Asia/Kolkata?"),
        ("/daily 09:00 Asia/Kolkata nonsense", "There is no quiz or topic called “nonsense”."),
        ("/daily 09:00 nonsense", "There is no quiz or topic called “nonsense”."),
    ]
    for command, expected in cases:
        await tg.command(group, admin_alice, command)
        reply = tg.texts(group)[-1]
        assert expected in reply, (command, reply)
        assert "Done" not in reply
        assert await tg.service.daily.status(chat_of(group)) == before, command
    assert "Nothing was changed." in tg.texts(group)[0 if not existing else 1]
    assert "• sample — Sample Quiz (3 questions)" in tg.texts(group)[-1]


async def test_anonymous_admin_and_private_chat_need_no_lookup(tg, fake_tg, group, alice,
                                                               alice_dm):
    await tg.command(group, None, "/daily 06:00 UTC", anonymous_admin=True)
    assert (await tg.service.daily.status(chat_of(group))).schedule.at == time(6, 0)

    # someone posting as another chat (their own channel) is not the group's admin
    other = {"id": -1007777, "type": "channel", "title": "Someone's channel"}
    message = fake_tg._new_message(group, sender_chat=other, text="/daily off",
                                   entities=[{"type": "bot_command", "offset": 0, "length": 6}],
                                   **{"from": {**ANONYMOUS_ADMIN, "id": 136817688}})
    await tg.send(fake_tg.push("message", message))
    assert tg.texts(group)[-1].startswith("Only this chat's admins")
    assert await tg.service.daily.status(chat_of(group)) is not None

    await tg.command(alice_dm, alice, "/daily 07:30 Europe/London")
    status = await tg.service.daily.status(chat_of(alice_dm))
    assert status.schedule.tz == "Europe/London"
    assert not fake_tg.calls_of("getChatMember")


async def test_scheduled_poll_once_a_day_with_the_previous_summary_and_streaks(
    tg, fake_tg, group, admin_alice, bob, clock
):
    await tg.command(group, admin_alice, "/daily 09:00 Asia/Kolkata")
    assert await posted(tg) == 0  # today's 09:00 was over before the schedule was set

    clock.set(datetime(2026, 3, 2, 9, 0, tzinfo=KOLKATA))
    assert await posted(tg) == 1
    [first] = fake_tg.calls_of("sendPoll")
    assert first.params["chat_id"] == group["id"]
    assert first.params["type"] == "quiz" and first.params["is_anonymous"] is False
    assert "open_period" not in first.params  # open until the next daily question
    first_post = await tg.service.questions.post_id_for(f"tg-poll:{first.result['poll']['id']}")
    assert (await tg.service.storage.get_post(first_post)).kind == "daily"
    assert await tg.service.questions.post_id_for(
        f"tg-msg:{group['id']}:{first.result['message_id']}"
    ) == first_post

    clock.advance(minutes=5)
    assert await posted(tg) == 0  # the same local day: nothing more
    assert len(fake_tg.calls_of("sendPoll")) == 1

    await tg.answer(first, admin_alice, first.params["correct_option_ids"][0])
    await tg.answer(first, bob, (first.params["correct_option_ids"][0] + 1) % 3)

    clock.set(datetime(2026, 3, 3, 9, 0, 30, tzinfo=KOLKATA))
    assert await posted(tg) == 1
    polls = fake_tg.calls_of("sendPoll")
    assert len(polls) == 2 and polls[1].params["chat_id"] == group["id"]
    [stop] = fake_tg.calls_of("stopPoll")
    assert stop.params["message_id"] == first.result["message_id"]
    [summary] = summaries(fake_tg, group)
    assert summary.params["reply_parameters"]["message_id"] == first.result["message_id"]
    assert stop.at <= summary.at <= polls[1].at  # closed, summarised, then the next one
    text = summary.params["text"]
    assert "2 people answered · 50% right" in text
    assert "Fastest: Alice Smith" in text
    assert (await tg.service.storage.get_post(first_post)).closed_at is not None
    assert await posted(tg) == 0

    await tg.answer(polls[1], admin_alice, polls[1].params["correct_option_ids"][0])
    await tg.command(group, admin_alice, "/stats")
    assert "Daily streak: 2 days (best 2)" in tg.texts(group)[-1]
    await tg.command(group, bob, "/stats")
    assert "Daily streak" not in tg.texts(group)[-1]  # never right on a daily question


async def test_quiz_leaves_the_daily_open_and_daily_off_closes_it(
    tg, fake_tg, group, admin_alice, clock
):
    await tg.command(group, admin_alice, "/daily 13:00")
    clock.set(datetime(2026, 3, 1, 13, 0, tzinfo=ZoneInfo("UTC")))
    assert await posted(tg) == 1
    [daily_poll] = fake_tg.calls_of("sendPoll")

    await tg.command(group, admin_alice, "/quiz")
    await tg.command(group, admin_alice, "/quiz")  # replaces the first /quiz, not the daily
    [stop] = fake_tg.calls_of("stopPoll")
    assert stop.params["message_id"] != daily_poll.result["message_id"]

    await tg.command(group, admin_alice, "/daily off")
    assert await tg.service.daily.status(chat_of(group)) is None
    assert "The daily question is off." in tg.texts(group)
    stops = fake_tg.calls_of("stopPoll")
    assert stops[-1].params["message_id"] == daily_poll.result["message_id"]
    assert summaries(fake_tg, group)[-1].params["reply_parameters"]["message_id"] == \
        daily_poll.result["message_id"]

    await tg.command(group, admin_alice, "/daily off")
    assert tg.texts(group)[-1] == "This chat has no daily question."
    clock.set(datetime(2026, 3, 2, 13, 0, tzinfo=ZoneInfo("UTC")))
    assert await posted(tg) == 0
    assert len(fake_tg.calls_of("sendPoll")) == 3


async def test_channel_gets_buttons_even_after_a_restart(tg, fake_tg, channel, alice, clock):
    await tg.command(channel, None, "/daily 12:30")  # only admins post in a channel
    assert not fake_tg.calls_of("getChatMember")
    await tg.restart()  # the adapter no longer remembers that this chat is a channel

    clock.set(datetime(2026, 3, 1, 12, 30, tzinfo=ZoneInfo("UTC")))
    assert await posted(tg) == 1
    assert not fake_tg.calls_of("sendPoll")
    assert not fake_tg.calls_of("getChat")  # the kind was stored with the chat
    [message] = [c.result for c in fake_tg.calls_of("sendMessage") if "reply_markup" in c.params]
    assert message["chat"]["id"] == channel["id"]
    shown = await tg.service.questions.show(await tg.post_of(message))
    data = message["reply_markup"]["inline_keyboard"][0][shown.correct]["callback_data"]
    press = await tg.press(message, alice, data)
    assert press.params["text"].startswith("✅ Correct!")


async def test_private_daily_poll(tg, fake_tg, alice, alice_dm, clock):
    await tg.command(alice_dm, alice, "/daily 20:00 Asia/Dhaka")  # 14:00 UTC
    clock.set(datetime(2026, 3, 1, 14, 0, tzinfo=ZoneInfo("UTC")))
    assert await posted(tg) == 1
    [poll] = fake_tg.calls_of("sendPoll")
    assert poll.params["chat_id"] == alice_dm["id"]
    await tg.answer(poll, alice, poll.params["correct_option_ids"][0])
    post_id = await tg.service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")
    [answer] = await tg.service.storage.answers_for_post(post_id)
    assert answer.person_key == "tg:1001" and answer.correct
    # the poll shows the verdict; the question stays open (its summary comes with the next)
    assert (await tg.service.storage.get_post(post_id)).closed_at is None


async def test_a_chat_the_bot_was_removed_from_loses_its_schedule(
    tg, fake_tg, group, admin_alice, clock, error_log
):
    await tg.command(group, admin_alice, "/daily 13:00")
    fake_tg.fail_next("sendPoll", status=403)  # "Forbidden: bot was kicked from the group"
    clock.set(datetime(2026, 3, 1, 13, 0, tzinfo=ZoneInfo("UTC")))
    await posted(tg)

    assert await tg.service.daily.status(chat_of(group)) is None
    assert not await tg.service.storage.open_posts(chat_of(group).key)
    clock.advance(minutes=10)  # past the scheduler's re-post delay: no retry, no error
    assert await posted(tg) == 0
    assert len(fake_tg.calls_of("sendPoll", ok_only=False)) == 1
    assert not error_log.records


async def test_a_failed_summary_does_not_hold_up_the_next_daily_and_is_posted_later(
    tg, fake_tg, group, admin_alice, clock
):
    await tg.command(group, admin_alice, "/daily 13:00")
    clock.set(datetime(2026, 3, 1, 13, 0, tzinfo=ZoneInfo("UTC")))
    assert await posted(tg) == 1
    [first] = fake_tg.calls_of("sendPoll")

    clock.set(datetime(2026, 3, 2, 13, 0, tzinfo=ZoneInfo("UTC")))
    fake_tg.fail_next("sendMessage", status=400)  # the summary is refused
    assert await posted(tg) == 1
    assert len(fake_tg.calls_of("sendPoll")) == 2  # today's question went out anyway
    assert not summaries(fake_tg, group)

    await tg.tick()  # too soon for another try
    assert not summaries(fake_tg, group)
    clock.advance(seconds=31)  # the core offers the unconfirmed summary again
    await tg.tick()
    [summary] = summaries(fake_tg, group)
    assert summary.params["reply_parameters"]["message_id"] == first.result["message_id"]
    for _ in range(3):  # more rounds, later: delivered once
        clock.advance(minutes=5)
        await tg.tick()
    assert len(summaries(fake_tg, group)) == 1


async def test_a_failed_admin_lookup_refuses_and_is_not_remembered(tg, fake_tg, group,
                                                                   admin_alice):
    fake_tg.fail_next("getChatMember", status=400)
    await tg.command(group, admin_alice, "/daily 09:00")
    assert tg.texts(group)[-1].startswith("Only this chat's admins")
    assert await tg.service.daily.status(chat_of(group)) is None

    await tg.command(group, admin_alice, "/daily 09:00")  # asked again, and allowed
    assert len(fake_tg.calls_of("getChatMember", ok_only=False)) == 2
    assert await tg.service.daily.status(chat_of(group)) is not None


async def test_group_upgraded_to_supergroup_keeps_its_schedule_and_board(
    tg, fake_tg, group, admin_alice
):
    await tg.command(group, admin_alice, "/daily 09:00 Asia/Kolkata")
    await tg.command(group, admin_alice, "/quiz")
    [poll] = fake_tg.calls_of("sendPoll")
    await tg.answer(poll, admin_alice, poll.params["correct_option_ids"][0])
    supergroup = fake_tg.group(-1009876543210, group["title"], kind="supergroup")
    # Telegram announces the upgrade in the old group with migrate_to_chat_id
    await tg.send(fake_tg.push("message", fake_tg._new_message(
        group, migrate_to_chat_id=supergroup["id"]
    )))
    assert await tg.service.daily.status(chat_of(group)) is None
    status = await tg.service.daily.status(chat_of(supergroup))
    assert status is not None and status.schedule.tz == "Asia/Kolkata"
    board = await tg.service.leaderboard(chat_of(supergroup))
    assert [row.person_key for row in board.rows] == [f"tg:{admin_alice['id']}"]
    # the announcement in the new chat (migrate_from_chat_id) finds nothing left to move
    await tg.send(fake_tg.push("message", fake_tg._new_message(
        supergroup, migrate_from_chat_id=group["id"]
    )))
    assert (await tg.service.daily.status(chat_of(supergroup))) is not None


async def test_daily_post_to_an_upgraded_group_follows_it(tg, fake_tg, group, admin_alice):
    await tg.command(group, admin_alice, "/daily 12:30")
    supergroup = fake_tg.group(-1001122334455, group["title"], kind="supergroup")
    fake_tg.fail_next("sendPoll", migrate_to=supergroup["id"])
    tg.service.clock.set(datetime(2026, 3, 1, 12, 30, tzinfo=ZoneInfo("UTC")))
    assert await posted(tg) == 1
    sent = [c for c in fake_tg.calls_of("sendPoll") if c.result]
    assert [c.params["chat_id"] for c in sent] == [supergroup["id"]]
    status = await tg.service.daily.status(chat_of(supergroup))
    assert status is not None and await tg.service.daily.status(chat_of(group)) is None
