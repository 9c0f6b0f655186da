"""The dashboard's Peer rounds page: a chat's finished peer rounds, newest first, each with its
first vote, revote and transfer shares and gains (the figures its result gave the chat, a
latecomer on the transfer question not counted), their means over the page, a live session
and another chat's round left out, paged by keyset. Then in a real browser (Debian's chromium
through Playwright): reached from the navigation, audited in light and dark, in English and
Bengali, a screenshot of each."""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.content import load_catalog
from bot.core.live import Asked, Podium
from bot.core.models import Chat, Person
from bot.core.peer import PeerResult, Revoting, Split
from bot.core.peer_gains import PeerGains
from bot.core.ports import Storage
from bot.core.service import QuizService
from bot.web.server import RUNNER_OPTIONS, build_app
from tests.behaviour.test_peer_transfer import PACK  # two questions, each the other's pair
from tests.clock import FakeClock
from tests.web.conftest import ADMIN, BOT_TOKEN, CHAT_A, CHAT_B, SECRET, Site
from tests.web.test_browser import AUDIT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PEOPLE = [Person(f"tg:{20 + n}", name) for n, name in enumerate(["রাজা", "सीता", "Bob", "Eve"])]
LATE = Person("tg:29", "Late")


async def vote(service: QuizService, post_id: int, rights: list[bool]) -> None:
    shown = await service.questions.show(post_id)
    assert shown is not None
    for person, right in zip(PEOPLE, rights, strict=True):
        option = shown.correct if right else (shown.correct + 1) % len(shown.options)
        assert (await service.live_answer(post_id, person, option)).status == "accepted"


async def transfer_round(service: QuizService, chat: Chat) -> int:
    """25 % right at first, 75 % at the revote, 3 of 4 first voters on the transfer question
    (the one right at first, two of the three wrong), and a latecomer right on it."""
    asked = await service.peer_round(chat, ADMIN, "pairs", allowed=True)
    assert isinstance(asked, Asked)
    await vote(service, asked.question.post_id, [True, False, False, False])
    assert isinstance(await service.live_next(chat, ADMIN), Split)
    assert isinstance(await service.live_next(chat, ADMIN), Revoting)
    await vote(service, asked.question.post_id, [True, True, True, False])
    transfer = await service.live_next(chat, ADMIN)
    assert isinstance(transfer, Revoting) and transfer.transfer
    await vote(service, transfer.question.post_id, [True, True, True, False])
    await service.live_answer(transfer.question.post_id, LATE, transfer.question.correct)
    assert isinstance(await service.live_next(chat, ADMIN), PeerResult)
    return asked.session.id


async def quiet_round(service: QuizService, chat: Chat) -> int:
    """75 % right at the first vote: no discussion, no transfer question."""
    asked = await service.peer_round(chat, ADMIN, "pairs", allowed=True)
    assert isinstance(asked, Asked)
    await vote(service, asked.question.post_id, [True, True, True, False])
    assert isinstance(await service.live_next(chat, ADMIN), PeerResult)
    return asked.session.id


async def live_session(service: QuizService, chat: Chat) -> int:
    lobby = await service.host(chat, ADMIN, "pairs", 1, allowed=True)
    await service.live.join(chat.key, PEOPLE[0])
    asked = await service.live_next(chat, ADMIN)
    assert isinstance(asked, Asked)
    await service.live_answer(asked.question.post_id, PEOPLE[0], asked.question.correct)
    assert isinstance(await service.live_next(chat, ADMIN), Podium)
    return lobby.session.id


@pytest.fixture
async def peer_site(tmp_path: Path, storage: Storage, clock: FakeClock
                    ) -> AsyncIterator[tuple[Site, dict[str, int]]]:
    (tmp_path / "pairs.yaml").write_text(PACK, "utf-8")
    service = QuizService(load_catalog(tmp_path / "pairs.yaml"), storage, clock,
                          random.Random(3), web=(SECRET, "http://127.0.0.1:9"))
    await storage.upsert_chat(CHAT_A, "ML study group")
    chat = Chat(CHAT_A, "ML study group")
    ids = {"transfer": await transfer_round(service, chat)}
    ids["live"] = await live_session(service, chat)
    ids["quiet"] = await quiet_round(service, chat)
    ids["theirs"] = await transfer_round(service, Chat(CHAT_B))
    server = TestServer(build_app(service, secure=False, bot_token=BOT_TOKEN))
    await server.start_server(**RUNNER_OPTIONS)
    client = TestClient(server)
    await client.start_server()
    try:
        yield Site(service, storage, clock, client), ids
    finally:
        await client.close()


def text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def row(page: str, session: int) -> str:
    found = re.search(rf'<tr data-session="{session}">(.*?)</tr>', page, re.S)
    assert found is not None, page
    return text_of(found.group(1))


async def test_the_rounds_with_their_shares_and_gains(
        peer_site: tuple[Site, dict[str, int]]) -> None:
    site, ids = peer_site
    await site.login()
    page = await (await site.client.get(f"/chat/{CHAT_A}/peer-rounds")).text()
    assert 'aria-current="page">Peer rounds</a>' in page
    assert f'data-session="{ids["live"]}"' not in page  # a live session is no peer round
    assert f'data-session="{ids["theirs"]}"' not in page  # another chat's
    assert page.index(f'data-session="{ids["quiet"]}"') < \
        page.index(f'data-session="{ids["transfer"]}"'), "newest first"
    measured = row(page, ids["transfer"])
    # first vote 1 of 4, revote 3 of 4; the transfer 3 of the 4 first voters (the latecomer's
    # right answer would make it 4 of 5, 80%); Hake (0.75 − 0.25) / 0.75; 2/3 over 1/1
    assert "25% (4)" in measured and "75% (4)" in measured
    assert re.search(r"\(recompute-(cost|step)\): 75% \(4\)", measured), measured
    assert measured.endswith("+0.67 0.67"), measured
    quiet = row(page, ids["quiet"])
    assert "75% (4)" in quiet and "no discussion" in quiet and "none asked" in quiet
    means = re.search(r'<table id="peer-means">(.*?)</table>', page, re.S)
    assert means is not None
    assert text_of(means.group(1)).split("Rounds ", 1)[1] == (
        "First vote 50% 2 Right after the discussion 75% 1 Transfer question 75% 1 "
        "Normalised gain +0.67 1 Weighted learning gain 0.67 1")
    assert (await site.client.get(f"/chat/{CHAT_A}/peer-rounds?before=x")).status == 400
    bengali = await (await site.client.get(f"/chat/{CHAT_A}/peer-rounds?lang=bn")).text()
    assert '<html lang="bn">' in bengali and "Weighted learning gain" not in bengali


async def test_the_rounds_are_paged_past_live_sessions(
        peer_site: tuple[Site, dict[str, int]]) -> None:
    site, ids = peer_site
    reads = PeerGains(site.service.live.questions, site.storage)
    first = await reads.page(CHAT_A, "en", limit=1)
    assert [r.session.id for r in first.rounds] == [ids["quiet"]]
    assert first.next == ids["quiet"]
    second = await reads.page(CHAT_A, "en", first.next, limit=1)
    assert [r.session.id for r in second.rounds] == [ids["transfer"]]  # the live one skipped
    assert second.next is None
    await site.login()
    older = await (await site.client.get(f"/chat/{CHAT_A}/peer-rounds?before={ids['quiet']}"))\
        .text()
    assert f'data-session="{ids["transfer"]}"' in older
    assert f'data-session="{ids["quiet"]}"' not in older


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine "
                    "(apt-get install chromium)")
async def test_the_page_in_a_browser(peer_site: tuple[Site, dict[str, int]],
                                     tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    site, _ = peer_site
    link = await site.link()
    base = str(site.client.make_url("")).rstrip("/")
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"\npeer rounds screenshots: {shots}")
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for scheme in ("light", "dark"):
                context = await browser.new_context(color_scheme=scheme,
                                                    viewport={"width": 1100, "height": 900})
                page = await context.new_page()
                await page.goto(base + link)
                await page.get_by_role("link", name="Peer rounds").click()
                await page.wait_for_load_state()
                assert page.url.endswith(f"/chat/{CHAT_A}/peer-rounds")
                assert await page.locator("#peer-rounds tbody tr").count() == 2
                assert await page.evaluate(AUDIT) == [], scheme
                await page.screenshot(path=str(shots / f"peer-rounds-en-{scheme}.png"),
                                      full_page=True)
                await page.goto(base + f"/chat/{CHAT_A}/peer-rounds?lang=bn")
                assert await page.evaluate(AUDIT) == [], ("bn", scheme)
                await page.screenshot(path=str(shots / f"peer-rounds-bn-{scheme}.png"),
                                      full_page=True)
                await context.close()
        finally:
            await browser.close()
