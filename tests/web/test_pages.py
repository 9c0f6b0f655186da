"""The dashboard's pages through HTTP: a link becomes a session, each page shows the chat's
figures as the database has them, in the reader's language."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from bot.core.dashboard_reads import PAGE
from bot.core.deck import Deck
from bot.core.ports import AnswerRecord, NewPost, NewProblemReport
from tests.web.conftest import CHAT_A, CHAT_B, Site


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


async def replayed_cards(site: Site) -> dict[tuple[str, str, str], tuple[str, datetime, float]]:
    """Every card of the two chats as /review replays it, with the chat of its last
    answer: (person, quiz, question) -> (chat, due, stability)."""
    last: dict[tuple[str, str, str], tuple[datetime, int, str]] = {}
    for chat in (CHAT_A, CHAT_B):
        for a in await site.storage.chat_answers(chat, None, 10_000):
            key = (a.person_key, a.quiz_id, a.question_id)
            last[key] = max(last.get(key, (a.answered_at, a.id, chat)), (a.answered_at, a.id, chat))
    cards = {}
    for person in {key[0] for key in last}:
        deck = Deck()
        for answer in await site.storage.review_answers(person):
            deck.apply(answer)
        for (quiz, question), card in deck.cards.items():
            assert card.stability is not None
            cards[(person, quiz, question)] = (last[(person, quiz, question)][2], card.due,
                                               card.stability)
    return cards


async def test_the_overview_counts_the_chats_review_cards(site: Site) -> None:
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/")).text()
    today = site.clock.now().astimezone(UTC).date()
    mine = [due for chat, due, _ in (await replayed_cards(site)).values() if chat == CHAT_A]
    due = sum(d.astimezone(UTC).date() <= today for d in mine)
    assert (figure(page, "cards"), figure(page, "cards-due")) == (str(len(mine)), str(due))
    assert 0 < due < len(mine)  # some cards are due today, some later


async def test_the_person_page_lists_their_cards_as_review_replays_them(site: Site) -> None:
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/person/tg:2")).text()
    table = page[page.index('id="cards-table"'):]
    shown = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td class=\"num\">([^<]*)</td>",
                       table)
    theirs = sorted((due, question, stability) for (person, _, question), (_, due, stability)
                    in (await replayed_cards(site)).items() if person == "tg:2")
    prompts = {"s-one": "What is one plus one?"}
    assert len(shown) == len(theirs) > 0
    for (prompt, when, stability), (due, question, kept) in zip(shown, theirs, strict=True):
        assert when == due.strftime("%Y-%m-%d %H:%M")  # the chat has no time zone: UTC
        assert float(stability) == round(kept, 1)
        assert prompts.get(question, prompt) == prompt


async def test_every_page_renders(site: Site) -> None:
    await site.login()
    for path in ("people", "questions", "reports", "settings", "person/tg:1"):
        response = await site.client.get(f"/chat/{CHAT_A}/{path}")
        assert response.status == 200, (path, await response.text())
    people = await (await site.client.get(f"/chat/{CHAT_A}/people")).text()
    assert "রাজা" in people and "सीता" in people and "=SUM(A1)" in people
    questions = await (await site.client.get(f"/chat/{CHAT_A}/questions")).text()
    assert "What is one plus one?" in questions and "Red" in questions
    # this chat's one open report (on s-two), not chat B's (on s-one)
    assert questions.count("Open reports: 1</a>") == 1
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


async def test_the_reports_page_is_paged_by_keyset(site: Site) -> None:
    for n in range(PAGE + 5):
        await site.storage.add_problem_report(NewProblemReport(
            "sample", "s-one", f"tg:{100 + n}", f"R{n}", CHAT_A, f"report {n}",
            site.clock.now()), since=site.clock.now() - timedelta(days=1), daily_cap=5,
            max_chars=500)
    await site.login()
    seen: list[str] = []
    path = f"/chat/{CHAT_A}/reports"
    while path:
        page = await (await site.client.get(path)).text()
        seen += re.findall(r'<section class="question" id="report-(\d+)">', page)
        found = re.search(r'href="([^"]*reports\?after=\d+)"', page)
        path = found.group(1) if found else ""
    expected = [str(r.id) for r in await site.storage.problem_reports(chat_key=CHAT_A)]
    assert seen == expected and len(expected) == PAGE + 6  # the fixture's one too
    assert (await site.client.get(f"/chat/{CHAT_A}/reports?after=x")).status == 400
