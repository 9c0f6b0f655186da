"""Exactly once through the real python-telegram-bot and the fake Bot API: a command that
changes state, delivered again to another process on the same database (a SQLite file, a
PostgreSQL database), runs once (core/ports.py CommandKey)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.adapters.telegram import TelegramAdapter
from bot.content import Catalog
from bot.core.service import QuizService
from bot.settings import Settings
from tests.behaviour.telegram import free_port, webhook_settings
from tests.clock import FakeClock
from tests.errorlog import ErrorLog
from tests.fakes.telegram_api import FakeTelegramAPI
from tests.storage_contract.backends import Backend, backend_for

AUTHOR = 1001


class Process:
    """One bot process's parts: its own storage on the shared database, core and adapter."""

    def __init__(self, catalog: Catalog, backend: Backend, clock: FakeClock,
                 settings: Settings) -> None:
        self.storage = backend.store()
        self.service = QuizService(catalog, self.storage, clock, random.Random(3),
                                   authors={f"tg:{AUTHOR}"})
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
        return f"http://{self.settings.quizbot_telegram_webhook_listen}/telegram"


@pytest.fixture(params=["sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend_for(request.param, tmp_path) as chosen:
        yield chosen


@pytest.fixture
async def two(
    fake_tg: FakeTelegramAPI, sample_catalog: Catalog, clock: FakeClock, tg_settings: Settings,
    backend: Backend,
) -> AsyncIterator[list[Process]]:
    """Two processes behind the fake's round-robin load balancer."""
    shared = webhook_settings()
    processes = []
    for _ in range(2):
        settings = tg_settings.model_copy(update={
            **shared, "quizbot_telegram_webhook_listen": f"127.0.0.1:{free_port()}"})
        processes.append(Process(sample_catalog, backend, clock, settings))
    for process in processes:
        await process.start()
    fake_tg.webhook_targets = [p.url for p in processes]
    yield processes
    for process in processes:
        await process.stop()


async def test_undo_delivered_again_to_another_process_removes_one_question(
    two: list[Process], fake_tg: FakeTelegramAPI, alice: dict[str, Any],
    alice_dm: dict[str, Any], error_log: ErrorLog,
) -> None:
    """The first process removes the question and commits, then its reply fails (500):
    Telegram sends /undo again, to the other process, which finds its key and removes
    nothing more."""
    first, second = two
    fake_tg.webhook_targets = [first.url]
    for n in range(3):
        await fake_tg.wait_confirmed(fake_tg.send_poll(
            alice_dm, alice, f"Question {n}?", ["A", "B"], correct=[0]))
    fake_tg.webhook_targets = [first.url, second.url]
    error_log.allow("handling update")
    # the reply to /undo, after the commit, fails every try (the apology goes out)
    fake_tg.fail_next("sendMessage", status=502, times=4)
    undo = fake_tg.command(alice_dm, alice, "/undo")
    await fake_tg.wait_confirmed(undo, within=10)

    deliveries = fake_tg.deliveries_of(undo)
    assert [d.status for d in deliveries] == [500, 200]
    assert {d.target for d in deliveries} == {first.url, second.url}
    draft = await second.storage.get_draft(f"tg:{AUTHOR}")
    assert draft is not None and len(draft.questions) == 2  # one removed, not two
    removed = [t for t in fake_tg.sent_texts(alice_dm["id"]) if "removed" in t]
    assert removed == []  # its reply was the one that failed; the second delivery is silent

    # another /undo is another command: it runs, in whichever process
    await fake_tg.wait_confirmed(fake_tg.command(alice_dm, alice, "/undo"), within=10)
    draft = await first.storage.get_draft(f"tg:{AUTHOR}")
    assert draft is not None and len(draft.questions) == 1
    assert fake_tg.sent_texts(alice_dm["id"])[-1].startswith("Question 2 removed")
