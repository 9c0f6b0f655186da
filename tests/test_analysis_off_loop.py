"""/analysis runs its analysis in a worker thread, once: the event loop keeps answering other
chats meanwhile (bot/core/chat_analysis.py)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from bot.core import chat_analysis
from bot.core.item_stats import analyse as real_analyse  # what chat_analysis calls, unpatched
from bot.core.models import Chat, Person
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.ports import FakePort

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database

GROUP = Chat("tg:-100", "Study group")
OTHER = Chat("tg:-200", "Other group")
ADA, BO = Person("tg:1", "Ada"), Person("tg:2", "Bo")
WAIT = 10.0  # seconds; reached only when the analysis holds the event loop


async def asked(service: QuizService, port: FakePort, chat: Chat) -> int:
    async with service.asking.quiz(chat, ADA, "sample") as question:
        await port.send_question(question)
    return question.post_id


async def test_the_analysis_runs_once_in_a_worker_while_other_chats_are_answered(
    service: QuizService, clock: FakeClock, monkeypatch: Any
) -> None:
    port = FakePort("tg:", clock).attach(service)
    await service.answer(await asked(service, port, GROUP), ADA, 0)
    elsewhere = await asked(service, port, OTHER)

    threads: list[threading.Thread] = []
    running, release = threading.Event(), threading.Event()

    def analyse(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread())
        running.set()
        # on the event loop, this would wait for an answer the blocked loop cannot record
        assert release.wait(WAIT), "the event loop stood still while the analysis ran"
        return real_analyse(*args, **kwargs)

    monkeypatch.setattr(chat_analysis, "analyse", analyse)
    analysis = asyncio.create_task(service.item_analysis.for_chat(GROUP, allowed=True))
    assert await asyncio.to_thread(running.wait, WAIT)
    result = await service.answer(elsewhere, BO, 1)  # another chat, answered meanwhile
    assert result.accepted
    release.set()
    report = await analysis

    assert len(threads) == 1 and threads[0] is not threading.main_thread()
    assert [r.quiz_id for r in report.reports] == ["sample"]

