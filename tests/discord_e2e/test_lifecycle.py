"""The adapter's life as `quizbot run` drives it (bot/adapters/__init__.py): a refused token at
start, a token revoked or a fatal close code while running, reconnects that are not failures,
and a stop that lets the clicks in flight commit and answer.

Every wait is on something the fake or the bot reports (a request, a RESUME, a log record, a
task), bounded; nothing sleeps and then asserts that nothing happened.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import discord.voice_client
import pytest

from bot.adapters import ConnectionLost, CredentialsRejected
from bot.adapters.discord import DiscordAdapter
from bot.core.service import QuizService
from bot.storage import SqliteStorage
from tests.discord_e2e.conftest import FAST, StartBot
from tests.discord_e2e.helpers import make_settings, post_quiz
from tests.errorlog import ErrorLog
from tests.fakes.discord_api import TOKEN, FakeDiscord, User

REJECTED = "DISCORD_BOT_TOKEN was rejected by Discord: check the token"
WRONG_TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gwrong.not-this-bots-token-at-all"
WITHIN = 5.0  # seconds; only reached when something is broken


def records_with_tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records
            if r.exc_info or r.exc_text]


async def failure(bot: DiscordAdapter) -> BaseException:
    return await asyncio.wait_for(bot.wait_failed(), WITHIN)


# start ---------------------------------------------------------------------------------------
async def test_a_rejected_token_is_one_clean_exception_without_the_token(
    fake: FakeDiscord, service: QuizService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    adapter = DiscordAdapter(service, make_settings(fake, discord_bot_token=WRONG_TOKEN), **FAST)
    with pytest.raises(CredentialsRejected) as raised:
        await adapter.start()
    error = raised.value
    assert str(error) == REJECTED
    # one exception: not chained to discord.py's LoginFailure and the 401 (whose response
    # still holds the request headers), and nothing logged with a traceback
    assert error.__cause__ is None and error.__suppress_context__
    assert not records_with_tracebacks(caplog)
    for text in (str(error), repr(error), caplog.text):
        assert WRONG_TOKEN not in text and TOKEN not in text
    assert fake.find("GET", "/users/@me"), "the token was tried"
    # nothing left running: no gateway connection, the client closed
    assert not fake.identify_tokens and not fake.connected and fake.connections == 0
    assert adapter.client is not None and adapter.client.is_closed()


async def test_an_api_that_is_not_discords_is_connection_lost_naming_the_setting(
    fake: FakeDiscord, start_bot: StartBot
) -> None:
    with pytest.raises(ConnectionLost, match="DISCORD_API_BASE_URL") as raised:
        await start_bot(settings={"discord_api_base_url": fake.api_base + "/nowhere"})
    assert "\n" not in str(raised.value) and TOKEN not in str(raised.value)
    assert not fake.connected


async def test_the_voice_warnings_are_silenced_and_other_warnings_are_not(
    fake: FakeDiscord, start_bot: StartBot, caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # discord.py warns once per process: make this start the first one
    monkeypatch.setattr(discord.voice_client.VoiceClient, "warn_nacl", True)
    monkeypatch.setattr(discord.voice_client.VoiceClient, "warn_dave", True)
    caplog.set_level(logging.WARNING)
    await start_bot()
    assert not discord.voice_client.VoiceClient.warn_nacl, "the warning was made"
    assert not [r for r in caplog.records if "voice" in r.getMessage()]
    logging.getLogger("discord.client").warning("some other warning")
    assert [r.getMessage() for r in caplog.records] == ["some other warning"]


# while running -------------------------------------------------------------------------------
async def test_a_token_revoked_while_running_ends_the_connection_as_rejected(
    fake: FakeDiscord, bot: DiscordAdapter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    await fake.close_gateway(4004, "Authentication failed.")
    reason = await failure(bot)
    assert isinstance(reason, CredentialsRejected)
    assert str(reason) == REJECTED
    assert TOKEN not in caplog.text
    # discord.py gave up: no reconnect, its client closed
    assert bot.client is not None and bot.client.is_closed()
    assert fake.connections == 1 and fake.identify_tokens == [TOKEN] and not fake.resumes
    assert not records_with_tracebacks(caplog)
    await bot.stop()


async def test_wait_failed_may_be_awaited_before_start(
    fake: FakeDiscord, service: QuizService
) -> None:
    adapter = DiscordAdapter(service, make_settings(fake), **FAST)
    watcher = asyncio.create_task(adapter.wait_failed())
    await adapter.start()
    try:
        await fake.close_gateway(4004)
        assert isinstance(await asyncio.wait_for(watcher, WITHIN), CredentialsRejected)
    finally:
        await adapter.stop()


@pytest.mark.parametrize("code", [4010, 4011, 4012, 4013, 4014])
async def test_a_fatal_close_code_ends_the_connection_as_lost(
    fake: FakeDiscord, bot: DiscordAdapter, code: int
) -> None:
    await fake.close_gateway(code)
    reason = await failure(bot)
    assert isinstance(reason, ConnectionLost)
    assert str(code) in str(reason) and "\n" not in str(reason)
    assert fake.connections == 1
    await bot.stop()


async def test_a_gateway_task_that_dies_ends_the_connection_as_lost(
    fake: FakeDiscord, bot: DiscordAdapter, error_log: ErrorLog
) -> None:
    error_log.allow("the gateway task died")  # with its traceback: it is unforeseen
    await fake.send_raw("{this is not json")
    reason = await failure(bot)
    assert isinstance(reason, ConnectionLost)
    assert "JSONDecodeError" in str(reason) and TOKEN not in str(reason)
    await bot.stop()


async def test_a_resumable_close_is_resumed_and_is_not_a_failure(
    fake: FakeDiscord, bot: DiscordAdapter, alice: User
) -> None:
    watcher = asyncio.create_task(bot.wait_failed())
    await fake.close_gateway(4000, "Unknown error.")
    await fake.until(lambda: fake.resumes, WITHIN, "a RESUME")
    assert fake.identify_tokens == [TOKEN], "resumed, not identified again"
    # still serving: an interaction after the resume is answered
    reply = await fake.reply(await fake.slash("stats", user=alice))
    assert reply.ephemeral
    assert not watcher.done()
    watcher.cancel()


async def test_an_outage_is_retried_with_one_warning_line_and_is_not_a_failure(
    fake: FakeDiscord, bot: DiscordAdapter, alice: User, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    watcher = asyncio.create_task(bot.wait_failed())
    fake.refuse_gateway(1)  # the first reconnect fails (503), discord.py backs off and retries
    await fake.close_gateway(1001, "Going away.")
    await fake.until(lambda: fake.resumes, WITHIN, "a RESUME after the outage")
    await fake.reply(await fake.slash("stats", user=alice))
    assert not watcher.done()
    watcher.cancel()
    [line] = [r for r in caplog.records if r.name == "discord.client"]
    assert line.levelno == logging.WARNING and not line.exc_info
    assert line.getMessage().startswith("Discord connection lost (WSServerHandshakeError")
    assert "reconnecting in" in line.getMessage()


# stopping ------------------------------------------------------------------------------------
Gate = tuple[asyncio.Event, asyncio.Event]  # (a commit has arrived, let it through)


def gate_commits(storage: SqliteStorage, monkeypatch: pytest.MonkeyPatch) -> Gate:
    """Answers wait before their commit until the test lets them through."""
    arrived, through = asyncio.Event(), asyncio.Event()
    record: Callable[..., Awaitable[Any]] = storage.record_answer

    async def gated(*args: Any, **kwargs: Any) -> Any:
        arrived.set()
        await through.wait()
        return await record(*args, **kwargs)

    monkeypatch.setattr(storage, "record_answer", gated)
    return arrived, through


async def test_stop_lets_a_click_in_flight_commit_and_answer_and_takes_no_new_one(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, storage: SqliteStorage,
    alice: User, bob: User, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.INFO)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    arrived, through = gate_commits(storage, monkeypatch)
    it = await fake.click(reply.id, reply.buttons[q.correct]["custom_id"], user=alice)
    await asyncio.wait_for(arrived.wait(), WITHIN)  # the click is about to commit

    stopping = asyncio.create_task(bot.stop())
    await fake.until(lambda: not bot.intake.open, WITHIN, "the intake to close")
    late = await fake.click(reply.id, reply.buttons[0]["custom_id"], user=bob)
    await fake.until(lambda: any(f"interaction {late.id} arrived while stopping" in
                                 r.getMessage() for r in caplog.records),
                     WITHIN, "the click during the drain to be turned away")
    assert not stopping.done() and fake.connected, "still waiting for the click in flight"

    through.set()
    await asyncio.wait_for(stopping, WITHIN)
    assert it.callback is not None, "the click in flight was answered before disconnecting"
    answer = await fake.reply(it)
    assert "already" not in answer.content.lower()
    assert [a.person_key for a in await storage.answers_for_post(q.post_id)] == \
        [f"dc:{alice.id}"]
    assert late.callback is None, "a click that came during the drain was not taken"
    await fake.until(lambda: not fake.connected, WITHIN, "the gateway connection to close")


async def test_stop_gives_up_on_a_stuck_click_within_its_bound(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, storage: SqliteStorage,
    alice: User, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.WARNING)
    bot = await start_bot(drain_timeout=0.2)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    arrived, _never = gate_commits(storage, monkeypatch)
    it = await fake.click(reply.id, reply.buttons[q.correct]["custom_id"], user=alice)
    await asyncio.wait_for(arrived.wait(), WITHIN)
    await asyncio.wait_for(bot.stop(), WITHIN)
    assert any("1 interaction(s) unfinished after 0.2 s were cancelled" in r.getMessage()
               for r in caplog.records)
    assert it.callback is None, "nothing was confirmed that was not stored"
    assert not await storage.answers_for_post(q.post_id)
    assert not fake.connected
