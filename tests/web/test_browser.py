"""The dashboard in a real headless Chromium (Debian's, driven by Playwright; no browser is
downloaded): an organiser opens the link, checks the figures against the database, opens a
person, switches to Bengali, downloads both exports and reads them back, resolves a report.
Screenshots at phone and desktop widths go to a folder the test prints. Skipped with one line
where Chromium is missing."""

from __future__ import annotations

import asyncio
import csv
import io
import shutil
from pathlib import Path
from urllib.parse import quote

import openpyxl
import pytest

from bot.core.models import Chat
from tests.web.conftest import CHAT_A, Site

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on this machine (apt-get install chromium)")
SIZES = {"phone": (390, 844), "desktop": (1280, 900)}


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = tmp_path / "screenshots"
    folder.mkdir()
    print(f"\ndashboard screenshots: {folder}")
    return folder


@pytest.mark.slow  # about 7 s: a browser's start, two downloads, 13 screenshots
async def test_an_organiser_clicks_through_the_dashboard(site: Site, shots: Path) -> None:
    from playwright.async_api import async_playwright

    link = str(site.client.make_url(await site.link()))
    people, answered, correct = await site.storage.chat_totals(CHAT_A)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            context = await browser.new_context(accept_downloads=True,
                                                viewport={"width": 1280, "height": 900})
            page = await context.new_page()
            await page.goto(link)
            assert await page.text_content("#people") == str(people)
            assert await page.text_content("#answers") == str(answered)
            assert await page.text_content("#right") == str(correct)

            await page.get_by_role("link", name="People", exact=True).click()
            assert await page.locator("#people-table tbody tr").count() == people
            await page.locator("#people-table a", has_text="রাজা").click()
            mine = await site.storage.chat_answers(CHAT_A, None, 1000, person_key="tg:2")
            assert await page.locator("#answers-table tbody tr").count() == len(mine)

            await page.get_by_role("link", name="বাংলা").click()
            assert await page.get_attribute("html", "lang") == "bn"
            assert await page.get_by_role("link", name="মানুষ").count() == 1
            await page.get_by_role("link", name="English").click()

            await page.get_by_role("link", name="Overview").click()
            async with page.expect_download() as csv_download:
                await page.get_by_role("link", name="All answers (CSV)").click()
            data = await asyncio.to_thread(Path(await (await csv_download.value).path()).read_bytes)
            rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
            assert len(rows) - 1 == answered and "রাজা" in {r[1] for r in rows}
            async with page.expect_download() as xlsx_download:
                await page.get_by_role("link", name="All answers (Excel)").click()
            xlsx = Path(await (await xlsx_download.value).path())
            book = openpyxl.load_workbook(io.BytesIO(await asyncio.to_thread(xlsx.read_bytes)),
                                          read_only=True)
            sheet = list(book.active.iter_rows(values_only=True))
            assert len(sheet) - 1 == answered and "सीता" in {r[1] for r in sheet}

            for name, (width, height) in SIZES.items():
                await page.set_viewport_size({"width": width, "height": height})
                for path in ("", "people", "questions", "reports", "settings"):
                    await page.goto(f"{site.client.make_url(f'/chat/{CHAT_A}/')}{path}")
                    await page.screenshot(path=str(shots / f"{name}-{path or 'overview'}.png"),
                                          full_page=True)
            await page.emulate_media(color_scheme="dark")  # dark mode follows the system
            await page.goto(str(site.client.make_url(f"/chat/{CHAT_A}/")))
            await page.screenshot(path=str(shots / "desktop-overview-dark.png"), full_page=True)
            await page.emulate_media(color_scheme="light")
            await page.goto(str(site.client.make_url(f"/chat/{CHAT_A}/questions?lang=hi")))
            await page.screenshot(path=str(shots / "desktop-questions-hi.png"), full_page=True)
            await page.goto(str(site.client.make_url(f"/chat/{CHAT_A}/reports?lang=en")))

            [report] = await site.service.chat_reports(Chat(CHAT_A), allowed=True)
            await page.get_by_label("Note").fill("fixed the typo")
            await page.get_by_role("button", name="Resolve").click()
            assert "The report is resolved." in (await page.text_content("main") or "")
            assert await site.service.chat_reports(Chat(CHAT_A), allowed=True) == []
            [done] = await site.storage.problem_reports(open_only=False, chat_key=CHAT_A)
            assert done.id == report.id and done.resolution == "fixed the typo"
        finally:
            await browser.close()


async def test_the_mini_app_opens_a_learners_own_page(site: Site, shots: Path) -> None:
    """As Telegram opens it: the launch data in the address's fragment, posted by
    miniapp.js, checked by the server, then the person's page."""
    from playwright.async_api import async_playwright

    from tests.web.test_miniapp import init_data

    totals = await site.storage.person_totals("tg:2")
    answered = sum(n for n, _right in totals.values())
    launch = quote(init_data(2, site.clock.now()), safe="")
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = await browser.new_page(viewport={"width": 390, "height": 844})
            await page.goto(f"{site.client.make_url('/app')}#tgWebAppData={launch}")
            await page.wait_for_url("**/me/progress")
            assert await page.get_attribute("html", "lang") == "bn"  # the launch's language
            assert await page.text_content("#answers") == str(answered)
            await page.screenshot(path=str(shots / "phone-progress.png"), full_page=True)
        finally:
            await browser.close()
