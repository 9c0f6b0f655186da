"""Who may read what: a chat's session opens that chat only (every page and export), a
tampered, expired or revoked link or session gets the 403 page in the reader's language, a
POST without its CSRF token changes nothing, and no log line carries a token, the secret or
a cookie value."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from bot.core.models import Chat
from bot.logs import Redactor
from bot.web.auth import SESSION
from tests.web.conftest import CHAT_A, CHAT_B, SECRET, Site

PAGES = ("", "people", "person/tg:1", "questions", "reports", "settings", "sessions",
         "export/answers.csv", "export/answers.xlsx", "export/board.csv?period=all",
         "export/board.xlsx?period=week")
ASK_AGAIN = "Ask the bot again with /dashboard in the chat for a new link."


def session_cookie(site: Site) -> str:
    [cookie] = [c for c in site.client.session.cookie_jar if c.key == SESSION]
    return cookie.value


async def status_of(site: Site, path: str, cookie: str | None = None) -> tuple[int, str]:
    headers = {"Cookie": f"{SESSION}={cookie}"} if cookie is not None else {}
    response = await site.client.get(path, headers=headers)
    body = await response.read()
    return response.status, body.decode("utf-8", "replace")


@pytest.mark.parametrize("path", PAGES)
async def test_a_session_for_chat_a_cannot_read_chat_b(site: Site, path: str) -> None:
    await site.login(CHAT_A)
    cookie = session_cookie(site)
    assert (await status_of(site, f"/chat/{CHAT_A}/{path}"))[0] == 200
    # the browser does not even send it there (its path is chat A's); sent by hand, refused
    status, body = await status_of(site, f"/chat/{CHAT_B}/{path}")
    assert status == 403 and ASK_AGAIN in body
    status, body = await status_of(site, f"/chat/{CHAT_B}/{path}", cookie)
    assert status == 403 and ASK_AGAIN in body and "B&#39;s report" not in body


async def test_a_tampered_link_is_refused(site: Site) -> None:
    link = await site.link()
    body, _dot, mac = link.removeprefix("/open/").partition(".")
    forged_chat = (await site.link(CHAT_B)).removeprefix("/open/").partition(".")[0]
    for bad in (f"{body}.{mac[:-2]}xx", f"{forged_chat}.{mac}", body, "nonsense", f"{body}."):
        response = await site.client.get(f"/open/{bad}", allow_redirects=False)
        assert response.status == 403 and ASK_AGAIN in await response.text()
        assert SESSION not in response.cookies


async def test_a_session_cookie_is_no_link_and_a_link_is_no_session(site: Site) -> None:
    link = await site.link()
    token = link.removeprefix("/open/")
    assert (await status_of(site, f"/chat/{CHAT_A}/", token))[0] == 403
    await site.login()
    response = await site.client.get(f"/open/{session_cookie(site)}", allow_redirects=False)
    assert response.status == 403


async def test_an_expired_link_and_session_are_refused_in_the_readers_language(
    site: Site
) -> None:
    link = await site.link(locale="bn")
    await site.login()
    site.clock.advance(timedelta(hours=24, seconds=1).total_seconds())
    response = await site.client.get(link, allow_redirects=False)
    page = await response.text()
    assert response.status == 403 and '<html lang="bn">' in page and ASK_AGAIN not in page
    assert (await status_of(site, f"/chat/{CHAT_A}/"))[0] == 403


async def test_revoking_ends_every_link_and_session_of_the_chat_only(site: Site) -> None:
    link = await site.link()
    await site.login()
    await site.login(CHAT_B)
    await site.service.dashboard.revoke(Chat(CHAT_A), allowed=True)
    assert (await status_of(site, f"/chat/{CHAT_A}/"))[0] == 403
    assert (await site.client.get(link, allow_redirects=False)).status == 403
    assert (await site.client.get(f"/chat/{CHAT_B}/")).status == 200
    await site.login()  # a new link works again
    assert (await site.client.get(f"/chat/{CHAT_A}/")).status == 200


async def test_a_post_without_its_csrf_token_changes_nothing(site: Site) -> None:
    await site.login()
    [report] = await site.service.problem_reports.for_chat(Chat(CHAT_A), allowed=True)
    url = f"/chat/{CHAT_A}/reports/{report.id}/resolve"
    for form in ({"note": "x"}, {"note": "x", "csrf": "forged"},
                 {"note": "x", "csrf": site.service.dashboard.csrf("another session")}):
        response = await site.client.post(url, data=form, allow_redirects=False)
        assert response.status == 403
    assert [r.id for r in await site.service.problem_reports.for_chat(Chat(CHAT_A),
                                                                      allowed=True)] == [report.id]
    response = await site.client.post(url, data={"note": "fixed", "csrf": await site.csrf()},
                                      allow_redirects=False)
    assert response.status == 303
    assert await site.service.problem_reports.for_chat(Chat(CHAT_A), allowed=True) == []


async def test_chat_a_cannot_resolve_chat_bs_report(site: Site) -> None:
    await site.login()
    [theirs] = await site.service.problem_reports.for_chat(Chat(CHAT_B), allowed=True)
    response = await site.client.post(f"/chat/{CHAT_A}/reports/{theirs.id}/resolve",
                                      data={"csrf": await site.csrf()})
    assert response.status == 400 and "There is no report" in await response.text()
    assert len(await site.service.problem_reports.for_chat(Chat(CHAT_B), allowed=True)) == 1


async def test_no_log_line_carries_a_token_the_secret_or_a_cookie(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    link = await site.link()
    await site.client.get(link)
    cookie = session_cookie(site)
    csrf = await site.csrf()
    for path in PAGES:
        await site.client.get(f"/chat/{CHAT_A}/{path}")
    await site.client.get(link + "x")
    site.clock.advance(86_401)
    await site.client.get(link)
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    assert "dashboard of tg:-100 opened" in logged  # the log is captured
    for secret in (link.removeprefix("/open/"), link.split(".")[-1], cookie,
                   cookie.split(".")[-1], csrf, SECRET):
        assert secret not in logged


def test_a_dashboard_link_a_library_logs_is_redacted() -> None:
    """python-telegram-bot and discord.py log request bodies at DEBUG: the message that
    carries a link must not leave its key in the log."""
    redactor = Redactor()
    record = logging.LogRecord("telegram.ext.ExtBot", logging.DEBUG, __file__, 1,
                               "Calling sendMessage with %s", ({"text": "dashboard:\n"
                               "https://quiz.example/open/eyJ0.abc-_%3D?x"},), None)
    redactor.filter(record)
    assert "eyJ0" not in record.getMessage() and "abc" not in record.getMessage()
    assert "https://quiz.example/open/<token>" in record.getMessage()


async def test_a_person_page_past_its_end_shows_no_name_from_another_chat(site: Site) -> None:
    from bot.core.ports import AnswerRecord

    # tg:99 answered only in chat B, under a name chat A's admins have no business reading
    post = await site.storage.create_post(CHAT_B, "sample", "s-one", (0, 1, 2), "en",
                                          site.clock.now())
    await site.storage.record_answer(AnswerRecord(post.id, "tg:99", 1, True, site.clock.now(),
                                                  2000, name="Hidden Person"))
    await site.login(CHAT_A)
    for query in ("", "?after=1.1", "?after=99999999999999999.999999999999999999"):
        status, body = await status_of(site, f"/chat/{CHAT_A}/person/tg:99{query}")
        assert status == 404 and "Hidden Person" not in body, (query, status)
    # someone who answered here still pages past their end
    status, body = await status_of(site, f"/chat/{CHAT_A}/person/tg:1?after=1.1")
    assert status == 200


@pytest.mark.parametrize("cursor", ["١٢.٣", "²", "1" * 20 + ".1", "1." + "9" * 20, ""])
async def test_cursors_that_are_not_small_ascii_numbers_are_400(site: Site, cursor: str) -> None:
    await site.login(CHAT_A)
    for page in ("people", "person/tg:1", "reports"):
        after = cursor if page != "people" else f"{cursor}.{cursor}.tg:1"
        status, _ = await status_of(site, f"/chat/{CHAT_A}/{page}?after={after}")
        assert status == 400, (page, after, status)
