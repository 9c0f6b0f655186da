"""An interaction delivered twice is normal (a gateway resume replays it; Discord refuses a second
response with 40060 "already acknowledged"): counted once, answered once, logged at INFO at
most, and nobody gets an apology for it."""

from __future__ import annotations

import logging

import pytest

from bot.adapters.discord import DiscordAdapter
from bot.core.service import QuizService
from bot.storage import SqliteStorage
from tests.discord_e2e.conftest import StartBot
from tests.discord_e2e.helpers import post_quiz
from tests.fakes.discord_api import FakeDiscord, User, text_of

QUIET = ("bot", "discord")  # loggers that must say nothing above INFO about a repeat


def loud(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records
            if r.levelno > logging.INFO and r.name.startswith(QUIET)]


async def test_a_click_delivered_again_to_the_same_process_is_dropped(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, storage: SqliteStorage,
    alice: User, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    it = await fake.click(reply.id, reply.buttons[q.correct]["custom_id"], user=alice)
    first = await fake.reply(it)
    await fake.redeliver(it)
    await fake.until(lambda: bot.intake.redelivered == 1, 3.0, "the copy to be dropped")
    assert len(fake.callback_attempts(it)) == 1, "answered once"
    assert (await fake.reply(it)).message == first.message, "what the person saw stands"
    assert [a.person_key for a in await storage.answers_for_post(q.post_id)] == \
        [f"dc:{alice.id}"]
    await fake.until(lambda: bot.publisher.idle, 3.0, "the count edit")
    assert "1 answer so far" in text_of(fake.messages[reply.id])
    assert not loud(caplog)


async def test_a_copy_arriving_while_the_click_is_handled_cannot_answer_it_first(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, storage: SqliteStorage,
    alice: User, caplog: pytest.LogCaptureFixture,
) -> None:
    """Both deliveries in flight at once: only the first is handled, so the person sees that
    their answer counted, never "you already answered" from the copy."""
    caplog.set_level(logging.INFO)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    hold = fake.hold("POST", r"/interactions/\d+/[^/]+/callback")
    it = await fake.click(reply.id, reply.buttons[q.correct]["custom_id"], user=alice)
    await fake.redeliver(it)
    await fake.until(lambda: bot.intake.redelivered == 1, 3.0, "the copy to be dropped")
    hold.release()
    answer = await fake.reply(it)
    assert "already" not in answer.content.lower()
    assert len(fake.callback_attempts(it)) == 1
    assert len(await storage.answers_for_post(q.post_id)) == 1
    assert not loud(caplog)


async def test_a_click_delivered_again_after_a_restart_is_refused_quietly(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, storage: SqliteStorage,
    alice: User, caplog: pytest.LogCaptureFixture,
) -> None:
    """Another process gets the copy: it reaches the core (first answer final) and its reply
    is refused by Discord with 40060. That is logged at INFO; no apology, no follow-up."""
    caplog.set_level(logging.INFO)
    first_bot = await start_bot()
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    it = await fake.click(reply.id, reply.buttons[q.correct]["custom_id"], user=alice)
    first = await fake.reply(it)
    await first_bot.stop()
    await start_bot()
    await fake.redeliver(it)
    await fake.until(lambda: len(fake.callback_attempts(it)) == 2, 3.0, "the second response")
    await fake.until(
        lambda: any("delivered again; answered already" in r.getMessage()
                    for r in caplog.records), 3.0, "the INFO line about the copy",
    )
    assert (await fake.reply(it)).message == first.message, "what the person saw stands"
    assert not it.followups, "no apology or second message"
    assert len(await storage.answers_for_post(q.post_id)) == 1
    assert not loud(caplog)


async def test_a_command_delivered_again_after_a_restart_is_refused_quietly(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, alice: User,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    first_bot = await start_bot()
    it = await fake.slash("stats", user=alice)
    first = await fake.reply(it)
    await first_bot.stop()
    await start_bot()
    await fake.redeliver(it)
    await fake.until(lambda: len(fake.callback_attempts(it)) == 2, 3.0, "the second response")
    await fake.until(
        lambda: any("delivered again; answered already" in r.getMessage()
                    for r in caplog.records), 3.0, "the INFO line about the copy",
    )
    assert (await fake.reply(it)).message == first.message
    assert not it.followups
    assert not loud(caplog)
