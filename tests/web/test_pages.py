"""The dashboard's pages through HTTP: a link becomes a session, each page shows the chat's
figures as the database has them, in the reader's language."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from bot.core.dashboard_reads import PAGE
from bot.core.deck import Deck
from bot.core.models import MIN_ANSWERS, Chat, Person
from bot.core.ports import AnswerRecord, NewPost, NewProblemReport
from tests.web.conftest import CHAT_A, CHAT_B, GUESSING, SURE, THINK_SO, TITLE_A, Site, said_answers


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


async def test_the_people_page_counts_each_persons_day_streak_in_this_chat(site: Site) -> None:
    today = site.clock.now()
    for chat, people in ((CHAT_A, ("tg:2",)), (CHAT_B, ("tg:1", "tg:2"))):
        for days_ago in (1, 0):
            when = today - timedelta(days=days_ago)
            post = await site.storage.claim_daily(chat, when.date(), NewPost(
                chat, "sample", "s-one", (0, 1, 2), "en", when, kind="daily"), when)
            assert post is not None
            for person in people:
                await site.storage.record_answer(AnswerRecord(post.id, person, 1, True, when,
                                                              2000))
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/people")).text()
    streaks = dict(re.findall(r'<tr data-person="([^"]+)">'
                              r'(?:.*?<td class="num" data-label="Day streak">)'
                              r"([^<]+)</td>", page, re.S))
    # tg:1's two days are chat B's, not this chat's
    assert (streaks["tg:1"], streaks["tg:2"]) == ("0", "2")
    for person, streak in (("tg:1", "0"), ("tg:2", "2")):  # and so says each one's page
        page = await (await site.client.get(f"/chat/{CHAT_A}/person/{person}")).text()
        assert figure(page, "day-streak") == streak


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


async def answer_s_one_now(site: Site, chat: str, person: str, order: tuple[int, ...] = (0, 1, 2),
                           elapsed_ms: int = 3000) -> None:
    """`person` answers s-one ("What is one plus one?") right on a new post in `chat`."""
    post = await site.storage.create_post(chat, "sample", "s-one", order, "en", site.clock.now())
    await site.storage.record_answer(AnswerRecord(post.id, person, 1, True, site.clock.now(),
                                                  elapsed_ms))


async def test_the_person_page_lists_their_cards_in_this_chat_as_review_replays_them(
        site: Site) -> None:
    # tg:2 answers in both chats; their newest answer to s-one is in chat B, so that card is
    # chat B's, and chat A's admins do not see it
    await answer_s_one_now(site, CHAT_B, "tg:2")
    await site.storage.materialize()
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/person/tg:2")).text()
    table = page[page.index('id="cards-table"'):]
    shown = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td class=\"num\">([^<]*)</td>",
                       table)
    replayed = await replayed_cards(site)
    theirs = sorted((due, question, stability) for (person, _, question), (chat, due, stability)
                    in replayed.items() if person == "tg:2" and chat == CHAT_A)
    assert replayed["tg:2", "sample", "s-one"][0] == CHAT_B
    prompts = {"s-one": "What is one plus one?"}
    assert len(shown) == len(theirs) > 0 and prompts["s-one"] not in table
    for (prompt, when, stability), (due, question, kept) in zip(shown, theirs, strict=True):
        assert when == due.strftime("%Y-%m-%d %H:%M")  # the chat has no time zone: UTC
        assert float(stability) == round(kept, 1)
        assert prompts.get(question, prompt) == prompt


async def test_the_person_page_sums_up_their_answers_in_this_chat(site: Site) -> None:
    mine = await site.storage.chat_answers(CHAT_A, None, 1000, person_key="tg:2")
    right = sum(a.correct for a in mine)
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/person/tg:2")).text()
    assert (figure(page, "answers"), figure(page, "accuracy")) == (
        str(len(mine)), f"{round(100 * right / len(mine))}%")
    assert figure(page, "last-seen") == max(a.answered_at for a in mine).strftime(
        "%Y-%m-%d %H:%M")  # the chat has no time zone: UTC
    [topic] = re.findall(r'<table id="topics-table">.*?<tbody>\s*<tr>(.*?)</tr>', page, re.S)
    assert re.findall(r"<td[^>]*>([^<]*)</td>", topic)[:3] == [
        "Sample Quiz", str(len(mine)), str(right)]


async def test_the_person_page_letters_each_answer_as_its_post_showed_the_options(
        site: Site) -> None:
    # s-one's options as authored: A) 1, B) 2, C) 3; this post showed them as 3, 1, 2
    await answer_s_one_now(site, CHAT_A, "tg:6", order=(2, 0, 1), elapsed_ms=4_250)
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/person/tg:6")).text()
    [row] = re.findall(r"<tr><td>What is one plus one\?</td><td>([^<]+)</td>.*?"
                       r'<td class="num">([^<]+)</td></tr>',
                       page[:page.index('id="cards-table"')], re.S)
    assert row == ("C) 2", "4.2")  # seconds to one decimal, as everywhere else


async def test_every_page_renders(site: Site) -> None:
    await site.login()
    for path in ("people", "questions", "reports", "settings", "person/tg:1"):
        response = await site.client.get(f"/chat/{CHAT_A}/{path}")
        assert response.status == 200, (path, await response.text())
    people = await (await site.client.get(f"/chat/{CHAT_A}/people")).text()
    assert "রাজা" in people and "सीता" in people and "=SUM(A1)" in people
    questions = await (await site.client.get(f"/chat/{CHAT_A}/questions")).text()
    assert "What is one plus one?" in questions and "Red" in questions
    # the key /analysis gives in chat: what counts, the letters, what disc means
    assert "Each person&#39;s first answer counts." in questions
    assert f"Flags need at least {MIN_ANSWERS} answers." in questions
    # this chat's one open report (on s-two), not chat B's (on s-one)
    assert questions.count("Open reports: 1</a>") == 1
    assert await (await site.client.get(f"/chat/{CHAT_A}/questions?quiz=sample")).text() \
        == questions
    unknown = await site.client.get(f"/chat/{CHAT_A}/questions?quiz=nope")
    assert unknown.status == 404 and "No answers to that quiz in this chat." in await unknown.text()
    # an address the dashboard does not serve: its own page in the reader's language
    missing = await site.client.get("/nowhere", headers={"Accept-Language": "hi"})
    text = await missing.text()
    assert missing.status == 404 and "ऐसा कोई पेज नहीं है" in text and "Not Found" not in text
    assert missing.headers["Content-Security-Policy"].startswith("default-src 'self'")


async def test_pages_name_the_chat_by_its_title_else_by_its_key(site: Site) -> None:
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/people")).text()
    assert f"<h1>Dashboard · {TITLE_A}</h1>" in page
    assert f"<title>People · Dashboard · {TITLE_A}</title>" in page
    await site.login(CHAT_B)
    page = await (await site.client.get(f"/chat/{CHAT_B}/people")).text()
    assert f"<h1>Dashboard · {CHAT_B}</h1>" in page


async def test_the_settings_page_says_each_setting_in_the_readers_language(site: Site) -> None:
    await site.service.chat_settings.change(Chat(CHAT_A), by=Person("tg:1", "Ada"), mode="buttons",
                                            allowed=True)
    await site.service.locales.set_for_chat(Chat(CHAT_A), "bn")
    await site.service.daily.set(Chat(CHAT_A), "09:00", "Asia/Kolkata", allowed=True)
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/settings?lang=hi")).text()
    rows = dict(re.findall(r'<th scope="row">([^<]+)</th><td>([^<]+)</td>', page))
    assert rows["भाषा"] == "বাংলা"  # the chat's own choice: no "(default)"
    assert rows["टाइमज़ोन (इन पेजों के समय)"] == "Asia/Kolkata"
    assert rows["मोड"] == "बटन"
    assert rows["रोज़ का सवाल"].startswith("09:00 Asia/Kolkata")


async def test_a_console_players_page_opens_from_the_people_page(site: Site) -> None:
    """A console player's key holds their login name or --name: any character."""
    await answer_s_one_now(site, CHAT_A, "console:Ada Lovelace/Byron")
    await site.storage.upsert_person("console:Ada Lovelace/Byron", "Ada Lovelace/Byron")
    await site.storage.materialize()
    await site.login()
    people = await (await site.client.get(f"/chat/{CHAT_A}/people")).text()
    [href] = re.findall(r'<a href="([^"]+)">Ada Lovelace/Byron</a>', people)
    page = await site.client.get(href)
    assert page.status == 200 and "<h2>Ada Lovelace/Byron</h2>" in await page.text()


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


def calibration_rows(page: str) -> list[tuple[str, ...]]:
    if 'id="calibration-table"' not in page:
        return []
    table = page[page.index('id="calibration-table"'):page.index("</table>",
                                                                  page.index("calibration"))]
    return re.findall(r'<tr><td class="said">([^<]*)</td><td class="num">([^<]*)</td>'
                      r'<td class="num">([^<]*)</td><td class="num">([^<]*)</td></tr>', table)


async def test_the_person_page_shows_how_sure_they_were_in_this_chat(site: Site) -> None:
    """Calibration beside accuracy: right per confidence said, the most sure first, from this
    chat's answers only (chat B's two sure and wrong answers stay chat B's); not shown for
    someone never asked."""
    await said_answers(site)
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/person/tg:7")).text()
    assert "How sure they said they were" in page
    assert calibration_rows(page) == [("sure", "3", "2", "67%"), ("think so", "1", "0", "0%"),
                                      ("guessing", "1", "1", "100%")]
    assert figure(page, "answers") == "6"  # the answer not asked about counts there
    # /stats counts every chat's: chat B's sure answers are there, not on chat A's page
    stats = await site.service.boards.stats(Person("tg:7", "Mira"))
    assert [(int(said), n, right) for said, n, right in stats.calibration] == [
        (SURE, 5, 2), (THINK_SO, 1, 0), (GUESSING, 1, 1)]
    page = await (await site.client.get(f"/chat/{CHAT_A}/person/tg:1")).text()
    assert calibration_rows(page) == [] and "How sure" not in page  # never asked

    await site.login(CHAT_B)
    page = await (await site.client.get(f"/chat/{CHAT_B}/person/tg:7")).text()
    assert calibration_rows(page) == [("sure", "2", "0", "0%")]


async def test_the_calibration_in_bengali_and_hindi(site: Site) -> None:
    await said_answers(site)
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/person/tg:7?lang=bn")).text()
    assert "তিনি কতটা নিশ্চিত বলেছিলেন" in page and "কতটা নিশ্চিত" in page
    assert calibration_rows(page) == [("নিশ্চিত", "3", "2", "67%"), ("মনে হয়", "1", "0", "0%"),
                                      ("আন্দাজ", "1", "1", "100%")]
    page = await (await site.client.get(f"/chat/{CHAT_A}/person/tg:7?lang=hi")).text()
    assert "उन्होंने कितना पक्का बताया था" in page
    assert [row[0] for row in calibration_rows(page)] == ["पक्का", "शायद", "अंदाज़ा"]
