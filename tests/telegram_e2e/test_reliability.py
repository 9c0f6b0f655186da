"""Start-up, flood control, network errors, handler errors, redelivery, secrets in logs."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from pydantic import SecretStr
from telegram import Update
from telegram.error import (
    BadRequest,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TimedOut,
)

from bot.adapters import CredentialsRejected
from bot.adapters.telegram import TelegramAdapter
from bot.adapters.telegram.app import file_base_url, quiet_library_deprecations
from bot.adapters.telegram.publish import platform_errors
from bot.core.models import Chat
from bot.core.ports import ChatGone, TryLater
from tests.telegram_e2e.conftest import QUESTION_SECONDS


async def test_start_registers_commands_and_asks_for_every_update_type(tg, fake_tg):
    names = [c["command"] for c in fake_tg.commands[""]]
    for name in ("start", "help", "quiz", "leaderboard", "stats", "review", "lang"):
        assert name in names
    assert fake_tg.calls_of("deleteWebhook")
    await fake_tg.wait_for("getUpdates")
    assert sorted(fake_tg.allowed_updates) == sorted(Update.ALL_TYPES)
    assert "poll_answer" in fake_tg.allowed_updates
    assert "callback_query" in fake_tg.allowed_updates


def test_file_url_follows_the_api_url():
    assert file_base_url("https://api.telegram.org/bot") == "https://api.telegram.org/file/bot"
    assert file_base_url("http://127.0.0.1:8081/bot/") == "http://127.0.0.1:8081/file/bot"
    assert file_base_url("http://h/tg/bot{token}") == "http://h/tg/file/bot{token}"


async def test_help_in_a_group(tg, group, alice):
    await tg.command(group, alice, "/help@quizbot_test_bot")
    [reply] = tg.texts(group)
    assert "/leaderboard [day|week|all]" in reply
    sent = tg.fake.calls_of("sendMessage")[0]
    assert sent.params["reply_parameters"]["message_id"] == 1  # quotes the command
    # ...and still answers if the command was deleted meanwhile
    assert sent.params["reply_parameters"]["allow_sending_without_reply"] is True


async def test_flood_wait_is_retried_and_the_message_arrives(tg, fake_tg, group, alice):
    fake_tg.fail_next("sendPoll", retry_after=1)
    await tg.command(group, alice, "/quiz")

    attempts = fake_tg.calls_of("sendPoll", ok_only=False)
    assert [c.status for c in attempts] == [429, 200]
    assert attempts[1].at - attempts[0].at >= 1.0  # waited as told
    post_id = await tg.service.questions.post_id_for(f"tg-poll:{attempts[1].result['poll']['id']}")
    assert post_id is not None


async def test_network_errors_are_retried(tg, fake_tg, alice, alice_dm):
    fake_tg.fail_next("sendMessage", status=502, times=2)
    await tg.command(alice_dm, alice, "/help")

    attempts = fake_tg.calls_of("sendMessage", ok_only=False)
    assert [c.status for c in attempts] == [502, 502, 200]
    assert "/leaderboard" in tg.texts(alice_dm)[0]


async def test_an_error_in_a_handler_is_logged_with_context_and_apologised_for(
    tg, alice, alice_dm, error_log, monkeypatch
):
    async def broken(*args, **kwargs):
        raise RuntimeError("database on fire")

    monkeypatch.setattr(tg.service.boards, "stats", broken)
    error_log.allow("handling update")
    await tg.command(alice_dm, alice, "/stats")

    assert tg.texts(alice_dm) == ["Sorry, something went wrong on my side. Please try again."]
    [record] = error_log.records
    message = record.getMessage()
    assert "chat tg:1001" in message and "from tg:1001" in message and "'/stats'" in message
    assert record.exc_info and "database on fire" in str(record.exc_info[1])

    # the bot is still alive
    monkeypatch.undo()
    await tg.command(alice_dm, alice, "/stats")
    assert tg.texts(alice_dm)[-1].startswith("📊 Stats for Alice Smith")


async def test_an_error_while_answering_a_button_gets_an_alert(
    tg, group, alice, error_log, monkeypatch
):
    await tg.command(group, alice, "/quiz buttons")
    [sent] = await tg.fake.wait_for("sendMessage", where=lambda c: "reply_markup" in c.params)
    data = sent.result["reply_markup"]["inline_keyboard"][0][0]["callback_data"]

    async def broken(*args, **kwargs):
        raise RuntimeError("lost the database")

    monkeypatch.setattr(tg.service, "answer", broken)
    error_log.allow("handling update")
    press = await tg.press(sent.result, alice, data)
    assert press.params == {
        "callback_query_id": press.params["callback_query_id"],
        "text": "Sorry, something went wrong on my side. Please try again.",
        "show_alert": True,
    }
    assert "callback 'a:" in error_log.records[0].getMessage()


async def test_a_redelivered_command_runs_once(tg, fake_tg, group, alice):
    first = fake_tg.command(group, alice, "/quiz")
    await tg.send(first)
    await tg.send(fake_tg.redeliver(first))
    assert len(fake_tg.calls_of("sendPoll")) == 1
    assert not fake_tg.calls_of("stopPoll")


async def test_the_token_never_reaches_the_logs(tg, fake_tg, group, alice, caplog):
    caplog.set_level(logging.DEBUG)
    await tg.restart()  # start-up logs the API URL at DEBUG
    await tg.command(group, alice, "/quiz")
    [poll] = await fake_tg.wait_for("sendPoll")
    await tg.answer(poll, alice, 0)
    await tg.stop()

    assert any("/bot<token>" in r.getMessage() for r in caplog.records)  # PTB tried to
    secret = fake_tg.token.split(":")[1]
    for record in caplog.records:
        assert secret not in record.getMessage(), record.name
        assert secret not in (record.exc_text or "")
    assert logging.getLogger("httpx").getEffectiveLevel() >= logging.WARNING


async def test_a_wrong_token_fails_start_cleanly(fake_tg, service, tg_settings):
    settings = tg_settings.model_copy(update={"telegram_bot_token": SecretStr("1:wrong")})
    adapter = TelegramAdapter(service, settings)
    with pytest.raises(CredentialsRejected) as rejected:
        await adapter.start()
    assert "TELEGRAM_BOT_TOKEN" in str(rejected.value) and "wrong" not in str(rejected.value)
    assert isinstance(rejected.value.__cause__, InvalidToken)
    await adapter.stop()  # harmless after a failed start
    assert not fake_tg.calls_of("getUpdates", ok_only=False)


async def test_a_summary_telegram_refused_is_posted_again_later(tg, fake_tg, group, alice, clock):
    fake_tg.set_admins(group["id"], alice["id"])  # an admin replaces the open question
    await tg.command(group, alice, "/quiz")
    [first] = await fake_tg.wait_for("sendPoll")
    fake_tg.fail_next("sendMessage", status=400)
    await tg.command(group, alice, "/quiz")  # closes the first; its summary is refused
    await fake_tg.wait_for("sendPoll", 2)
    assert not [t for t in tg.texts(group) if "Question closed" in t]

    await tg.tick()  # too soon to try again
    assert not [t for t in tg.texts(group) if "Question closed" in t]
    clock.advance(31)
    await tg.tick()
    [summary] = [
        c for c in fake_tg.calls_of("sendMessage") if "Question closed" in c.params["text"]
    ]
    assert summary.params["reply_parameters"]["message_id"] == first.result["message_id"]
    for _ in range(3):
        clock.advance(60)
        await tg.tick()
    assert len([t for t in tg.texts(group) if "Question closed" in t]) == 1


async def test_a_summary_for_a_chat_the_bot_left_is_given_up_with_its_schedule(
    tg, fake_tg, group, alice, clock, error_log
):
    fake_tg.set_admins(group["id"], alice["id"])
    await tg.command(group, alice, "/daily 09:00")
    await tg.command(group, alice, "/quiz")
    fake_tg.fail_next("stopPoll", status=403)  # "Forbidden: bot was kicked from the group"
    clock.advance(QUESTION_SECONDS + 1)
    assert (await tg.tick()).closed == 1

    assert await tg.service.daily.status(Chat(f"tg:{group['id']}")) is None
    clock.advance(hours=1)  # nothing is tried again
    await tg.tick()
    assert not [t for t in tg.texts(group) if "Question closed" in t]
    assert len(fake_tg.calls_of("stopPoll", ok_only=False)) == 1
    assert not error_log.records


@pytest.mark.parametrize(("error", "expected"), [
    (lambda: Forbidden("Forbidden: bot was blocked by the user"), ChatGone),
    (lambda: BadRequest("Chat not found"), ChatGone),
    (lambda: RetryAfter(7), TryLater),
    (lambda: TimedOut(), TryLater),
    (lambda: NetworkError("Bad Gateway"), TryLater),
    (lambda: BadRequest("Message is too long"), BadRequest),
])
def test_telegram_failures_reach_the_core_as_its_own(error, expected):
    quiet_library_deprecations()  # RetryAfter warns about its own int retry_after
    with pytest.raises(expected) as raised, platform_errors():
        raise error()
    if isinstance(raised.value, TryLater):  # a flood wait says how long; the network not
        wait = timedelta(seconds=7) if "retry" in str(raised.value).lower() else None
        assert raised.value.retry_after == wait
