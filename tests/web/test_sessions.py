"""The Sessions pages: a chat's live sessions and peer rounds on the dashboard, newest first;
one session's podium, teams and questions (a peer round's shift); its standings exported;
another chat's session not found under this chat's link."""

from __future__ import annotations

from bot.core.live import Podium
from bot.core.models import Chat, Person
from bot.core.peer import PeerResult, Split
from bot.core.service import QuizService
from tests.web.conftest import ADMIN, CHAT_A, CHAT_B, Site
from tests.web.test_exports import csv_rows, download, xlsx_rows

PLAYERS = [Person("tg:11", "রাজা"), Person("tg:12", "सीता"), Person("tg:13", "=SUM(A1)")]


async def host_session(service: QuizService, chat: Chat) -> int:
    """Two teams of players; the first two right, the third wrong."""
    lobby = await service.host(chat, ADMIN, "sample", 1, allowed=True, teams=2)
    for p in PLAYERS:
        await service.live.join(chat.key, p)
    asked = await service.live_next(chat, ADMIN)
    question = asked.question  # type: ignore[union-attr]
    for i, p in enumerate(PLAYERS):
        option = question.correct if i < 2 else (question.correct + 1) % len(question.options)
        await service.live_answer(question.post_id, p, option)
    assert isinstance(await service.live_next(chat, ADMIN), Podium)
    return lobby.session.id


async def peer_round(service: QuizService, chat: Chat) -> int:
    """One right of three at the first vote, all three after the discussion."""
    asked = await service.peer_round(chat, ADMIN, "sample", allowed=True)
    question = asked.question  # type: ignore[union-attr]
    wrong = (question.correct + 1) % len(question.options)
    for i, p in enumerate(PLAYERS):
        await service.live_answer(question.post_id, p, question.correct if i == 0 else wrong)
    assert isinstance(await service.live_next(chat, ADMIN), Split)
    await service.live_next(chat, ADMIN)  # the revote opens
    for p in PLAYERS:
        await service.live_answer(question.post_id, p, question.correct)
    assert isinstance(await service.live_next(chat, ADMIN), PeerResult)
    return asked.session.id


async def test_the_sessions_of_the_chat_newest_first_with_their_results(site: Site) -> None:
    chat = Chat(CHAT_A)
    hosted = await host_session(site.service, chat)
    peer = await peer_round(site.service, chat)
    theirs = await host_session(site.service, Chat(CHAT_B))
    await site.login()
    listed = await (await site.client.get(f"/chat/{CHAT_A}/sessions")).text()
    assert listed.index(f'data-session="{peer}"') < listed.index(f'data-session="{hosted}"')
    assert f'data-session="{theirs}"' not in listed
    assert "Peer round" in listed and "Live session" in listed
    page = await (await site.client.get(f"/chat/{CHAT_A}/sessions/{hosted}")).text()
    assert "রাজা" in page and "सीता" in page and "=SUM(A1)" in page
    assert 'data-person="tg:11"><td class="num">1</td>' in page
    assert 'data-person="tg:13"><td class="num">3</td>' in page
    assert 'id="teams-table"' in page
    shift = await (await site.client.get(f"/chat/{CHAT_A}/sessions/{peer}")).text()
    assert "33%" in shift and "100%" in shift and "Right after the discussion" in shift
    # another chat's session is not found under this chat's link
    assert (await site.client.get(f"/chat/{CHAT_A}/sessions/{theirs}")).status == 404
    assert (await site.client.get(f"/chat/{CHAT_A}/export/session-{theirs}.csv")).status == 404
    bengali = await (await site.client.get(f"/chat/{CHAT_A}/sessions?lang=bn")).text()
    assert '<html lang="bn">' in bengali


async def test_a_sessions_standings_are_exported(site: Site) -> None:
    hosted = await host_session(site.service, Chat(CHAT_A))
    await site.login()
    rows = csv_rows(await download(site, f"session-{hosted}.csv"))
    assert rows[0] == ["Rank", "Person", "Name", "Team", "Points", "Right", "Seconds"]
    assert [r[:6] for r in rows[1:]] == [  # level: ranked alike, then by name
        ["1", "tg:12", "सीता", "2", "1000", "1"], ["1", "tg:11", "রাজা", "1", "1000", "1"],
        ["3", "tg:13", "'=SUM(A1)", "1", "0", "0"]]
    book = xlsx_rows(await download(site, f"session-{hosted}.xlsx"))
    assert [r[2] for r in book[1:]] == ["सीता", "রাজা", "=SUM(A1)"]
