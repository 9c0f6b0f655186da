"""The dashboard's Misconceptions page on the bundled mixed-precision pack: which misconceptions
the chat's latest answers chose, with the figures and who (sure ones marked), the tag beside
each distractor on the Questions page, and a follow-up round started from the page (a POST
with the CSRF token; the round asks only the questions carrying it; a forged or stale form is
refused). Then in a real browser (Debian's chromium through Playwright): the page in English
and Hindi, light and dark, a screenshot of each."""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.content.loader import load_catalog
from bot.core.ports import AnswerRecord, Storage
from bot.core.service import QuizService
from bot.web.server import RUNNER_OPTIONS, build_app
from tests.clock import FakeClock
from tests.ports import FakePort
from tests.web.conftest import BOT_TOKEN, CHAT_A, CHAT_B, SECRET, Site
from tests.web.test_browser import AUDIT

PACK = Path(__file__).parents[2] / "content" / "mixed-precision.yaml"
HALVES = "mixed-precision-halves-model-state"
STATEMENT = "Mixed precision keeps the weights, gradients and optimizer state in 16 bits"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SURE = 2
# (question, canonical option, confidence) each person answers in chat A: mp-memory-savings's
# options 1-3 and mp-fit-amp-budget's 2-3 stand for HALVES; mp-bf16-vs-fp16's 0 for
# bf16-more-precise. Ada is sure of HALVES, Bob not asked, Chandra right, Dev chose it and
# then answered right on a second post (her latest answer counts: she no longer holds it).
ANSWERS: dict[str, list[tuple[str, int, int | None]]] = {
    "Ada": [("mp-memory-savings", 1, SURE), ("mp-fit-amp-budget", 3, 1)],
    "Bob": [("mp-memory-savings", 2, None), ("mp-bf16-vs-fp16", 0, None)],
    "Chandra": [("mp-memory-savings", 0, SURE)],
    "Dev": [("mp-memory-savings", 3, 0), ("mp-memory-savings", 0, 2)],
}


@pytest.fixture
async def mc_site(storage: Storage, clock: FakeClock) -> AsyncIterator[Site]:
    service = QuizService(load_catalog(PACK), storage, clock, random.Random(3),
                          web=(SECRET, "http://127.0.0.1:9"))
    FakePort(clock=clock).attach(service)
    await storage.upsert_chat(CHAT_A, "ML study group")
    at = clock.now() - timedelta(hours=2)
    for n, (name, answers) in enumerate(ANSWERS.items(), start=1):
        for question, option, confidence in answers:
            post = await storage.create_post(CHAT_A, "mixed-precision", question, (0, 1, 2, 3),
                                             "en", at)
            at += timedelta(minutes=1)
            await storage.record_answer(AnswerRecord(
                post.id, f"tg:{n}", option, option == 0, at, 4000, name=name,
                confidence=confidence))
    # chat B's answers are not chat A's
    other = await storage.create_post(CHAT_B, "mixed-precision", "mp-memory-savings",
                                      (0, 1, 2, 3), "en", at)
    await storage.record_answer(AnswerRecord(other.id, "tg:9", 1, False, at, 4000, name="Eve"))
    await storage.materialize()
    server = TestServer(build_app(service, secure=False, bot_token=BOT_TOKEN))
    await server.start_server(**RUNNER_OPTIONS)
    client = TestClient(server)
    await client.start_server()
    try:
        yield Site(service, storage, clock, client)
    finally:
        await client.close()


def text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def section(page: str, misconception: str) -> str:
    found = re.search(
        rf'<section class="question" id="m-mixed-precision-{misconception}">(.*?)</section>',
        page, re.S)
    assert found is not None, page
    return text_of(found.group(1))


async def test_the_page_shows_who_holds_what(mc_site: Site) -> None:
    site = mc_site
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/misconceptions")).text()
    halves = section(page, HALVES)
    assert f"“{STATEMENT}”" in halves
    # Ada (sure, two questions) and Bob chose it; of the four who answered a question
    # carrying it; Dev's latest answer was right
    assert "2 4 (50%) 1" in halves, halves
    assert "Who: Ada (sure) , Bob" in halves and "Dev" not in halves and "Eve" not in halves
    assert "(mp-memory-savings)" in halves and "(mp-fit-amp-budget)" in halves
    assert "Start a follow-up round in the chat (2)" in halves
    bf16 = section(page, "bf16-more-precise")
    assert "1 1 (100%) 0" in bf16 and "Who: Bob" in bf16
    assert page.index(HALVES) < page.index("bf16-more-precise"), "the most people first"
    assert 'aria-current="page">Misconceptions</a>' in page

    questions = await (await site.client.get(
        f"/chat/{CHAT_A}/questions?quiz=mixed-precision")).text()
    tagged = re.search(r'<section class="question" id="q-mp-memory-savings">(.*?)</section>',
                       questions, re.S)
    assert tagged is not None
    assert text_of(tagged.group(1)).count(f"Misconception: {STATEMENT}") == 3


async def test_a_follow_up_round_asks_the_questions_carrying_it(mc_site: Site) -> None:
    site = mc_site
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/misconceptions")).text()
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None
    csrf = found.group(1)
    form = {"csrf": csrf, "quiz": "mixed-precision", "misconception": HALVES}
    response = await site.client.post(f"/chat/{CHAT_A}/misconceptions/follow-up", data=form,
                                      allow_redirects=False)
    assert response.status == 303, await response.text()
    assert response.headers["Location"].endswith("misconceptions?started=1")
    [round_] = await site.storage.active_rounds(CHAT_A)
    assert (round_.selector, round_.total) == (f"misconception:mixed-precision/{HALVES}", 2)
    [post] = await site.storage.open_posts(CHAT_A, kind="quiz")
    assert post.question_id in ("mp-memory-savings", "mp-fit-amp-budget")
    started = await (await site.client.get(response.headers["Location"])).text()
    assert "The follow-up round has started in the chat." in started
    assert "Dashboard · ML study group" in started, "the chat keeps its name"

    forged = await site.client.post(f"/chat/{CHAT_A}/misconceptions/follow-up", data={
        **form, "csrf": "forged"}, allow_redirects=False)
    assert forged.status == 403
    unknown = await site.client.post(f"/chat/{CHAT_A}/misconceptions/follow-up", data={
        **form, "misconception": "no-such-idea"}, allow_redirects=False)
    assert unknown.status == 400
    assert len(await site.storage.active_rounds(CHAT_A)) == 1, "nothing else started"


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine "
                    "(apt-get install chromium)")
async def test_the_page_in_a_browser(mc_site: Site, tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    site = mc_site
    link = await site.link(locale="hi")
    base = str(site.client.make_url(""))
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"\nmisconceptions screenshots: {shots}")
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for scheme in ("light", "dark"):
                context = await browser.new_context(color_scheme=scheme,
                                                    viewport={"width": 1000, "height": 900})
                page = await context.new_page()
                await page.goto(base.rstrip("/") + link)
                await page.goto(base.rstrip("/") + f"/chat/{CHAT_A}/misconceptions?lang=en")
                assert await page.locator("section.question").count() == 2
                # names, contrast and tables as the dashboard's own audit checks every page
                assert await page.evaluate(AUDIT) == [], scheme
                await page.goto(base.rstrip("/") + f"/chat/{CHAT_A}/questions")
                assert await page.evaluate(AUDIT) == [], ("questions", scheme)
                await page.goto(base.rstrip("/") + f"/chat/{CHAT_A}/misconceptions")
                await page.screenshot(path=str(shots / f"misconceptions-en-{scheme}.png"),
                                      full_page=True)
                await page.goto(base.rstrip("/") + f"/chat/{CHAT_A}/misconceptions?lang=hi")
                heading = await page.locator("h3").first.inner_text()
                assert "मिक्स्ड प्रिसिज़न" in heading, heading
                await page.screenshot(path=str(shots / f"misconceptions-hi-{scheme}.png"),
                                      full_page=True)
                await page.get_by_role("button").first.click()
                await page.wait_for_load_state()
                assert await page.get_by_role("status").count() == 1
                await context.close()
        finally:
            await browser.close()
