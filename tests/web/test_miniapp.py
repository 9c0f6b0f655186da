"""The Telegram Mini App: a launch signed with the bot's token (as Telegram documents it)
becomes a session for that person's own progress page; a wrong hash, a changed field or a
launch older than the limit is refused, and a person's session opens no chat's dashboard."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from datetime import datetime, timedelta
from urllib.parse import urlencode

import pytest

from bot.core.dashboard import Denied
from bot.core.deck import Deck
from bot.web.auth import PERSON, SESSION
from bot.web.miniapp import MAX_AGE, launch_of
from tests.web.conftest import BOT_TOKEN, CHAT_A, Site


def init_data(user_id: int, when: datetime, token: str = BOT_TOKEN, **extra: str) -> str:
    """What Telegram hands a Mini App, signed as its documentation says."""
    fields = {"auth_date": str(int(when.timestamp())), "query_id": "AAH",
              "user": json.dumps({"id": user_id, "first_name": "রাজা", "language_code": "bn"},
                                 ensure_ascii=False), **extra}
    check = "\n".join(f"{k}={v}" for k, v in sorted(fields.items()))
    key = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(key, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(fields)


def test_a_launch_signed_with_the_token_names_its_person(site: Site) -> None:
    now = site.clock.now()
    launch = launch_of(init_data(2, now - timedelta(minutes=5)), BOT_TOKEN, now)
    assert (launch.person_key, launch.name, launch.language) == ("tg:2", "রাজা", "bn")


@pytest.mark.parametrize("forge", ["token", "hash", "field", "none"])
def test_a_forged_launch_is_refused(site: Site, forge: str) -> None:
    now = site.clock.now()
    data = init_data(2, now, token="654321:another-bot" if forge == "token" else BOT_TOKEN)
    if forge == "hash":
        data = re.sub(r"hash=[0-9a-f]{4}", "hash=0000", data)
    if forge == "field":  # another person's id under the same hash
        forged = data.replace("%22id%22%3A+2", "%22id%22%3A+3")
        assert forged != data
        data = forged
    if forge == "none":
        data = re.sub(r"&hash=[0-9a-f]+", "", data)
    with pytest.raises(Denied) as refused:
        launch_of(data, BOT_TOKEN, now)
    assert refused.value.reason == "tampered"


def test_an_old_launch_is_refused(site: Site) -> None:
    now = site.clock.now()
    with pytest.raises(Denied) as refused:
        launch_of(init_data(2, now - MAX_AGE - timedelta(seconds=1)), BOT_TOKEN, now)
    assert refused.value.reason == "expired"


async def test_a_launch_opens_the_persons_own_progress_page(site: Site) -> None:
    page = await (await site.client.get("/app")).text()
    assert 'src="/static/miniapp.js"' in page and 'action="/app/session"' in page
    response = await site.client.post(
        "/app/session", data={"init_data": init_data(2, site.clock.now())},
        allow_redirects=False)
    assert response.status == 303 and response.headers["Location"] == "/me/progress"
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "Path=/me/" in cookie
    progress = await site.client.get("/me/progress")
    text = await progress.text()
    assert progress.status == 200 and '<html lang="bn">' in text
    totals = await site.storage.person_totals("tg:2")
    answered = sum(n for n, _right in totals.values())
    assert re.search(rf'<b id="answers">{answered}</b>', text), text
    deck = Deck()  # the cards read from the table are /review's replay
    replayed = await site.storage.review_answers("tg:2")
    for answer in replayed:
        deck.apply(answer)
    due = deck.due(site.clock.now())
    assert re.search(rf'<b id="cards">{len(deck.cards)}</b>', text), text
    assert re.search(rf'<b id="due">{len(due)}</b>', text), text
    assert len(re.findall("<li>", text[text.index('id="due-list"'):].split("</ul>")[0])) \
        == len(due) > 0
    recent = text[text.index('id="recent-table"'):]
    assert recent.count("<tr><td>") == len(replayed)  # fewer than a page: all, newest first


async def test_a_refused_launch_sets_no_session(site: Site) -> None:
    old = init_data(2, site.clock.now() - timedelta(hours=2))
    response = await site.client.post("/app/session", data={"init_data": old},
                                      allow_redirects=False)
    assert response.status == 403 and PERSON not in response.cookies
    assert (await site.client.get("/me/progress")).status == 403


async def test_a_persons_session_opens_no_chat(site: Site) -> None:
    response = await site.client.post(
        "/app/session", data={"init_data": init_data(2, site.clock.now())},
        allow_redirects=False)
    person = response.cookies[PERSON].value
    chat_page = await site.client.get(f"/chat/{CHAT_A}/",
                                      headers={"Cookie": f"{SESSION}={person}"})
    assert chat_page.status == 403
