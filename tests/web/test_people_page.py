"""The People page: each person's weak topics by the rule of bot/core/weak_topics.py (checked
against the answers stored), and on a phone every column, the weakest topics too, on the
screen (headless Chromium; the screenshots go to a folder the test prints)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from bot.core.weak_topics import is_weak
from tests.web.conftest import CHAT_A, Site

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def cells(page: str) -> dict[str, str]:
    return dict(re.findall(r'<tr data-person="([^"]+)">.*?<td class="weakest"[^>]*>([^<]*)</td>',
                           page, re.S))


async def test_a_topic_is_named_weak_only_below_70_percent_and_below_the_chat(site: Site
                                                                              ) -> None:
    await site.login()
    stored = await site.storage.chat_answers(CHAT_A, None, 10_000)
    chat_accuracy = sum(a.correct for a in stored) / len(stored)
    title = site.service.catalog.quizzes["sample"].title.get("en")
    shown = cells(await (await site.client.get(f"/chat/{CHAT_A}/people")).text())
    expected = {}
    for person in {a.person_key for a in stored}:
        mine = [a for a in stored if a.person_key == person]
        weak = is_weak(len(mine), sum(a.correct for a in mine), chat_accuracy)
        expected[person] = title if weak else "–"
    assert shown == expected
    assert set(shown.values()) == {title, "–"}  # the sample has both: the test can fail


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
async def test_on_a_phone_the_weakest_topics_are_on_the_screen(site: Site, tmp_path: Path
                                                               ) -> None:
    from playwright.async_api import async_playwright

    link = str(site.client.make_url(await site.link()))
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = await browser.new_page(viewport={"width": 390, "height": 844})
            await page.goto(link)
            await page.goto(str(site.client.make_url(f"/chat/{CHAT_A}/people")))
            weakest = page.locator("#people-table td.weakest")
            assert await weakest.count() > 0
            for i in range(await weakest.count()):
                box = await weakest.nth(i).bounding_box()
                assert box is not None and box["width"] > 0
                assert 0 <= box["x"] and box["x"] + box["width"] <= 390  # no sideways scroll
            assert await page.evaluate("document.documentElement.scrollWidth") <= 390
            shot = tmp_path / "people-phone.png"
            await page.screenshot(path=str(shot), full_page=True)
            print(f"\npeople page on a phone: {shot}")
        finally:
            await browser.close()
