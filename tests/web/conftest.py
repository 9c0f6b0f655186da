"""The dashboard served by aiohttp's test server from a real QuizService on the shared
`storage` fixture (SQLite, or PostgreSQL with QUIZBOT_TEST_STORE=postgres), with two chats of
answers and reports: `chat A` is the one the organiser's link is for."""

from __future__ import annotations

import random
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.content import Catalog
from bot.core.models import Chat, Person
from bot.core.ports import AnswerRecord, Storage
from bot.core.service import QuizService
from bot.web.server import RUNNER_OPTIONS, build_app
from tests.clock import FakeClock

SECRET = "s3cret-" + "x" * 40
BOT_TOKEN = "123456:test-token-of-the-bot"
CHAT_A, CHAT_B = "tg:-100", "tg:-200"
TITLE_A = "ML study group"  # chat B's title is unknown (the platform gave none)
ADMIN = Person("tg:1", "Ada")


@dataclass
class Site:
    service: QuizService
    storage: Storage
    clock: FakeClock
    client: TestClient[Any, Any]

    async def link(self, chat: str = CHAT_A, locale: str = "en") -> str:
        url = await self.service.dashboard.link(Chat(chat), allowed=True, locale=locale)
        return url.removeprefix("http://127.0.0.1:9")

    async def login(self, chat: str = CHAT_A, locale: str = "en") -> None:
        response = await self.client.get(await self.link(chat, locale), allow_redirects=False)
        assert response.status == 303, await response.text()

    async def csrf(self, chat: str = CHAT_A) -> str:
        page = await (await self.client.get(f"/chat/{chat}/reports")).text()
        found = re.search(r'name="csrf" value="([^"]+)"', page)
        assert found is not None, page
        return found.group(1)


NAMES = ["Ada", "রাজা", "सीता", "=SUM(A1)", "Bob"]


async def fill(service: QuizService, storage: Storage, clock: FakeClock, chat: str,
               people: int, seed: int) -> None:
    rng = random.Random(seed)
    start = clock.now() - timedelta(days=5)
    for n in range(9):
        when = start + timedelta(days=n // 2, hours=n)
        question, right = (("s-one", 1), ("s-two", 0), ("s-three", 2))[n % 3]
        post = await storage.create_post(chat, "sample", question, (0, 1, 2), "en", when)
        for p in range(people):
            if rng.random() < 0.8:
                option = rng.randrange(3)
                await storage.record_answer(AnswerRecord(
                    post.id, f"tg:{p + 1}", option, option == right, when + timedelta(seconds=p),
                    rng.randrange(1000, 20000), name=NAMES[p % len(NAMES)]))
    await storage.materialize()


@pytest.fixture
async def site(sample_catalog: Catalog, storage: Storage, clock: FakeClock
               ) -> AsyncIterator[Site]:
    service = QuizService(sample_catalog, storage, clock, random.Random(3),
                          web=(SECRET, "http://127.0.0.1:9"))
    await fill(service, storage, clock, CHAT_A, 5, 1)
    await fill(service, storage, clock, CHAT_B, 3, 2)
    await storage.upsert_chat(CHAT_A, TITLE_A)
    await service.problem_reports.report(Person("tg:2", "রাজা"), Chat(CHAT_A), "s-two",
                                         "Typo in B")
    await service.problem_reports.report(Person("tg:3", "सीता"), Chat(CHAT_B), "s-one",
                                         "B's report")
    server = TestServer(build_app(service, secure=False, bot_token=BOT_TOKEN))
    await server.start_server(**RUNNER_OPTIONS)  # as bot.web.server.serve makes it
    client = TestClient(server)
    await client.start_server()
    try:
        yield Site(service, storage, clock, client)
    finally:
        await client.close()


SURE, THINK_SO, GUESSING = 2, 1, 0  # models.Confidence, as stored
# (chat, question, option, confidence) that "tg:7" (Mira) answers: in chat A sure 2 of 3,
# think so 0 of 1, guessing 1 of 1, one answer not asked; in chat B sure and wrong twice.
# s-one's answer is option 1, s-two's 0, s-three's 2.
SAID = [
    (CHAT_A, "s-one", 1, SURE), (CHAT_A, "s-two", 1, SURE), (CHAT_A, "s-three", 2, SURE),
    (CHAT_A, "s-one", 0, THINK_SO), (CHAT_A, "s-two", 0, GUESSING), (CHAT_A, "s-three", 0, None),
    (CHAT_B, "s-one", 2, SURE), (CHAT_B, "s-two", 2, SURE),
]
RIGHT = {"s-one": 1, "s-two": 0, "s-three": 2}


async def said_answers(site: Site, person: str = "tg:7") -> None:
    """`person` answers SAID, each on a post of its own, saying how sure as each chat asked."""
    for i, (chat, question, option, said) in enumerate(SAID):
        when = site.clock.now() - timedelta(hours=len(SAID) - i)
        post = await site.storage.create_post(chat, "sample", question, (0, 1, 2), "en", when)
        outcome, _ = await site.storage.record_answer(AnswerRecord(
            post.id, person, option, option == RIGHT[question], when, 4000, name="Mira",
            confidence=said))
        assert outcome == "inserted"
    await site.storage.materialize()
