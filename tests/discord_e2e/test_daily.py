"""/daily set | off | status, and the core's scheduler posting and closing through the adapter."""

from __future__ import annotations

from datetime import UTC, datetime, time
from typing import Any

from bot.adapters.discord import DiscordAdapter
from bot.core.models import Chat
from bot.core.scheduler import Scheduler, Tick
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.discord_e2e.helpers import bound_post, click, post_quiz
from tests.errorlog import ErrorLog
from tests.fakes.discord_api import (
    AUTOCOMPLETE_RESULT,
    MANAGE_GUILD,
    FakeDiscord,
    Reply,
    User,
    buttons_of,
    text_of,
)

SUCCESS = 3  # button style of the correct option once closed


def channel(fake: FakeDiscord) -> Chat:
    return Chat(f"dc:{fake.channel_id}")


async def daily(fake: FakeDiscord, sub: str, user: User, admin: bool = False,
                **options: Any) -> Reply:
    """/daily <sub> in the guild channel; the (ephemeral) reply."""
    reply = await fake.reply(await fake.slash(
        f"daily {sub}", options, user=user, permissions=MANAGE_GUILD if admin else None))
    assert reply.ephemeral
    return reply


def channel_posts(fake: FakeDiscord) -> list[dict[str, Any]]:
    """Messages the bot sent to the channel on its own (not as an interaction response)."""
    return [m for m in fake.messages.values()
            if m["type"] == 0 and int(m["channel_id"]) == fake.channel_id]


async def test_a_member_without_manage_server_is_refused(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User
) -> None:
    # the command exists (default_permissions only hides it; admins can show it to anyone)
    refused = await daily(fake, "set", alice, time="09:30", timezone="Asia/Kolkata")
    assert refused.text == "Only this chat's admins can change its daily question."
    assert await service.daily.status(channel(fake)) is None

    await daily(fake, "set", bob, admin=True, time="09:30")
    refused = await daily(fake, "off", alice)
    assert refused.text == "Only this chat's admins can change its daily question."
    assert await service.daily.status(channel(fake)) is not None


async def test_an_admin_sets_it_and_anyone_sees_the_status(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User
) -> None:
    # 12:00 UTC is 17:30 in Kolkata: today's 13:30 has passed, the first post is tomorrow
    done = await daily(fake, "set", bob, admin=True, time="13:30", timezone="Asia/Kolkata",
                       quiz="sample", minutes=90)
    status = await service.daily.status(channel(fake))
    assert status is not None
    assert (status.schedule.at, status.schedule.tz, status.schedule.selector) == \
        (time(13, 30), "Asia/Kolkata", "sample")
    assert status.schedule.open_minutes == 90
    assert status.next_post == datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
    assert "Done" in done.text

    shown = await daily(fake, "status", alice)  # no permission needed
    unix = int(status.next_post.timestamp())
    assert shown.text == "\n".join([
        "📅 A daily question at 13:30 (Asia/Kolkata).",
        "Quiz or topic: sample",
        "Open for 90 minutes",
        "Next question: Mon, Mar 2, 2026, 13:30",
        f"In your time zone: <t:{unix}:F> (<t:{unix}:R>)",
    ])


async def test_bad_time_zone_or_quiz_get_clear_replies_and_change_nothing(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, bob: User
) -> None:
    await daily(fake, "set", bob, admin=True, time="07:00", timezone="Europe/London")
    before = await service.daily.status(channel(fake))
    for options, expected in [
        ({"time": "25:00"}, "“25:00” is not a time: use HH:MM, 24-hour"),
        ({"time": "9am"}, "“9am” is not a time"),
        ({"time": "08:00", "timezone": "Mars/Olympus"},
         "“Mars/Olympus” is not a time zone: use an IANA name such as Asia/Kolkata"),
        ({"time": "08:00", "timezone": "Kolkata"}, "Did you mean: Asia/Kolkata?"),
    ]:
        reply = await daily(fake, "set", bob, admin=True, **options)
        assert expected in reply.text, reply.text
        assert reply.text.endswith("Nothing was changed.")
    reply = await daily(fake, "set", bob, admin=True, time="08:00", quiz="nope")
    assert "There is no quiz or topic called “nope”" in reply.text
    assert "sample — Sample Quiz" in reply.text  # the unknown quiz lists the real ones
    assert await service.daily.status(channel(fake)) == before


async def test_daily_off_and_the_status_without_a_schedule(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User
) -> None:
    none = await daily(fake, "status", alice)
    assert "This channel has no daily question" in none.text
    await daily(fake, "set", bob, admin=True, time="09:00")
    off = await daily(fake, "off", bob, admin=True)
    assert "off" in off.text
    assert await service.daily.status(channel(fake)) is None
    again = await daily(fake, "off", bob, admin=True)
    assert "no daily question" in again.text


async def test_daily_off_closes_the_open_daily_question_with_its_summary(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, scheduler: Scheduler,
    clock: FakeClock, alice: User, bob: User,
) -> None:
    """Open until the next day's by default: without a schedule nothing else would close it."""
    await daily(fake, "set", bob, admin=True, time="12:30", quiz="sample")
    clock.set(datetime(2026, 3, 1, 12, 30, tzinfo=UTC))
    assert (await scheduler.tick()).posted == 1
    [message] = channel_posts(fake)
    q = await service.questions.show(await bound_post(service, int(message["id"])))
    assert q is not None and q.closes_at is None
    await click(fake, message, q.correct, alice)

    off = await daily(fake, "off", bob, admin=True)
    assert off.text == "The daily question is off for this channel."
    closed = fake.messages[int(message["id"])]
    assert all(b.get("disabled") for b in buttons_of(closed)), "closed before the reply"
    assert "1 person answered · 100% right" in text_of(closed)
    post = await service.storage.get_post(q.post_id)
    assert post is not None and post.closed_at is not None
    late = await click(fake, message, q.correct, bob)
    assert "closed" in late.content


async def test_in_a_dm_the_person_sets_their_own(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply = await fake.reply(await fake.slash("daily set", {"time": "06:45"}, user=alice,
                                              dm=True))
    assert reply.text.startswith("Done: this channel gets a question every day.")
    dm = Chat(f"dc:{fake.dm_channel(alice)}")
    status = await service.daily.status(dm)
    assert status is not None and status.schedule.tz == "UTC"


async def test_time_zone_autocomplete(fake: FakeDiscord, bot: DiscordAdapter,
                                      alice: User) -> None:
    async def zones(typed: str) -> list[str]:
        it = await fake.autocomplete("daily set", {"time": "09:00", "timezone": typed},
                                     "timezone", user=alice)
        ack = await fake.ack(it)
        assert ack["type"] == AUTOCOMPLETE_RESULT
        choices = ack["data"]["choices"]
        assert all(c["name"] == c["value"] for c in choices)
        return [c["value"] for c in choices]

    assert await zones("kolk") == ["Asia/Kolkata"]
    assert await zones("DHAKA") == ["Asia/Dhaka"]
    assert "America/New_York" in await zones("new york")
    assert len(await zones("a")) == 25
    first = await zones("")
    assert first[:3] == ["UTC", "Asia/Kolkata", "Asia/Dhaka"] and len(first) <= 25
    assert await zones("nowhere") == []


async def test_quiz_autocomplete_in_daily_set(fake: FakeDiscord, bot: DiscordAdapter,
                                              alice: User) -> None:
    it = await fake.autocomplete("daily set", {"time": "09:00", "quiz": "sam"}, "quiz",
                                 user=alice)
    assert (await fake.ack(it))["data"]["choices"] == [
        {"name": "Sample Quiz (sample)", "value": "sample"}]


async def test_the_scheduler_posts_once_a_day_and_closes_the_previous_one(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, scheduler: Scheduler,
    clock: FakeClock, alice: User, bob: User,
) -> None:
    await daily(fake, "set", bob, admin=True, time="09:00", timezone="Asia/Dhaka",
                quiz="sample")
    assert await scheduler.tick() == Tick()  # set after today's 09:00 in Dhaka
    assert channel_posts(fake) == []

    clock.set(datetime(2026, 3, 2, 3, 0, tzinfo=UTC))  # 09:00 in Dhaka (UTC+6)
    assert await scheduler.tick() == Tick(posted=1)
    [first] = channel_posts(fake)
    assert len(buttons_of(first)) == 3 and "0 answers so far" in text_of(first)
    q1 = await service.questions.show(await bound_post(service, int(first["id"])))
    assert q1 is not None
    clock.advance(minutes=1)
    assert await scheduler.tick() == Tick()
    assert len(channel_posts(fake)) == 1, "a second tick posts nothing"

    answer = await click(fake, first, q1.correct, alice)
    assert "Correct" in answer.content
    await fake.until(lambda: "1 answer so far" in text_of(fake.messages[int(first["id"])]),
                     3.0, "the live count on the daily question")

    clock.set(datetime(2026, 3, 3, 3, 0, 30, tzinfo=UTC))
    assert await scheduler.tick() == Tick(posted=1)
    first_now, second = channel_posts(fake)
    assert first_now["id"] == first["id"]
    assert all(b.get("disabled") for b in buttons_of(first_now))
    assert buttons_of(first_now)[q1.correct]["style"] == SUCCESS
    assert "1 person answered · 100% right" in text_of(first_now)
    assert not any(b.get("disabled") for b in buttons_of(second))
    q2 = await service.questions.show(await bound_post(service, int(second["id"])))
    assert q2 is not None and q2.question_id != q1.question_id  # the pool cycles
    await click(fake, second, q2.correct, alice)

    stats = await fake.reply(await fake.slash("stats", user=alice))
    assert "Daily streak: 2 days (best 2)" in stats.text


async def test_a_quiz_leaves_the_daily_question_open(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, scheduler: Scheduler,
    clock: FakeClock, alice: User, bob: User,
) -> None:
    await daily(fake, "set", bob, admin=True, time="12:30", quiz="sample")
    clock.set(datetime(2026, 3, 1, 12, 30, tzinfo=UTC))
    # set at 12:00 for 12:30 the same day: posted today
    assert (await scheduler.tick()).posted == 1
    [daily_message] = channel_posts(fake)
    # an admin's /quiz replaces the open question (a member's points at it)
    first, _ = await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")
    await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")
    assert fake.edits(first.id), "the previous /quiz question was closed"
    assert not fake.edits(int(daily_message["id"])), "the daily question was not"
    answer = await click(fake, daily_message, 0, alice)
    assert "Correct" in answer.content or "Not quite" in answer.content


async def test_a_deleted_channel_loses_its_schedule_instead_of_retrying_forever(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, scheduler: Scheduler,
    clock: FakeClock, error_log: ErrorLog,
) -> None:
    gone = Chat("dc:4242", "deleted")
    await service.daily.set(gone, "12:30", allowed=True)
    clock.set(datetime(2026, 3, 1, 12, 30, tzinfo=UTC))
    assert await scheduler.tick() == Tick()  # Unknown Channel: ChatGone
    assert await service.daily.status(gone) is None
    assert not await service.storage.open_posts(gone.key)
    clock.advance(minutes=10)
    assert await scheduler.tick() == Tick()
    assert len(fake.find("POST", r"/channels/4242/messages")) == 1
    assert not error_log.records


async def test_a_channel_closed_to_the_bot_loses_its_schedule_when_a_question_closes(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, scheduler: Scheduler,
    clock: FakeClock, bob: User, error_log: ErrorLog,
) -> None:
    await daily(fake, "set", bob, admin=True, time="12:30", minutes=5)
    clock.set(datetime(2026, 3, 1, 12, 30, tzinfo=UTC))
    assert (await scheduler.tick()).posted == 1
    [message] = channel_posts(fake)
    fake.fail("PATCH", rf"/channels/\d+/messages/{message['id']}", 403, code=50001,
              message="Missing Access")
    clock.advance(minutes=6)
    assert (await scheduler.tick()).closed == 1  # Forbidden: ChatGone, nothing retried
    assert await service.daily.status(channel(fake)) is None
    clock.advance(hours=1)
    await scheduler.tick()
    assert len(fake.edits(int(message["id"]))) == 1
    assert not error_log.records


async def test_a_failed_closing_edit_does_not_hold_up_the_next_daily_question(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, scheduler: Scheduler,
    clock: FakeClock, bob: User,
) -> None:
    await daily(fake, "set", bob, admin=True, time="12:30")
    clock.set(datetime(2026, 3, 1, 12, 30, tzinfo=UTC))
    assert (await scheduler.tick()).posted == 1
    [first] = channel_posts(fake)
    fake.fail("PATCH", rf"/channels/\d+/messages/{first['id']}", 503)
    clock.set(datetime(2026, 3, 2, 12, 30, tzinfo=UTC))
    assert (await scheduler.tick()).posted == 1, "today's question is posted all the same"
    assert len(channel_posts(fake)) == 2
    assert not buttons_of(fake.messages[int(first["id"])])[0].get("disabled")
    clock.advance(seconds=31)  # the closing edit is offered again after the core's backoff
    await scheduler.tick()
    assert buttons_of(fake.messages[int(first["id"])])[0].get("disabled")
