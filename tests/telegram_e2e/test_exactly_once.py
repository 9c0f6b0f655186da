"""Exactly once through the real python-telegram-bot and the fake Bot API: a command that
changes state, delivered again to another process on the same database (a SQLite file, a
PostgreSQL database), runs once (core/ports/ CommandKey); a summary whose send Telegram
accepted after the client's timeout appears once; a summary's chart that went out is not
sent again when its text failed and is retried.

Telegram's timings are scaled down (a reply 1.5 s late against a 0.5 s send timeout)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.adapters.telegram import app as tg_app
from bot.adapters.telegram import publish
from bot.content import Catalog
from bot.core.models import Chat
from bot.core.service import QuizService
from bot.settings import Settings
from tests.clock import FakeClock
from tests.errorlog import ErrorLog
from tests.fakes.telegram_api import FakeTelegramAPI
from tests.storage_contract.backends import Backend, backend_for
from tests.telegram_e2e.conftest import GROUP_ID, QUESTION_SECONDS, Harness
from tests.telegram_e2e.test_webhook import Process, behind_load_balancer

AUTHOR = 1001


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
    async with behind_load_balancer(fake_tg, sample_catalog, clock, tg_settings, backend.store,
                                    authors={f"tg:{AUTHOR}"}) as processes:
        yield processes


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


# summaries ------------------------------------------------------------------------------------
@pytest.fixture
async def slow(fake_tg: FakeTelegramAPI, service: QuizService, tg_settings: Settings,
               monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Harness]:
    """The bot with sends timing out after half a second."""
    monkeypatch.setattr(tg_app, "SEND_TIMEOUT", 0.5)
    harness = Harness(fake_tg, service, tg_settings)
    await harness.start()
    yield harness
    await harness.stop()


def summaries_sent(fake: FakeTelegramAPI) -> list[str]:
    """Every summary text Telegram took (a late reply too: it is there all the same)."""
    return [c.params["text"] for c in fake.calls_of("sendMessage", ok_only=False)
            if c.ok and "Question closed" in c.params["text"]]


async def closed_after_a_vote(tg: Harness, clock: FakeClock, group: dict[str, Any],
                              alice: dict[str, Any]) -> None:
    await tg.command(group, alice, "/quiz sample")
    [poll] = tg.fake.calls_of("sendPoll")
    await tg.answer(poll, alice, 0)
    clock.advance(QUESTION_SECONDS + 1)


async def test_a_summary_accepted_after_the_timeout_appears_once(
    slow: Harness, fake_tg: FakeTelegramAPI, clock: FakeClock, group: dict[str, Any],
    alice: dict[str, Any], caplog: pytest.LogCaptureFixture,
) -> None:
    await closed_after_a_vote(slow, clock, group, alice)
    fake_tg.delay_next("sendMessage", 1.5)  # Telegram takes it, and says so too late
    await slow.tick()
    [late] = [c for c in fake_tg.calls_of("sendMessage", ok_only=False) if c.delayed]
    assert "Question closed" in late.params["text"]
    for _ in range(4):  # past every retry a failure would have had
        clock.advance(minutes=1)
        await slow.tick()
    assert len(summaries_sent(fake_tg)) == 1
    assert any("of the summary of post" in r.getMessage() for r in caplog.records)
    assert len(fake_tg.calls_of("stopPoll", ok_only=False)) == 1


async def test_a_chart_that_went_out_is_not_sent_again_when_its_text_is_retried(
    tg: Harness, fake_tg: FakeTelegramAPI, clock: FakeClock, group: dict[str, Any],
    alice: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A summary too long for the photo's caption: the photo, then the text. The text fails
    (every try: a 502), after the photo went out; the next try sends the text alone."""
    monkeypatch.setattr(publish, "TG_CAPTION", 10)  # any summary is too long for a caption
    await tg.service.chat_settings.change(Chat(f"tg:{GROUP_ID}", "Study Group"), allowed=True,
                                          chart=True)
    await closed_after_a_vote(tg, clock, group, alice)
    fake_tg.fail_next("sendMessage", status=502, times=4)  # the text, and its 3 retries
    await tg.tick()
    assert len(fake_tg.calls_of("sendPhoto")) == 1 and summaries_sent(fake_tg) == []
    for _ in range(3):
        clock.advance(minutes=1)
        await tg.tick()
    assert len(fake_tg.calls_of("sendPhoto", ok_only=False)) == 1
    assert len(summaries_sent(fake_tg)) == 1  # the text, once, after the photo
    [photo] = fake_tg.calls_of("sendPhoto")
    [text] = [c for c in fake_tg.calls_of("sendMessage") if "Question closed" in
              c.params["text"]]
    assert fake_tg.calls.index(photo) < fake_tg.calls.index(text)
