"""The Questions page's difficulty (bot/core/difficulty.py): beside each answered question, the
chance someone new answers it right, as the difficulty model's kept rating (every chat's first
answers) and the pack's easy, medium or hard predict it; in the reader's language; and seen so
in a real headless Chromium (skipped with one line where it is missing)."""

from __future__ import annotations

import re
import shutil

import pytest

from bot.core.difficulty import success_for_someone_new
from bot.i18n import translator
from tests.web.conftest import CHAT_A, Site

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
QUESTIONS = ("s-one", "s-two", "s-three")


async def expected(site: Site) -> dict[str, float]:
    """Each question's chance for someone new, from the kept ratings and the pack."""
    rated = await site.storage.question_difficulties(["sample"])
    quiz = site.service.catalog.quizzes["sample"]
    metas = {q: quiz.question(q).meta for q in QUESTIONS}
    return {q: success_for_someone_new(rated.get(("sample", q)), m.difficulty if m else None)
            for q, m in metas.items()}


def shown(page: str) -> dict[str, str]:
    return dict(re.findall(r'<span class="difficulty" id="difficulty-([^"]+)">([^<]+)</span>',
                           page))


async def test_each_answered_question_shows_its_chance_for_someone_new(site: Site) -> None:
    await site.login()
    chances = await expected(site)
    rated = await site.storage.question_difficulties(["sample"])
    assert all(rated[("sample", q)].answers > 0 for q in QUESTIONS)  # answers moved them
    assert len({round(c, 3) for c in chances.values()}) == 3  # not one figure for all
    page = await (await site.client.get(f"/chat/{CHAT_A}/questions")).text()
    pct = translator("en").percent
    assert shown(page) == {
        q: f"Difficulty: {pct(c)} right for someone new" for q, c in chances.items()}
    assert "as the bot estimates it from every first answer" in page  # the key says how


async def test_the_difficulty_is_in_the_reader_s_language(site: Site) -> None:
    await site.login(locale="bn")
    chances = await expected(site)
    page = await (await site.client.get(f"/chat/{CHAT_A}/questions")).text()
    t = translator("bn")
    words = t.gettext("Difficulty: {share} right for someone new")
    assert words != "Difficulty: {share} right for someone new"
    assert shown(page)["s-one"] == words.format(share=t.percent(chances["s-one"]))


@pytest.mark.skipif(CHROMIUM is None,
                    reason="no chromium on this machine (apt-get install chromium)")
async def test_chromium_shows_the_difficulty_beside_each_question(site: Site) -> None:
    from playwright.async_api import async_playwright

    chances = await expected(site)
    pct = translator("en").percent
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = await browser.new_page(viewport={"width": 390, "height": 844})
            await page.goto(str(site.client.make_url(await site.link())))
            await page.get_by_role("link", name="Questions", exact=True).click()
            for question, chance in chances.items():
                cell = page.locator(f"#q-{question} .difficulty")
                assert await cell.is_visible()
                assert await cell.inner_text() == f"Difficulty: {pct(chance)} right for someone new"
        finally:
            await browser.close()
