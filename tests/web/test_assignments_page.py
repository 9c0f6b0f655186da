"""The dashboard's Assignments page (bot/web/assignments.py): the chat's assignments, latest
deadline first, each member's progress (the questions of its set answered in their runs of it,
right, the last answer), its CSV export read back, another chat's assignment refused; then in
a real browser (Debian's chromium through Playwright): the page reached from the navigation,
the export downloaded, every text readable in light and dark, screenshots at phone and desktop
widths."""

from __future__ import annotations

import asyncio
import csv
import io
import re
import shutil
from pathlib import Path

import pytest

from bot.core.models import Chat, Person
from bot.i18n import translator
from tests.web.conftest import CHAT_A, CHAT_B, TITLE_A, Site

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
RAJA, SITA = Person("tg:2", "রাজা"), Person("tg:3", "सीता")


async def take(site: Site, assignment_id: int, who: Person, right: int, count: int) -> None:
    """`who` answers `count` questions of the assignment privately, the first `right` right."""
    taken = await site.service.assignments.take(assignment_id, who, Chat(who.key, who.name,
                                                                         is_private=True),
                                                from_chat=CHAT_A)
    question = taken.question
    for n in range(count):
        option = question.correct if n < right else (question.correct + 1) % 3
        result = await site.service.answer(question.post_id, who, option)
        if result.next_question is not None:
            question = result.next_question


async def assigned(site: Site) -> tuple[int, int]:
    """Two assignments in chat A (one taken by two members), one in chat B."""
    assignments = site.service.assignments
    first = await assignments.assign(Chat(CHAT_A, TITLE_A), "sample", "2026-03-01", "23:30",
                                     "Asia/Kolkata", allowed=True)
    second = await assignments.assign(Chat(CHAT_A, TITLE_A), "testing", "2026-03-09",
                                      allowed=True)
    await assignments.assign(Chat(CHAT_B), "sample", "2026-03-06", allowed=True)
    await take(site, first.id, RAJA, right=2, count=3)
    await take(site, first.id, SITA, right=1, count=1)
    return first.id, second.id


def text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


async def test_the_page_shows_each_member_s_progress_and_exports_it(site: Site) -> None:
    first, second = await assigned(site)
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/assignments")).text()
    assert 'aria-current="page">Assignments</a>' in page
    assert page.index(f'id="assignment-{second}"') < page.index(f'id="assignment-{first}"')
    shown = text_of(page[page.index(f'id="assignment-{first}"'):])
    assert f"#{first} “Sample Quiz” (Deadline: 2026-03-01 23:30 (Asia/Kolkata) · running)" \
        in shown
    assert "রাজা 3 / 3 2" in shown and "सीता 1 / 3 1" in shown
    assert shown.index("রাজা") < shown.index("सीता")  # the most answered first
    assert "Nobody has started it yet." in text_of(page[:page.index(f'id="assignment-{first}"')])
    assert "tg:-200" not in page

    response = await site.client.get(f"/chat/{CHAT_A}/export/assignment-{first}.csv")
    assert response.status == 200
    rows = list(csv.reader(io.StringIO((await response.read()).decode("utf-8-sig"))))
    assert rows[0] == ["Person", "Name", "Answered", "Right", "Questions", "Started",
                       "Last answer"]
    assert [r[:5] for r in rows[1:]] == [["tg:2", "রাজা", "3", "2", "3"],
                                         ["tg:3", "सीता", "1", "1", "3"]]
    other = await site.service.storage.chat_assignments(CHAT_B, site.clock.now())
    refused = await site.client.get(f"/chat/{CHAT_A}/export/assignment-{other[0].id}.csv")
    assert refused.status == 404  # another chat's

    site.clock.advance(hours=7)  # past the first deadline (18:00 UTC), before the second
    page = await (await site.client.get(f"/chat/{CHAT_A}/assignments?lang=hi")).text()
    t = translator("hi").gettext
    assert f"<h2>{t('Assignments')}</h2>" in page and t("Assignments") != "Assignments"
    over = text_of(page[page.index(f'id="assignment-{first}"'):])
    assert f"· {t('over')})" in over
    assert f"· {t('running')})" in text_of(page[:page.index(f'id="assignment-{first}"')])


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
async def test_an_organiser_opens_the_assignments_in_a_browser(site: Site, tmp_path: Path
                                                               ) -> None:
    from playwright.async_api import async_playwright

    from tests.web.test_browser import AUDIT

    first, _second = await assigned(site)
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"\nassignments screenshots: {shots}")
    link = str(site.client.make_url(await site.link()))
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            context = await browser.new_context(accept_downloads=True,
                                                viewport={"width": 1280, "height": 900})
            page = await context.new_page()
            await page.goto(link)
            await page.get_by_role("link", name="Assignments", exact=True).click()
            rows = page.locator(f"#assignment-{first} tbody tr")
            assert await rows.count() == 2
            async with page.expect_download() as download:
                await page.locator(f"#assignment-{first}").get_by_role(
                    "link", name="Progress (CSV)").click()
            data = await asyncio.to_thread(Path(await (await download.value).path()).read_bytes)
            assert "রাজা" in data.decode("utf-8-sig")
            for scheme in ("light", "dark"):
                await page.emulate_media(color_scheme=scheme)
                assert await page.evaluate(AUDIT) == [], scheme
            await page.emulate_media(color_scheme="light")
            for name, (width, height) in {"phone": (390, 844), "desktop": (1280, 900)}.items():
                await page.set_viewport_size({"width": width, "height": height})
                await page.screenshot(path=str(shots / f"{name}-assignments.png"), full_page=True)
        finally:
            await browser.close()
