"""The dashboard's pages through HTTP: a link becomes a session, each page shows the chat's
figures as the database has them, in the reader's language."""

from __future__ import annotations

import re
from datetime import timedelta

from bot.core.ports import AnswerRecord, NewPost
from tests.web.conftest import CHAT_A, Site


def figure(page: str, name: str) -> str:
    found = re.search(rf'<b id="{name}">([^<]+)</b>', page)
    assert found is not None, page
    return found.group(1)


async def test_a_link_opens_the_overview_with_the_chats_figures(site: Site) -> None:
    response = await site.client.get(await site.link(), allow_redirects=False)
    assert response.status == 303 and response.headers["Location"] == f"/chat/{CHAT_A}/"
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and f"Path=/chat/{CHAT_A}/" in cookie
    page = await (await site.client.get(f"/chat/{CHAT_A}/")).text()
    people, answered, correct = await site.storage.chat_totals(CHAT_A)
    assert (figure(page, "people"), figure(page, "answers"), figure(page, "right")) == (
        str(people), str(answered), str(correct))
    assert answered > 20 and "<svg" in page


async def test_the_overview_shows_the_daily_questions_streaks(site: Site) -> None:
    today = site.clock.now()
    for days_ago, right in ((2, ("tg:1", "tg:2")), (1, ("tg:1", "tg:2")), (0, ("tg:1",))):
        when = today - timedelta(days=days_ago)
        post = await site.storage.claim_daily(CHAT_A, when.date(), NewPost(
            CHAT_A, "sample", "s-one", (0, 1, 2), "en", when, kind="daily"), when)
        assert post is not None
        for person in ("tg:1", "tg:2", "tg:3"):
            await site.storage.record_answer(AnswerRecord(
                post.id, person, 1 if person in right else 0, person in right, when, 2000))
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/")).text()
    # tg:1 three days; tg:2 two, still alive (today's question may be open); tg:3 none
    assert (figure(page, "on-streak"), figure(page, "longest-streak"),
            figure(page, "best-streak")) == ("2", "3", "3")


async def test_every_page_renders(site: Site) -> None:
    await site.login()
    for path in ("people", "questions", "reports", "settings", "person/tg:1"):
        response = await site.client.get(f"/chat/{CHAT_A}/{path}")
        assert response.status == 200, (path, await response.text())
    people = await (await site.client.get(f"/chat/{CHAT_A}/people")).text()
    assert "রাজা" in people and "सीता" in people and "=SUM(A1)" in people
    questions = await (await site.client.get(f"/chat/{CHAT_A}/questions")).text()
    assert "What is one plus one?" in questions and "Red" in questions
    assert await (await site.client.get(f"/chat/{CHAT_A}/questions?quiz=sample")).text() \
        == questions
    unknown = await site.client.get(f"/chat/{CHAT_A}/questions?quiz=nope")
    assert unknown.status == 404 and "no answers to that quiz" in await unknown.text()


async def test_the_language_switches_and_sticks(site: Site) -> None:
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/people?lang=bn")).text()
    assert '<html lang="bn">' in page
    again = await (await site.client.get(f"/chat/{CHAT_A}/")).text()
    assert '<html lang="bn">' in again
