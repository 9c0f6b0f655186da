"""A storage that cannot be used for a while (a connection terminated, a read-only or full
disk): no update is confirmed to Telegram before what it carries is stored.

The real python-telegram-bot and our adapter against the fake Bot API (which knows the
offsets it was sent). Polling holds back the first update the storage failed and asks for it
again after a pause; a webhook answers 503. Afterwards every vote Telegram was told was
handled is stored, once, and nobody was told to vote again.
"""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from bot.content import Catalog
from bot.core.service import QuizService
from bot.reports.png import PngCharts
from bot.settings import Settings
from bot.storage.postgres.storage import PostgresStorage
from tests.behaviour.telegram import webhook_settings
from tests.clock import FakeClock
from tests.fakes.telegram_api import FakeTelegramAPI
from tests.storage_contract.pg import fresh_database
from tests.telegram_e2e.conftest import Harness

GROUPS = (-1002000000001, -1002000000002, -1002000000003)
VOTES = 240
OUTAGE = "the storage cannot be used now"
BACK = "the storage is back"
NOT_SAVED = "Your answer is not saved yet"
CANNOT_SAVE = "I cannot save anything right now"


def readonly_error(tmp_path: Path) -> sqlite3.OperationalError:
    """What SQLite raises for a write to a read-only file (SQLITE_READONLY), from SQLite."""
    path = tmp_path / "readonly.db"
    sqlite3.connect(path).close()
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        db.execute("CREATE TABLE t (x)")
    except sqlite3.OperationalError as exc:
        return exc
    finally:
        db.close()
    raise AssertionError("a read-only database took a write")


class Fault:
    """Makes one storage method fail like the storage itself would, while `on`."""

    def __init__(self, make_error: Callable[[], BaseException]) -> None:
        self.make_error = make_error
        self.on = False
        self.failures = 0

    def wrap(self, method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def failing(*args: Any, **kwargs: Any) -> Any:
            if self.on:
                self.failures += 1
                raise self.make_error()
            return await method(*args, **kwargs)

        return failing


async def until(condition: Callable[[], bool], within: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def open_polls(fake: FakeTelegramAPI, tg: Harness) -> list[dict[str, Any]]:
    admin = fake.user(900, "Admin")
    for chat_id in GROUPS:
        await tg.command(fake.group(chat_id, f"Group {chat_id}"), admin, "/quiz")
    return [c.result["poll"] for c in await fake.wait_for("sendPoll", len(GROUPS))]


def vote_burst(fake: FakeTelegramAPI, polls: list[dict[str, Any]], first_user: int,
               count: int = VOTES) -> dict[int, tuple[str, int]]:
    """Votes from `count` people over the polls: update id -> (poll id, user id)."""
    rng = random.Random(first_user)
    votes = {}
    for i in range(count):
        user = fake.user(first_user + i, f"P{first_user + i}")
        poll = polls[i % len(polls)]
        votes[fake.answer_poll(poll["id"], user, [rng.randrange(3)])] = (poll["id"], user["id"])
    return votes


async def assert_confirmed_votes_stored_once(
    fake: FakeTelegramAPI, service: QuizService, votes: dict[int, tuple[str, int]]
) -> None:
    confirmed = {u: v for u, v in votes.items() if u < fake.confirmed_below}
    assert confirmed, "no vote was confirmed"
    post_of = {}
    for poll_id in {p for p, _ in votes.values()}:
        post_id = await service.questions.post_id_for(f"tg-poll:{poll_id}")
        assert post_id is not None
        post_of[poll_id] = post_id
    stored: Counter[tuple[int, str]] = Counter()
    for post_id in post_of.values():
        for answer in await service.storage.answers_for_post(post_id):
            stored[(post_id, answer.person_key)] += 1
    expected = {(post_of[p], f"tg:{u}") for p, u in confirmed.values()}
    assert not expected - set(stored), "confirmed votes lost"
    assert not [k for k, n in stored.items() if n > 1], "votes stored twice"


def logged(caplog: pytest.LogCaptureFixture, fragment: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if fragment in r.getMessage()]


# polling ---------------------------------------------------------------------------------------
async def test_votes_the_storage_refused_are_held_back_and_stored_once_it_is_back(
    tg, fake_tg, service, storage, tmp_path, caplog, monkeypatch
):
    caplog.set_level(logging.INFO)
    polls = await open_polls(fake_tg, tg)
    fault = Fault(lambda: readonly_error(tmp_path))
    monkeypatch.setattr(storage, "record_answer", fault.wrap(storage.record_answer))
    fault.on = True
    votes = vote_burst(fake_tg, polls, 10_000)

    await until(lambda: fault.failures >= 20)
    held_at = fake_tg.confirmed_below
    await asyncio.sleep(1.0)  # the poller asks again, is refused again, and waits longer
    assert fake_tg.confirmed_below == held_at, "an update the storage refused was confirmed"
    assert fake_tg.pending_updates > 0
    fault.on = False

    await fake_tg.wait_all_confirmed(within=40)
    await asyncio.wait_for(tg.adapter.idle(), 10)
    await assert_confirmed_votes_stored_once(fake_tg, service, votes)
    assert all(u < fake_tg.confirmed_below for u in votes)
    # nobody is asked to vote again: a quiz-poll vote cannot be cast twice
    voters = {user_id for _, user_id in votes.values()}
    assert not [c for c in fake_tg.calls_of("sendMessage") if c.params["chat_id"] in voters]
    # one line when the outage starts, one when it ends; not one per update
    assert len(logged(caplog, OUTAGE)) == 1 and len(logged(caplog, BACK)) == 1
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_press_and_a_command_the_storage_refused_run_once_when_it_is_back(
    tg, fake_tg, service, storage, tmp_path, alice, alice_dm, group, monkeypatch
):
    await tg.command(group, alice, "/quiz buttons")
    [keyboard] = await fake_tg.wait_for("sendMessage", where=lambda c: "reply_markup" in c.params)
    data = keyboard.result["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
    fault = Fault(lambda: readonly_error(tmp_path))
    monkeypatch.setattr(storage, "record_answer", fault.wrap(storage.record_answer))
    monkeypatch.setattr(storage, "set_person_locale", fault.wrap(storage.set_person_locale))
    fault.on = True
    press = fake_tg.press(keyboard.result, alice, data)
    command = fake_tg.command(alice_dm, alice, "/lang hi")

    [told] = await fake_tg.wait_for("answerCallbackQuery")
    assert told.params["text"].startswith(NOT_SAVED)  # not "try again": it will be
    await until(lambda: any(CANNOT_SAVE in t for t in tg.texts(alice_dm)))
    await until(lambda: fault.failures >= 4)  # each asked for again, refused again
    assert fake_tg.confirmed_below <= press
    fault.on = False

    await fake_tg.wait_confirmed(command, within=40)
    await tg.settle()
    post_id = await tg.post_of(keyboard.result)
    assert [a.person_key for a in await storage.answers_for_post(post_id)] == ["tg:1001"]
    texts = tg.texts(alice_dm)
    assert len([t for t in texts if CANNOT_SAVE in t]) == 1  # told once, not per attempt
    assert len([t for t in texts if "हिन्दी" in t]) == 1  # then done, once
    assert len(fake_tg.calls_of("answerCallbackQuery")) == 1  # the press was answered once


# webhooks --------------------------------------------------------------------------------------
@pytest.fixture
async def wh(fake_tg: FakeTelegramAPI, service: QuizService,
             tg_settings: Settings) -> AsyncIterator[Harness]:
    harness = Harness(fake_tg, service, tg_settings.model_copy(update=webhook_settings()))
    await harness.start()
    yield harness
    await harness.stop()


async def test_a_webhook_answers_503_while_the_storage_refuses_and_stores_once_after(
    wh, fake_tg, service, storage, tmp_path, monkeypatch
):
    polls = await open_polls(fake_tg, wh)
    fault = Fault(lambda: readonly_error(tmp_path))
    monkeypatch.setattr(storage, "record_answer", fault.wrap(storage.record_answer))
    fault.on = True
    votes = vote_burst(fake_tg, polls, 20_000, count=30)

    def every_vote_answered() -> bool:
        return all(any(not d.open for d in fake_tg.deliveries_of(u)) for u in votes)

    # The storage refuses inside the request, before the answer is written: on a loaded
    # machine the fake may not have read a single answer yet when the 30th refusal is
    # counted, so wait for an answer to every vote, then check what each answer was.
    await until(lambda: fault.failures >= 30 and every_vote_answered())
    assert not set(votes) & fake_tg.webhook_confirmed
    statuses = {d.status for u in votes for d in fake_tg.deliveries_of(u) if not d.open}
    assert statuses == {503}
    fault.on = False

    await until(lambda: set(votes) <= fake_tg.webhook_confirmed, within=40)
    await assert_confirmed_votes_stored_once(fake_tg, service, votes)
    voters = {user_id for _, user_id in votes.values()}
    assert not [c for c in fake_tg.calls_of("sendMessage") if c.params["chat_id"] in voters]


async def test_a_webhook_body_nested_too_deep_is_refused_with_400(wh, caplog):
    caplog.set_level(logging.INFO)
    settings = wh.settings
    assert settings.quizbot_telegram_webhook_secret is not None
    headers = {"X-Telegram-Bot-Api-Secret-Token":
               settings.quizbot_telegram_webhook_secret.get_secret_value()}
    async with aiohttp.ClientSession() as session:
        for body in (b"[" * 400_000, b'{"update_id": 1, "x": ' + b"[" * 100 + b"]" * 100 + b"}"):
            async with session.post(settings.quizbot_telegram_webhook_url, data=body,
                                    headers=headers) as response:
                assert response.status == 400
    assert len(logged(caplog, "nested deeper than")) == 2
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# PostgreSQL connections terminated under a burst -------------------------------------------
@pytest.fixture
async def pg_service(sample_catalog: Catalog, clock: FakeClock) -> AsyncIterator[QuizService]:
    async with fresh_database() as url:
        store = PostgresStorage(url, pool_size=4)
        await store.open()
        yield QuizService(sample_catalog, store, clock, random.Random(7), charts=PngCharts())
        await store.close()


async def test_postgres_connections_terminated_during_a_burst_lose_no_confirmed_vote(
    fake_tg, pg_service, tg_settings, error_log, caplog
):
    caplog.set_level(logging.INFO)
    # the storage's own lines for a transaction its connection lost
    error_log.allow("write transaction failed")
    error_log.allow("applying answers to the boards failed")
    tg = Harness(fake_tg, pg_service, tg_settings)
    await tg.start()
    try:
        polls = await open_polls(fake_tg, tg)
        store = pg_service.storage
        assert isinstance(store, PostgresStorage)
        admin = await asyncpg.connect(store.url)
        name = await admin.fetchval("SELECT current_database()")
        votes: dict[int, tuple[str, int]] = {}
        for burst in range(3):
            votes |= vote_burst(fake_tg, polls, 30_000 + 1_000 * burst, count=300)
            # every connection of the bot's terminated, again and again, for a moment
            stop_at = asyncio.get_running_loop().time() + 0.6
            while asyncio.get_running_loop().time() < stop_at:
                await admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = $1 AND pid <> pg_backend_pid()", name)
                await asyncio.sleep(0.02)
        await admin.close()
        await fake_tg.wait_all_confirmed(within=60)
        assert tg.adapter is not None
        await asyncio.wait_for(tg.adapter.idle(), 10)
        await assert_confirmed_votes_stored_once(fake_tg, pg_service, votes)
        assert logged(caplog, OUTAGE), "no vote met a terminated connection"
        voters = {user_id for _, user_id in votes.values()}
        assert not [c for c in fake_tg.calls_of("sendMessage") if c.params["chat_id"] in voters]
    finally:
        await tg.stop()
