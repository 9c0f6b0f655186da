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
from tests.web.conftest import CHAT_A, TITLE_A, Site

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


@pytest.mark.slow  # about 7 s: a browser's start, two downloads, 15 screenshots
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
                for path in ("", "people", "person/tg:2", "questions", "reports", "settings"):
                    await page.goto(f"{site.client.make_url(f'/chat/{CHAT_A}/')}{path}")
                    assert await page.text_content("h1") == f"Dashboard · {TITLE_A}"
                    shot = (path or "overview").replace("/", "-").replace(":", "")
                    await page.screenshot(path=str(shots / f"{name}-{shot}.png"), full_page=True)
            await page.emulate_media(color_scheme="dark")  # dark mode follows the system
            await page.goto(str(site.client.make_url(f"/chat/{CHAT_A}/")))
            await page.screenshot(path=str(shots / "desktop-overview-dark.png"), full_page=True)
            await page.emulate_media(color_scheme="light")
            await page.goto(str(site.client.make_url(f"/chat/{CHAT_A}/questions?lang=hi")))
            await page.screenshot(path=str(shots / "desktop-questions-hi.png"), full_page=True)
            await page.goto(str(site.client.make_url(f"/chat/{CHAT_A}/reports?lang=en")))

            [report] = await site.service.problem_reports.for_chat(Chat(CHAT_A), allowed=True)
            await page.get_by_label("Note").fill("fixed the typo")
            await page.get_by_role("button", name="Resolve").click()
            assert "The report is resolved." in (await page.text_content("main") or "")
            assert await site.service.problem_reports.for_chat(Chat(CHAT_A), allowed=True) == []
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


# What an accessibility checker (axe-core is not on PyPI) would look at, in plain Playwright:
# names, contrast by WCAG's formula, and a keyboard walk.
AUDIT = """() => {
  const problems = [];
  const where = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
    (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ')[0] : '');
  const named = (e) => (e.getAttribute('aria-label') || '').trim() ||
    (e.getAttribute('aria-labelledby') && document.getElementById(
      e.getAttribute('aria-labelledby'))?.textContent.trim()) ||
    (e.id && document.querySelector(`label[for="${e.id}"]`)?.textContent.trim()) ||
    e.closest('label')?.textContent.trim() ||
    (['BUTTON', 'A'].includes(e.tagName) && e.textContent.trim()) ||
    (e.tagName === 'INPUT' && ['submit', 'button'].includes(e.type) && e.value.trim());
  const controls = 'a[href], button, input:not([type=hidden]), select, textarea';
  for (const e of document.querySelectorAll(controls))
    if (!named(e)) problems.push('no name: ' + where(e));
  for (const e of document.querySelectorAll('img')) if (!e.hasAttribute('alt'))
    problems.push('no alt: ' + where(e));
  for (const e of document.querySelectorAll('svg'))
    if (!(e.getAttribute('aria-hidden') === 'true' || (e.getAttribute('role') === 'img'
          && (e.getAttribute('aria-label') || e.querySelector('title')))))
    problems.push('svg without role=img and a name: ' + where(e));
  for (const e of document.querySelectorAll('table')) if (!e.querySelector('th'))
    problems.push('table without headers: ' + where(e));
  if (!document.documentElement.lang) problems.push('no lang');
  if (!document.title.trim()) problems.push('no title');
  const rgba = (s) => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = (e) => {
    for (let n = e; n; n = n.parentElement) {
      const c = rgba(getComputedStyle(n).backgroundColor);
      if (c.length >= 3 && (c.length === 3 || c[3] > 0.5)) return c.slice(0, 3);
    }
    return rgba(getComputedStyle(document.documentElement).backgroundColor).slice(0, 3);
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  while (walker.nextNode()) {
    const e = walker.currentNode.parentElement;
    if (!walker.currentNode.textContent.trim() || seen.has(e) || e.closest('svg')) continue;
    seen.add(e);
    const s = getComputedStyle(e), box = e.getBoundingClientRect();
    if (s.visibility === 'hidden' || s.display === 'none' || box.width <= 1 || box.height <= 1)
      continue;
    const fg = rgba(s.color), bg = background(e);
    const alpha = fg.length > 3 ? fg[3] : 1;
    const mixed = fg.slice(0, 3).map((v, i) => v * alpha + bg[i] * (1 - alpha));
    const [hi, lo] = [lum(mixed), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < need) problems.push(`contrast ${ratio.toFixed(2)} < ${need}: ${where(e)} "` +
                                    e.textContent.trim().slice(0, 30) + '"');
  }
  return problems;
}"""
FOCUSABLE = "a[href], button, input:not([type=hidden]), select, textarea"
FOCUS_SHOWN = ("() => { const e = document.activeElement, s = getComputedStyle(e);"
               f" return [Array.from(document.querySelectorAll('{FOCUSABLE}')).indexOf(e),"
               " e.textContent.trim(), (s.outlineStyle !== 'none'"
               " && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none']; }")


async def test_every_page_is_labelled_readable_and_keyboard_usable(site: Site, shots: Path
                                                                   ) -> None:
    """Every control and chart named, every text at WCAG AA contrast in light and dark mode,
    and Tab reaches every link and control in turn with a visible focus ring."""
    from playwright.async_api import async_playwright

    await site.login()
    link = str(site.client.make_url(await site.link()))
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            # the audit finds what it looks for: a faint text and an unnamed field
            await page.set_content('<html lang="en"><title>t</title><body style="background:'
                                   '#fff"><p style="color:#bbb">faint</p><input id="q"></body>')
            assert len(await page.evaluate(AUDIT)) == 2
            await page.goto(link)
            for scheme in ("light", "dark"):
                await page.emulate_media(color_scheme=scheme)
                for path in ("", "people", "person/tg:1", "questions", "reports", "settings"):
                    await page.goto(f"{site.client.make_url(f'/chat/{CHAT_A}/')}{path}")
                    assert await page.evaluate(AUDIT) == [], (scheme, path)
            await page.emulate_media(color_scheme="light")
            for path in ("", "reports"):
                await page.goto(f"{site.client.make_url(f'/chat/{CHAT_A}/')}{path}")
                focusable = await page.locator(FOCUSABLE).count()
                reached = []
                for _ in range(focusable):
                    await page.keyboard.press("Tab")
                    index, text, shown = await page.evaluate(FOCUS_SHOWN)
                    assert shown, (path, index, text)
                    reached.append(index)
                assert reached == list(range(focusable)), path  # every one, in page order
            await page.goto(f"{site.client.make_url(f'/chat/{CHAT_A}/')}reports")
            await page.keyboard.press("Tab")
            await page.screenshot(path=str(shots / "desktop-reports-focus.png"))
        finally:
            await browser.close()


async def test_a_persons_calibration_beside_their_accuracy(site: Site, shots: Path) -> None:
    """The organiser opens a person asked how sure: the table says how often each confidence
    was right, readable in light and dark mode, at phone and desktop widths, in en and bn."""
    from playwright.async_api import async_playwright

    from tests.web.conftest import said_answers

    await said_answers(site)
    link = str(site.client.make_url(await site.link()))
    person = str(site.client.make_url(f"/chat/{CHAT_A}/person/tg:7"))
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            await page.goto(link)
            await page.goto(person)
            rows = page.locator("#calibration-table tbody tr")
            assert [await rows.nth(i).inner_text() for i in range(await rows.count())] == [
                "Sure\t3\t2\t67%", "Think so\t1\t0\t0%", "Guessing\t1\t1\t100%"]
            # beside the accuracy: right under the figures, before the topics
            headings = await page.locator("main h3").all_inner_texts()
            assert headings[:2] == ["How sure they said they were", "Accuracy per topic"]
            for scheme in ("light", "dark"):
                await page.emulate_media(color_scheme=scheme)
                assert await page.evaluate(AUDIT) == [], scheme
            await page.emulate_media(color_scheme="light")
            for name, (width, height) in SIZES.items():
                await page.set_viewport_size({"width": width, "height": height})
                for lang in ("en", "bn"):
                    await page.goto(f"{person}?lang={lang}")
                    await page.screenshot(path=str(shots / f"{name}-calibration-{lang}.png"),
                                          full_page=True)
            assert await page.locator("#calibration-table td.said").first.inner_text() == \
                "নিশ্চিত"
        finally:
            await browser.close()
