"""Updates confirmed only once handled, sends that may have reached Telegram, unreadable
updates, and harmless repeats: the real PTB and our adapter against the fake Bot API.

Telegram's own timings are scaled down (a 7 s accept becomes 1 s against a shorter send
timeout) so the tests stay quick; the code paths are the same.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import httpx
import pytest
from telegram.error import BadRequest, NetworkError, TimedOut

from bot.adapters import CredentialsRejected
from bot.adapters.telegram import app as tg_app
from bot.adapters.telegram import polling
from bot.adapters.telegram.unconfirmed import may_have_arrived
from tests.fakes.telegram_api import Call
from tests.telegram_e2e.conftest import QUESTION_SECONDS, Harness

TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"

StartWith = Callable[[float], Coroutine[Any, Any, Harness]]


@pytest.fixture
async def start_with(
    fake_tg, service, tg_settings, monkeypatch
) -> AsyncIterator[StartWith]:
    """Start the bot with sends timing out after `seconds`."""
    started: list[Harness] = []

    async def start(seconds: float) -> Harness:
        monkeypatch.setattr(tg_app, "SEND_TIMEOUT", seconds)
        harness = Harness(fake_tg, service, tg_settings)
        await harness.start()
        started.append(harness)
        return harness

    yield start
    for harness in started:
        await harness.stop()


def loud(caplog: pytest.LogCaptureFixture) -> list[str]:
    """WARNING and above from the bot and the library."""
    return [f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records
            if r.levelno >= logging.WARNING and r.name.startswith(("bot", "telegram"))]


def press_data(sent: Call, option: int = 0) -> str:
    return str(sent.result["reply_markup"]["inline_keyboard"][0][option]["callback_data"])


# confirming ----------------------------------------------------------------------------
async def test_a_slow_chat_holds_back_only_its_own_confirmation(
    tg, fake_tg, group, other_group, alice, bob
):
    fake_tg.delay_next("sendPoll", 2.5)  # a flood wait, a slow Telegram: this /quiz takes long
    slow = fake_tg.command(group, alice, "/quiz")
    [poll] = await fake_tg.wait_for("sendPoll")
    fast = fake_tg.command(other_group, bob, "/help")
    await fake_tg.wait_for("sendMessage", where=lambda c: c.params["chat_id"] == other_group["id"])

    assert not poll.replied  # the slow one still runs...
    assert fake_tg.confirmed_below <= slow  # ...so it is not confirmed, nor anything after it
    await tg.send(fast)
    assert fake_tg.confirmed_below > fast
    assert await tg.service.questions.post_id_for(
        f"tg-poll:{poll.result['poll']['id']}") is not None


async def test_stopping_finishes_the_updates_in_flight_and_confirms_them(tg, fake_tg, group, alice):
    fake_tg.delay_next("sendPoll", 0.5)
    update = fake_tg.command(group, alice, "/quiz")
    [poll] = await fake_tg.wait_for("sendPoll")
    assert not poll.replied
    await tg.stop()

    assert poll.replied
    assert await tg.service.questions.post_id_for(
        f"tg-poll:{poll.result['poll']['id']}") is not None
    assert fake_tg.confirmed_below > update  # never sent again


async def test_polling_outlives_telegram_failing(tg, fake_tg, group, alice, monkeypatch, caplog):
    monkeypatch.setattr(polling, "FIRST_BACKOFF", 0.01)
    # (a 409 Conflict is no outage but another poller: test_leadership.py)
    fake_tg.fail_next("getUpdates", status=502, times=3)
    await tg.command(group, alice, "/help")

    assert "/leaderboard" in tg.texts(group)[0]
    statuses = [c.status for c in fake_tg.calls_of("getUpdates", ok_only=False)]
    assert statuses.count(502) == 3
    assert all(m.startswith("WARNING") for m in loud(caplog))


async def test_a_token_revoked_while_polling_ends_the_connection(tg, fake_tg):
    fake_tg.fail_next("getUpdates", status=401, description="Unauthorized")
    failed = await asyncio.wait_for(tg.adapter.wait_failed(), 5)
    assert isinstance(failed, CredentialsRejected)
    assert fake_tg.token not in str(failed)


# unreadable updates --------------------------------------------------------------------
async def test_an_unreadable_update_is_skipped_once_and_the_rest_handled(
    tg, fake_tg, group, alice, bob, caplog
):
    caplog.set_level(logging.INFO)
    before = fake_tg.command(group, alice, "/help")
    # PTB 22.8 cannot build a PollAnswer without option_persistent_ids
    poison = fake_tg.push_raw({"poll_answer": {"poll_id": "42", "user": bob,
                                               "option_ids": [0]}})
    after = fake_tg.command(group, bob, "/quiz")
    await tg.send(after)

    assert fake_tg.confirmed_below > poison
    fetched = [c for c in fake_tg.calls_of("getUpdates")
               if any(u["update_id"] == poison for u in c.result or [])]
    assert len(fetched) == 1  # fetched once, never again
    assert len(tg.texts(group)) == 1 and fake_tg.calls_of("sendPoll")  # before and after ran
    [warning] = loud(caplog)
    assert warning.startswith("WARNING") and f"update {poison} " in warning
    assert "poll_answer" in warning and "Bob" not in warning and "42" not in warning
    assert before < poison < after


# sends that may have reached Telegram ----------------------------------------------------
def test_sends_wait_longer_than_telegram_was_seen_to_take():
    assert tg_app.SEND_TIMEOUT > 7


def _raised(error: NetworkError, cause: Exception | None) -> NetworkError:
    try:
        raise error from cause
    except NetworkError as exc:
        return exc


@pytest.mark.parametrize(("error", "cause", "arrived"), [
    (TimedOut(), httpx.ReadTimeout("read"), True),  # sent; the reply never came
    (TimedOut(), httpx.WriteTimeout("write"), True),
    (NetworkError("httpx.RemoteProtocolError"), httpx.RemoteProtocolError("gone"), True),
    (TimedOut(), httpx.ConnectTimeout("connect"), False),  # never left
    (TimedOut("Pool timeout"), httpx.PoolTimeout("pool"), False),
    (NetworkError("httpx.ConnectError"), httpx.ConnectError("refused"), False),
    (NetworkError("Bad Gateway"), None, False),  # Telegram answered: not done
    (BadRequest("Message is too long"), None, False),
])
def test_which_failed_sends_may_have_reached_telegram(error, cause, arrived):
    assert may_have_arrived(_raised(error, cause)) is arrived


async def test_a_slow_send_poll_is_waited_for_and_sent_once(start_with, fake_tg, group, alice):
    tg = await start_with(2.0)
    fake_tg.delay_next("sendPoll", 1.0)  # accepted at once, answered late
    await tg.command(group, alice, "/quiz")

    [poll] = fake_tg.calls_of("sendPoll", ok_only=False)
    assert poll.delayed and poll.replied
    assert await tg.service.questions.post_id_for(
        f"tg-poll:{poll.result['poll']['id']}") is not None
    assert not tg.texts(group)  # no apology


async def test_a_send_poll_that_timed_out_is_not_sent_again_and_its_poll_counts(
    start_with, fake_tg, group, alice, bob, clock, caplog
):
    tg = await start_with(0.5)
    fake_tg.delay_next("sendPoll", 1.5)  # the reply comes after we gave up
    await tg.command(group, alice, "/quiz")

    [poll] = fake_tg.calls_of("sendPoll", ok_only=False)  # not retried
    assert not tg.texts(group)  # no apology: it may well be there
    assert any("no reply to the question of post" in m for m in loud(caplog))
    await tg.answer(poll, bob, poll.params["correct_option_ids"][0])  # it was there

    post_id = await tg.service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")
    assert post_id is not None
    [answer] = await tg.service.storage.answers_for_post(post_id)
    assert answer.person_key == f"tg:{bob['id']}" and answer.correct
    clock.advance(QUESTION_SECONDS + 1)
    await tg.tick()
    [summary] = [t for t in tg.texts(group) if "Question closed" in t]
    assert "Bob" in summary
    assert len(fake_tg.calls_of("sendPoll", ok_only=False)) == 1


async def test_votes_before_the_late_poll_is_known_are_kept_and_counted(
    start_with, fake_tg, group, alice, bob
):
    tg = await start_with(0.5)
    fake_tg.delay_next("sendPoll", 1.5)
    await tg.command(group, alice, "/quiz")
    [poll] = fake_tg.calls_of("sendPoll", ok_only=False)
    poll_id = poll.result["poll"]["id"]

    fake_tg.poll_state_updates = False  # the vote comes in a batch of its own
    await tg.answer(poll, bob, 1)
    assert await tg.service.questions.post_id_for(f"tg-poll:{poll_id}") is None
    await tg.send(fake_tg.push("poll", fake_tg.polls[poll_id]))  # then the poll's state

    post_id = await tg.service.questions.post_id_for(f"tg-poll:{poll_id}")
    assert post_id is not None
    [answer] = await tg.service.storage.answers_for_post(post_id)
    assert answer.person_key == f"tg:{bob['id']}"


async def test_a_button_question_that_timed_out_is_bound_by_its_first_press(
    start_with, fake_tg, group, alice
):
    tg = await start_with(0.5)
    fake_tg.delay_next("sendMessage", 1.5)
    await tg.command(group, alice, "/quiz buttons")
    [sent] = fake_tg.calls_of("sendMessage", ok_only=False)
    assert "reply_markup" in sent.params and not tg.texts(group)[1:]

    press = await tg.press(sent.result, alice, press_data(sent))
    assert "no longer available" not in press.params["text"]  # the verdict, not a refusal
    post_id = await tg.post_of(sent.result)
    assert [a.person_key for a in await tg.service.storage.answers_for_post(post_id)] == [
        f"tg:{alice['id']}"
    ]


# harmless repeats ----------------------------------------------------------------------
async def test_a_press_delivered_again_is_quiet(tg, fake_tg, group, alice, caplog):
    caplog.set_level(logging.INFO)
    await tg.command(group, alice, "/quiz buttons")
    [sent] = await fake_tg.wait_for("sendMessage", where=lambda c: "reply_markup" in c.params)
    first = fake_tg.press(sent.result, alice, press_data(sent))
    await tg.send(first)
    await tg.send(fake_tg.redeliver(first))  # same callback query id, same process
    await tg.restart()
    await tg.send(fake_tg.redeliver(first))  # and after a restart: Telegram says "too old"

    answers = fake_tg.calls_of("answerCallbackQuery", ok_only=False)
    assert [c.status for c in answers] == [200, 400]
    assert not [t for t in tg.texts(group) if "Sorry" in t]
    assert not loud(caplog)
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert any("redelivered button press" in m for m in infos)
    assert any("query is too old" in m.lower() for m in infos)


async def test_a_press_answered_too_late_still_counts_quietly(tg, fake_tg, group, alice, caplog):
    await tg.command(group, alice, "/quiz buttons")
    [sent] = await fake_tg.wait_for("sendMessage", where=lambda c: "reply_markup" in c.params)
    fake_tg.fail_next("answerCallbackQuery", description=TOO_OLD)
    await tg.send(fake_tg.press(sent.result, alice, press_data(sent)))

    post_id = await tg.post_of(sent.result)
    assert len(await tg.service.storage.answers_for_post(post_id)) == 1
    assert not [t for t in tg.texts(group) if "Sorry" in t]
    assert not loud(caplog)
