"""Telegram through webhooks: the fake Bot API POSTs every update to the adapter's endpoint
and sends it again until it is answered 2xx, as Telegram does (tests/fakes/telegram_api.py).

In this process: the chat rules of tests/behaviour through the webhook, setWebhook and its
watch, the secret, 200 only after the commit, 500 and 503 sent again, a poison update, joining
an update sent again while it runs, stopping, and two adapters on one database file behind
the fake's round-robin (each with its own core and storage, as two processes have).
As processes of their own: kill -9 during bursts (crash_bot.py in webhook mode), and two
`quizbot run` processes on one database behind the fake's round-robin, one of them killed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import secrets
import signal
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from pydantic import SecretStr

from bot.adapters import ConnectionLost, CredentialsRejected
from bot.adapters.telegram import TelegramAdapter, publish, webhook
from bot.adapters.telegram import app as tg_app
from bot.content import Catalog
from bot.core.service import QuizService
from bot.settings import Settings, SettingsError, load_settings
from bot.storage import SqliteStorage
from tests.behaviour import test_rules
from tests.behaviour.harness import Harness as RulesHarness
from tests.behaviour.telegram import free_port, telegram_harness, webhook_settings
from tests.clock import FakeClock
from tests.errorlog import ErrorLog, failing_on_errors
from tests.fakes.telegram_api import FakeTelegramAPI
from tests.storage_contract.backends import Backend, backend_for
from tests.telegram_e2e.conftest import Harness
from tests.telegram_e2e.test_crash import (
    PACKS,
    ROOT,
    BotProcess,
    kill_9_during_bursts,
)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


# the chat rules (tests/behaviour), with every update coming through the webhook -------------
@pytest.fixture
async def h(service: QuizService, clock: FakeClock) -> AsyncIterator[RulesHarness]:
    with failing_on_errors("telegram", "bot", "aiohttp"):
        async with telegram_harness(service, clock, webhook=True) as harness:
            yield harness
            fake = harness.fake
            # every update the rule made went through the webhook (a rule that skips on
            # Telegram made none), and nothing was polled
            assert len(fake.deliveries) >= len(fake._all_updates)
            assert not fake.calls_of("getUpdates", ok_only=False)


# every rule: /quiz, answers by poll and by button, forged buttons, daily, languages, restarts
globals().update({name: getattr(test_rules, name) for name in dir(test_rules)
                  if name.startswith("test_")})


# fixtures ------------------------------------------------------------------------------------
@pytest.fixture
def wh_settings(tg_settings: Settings) -> Settings:
    return tg_settings.model_copy(update=webhook_settings())


@pytest.fixture
async def wh(
    fake_tg: FakeTelegramAPI, service: QuizService, wh_settings: Settings
) -> AsyncIterator[Harness]:
    harness = Harness(fake_tg, service, wh_settings)
    await harness.start()
    yield harness
    await harness.stop()


def secret_of(settings: Settings) -> str:
    assert settings.quizbot_telegram_webhook_secret is not None
    return settings.quizbot_telegram_webhook_secret.get_secret_value()


def url_of(settings: Settings) -> str:
    assert settings.quizbot_telegram_webhook_url is not None
    return settings.quizbot_telegram_webhook_url


async def post(url: str, body: Any, headers: dict[str, str]) -> int:
    async with aiohttp.ClientSession() as session, session.post(
        url, json=body, headers=headers
    ) as response:
        return response.status


def loud(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records
            if r.levelno >= logging.WARNING and r.name.startswith(("bot", "telegram"))]


async def until(condition: Any, within: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


# start ---------------------------------------------------------------------------------------
async def test_start_sets_the_webhook_and_never_polls(
    fake_tg, service, wh_settings, caplog
):
    caplog.set_level(logging.DEBUG)  # PTB logs every call's parameters at DEBUG
    harness = Harness(fake_tg, service, wh_settings)
    await harness.start()
    try:
        [call] = fake_tg.calls_of("setWebhook")
        assert call.params["url"] == url_of(wh_settings)
        assert call.params["secret_token"] == secret_of(wh_settings)
        assert call.params["max_connections"] == webhook.MAX_CONNECTIONS
        assert set(call.params["allowed_updates"]) >= {
            "message", "channel_post", "poll", "poll_answer", "callback_query"}
        assert not call.params.get("drop_pending_updates")
        assert not fake_tg.calls_of("deleteWebhook")  # other processes may be serving
        assert fake_tg.webhook is not None
    finally:
        await harness.stop()
    assert fake_tg.webhook is not None  # still set when one process stops
    assert not fake_tg.calls_of("getUpdates", ok_only=False)
    for record in caplog.records:
        assert secret_of(wh_settings) not in record.getMessage(), record.name


async def test_long_polling_deletes_a_webhook_left_set(fake_tg, service, tg_settings, group,
                                                       alice):
    fake_tg.webhook = {"url": "https://old.example/tg", "secret_token": None,
                       "max_connections": 40}
    harness = Harness(fake_tg, service, tg_settings)
    await harness.start()
    try:
        await harness.command(group, alice, "/help")
        assert fake_tg.webhook is None and harness.texts(group)
    finally:
        await harness.stop()


async def test_an_address_in_use_fails_start_with_one_line(fake_tg, service, wh_settings):
    host, port = wh_settings.telegram_webhook[1]
    blocker = await asyncio.start_server(lambda r, w: None, host, port)
    try:
        adapter = TelegramAdapter(service, wh_settings)
        with pytest.raises(ConnectionLost) as lost:
            await adapter.start()
        assert "QUIZBOT_TELEGRAM_WEBHOOK_LISTEN" in str(lost.value)
        assert not fake_tg.calls_of("setWebhook", ok_only=False)
        await adapter.stop()  # harmless after a failed start
    finally:
        blocker.close()
        await blocker.wait_closed()


async def test_a_webhook_url_telegram_refuses_fails_start_with_one_line(
    fake_tg, service, wh_settings
):
    fake_tg.fail_next("setWebhook", description="Bad Request: bad webhook: Failed to resolve "
                                                "host: Name or service not known")
    adapter = TelegramAdapter(service, wh_settings)
    with pytest.raises(ConnectionLost) as lost:
        await adapter.start()
    line = str(lost.value)
    assert "QUIZBOT_TELEGRAM_WEBHOOK_URL" in line and "resolve host" in line
    assert secret_of(wh_settings) not in line
    # nothing left listening
    with pytest.raises(aiohttp.ClientConnectionError):
        await post(url_of(wh_settings), {"update_id": 1}, {})


async def test_a_wrong_token_fails_start_cleanly(fake_tg, service, wh_settings):
    settings = wh_settings.model_copy(update={"telegram_bot_token": SecretStr("1:wrong")})
    adapter = TelegramAdapter(service, settings)
    with pytest.raises(CredentialsRejected):
        await adapter.start()
    await adapter.stop()
    with pytest.raises(aiohttp.ClientConnectionError):
        await post(url_of(wh_settings), {"update_id": 1}, {})


# the secret ----------------------------------------------------------------------------------
async def test_a_missing_or_wrong_secret_is_refused_and_changes_nothing(
    wh, fake_tg, wh_settings, service, group, alice, caplog
):
    caplog.set_level(logging.DEBUG)
    await wh.command(group, alice, "/quiz")
    [poll] = await fake_tg.wait_for("sendPoll")
    calls = len(fake_tg.calls)
    forged = [
        {"update_id": 9001, "message": {
            "message_id": 77, "date": 1, "chat": group, "from": alice, "text": "/quiz",
            "entities": [{"type": "bot_command", "offset": 0, "length": 5}]}},
        {"update_id": 9002, "poll_answer": {
            "poll_id": poll.result["poll"]["id"], "user": alice, "option_ids": [0],
            "option_persistent_ids": [poll.result["poll"]["options"][0]["persistent_id"]]}},
    ]
    secret = secret_of(wh_settings)
    wrong = [{}, {SECRET_HEADER: ""}, {SECRET_HEADER: "x" + secret},
             {SECRET_HEADER: secret[:-1]}, {SECRET_HEADER.lower(): secret.upper()}]
    statuses = [await post(url_of(wh_settings), body, headers)
                for body in forged for headers in wrong]
    assert statuses == [401, 403, 403, 403, 403] * 2

    await asyncio.sleep(0.2)
    assert len(fake_tg.calls) == calls  # nothing sent, nothing looked up
    post_id = await service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")
    assert post_id is not None
    assert await service.storage.answers_for_post(post_id) == []
    assert len(await service.storage.open_posts(f"tg:{group['id']}")) == 1
    [warning] = [m for m in loud(caplog) if "secret" in m]  # summed up, not one per request
    assert "refused 1 webhook request" in warning
    for record in caplog.records:
        assert secret not in record.getMessage(), record.name

    right = {SECRET_HEADER: secret}
    assert await post(url_of(wh_settings), forged[1], right) == 200  # the same, with it
    assert len(await service.storage.answers_for_post(post_id)) == 1


async def test_get_is_a_health_check(wh, wh_settings):
    async with aiohttp.ClientSession() as session:
        for path in ("/", "/telegram", "/healthz"):
            async with session.get(url_of(wh_settings).rsplit("/", 1)[0] + path) as response:
                assert response.status == 200


# confirming only what is handled -------------------------------------------------------------
async def test_a_vote_is_answered_200_only_after_its_commit(
    wh, fake_tg, service, group, alice, bob, monkeypatch
):
    await wh.command(group, alice, "/quiz")
    [poll] = await fake_tg.wait_for("sendPoll")
    entered, release = asyncio.Event(), asyncio.Event()
    committed: list[float] = []
    record_answer = service.storage.record_answer

    async def held(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        await release.wait()
        result = await record_answer(*args, **kwargs)
        committed.append(asyncio.get_running_loop().time())
        return result

    monkeypatch.setattr(service.storage, "record_answer", held)
    fake_tg.poll_state_updates = False
    vote = fake_tg.answer_poll(poll.result["poll"]["id"], bob, [1])
    await asyncio.wait_for(entered.wait(), 5)
    await asyncio.sleep(0.3)
    [delivery] = fake_tg.deliveries_of(vote)
    assert delivery.open and vote not in fake_tg.webhook_confirmed  # the request waits

    release.set()
    await fake_tg.wait_confirmed(vote)
    [delivery] = fake_tg.deliveries_of(vote)  # answered once, 200
    assert delivery.status == 200 and delivery.finished is not None
    assert delivery.finished >= committed[0]
    post_id = await service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")
    assert post_id is not None
    assert [a.person_key for a in await service.storage.answers_for_post(post_id)] == [
        f"tg:{bob['id']}"]


async def test_a_command_is_answered_only_once_its_question_is_sent(wh, fake_tg, group, alice):
    fake_tg.delay_next("sendPoll", 0.6)  # a slow Telegram
    update = fake_tg.command(group, alice, "/quiz")
    [poll] = await fake_tg.wait_for("sendPoll")
    await asyncio.sleep(0.3)
    assert not poll.replied and fake_tg.deliveries_of(update)[-1].open
    await wh.send(update)
    assert poll.replied and [d.status for d in fake_tg.deliveries_of(update)] == [200]


async def test_a_failed_handler_gets_500_and_runs_again_when_sent_again(
    wh, fake_tg, service, group, alice, bob, monkeypatch, error_log: ErrorLog
):
    error_log.allow("handling update")
    await wh.command(group, alice, "/quiz")
    [poll] = await fake_tg.wait_for("sendPoll")
    record_answer = service.storage.record_answer
    failures = [RuntimeError("database is locked")]

    async def flaky(*args: Any, **kwargs: Any) -> Any:
        if failures:
            raise failures.pop()
        return await record_answer(*args, **kwargs)

    monkeypatch.setattr(service.storage, "record_answer", flaky)
    fake_tg.poll_state_updates = False
    vote = fake_tg.answer_poll(poll.result["poll"]["id"], bob, [1])
    await wh.send(vote)
    assert [d.status for d in fake_tg.deliveries_of(vote)] == [500, 200]
    post_id = await service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")
    assert post_id is not None
    assert len(await service.storage.answers_for_post(post_id)) == 1

    # a command: the redelivery guard forgets it, so the delivery after the 500 runs it
    leaderboard = service.leaderboard
    failures.append(RuntimeError("database is locked"))

    async def flaky_board(*args: Any, **kwargs: Any) -> Any:
        if failures:
            raise failures.pop()
        return await leaderboard(*args, **kwargs)

    monkeypatch.setattr(service, "leaderboard", flaky_board)
    command = fake_tg.command(group, alice, "/leaderboard")
    await wh.send(command)
    assert [d.status for d in fake_tg.deliveries_of(command)] == [500, 200]
    replies = [t for t in wh.texts(group) if "Sorry" not in t]
    assert len([t for t in replies if "Bob" in t]) == 1  # the board, once
    assert len([t for t in wh.texts(group) if "Sorry" in t]) == 1  # one apology


async def test_a_handler_that_keeps_failing_is_apologised_for_once(
    wh, fake_tg, service, group, alice, monkeypatch, error_log: ErrorLog
):
    error_log.allow("handling update")
    attempts = 0

    async def broken(*args: Any, **kwargs: Any) -> Any:
        nonlocal attempts
        attempts += 1
        raise RuntimeError("database is gone")

    monkeypatch.setattr(service, "leaderboard", broken)
    command = fake_tg.command(group, alice, "/leaderboard")
    await until(lambda: attempts >= 4)
    assert command not in fake_tg.webhook_confirmed
    assert {d.status for d in fake_tg.deliveries_of(command) if not d.open} == {500}
    assert len([t for t in wh.texts(group) if "Sorry" in t]) == 1
    monkeypatch.undo()
    await wh.send(command)  # fixed: the next delivery is handled
    assert len(wh.texts(group)) == 2  # the apology, then the board


async def test_an_unreadable_update_is_confirmed_once_and_the_rest_handled(
    wh, fake_tg, group, alice, bob, caplog
):
    caplog.set_level(logging.INFO)
    before = fake_tg.command(group, alice, "/help")
    poison = fake_tg.push_raw({"poll_answer": {"poll_id": "42", "user": bob,
                                               "option_ids": [0]}})
    after = fake_tg.command(group, bob, "/quiz")
    await wh.send(after)
    await wh.send(poison)

    assert [d.status for d in fake_tg.deliveries_of(poison)] == [200]  # never again
    assert len(wh.texts(group)) == 1 and fake_tg.calls_of("sendPoll")
    [warning] = loud(caplog)
    assert warning.startswith("WARNING") and f"update {poison} " in warning
    assert "poll_answer" in warning and "Bob" not in warning and "42" not in warning
    assert before < poison < after


async def test_a_body_that_is_not_an_update_is_confirmed_with_a_warning(
    wh, wh_settings, caplog
):
    headers = {SECRET_HEADER: secret_of(wh_settings)}
    async with aiohttp.ClientSession() as session:
        for body in (b"not json", b"[1, 2]", b'{"message": {}}'):
            async with session.post(url_of(wh_settings), data=body, headers=headers) as r:
                assert r.status == 200
    assert len([m for m in loud(caplog) if "skipped an update with no id" in m]) == 3


async def test_an_update_sent_again_while_it_runs_joins_it(wh, fake_tg, group, alice):
    fake_tg.delivery_timeout = 0.3  # Telegram gives up waiting (after 60 s) and sends it again
    fake_tg.delay_next("sendPoll", 1.0)
    update = fake_tg.command(group, alice, "/quiz")
    await wh.send(update)
    deliveries = fake_tg.deliveries_of(update)
    assert len(deliveries) >= 2 and deliveries[0].error == "TimeoutError"
    assert deliveries[-1].status == 200
    assert len(fake_tg.calls_of("sendPoll", ok_only=False)) == 1  # handled once


# stopping ------------------------------------------------------------------------------------
async def test_stopping_refuses_new_updates_and_finishes_those_in_flight(
    wh, fake_tg, wh_settings, group, alice
):
    fake_tg.delay_next("sendPoll", 1.0)
    in_flight = fake_tg.command(group, alice, "/quiz")
    [poll] = await fake_tg.wait_for("sendPoll")
    adapter = wh.adapter
    assert adapter is not None
    stopping = asyncio.create_task(adapter.stop())
    await asyncio.sleep(0.1)
    late = fake_tg.command(group, alice, "/help")
    async with aiohttp.ClientSession() as session, session.get(url_of(wh_settings)) as health:
        assert health.status == 503
    await until(lambda: any(d.status == 503 for d in fake_tg.deliveries_of(late)))
    await stopping
    wh.adapter = None

    assert poll.replied and [d.status for d in fake_tg.deliveries_of(in_flight)] == [200]
    assert late not in fake_tg.webhook_confirmed and not wh.texts(group)
    await wh.start()  # the same address again: Telegram's retries reach it
    await wh.send(late)
    assert len(wh.texts(group)) == 1


async def test_handlers_that_outlast_the_stop_are_answered_503(
    wh, fake_tg, group, alice, monkeypatch
):
    monkeypatch.setattr(webhook, "STOP_WITHIN", 0.3)
    fake_tg.delay_next("sendPoll", 1.5)
    update = fake_tg.command(group, alice, "/quiz")
    await fake_tg.wait_for("sendPoll")
    await wh.stop()
    [delivery] = fake_tg.deliveries_of(update)
    assert delivery.status == 503 and update not in fake_tg.webhook_confirmed


# keeping the webhook set ---------------------------------------------------------------------
async def test_a_deleted_webhook_is_set_again(fake_tg, service, wh_settings, group, alice,
                                              monkeypatch, caplog):
    monkeypatch.setattr(webhook, "WATCH_EVERY", 0.1)
    harness = Harness(fake_tg, service, wh_settings)
    await harness.start()
    try:
        fake_tg._api_deleteWebhook({})  # e.g. someone started a polling bot on this token
        await until(lambda: fake_tg.webhook is not None)
        await harness.command(group, alice, "/help")
        assert harness.texts(group)
        assert any("setting QUIZBOT_TELEGRAM_WEBHOOK_URL again" in m for m in loud(caplog))
    finally:
        await harness.stop()


async def test_a_token_revoked_while_serving_ends_the_connection(
    fake_tg, service, wh_settings, monkeypatch
):
    monkeypatch.setattr(webhook, "WATCH_EVERY", 0.1)
    harness = Harness(fake_tg, service, wh_settings)
    await harness.start()
    try:
        assert harness.adapter is not None
        fake_tg.fail_next("getWebhookInfo", status=401, description="Unauthorized")
        failed = await asyncio.wait_for(harness.adapter.wait_failed(), 5)
        assert isinstance(failed, CredentialsRejected)
    finally:
        await harness.stop()


# two processes' worth in this one: adapters with their own core and storage ------------------
class Process:
    """One bot process's parts: its own storage on the shared database, core and adapter."""

    def __init__(self, catalog: Catalog, storage: Any, clock: FakeClock, settings: Settings,
                 **options: Any) -> None:
        self.storage = storage
        self.service = QuizService(catalog, self.storage, clock, random.Random(3), **options)
        self.settings = settings
        self.adapter = TelegramAdapter(self.service, settings)

    async def start(self) -> None:
        await self.storage.open()
        await self.adapter.start()

    async def stop(self) -> None:
        await self.adapter.stop()
        await self.storage.close()

    @property
    def url(self) -> str:
        """Where this process listens (the public URL is the load balancer's)."""
        return f"http://{self.settings.quizbot_telegram_webhook_listen}/telegram"


@asynccontextmanager
async def behind_load_balancer(
    fake_tg: FakeTelegramAPI, catalog: Catalog, clock: FakeClock, tg_settings: Settings,
    storage: Callable[[], Any], count: int = 2, **options: Any,
) -> AsyncIterator[list[Process]]:
    """`count` webhook processes, each with `storage()` on the shared database."""
    shared = webhook_settings()
    processes = []
    for _ in range(count):
        settings = tg_settings.model_copy(update={
            **shared, "quizbot_telegram_webhook_listen": f"127.0.0.1:{free_port()}"})
        processes.append(Process(catalog, storage(), clock, settings, **options))
    for process in processes:
        await process.start()
    # the public URL is the load balancer's: the fake delivers to each process in turn
    fake_tg.webhook_targets = [p.url for p in processes]
    try:
        yield processes
    finally:
        for process in processes:
            await process.stop()


@pytest.fixture
async def two(
    fake_tg: FakeTelegramAPI, sample_catalog: Catalog, clock: FakeClock, tg_settings: Settings,
    tmp_path: Any,
) -> AsyncIterator[list[Process]]:
    async with behind_load_balancer(fake_tg, sample_catalog, clock, tg_settings,
                                    lambda: SqliteStorage(tmp_path / "shared.db")) as processes:
        yield processes


async def test_a_vote_racing_another_process_bind_waits_for_it(
    two, fake_tg, group, alice, bob, monkeypatch
):
    """A sends the poll; a vote reaches B before A's bind committed: B looks again."""
    first, second = two
    fake_tg.webhook_targets = [first.url]
    bind = first.service.questions.bind
    voted = asyncio.Event()

    async def slow_bind(post_id: int, *refs: str) -> None:
        if any(ref.startswith("tg-poll:") for ref in refs):
            await asyncio.wait_for(voted.wait(), 5)  # the vote is at B before the bind
            await asyncio.sleep(0.2)
        await bind(post_id, *refs)

    monkeypatch.setattr(first.service.questions, "bind", slow_bind)
    quiz = fake_tg.command(group, alice, "/quiz")
    [poll] = await fake_tg.wait_for("sendPoll")
    fake_tg.webhook_targets = [second.url]
    fake_tg.poll_state_updates = False
    vote = fake_tg.answer_poll(poll.result["poll"]["id"], bob, [0])
    await until(lambda: fake_tg.deliveries_of(vote))
    voted.set()
    await fake_tg.wait_confirmed(vote)
    await fake_tg.wait_confirmed(quiz)

    assert [(d.target, d.status) for d in fake_tg.deliveries_of(vote)] == [(second.url, 200)]
    post_id = await second.service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")
    assert post_id is not None
    assert len(await second.storage.answers_for_post(post_id)) == 1


async def test_a_poll_sent_with_no_reply_in_one_process_counts_votes_delivered_to_another(
    two, fake_tg, group, alice, bob, monkeypatch
):
    """A's sendPoll timed out (the poll is there, A does not know its id). Votes reach B,
    which cannot bind the poll: it asks for them again (503) until one of the poll's updates
    reaches A, which binds it; then they count, wherever they land."""
    monkeypatch.setattr(publish, "BIND_RACE", 0.1)
    first, second = two
    await first.stop()  # A again, with sends timing out after 0.5 s
    monkeypatch.setattr(tg_app, "SEND_TIMEOUT", 0.5)
    first.adapter = TelegramAdapter(first.service, first.settings)
    await first.start()
    fake_tg.webhook_targets = [first.url]
    fake_tg.delay_next("sendPoll", 1.5)
    quiz = fake_tg.command(group, alice, "/quiz")
    await fake_tg.wait_confirmed(quiz, 5)
    [poll] = fake_tg.calls_of("sendPoll", ok_only=False)
    poll_id = poll.result["poll"]["id"]
    assert await second.service.questions.post_id_for(f"tg-poll:{poll_id}") is None

    # the votes reach B, which cannot tell which question the poll is: they come again
    fake_tg.webhook_router = lambda u: second.url if "poll_answer" in u else first.url
    fake_tg.poll_state_updates = False
    voters = [bob, *(fake_tg.user(2000 + i, f"V{i}") for i in range(4))]
    votes = [fake_tg.answer_poll(poll_id, user, [i % 3]) for i, user in enumerate(voters)]
    await until(lambda: all(any(d.status == 503 for d in fake_tg.deliveries_of(v))
                            for v in votes))
    # then a state update of the poll reaches A, which binds it; the votes count at B
    await fake_tg.wait_confirmed(fake_tg.push("poll", fake_tg.polls[poll_id]))
    for vote in votes:
        await fake_tg.wait_confirmed(vote, 10)

    assert all(d.target == second.url for v in votes for d in fake_tg.deliveries_of(v))
    post_id = await second.service.questions.post_id_for(f"tg-poll:{poll_id}")
    assert post_id is not None
    answers = await second.storage.answers_for_post(post_id)
    assert sorted(a.person_key for a in answers) == sorted(f"tg:{u['id']}" for u in voters)


async def test_a_press_on_a_message_another_process_sent_with_no_reply_counts(
    two, fake_tg, group, alice, monkeypatch
):
    monkeypatch.setattr(publish, "BIND_RACE", 0.1)
    first, second = two
    await first.stop()
    monkeypatch.setattr(tg_app, "SEND_TIMEOUT", 0.5)
    first.adapter = TelegramAdapter(first.service, first.settings)
    await first.start()
    fake_tg.webhook_targets = [first.url]
    fake_tg.delay_next("sendMessage", 1.5)
    quiz = fake_tg.command(group, alice, "/quiz buttons")
    await fake_tg.wait_confirmed(quiz, 5)
    [sent] = fake_tg.calls_of("sendMessage", ok_only=False)
    data = sent.result["reply_markup"]["inline_keyboard"][0][0]["callback_data"]

    fake_tg.webhook_targets = [second.url]
    press = fake_tg.press(sent.result, alice, data)
    await until(lambda: any(d.status == 503 for d in fake_tg.deliveries_of(press)))
    fake_tg.webhook_targets = [first.url]
    await fake_tg.wait_confirmed(press, 10)

    post_id = await first.service.questions.post_id_for(
        f"tg-msg:{group['id']}:{sent.result['message_id']}")
    assert post_id is not None
    assert [a.person_key for a in await first.storage.answers_for_post(post_id)] == [
        f"tg:{alice['id']}"]
    [answer] = fake_tg.calls_of("answerCallbackQuery")
    assert "no longer available" not in answer.params["text"]


async def test_a_press_on_a_plain_message_is_refused_not_asked_for_again(
    wh, fake_tg, group, alice
):
    await wh.command(group, alice, "/help")
    message = fake_tg.calls_of("sendMessage")[-1].result
    press = await wh.press(message, alice, "a:1:0")
    assert press.params["show_alert"]
    assert [d.status for d in fake_tg.deliveries_of(int(fake_tg._all_updates[-1]["update_id"]))
            ] == [200]


# settings ------------------------------------------------------------------------------------
GOOD = {"quizbot_telegram_webhook_url": "https://bot.example.org/telegram",
        "quizbot_telegram_webhook_secret": "s3cret_-Token"}


def settings_error(**values: Any) -> list[str]:
    with pytest.raises(SettingsError) as error:
        load_settings(_env_file=None, **values)
    return error.value.lines


def test_long_polling_is_the_default():
    settings = load_settings(_env_file=None)
    assert settings.telegram_webhook is None
    assert settings.quizbot_telegram_webhook_listen == "0.0.0.0:8443"


def test_webhook_settings_are_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("QUIZBOT_TELEGRAM_WEBHOOK_URL", GOOD["quizbot_telegram_webhook_url"])
    monkeypatch.setenv("QUIZBOT_TELEGRAM_WEBHOOK_SECRET", GOOD["quizbot_telegram_webhook_secret"])
    monkeypatch.setenv("QUIZBOT_TELEGRAM_WEBHOOK_LISTEN", "[::]:8080")
    assert load_settings(_env_file=None).telegram_webhook == (
        GOOD["quizbot_telegram_webhook_url"], ("::", 8080), GOOD["quizbot_telegram_webhook_secret"])
    monkeypatch.setenv("QUIZBOT_TELEGRAM_WEBHOOK_LISTEN", "")  # empty: the default
    assert load_settings(_env_file=None).telegram_webhook == (
        GOOD["quizbot_telegram_webhook_url"], ("0.0.0.0", 8443),
        GOOD["quizbot_telegram_webhook_secret"])


def test_the_secret_is_required_with_a_url():
    [line] = settings_error(quizbot_telegram_webhook_url=GOOD["quizbot_telegram_webhook_url"])
    assert line.startswith("QUIZBOT_TELEGRAM_WEBHOOK_SECRET: required")


@pytest.mark.parametrize("secret", ["", "a b", "semi;colon", "ü" * 3, "x" * 257, "tab\t"])
def test_a_malformed_secret_is_named_and_never_printed(secret):
    if not secret.strip():
        lines = settings_error(**{**GOOD, "quizbot_telegram_webhook_secret": secret})
        assert lines == [lines[0]] and lines[0].startswith("QUIZBOT_TELEGRAM_WEBHOOK_SECRET:")
        return
    [line] = settings_error(**{**GOOD, "quizbot_telegram_webhook_secret": secret})
    assert line.startswith("QUIZBOT_TELEGRAM_WEBHOOK_SECRET: must be 1-256 characters")
    assert secret.strip() not in line.split(":", 1)[1]


def test_the_longest_secret_is_fine_and_kept_out_of_logs():
    secret = "A-z_9" * 51 + "x"  # 256
    settings = load_settings(_env_file=None, **{**GOOD, "quizbot_telegram_webhook_secret": secret})
    assert settings.telegram_webhook is not None and settings.telegram_webhook[2] == secret
    assert secret in settings.secrets()  # redacted from every log record by `quizbot run`
    assert secret not in repr(settings) and secret not in str(settings.model_dump())


@pytest.mark.parametrize("url", ["http://bot.example.org/tg", "ftp://bot.example.org/tg",
                                 "bot.example.org/tg", "https://"])
def test_a_webhook_url_must_be_https(url):
    [line] = settings_error(**{**GOOD, "quizbot_telegram_webhook_url": url})
    assert line.startswith("QUIZBOT_TELEGRAM_WEBHOOK_URL: ")


def test_http_is_allowed_with_a_local_bot_api_server():
    settings = load_settings(_env_file=None, **{
        **GOOD, "quizbot_telegram_webhook_url": "http://bot:8443/telegram",
        "telegram_api_base_url": "http://bot-api:8081/bot"})
    assert settings.telegram_webhook is not None


@pytest.mark.parametrize("listen", ["8443", "0.0.0.0", ":8443", "0.0.0.0:0", "0.0.0.0:65536",
                                    "host:port", "0.0.0.0:８４４３"])
def test_a_malformed_listen_address_is_named(listen):
    [line] = settings_error(**{**GOOD, "quizbot_telegram_webhook_listen": listen})
    assert line.startswith("QUIZBOT_TELEGRAM_WEBHOOK_LISTEN: must be host:port")


def test_a_secret_without_a_url_is_still_checked():
    [line] = settings_error(quizbot_telegram_webhook_secret="no spaces please")
    assert line.startswith("QUIZBOT_TELEGRAM_WEBHOOK_SECRET:") and "spaces" not in line


# processes of their own -----------------------------------------------------------------------
WEBHOOK_ROUNDS = 5


@pytest.mark.slow
async def test_kill_9_during_bursts_through_the_webhook_loses_nothing_answered_200(
    fake_tg, tmp_path
):
    port = free_port()
    bot = BotProcess(fake_tg, tmp_path / "quiz.db", tmp_path, webhook=(
        f"http://127.0.0.1:{port}/telegram", f"127.0.0.1:{port}", secrets.token_urlsafe(32)))
    try:
        await kill_9_during_bursts(fake_tg, bot, tmp_path, WEBHOOK_ROUNDS,
                                   confirmed=fake_tg.webhook_confirmed.__contains__)
    finally:
        if bot.proc is not None:
            await bot.kill()
    assert not fake_tg.calls_of("getUpdates", ok_only=False)
    assert len(fake_tg.calls_of("setWebhook")) == WEBHOOK_ROUNDS + 1


QUESTION_SECONDS_LIVE = 15  # long enough for the burst, a kill and a restart


class QuizbotRun:
    """`quizbot run` as a process of its own, configured through its environment only; up
    once the fake sees its `ready` call (setWebhook, or getUpdates when it polls)."""

    def __init__(self, fake: FakeTelegramAPI, workdir: Path, name: str, env: dict[str, str],
                 port: int, ready: str = "setWebhook") -> None:
        self.fake = fake
        self.workdir = workdir
        self.name = name
        self.env = env
        self.port = port
        self.ready = ready
        self.proc: asyncio.subprocess.Process | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/telegram"

    async def start(self) -> None:
        before = len(self.fake.calls_of(self.ready, ok_only=False))
        self.starts += 1
        log = (self.workdir / f"{self.name}-{self.starts}.log").open("wb")
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "run", cwd=self.workdir, env=self.env,
            stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log,
        )
        log.close()
        deadline = asyncio.get_running_loop().time() + 20
        while len(self.fake.calls_of(self.ready, ok_only=False)) <= before:
            assert self.proc.returncode is None, f"{self.name} exited at start:\n{self.log()}"
            assert asyncio.get_running_loop().time() < deadline, f"{self.name} never started"
            await asyncio.sleep(0.01)

    def log(self) -> str:
        return "\n".join((self.workdir / f"{self.name}-{n}.log").read_text(errors="replace")
                         for n in range(1, self.starts + 1))

    async def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()
        self.proc = None

    async def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.wait_for(self.proc.wait(), 15)
        finally:
            if self.proc.returncode is None:
                self.proc.kill()
            self.proc = None
        return code


def quizbot_env(fake: FakeTelegramAPI, db: Path | str, public_url: str, port: int,
                secret: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "DISCORD_", "QUIZBOT_"))}
    return {
        **env, "NO_PROXY": "127.0.0.1,localhost", "PYTHONPATH": str(ROOT),
        "TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE_URL": fake.base_url,
        "QUIZBOT_DATABASE": str(db), "QUIZBOT_CONTENT_DIR": str(PACKS),
        "QUIZBOT_QUESTION_SECONDS": str(QUESTION_SECONDS_LIVE), "QUIZBOT_LOG_LEVEL": "INFO",
        "QUIZBOT_TELEGRAM_WEBHOOK_URL": public_url,
        "QUIZBOT_TELEGRAM_WEBHOOK_LISTEN": f"127.0.0.1:{port}",
        "QUIZBOT_TELEGRAM_WEBHOOK_SECRET": secret,
    }


@pytest.fixture(params=["sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """One database for every process: a SQLite file, or a fresh PostgreSQL database on
    QUIZBOT_TEST_POSTGRES_URL's server (skipped, saying why, without one)."""
    async with backend_for(request.param, tmp_path) as chosen:
        yield chosen


@pytest.mark.slow
async def test_two_processes_behind_a_load_balancer_lose_nothing_and_summarise_once(
    fake_tg, tmp_path, backend
):
    """Two `quizbot run` on one database, the fake delivering to each in turn; one is
    killed -9 in the middle of a burst (its share goes to the other meanwhile) and started
    again. Every vote and press answered 200 is stored once, and each question, closed by
    whichever scheduler got there first, gets one stopped poll and one summary."""
    fake = fake_tg
    db, secret = backend.database, secrets.token_urlsafe(32)
    public = f"http://127.0.0.1:{free_port()}/telegram"  # the load balancer's
    processes = []
    for name in ("a", "b"):
        port = free_port()
        processes.append(QuizbotRun(fake, tmp_path, name,
                                    quizbot_env(fake, db, public, port, secret), port))
    rng = random.Random(os.environ.get("CRASH_SEED") or random.randrange(10**6))
    try:
        for process in processes:
            await process.start()
        fake.webhook_targets = [p.url for p in processes]
        admin = fake.user(900, "Admin")
        groups = [fake.group(-1002000000001 - i, f"Group {i}") for i in range(3)]
        button_group = fake.group(-1002000000009, "Buttons")
        for chat in groups:
            fake.command(chat, admin, "/quiz")
        fake.command(button_group, admin, "/quiz buttons")
        polls = [c.result for c in await fake.wait_for("sendPoll", len(groups), within=10)]
        [keyboard] = await fake.wait_for(
            "sendMessage", where=lambda c: "reply_markup" in c.params, within=10)
        buttons = keyboard.result
        data = [b["callback_data"] for row in buttons["reply_markup"]["inline_keyboard"]
                for b in row if b["callback_data"].startswith("a:")]
        await fake.wait_all_confirmed(10)

        votes: dict[int, tuple[str, int]] = {}  # update id -> (poll id, user id)
        presses: dict[int, int] = {}  # update id -> user id
        for i in range(240):
            user = fake.user(20_000 + i, f"P{i}")
            if i % 6 == 0:
                presses[fake.press(buttons, user, rng.choice(data))] = user["id"]
            else:
                poll = polls[i % len(polls)]["poll"]
                votes[fake.answer_poll(poll["id"], user, [rng.randrange(3)])] = (
                    poll["id"], user["id"])
        burst = [*votes, *presses]
        share = rng.randrange(len(burst) // 4, len(burst) // 2)
        await until(lambda: len(fake.webhook_confirmed & set(burst)) >= share, 20)
        await processes[1].kill()  # the other takes its share meanwhile
        await until(lambda: len(fake.webhook_confirmed & set(burst)) >= share + 40, 20)
        await processes[1].start()
        await fake.wait_all_confirmed(20)

        # the questions close in whichever scheduler gets there first: one summary each
        anchors = {(m["chat"]["id"], m["message_id"]) for m in [*polls, buttons]}

        def summaries() -> Counter[tuple[int, int]]:
            return Counter(
                (c.params["chat_id"], c.params["reply_parameters"]["message_id"])
                for c in fake.calls_of("sendMessage")
                if isinstance(c.params.get("reply_parameters"), dict)
                and (c.params["chat_id"], c.params["reply_parameters"]["message_id"])
                in anchors)

        await until(lambda: set(summaries()) == anchors, QUESTION_SECONDS_LIVE + 15)
        await asyncio.sleep(2.5)  # a second summary would be out by now (1 s rounds)
        codes = [await p.stop() for p in processes]
    finally:
        for process in processes:
            if process.proc is not None:
                await process.kill()
    logs = {p.name: p.log() for p in processes}
    assert codes == [0, 0], logs

    stops = Counter((c.params["chat_id"], c.params["message_id"])
                    for c in fake.calls_of("stopPoll", ok_only=False))
    assert all(n == 1 for n in summaries().values()), summaries()
    assert sorted(stops.values()) == [1] * len(polls), stops
    refs = dict(await backend.fetch("SELECT ref, post_id FROM post_refs"))
    stored = Counter(await backend.fetch("SELECT post_id, person_key FROM answers"))
    expected = {(refs[f"tg-poll:{poll_id}"], f"tg:{user_id}") for poll_id, user_id in
                votes.values()}
    expected |= {(refs[f"tg-msg:{buttons['chat']['id']}:{buttons['message_id']}"],
                  f"tg:{user_id}") for user_id in presses.values()}
    problems = {
        "lost": sorted(expected - set(stored)),
        "nobody gave": sorted(set(stored) - expected),
        "twice": sorted(k for k, n in stored.items() if n > 1),
        "errors logged": [line for log in logs.values() for line in log.splitlines()
                          if " ERROR " in line or " CRITICAL " in line
                          or line.startswith("Traceback")],
    }
    assert not {k: v for k, v in problems.items() if v}, (problems, logs)
    assert any(d.target == processes[1].url and d.error for d in fake.deliveries)  # killed
    async with backend.opened() as store:
        await store.materialize()  # the boards catch up with the answers asynchronously
    assert await backend.stored() == await backend.recount()


# quizbot run: one line naming the variable, never the secret ---------------------------------
async def run_quizbot(env: dict[str, str], cwd: Path) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", cwd=cwd, env=env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode is not None
    return proc.returncode, (out + err).decode()


async def test_quizbot_run_names_a_bad_secret_without_printing_it(fake_tg, tmp_path):
    secret = "almost-right but not"
    env = quizbot_env(fake_tg, tmp_path / "quiz.db", "https://bot.example.org/tg", free_port(),
                      secret)
    code, output = await run_quizbot(env, tmp_path)
    assert code == 2
    [line] = output.strip().splitlines()
    assert "QUIZBOT_TELEGRAM_WEBHOOK_SECRET" in line and "almost" not in output
    assert not fake_tg.calls


async def test_quizbot_run_names_an_address_it_cannot_listen_on(fake_tg, tmp_path):
    port = free_port()
    secret = secrets.token_urlsafe(32)
    env = quizbot_env(fake_tg, tmp_path / "quiz.db", f"http://127.0.0.1:{port}/tg", port,
                      secret)
    blocker = await asyncio.start_server(lambda r, w: None, "127.0.0.1", port)
    try:
        code, output = await run_quizbot(env, tmp_path)
    finally:
        blocker.close()
        await blocker.wait_closed()
    assert code == 5
    [line] = [x for x in output.splitlines() if x.startswith("quizbot:")]
    assert f"QUIZBOT_TELEGRAM_WEBHOOK_LISTEN=127.0.0.1:{port}" in line
    assert secret not in output and fake_tg.token not in output
