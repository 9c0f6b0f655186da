"""The dashboard's Questions page for the kinds answered without one option: the answers given,
counted, instead of an empty table of options."""

from __future__ import annotations

import random
import re
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.content.loader import load_catalog
from bot.core.models import Chat, Person, Typed
from bot.core.ports import Storage
from bot.core.service import QuizService
from bot.web.server import RUNNER_OPTIONS, build_app
from tests.clock import FakeClock
from tests.web.conftest import BOT_TOKEN, CHAT_A, SECRET, Site

KINDS = Path(__file__).parents[1] / "data" / "kinds"


@pytest.fixture
async def kinds_site(storage: Storage, clock: FakeClock) -> AsyncIterator[Site]:
    service = QuizService(load_catalog(KINDS), storage, clock, random.Random(3),
                          web=(SECRET, "http://127.0.0.1:9"))
    server = TestServer(build_app(service, secure=False, bot_token=BOT_TOKEN))
    await server.start_server(**RUNNER_OPTIONS)
    client = TestClient(server)
    await client.start_server()
    try:
        yield Site(service, storage, clock, client)
    finally:
        await client.close()


def rows(page: str, question_id: str) -> list[str]:
    section = re.search(rf'<section class="question" id="q-{question_id}">(.*?)</section>',
                        page, re.S)
    assert section is not None, page
    return [" ".join(re.sub(r"<[^>]+>", " ", row).split())
            for row in re.findall(r"<tr>(.*?)</tr>", section.group(1), re.S)]


async def test_a_numbers_answers_are_listed_with_their_counts(kinds_site: Site) -> None:
    site = kinds_site
    shown = await site.service.questions.post(Chat(CHAT_A), "kinds", "k-num", "en",
                                              open_for=timedelta(minutes=5))
    # two right (one in Bengali digits), one wrong
    for n, typed in ((1, "0.4"), (2, "০.৪"), (3, "4")):
        result = await site.service.answer(shown.post_id, Person(f"tg:{n}", f"P{n}"),
                                           Typed(typed))
        assert result.accepted, result
    await site.storage.materialize()
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/questions?quiz=kinds")).text()
    listed = rows(page, "k-num")
    assert listed[0].startswith("Most common answers")
    body = listed[1:]
    assert len(body) == 2, body
    right = next(row for row in body if "✓" in row)
    wrong = next(row for row in body if "✓" not in row)
    assert "0.4" in right and right.split()[-2:] == ["2", "67%"], right
    assert wrong.startswith("4") and wrong.split()[-2:] == ["1", "33%"], wrong
