"""Slash commands other than the question flow, languages, errors and the 3 s deadline."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.adapters.discord import DiscordAdapter, replies
from bot.core.models import Chat
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.discord_e2e.helpers import bound_post, click, post_quiz, wrong
from tests.errorlog import ErrorLog
from tests.fakes.discord_api import (
    AUTOCOMPLETE_RESULT,
    DEFERRED_MESSAGE,
    EPHEMERAL,
    MANAGE_GUILD,
    FakeDiscord,
    User,
    buttons_of,
)


async def test_an_unknown_quiz_gets_an_ephemeral_list_and_closes_nothing(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    question, q = await post_quiz(fake, service, alice, quiz="sample")
    reply = await fake.reply(await fake.slash("quiz", {"quiz": "nope"}, user=alice))
    assert reply.ephemeral
    assert "There is no quiz or topic called “nope”" in reply.text
    assert "sample — Sample Quiz (3 questions)" in reply.text
    assert not fake.edits(question.id), "the open question was not closed"
    post = await service.storage.get_post(q.post_id)
    assert post is not None and post.closed_at is None


async def test_a_command_delivered_twice_runs_once(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    it = next(i for i in fake.interactions.values() if i.original_id == reply.id)
    await fake.redeliver(it)
    # handled in order: once /stats is answered, the replay was looked at
    await fake.reply(await fake.slash("stats", user=alice))
    assert len(fake.callback_attempts(it)) == 1, "the replay was dropped"
    assert [p.id for p in await service.storage.open_posts(f"dc:{fake.channel_id}")] == \
        [q.post_id], "the question shown is still the open one"


async def test_a_tag_selects_its_quizzes(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    _, q = await post_quiz(fake, service, alice, quiz="basics")
    assert q.quiz_id == "sample"


async def test_quiz_autocomplete_offers_ids_and_titles(
    fake: FakeDiscord, bot: DiscordAdapter, alice: User
) -> None:
    it = await fake.autocomplete("quiz", {"quiz": "SAMP"}, "quiz", user=alice)
    ack = await fake.ack(it)
    assert ack["type"] == AUTOCOMPLETE_RESULT
    assert ack["data"]["choices"] == [{"name": "Sample Quiz (sample)", "value": "sample"}]
    it = await fake.autocomplete("quiz", {"quiz": "zzz"}, "quiz", user=alice)
    assert (await fake.ack(it))["data"]["choices"] == []
    it = await fake.autocomplete("quiz", {"quiz": ""}, "quiz", user=alice)
    choices = (await fake.ack(it))["data"]["choices"]
    assert 1 <= len(choices) <= 25 and {"name": "Sample Quiz (sample)", "value": "sample"} \
        in choices


async def test_the_leaderboard_always_shows_the_callers_own_rank(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    people = [User(700 + i, f"P{i:02}") for i in range(12)]
    for person in people:
        await click(fake, reply, q.correct, person)
    await click(fake, reply, wrong(q), alice)
    board = await fake.reply(await fake.slash("leaderboard", {"period": "week"}, user=alice))
    assert board.ephemeral
    assert "Leaderboard · this week · #general" in board.text
    lines = board.text.splitlines()
    assert lines[1].startswith("1. P")
    assert lines[-2] == "…"
    assert lines[-1] == "13. Alice — 0/1 right (0 s)"


async def test_the_leaderboard_in_a_dm_covers_every_chat(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    await click(fake, reply, q.correct, alice)
    board = await fake.reply(await fake.slash("leaderboard", user=alice, dm=True))
    assert "Leaderboard · all time · all chats" in board.text
    assert "1. Alice — 1/1 right" in board.text


async def test_stats_and_review(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User,
    clock: FakeClock,
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    await click(fake, reply, wrong(q), alice)
    stats = await fake.reply(await fake.slash("stats", user=alice))
    assert stats.ephemeral
    assert "Stats for Alice" in stats.text and "1 question answered · 0% right" in stats.text
    assert "🧠 Review: 1 card, 0 due now" in stats.text
    review = await fake.reply(await fake.slash("review", user=alice))
    assert review.ephemeral and review.text.startswith("Nothing is due for review")
    clock.advance(120)  # a wrong answer comes back a minute later (FSRS's first step)
    review = await fake.reply(await fake.slash("review", user=alice))
    assert review.ephemeral and review.buttons  # the missed question, for Alice alone
    card = await service.questions.show(await bound_post(service, review.id))
    assert card is not None and (card.question_id, card.personal) == (q.question_id, True)
    result = await click(fake, review, card.correct, alice)
    assert result.ephemeral and result.text.startswith("✅")


async def test_channel_language_needs_manage_server(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    chat = Chat(f"dc:{fake.channel_id}")
    refused = await fake.reply(await fake.slash(
        "lang", {"code": "bn", "scope": "channel"}, user=alice))
    assert refused.ephemeral
    assert refused.text == "Only this chat's admins can change its language."
    assert await service.locales.for_audience(chat) == "en"

    done = await fake.reply(await fake.slash(
        "lang", {"code": "bn", "scope": "channel"}, user=alice, permissions=MANAGE_GUILD))
    assert done.ephemeral and "বাংলা" in done.text
    assert await service.locales.for_audience(chat) == "bn"
    # what the whole channel sees is now in Bengali, whoever asks
    reply, _ = await post_quiz(fake, service, User(5, "Eve"), quiz="sample")
    assert "নমুনা কুইজ" in reply.embeds[0]["title"]


async def test_a_channel_question_follows_the_servers_language(
    fake: FakeDiscord, bot: DiscordAdapter, alice: User
) -> None:
    reply = await fake.reply(await fake.slash("quiz", {"quiz": "sample"}, user=alice,
                                              guild_locale="bn"))
    assert "নমুনা কুইজ" in reply.embeds[0]["title"]


async def test_personal_language_and_reset(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    from bot.adapters.discord.identity import PREFIX
    from bot.core.models import Person

    me = Person(f"{PREFIX}{alice.id}", "Alice")
    set_bn = await fake.reply(await fake.slash("lang", {"code": "bn"}, user=alice))
    assert set_bn.ephemeral and "বাংলা" in set_bn.text
    assert await service.locales.for_person(me) == "bn"
    reset = await fake.reply(await fake.slash("lang", {"code": "auto"}, user=alice))
    assert "follows" in reset.text
    assert await service.locales.for_person(me) == "en"
    bad = await fake.reply(await fake.slash("lang", {"code": "xx"}, user=alice))
    assert bad.ephemeral and bad.text.startswith("I don't speak “xx”. Choose one of: en")


async def test_an_error_in_a_command_is_logged_and_apologised_for(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User,
    error_log: ErrorLog, monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("database on fire")

    monkeypatch.setattr(service.boards, "stats", broken)
    error_log.allow("/stats {} failed")
    reply = await fake.reply(await fake.slash("stats", user=alice))
    assert reply.ephemeral and "Sorry, something went wrong" in reply.text
    [record] = error_log.records
    assert record.getMessage().startswith("/stats {} failed")
    assert f"user {alice.id}" in record.getMessage()
    assert f"channel {fake.channel_id}" in record.getMessage()
    assert record.exc_info and "database on fire" in str(record.exc_info[1])


async def test_an_error_in_a_button_is_logged_and_apologised_for(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User,
    error_log: ErrorLog, monkeypatch: pytest.MonkeyPatch,
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("database on fire")

    monkeypatch.setattr(service, "answer", broken)
    error_log.allow("answer click (post")
    answer = await click(fake, reply, 0, alice)
    assert answer.ephemeral and "Sorry, something went wrong" in answer.text
    [record] = error_log.records
    assert f"answer click (post {q.post_id} option 0 message {reply.id}) failed: user " \
        f"{alice.id}" in record.getMessage()


async def test_slow_work_is_deferred_within_the_deadline(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(replies, "DEADLINE_BUDGET", 0.05)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    real_answer = service.answer
    release = asyncio.Event()

    async def slow(*args: Any, **kwargs: Any) -> Any:
        await release.wait()  # the database is slow until the test says otherwise
        return await real_answer(*args, **kwargs)

    monkeypatch.setattr(service, "answer", slow)
    it = await fake.click(reply.id, reply.buttons[q.correct]["custom_id"], user=alice)
    ack = await fake.ack(it)  # acknowledged while the work is still waiting
    assert ack["type"] == DEFERRED_MESSAGE and ack["data"]["flags"] & EPHEMERAL
    release.set()
    result = await fake.reply(it)
    assert result.ephemeral and "Correct" in result.content
    assert not buttons_of(result.message)


async def test_a_slow_quiz_in_a_channel_is_deferred_publicly(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The deadline covers waiting for the channel and closing the previous question."""
    monkeypatch.setattr(replies, "DEADLINE_BUDGET", 0.05)
    # an admin's /quiz replaces the open question (a member's points at it)
    first, _ = await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")
    release = asyncio.Event()
    real_close = bot.publisher.close_question

    async def slow_close(*args: Any, **kwargs: Any) -> None:
        await release.wait()  # Discord holds the closing edit back (a rate limit)
        await real_close(*args, **kwargs)

    monkeypatch.setattr(bot.publisher, "close_question", slow_close)
    it = await fake.slash("quiz", {"quiz": "sample"}, user=alice, permissions=MANAGE_GUILD)
    ack = await fake.ack(it)
    assert ack["type"] == DEFERRED_MESSAGE and not ack.get("data", {}).get("flags", 0) & EPHEMERAL
    release.set()
    second = await fake.reply(it)
    assert not second.ephemeral and len(second.buttons) == 3
    assert buttons_of(fake.messages[first.id])[0].get("disabled")
