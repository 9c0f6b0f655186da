"""A photo sent just before a quiz poll becomes the question's picture, through the real
python-telegram-bot against the fake Bot API (getFile and the file download): the published
pack asks it with its card, also after a restart; a file too big or not a picture is refused
with a clear message and changes nothing."""

from __future__ import annotations

import asyncio
import io
import random
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from bot.content import Catalog, limits, load_catalog
from bot.core.service import QuizService
from bot.reports.card import WIDTH
from bot.reports.cards import PngCards
from bot.storage import SqliteStorage
from tests.clock import FakeClock
from tests.conftest import SAMPLE_PACKS
from tests.fakes.telegram_api import png_size
from tests.telegram_e2e.conftest import QUESTION_SECONDS, Harness
from tests.telegram_e2e.test_authoring import reply_to, send_quiz

KEPT = "Photo kept: it becomes the picture of the next quiz poll you send"
TOO_BIG = "That picture is too large"
NOT_A_PICTURE = "That file is not a picture I can use"


@pytest.fixture
def service(sample_catalog: Catalog, storage: SqliteStorage, clock: FakeClock,
            tmp_path: Path) -> QuizService:
    """Alice (1001) is an author; questions with pictures get cards."""
    return QuizService(sample_catalog, storage, clock, random.Random(7), authors={"tg:1001"},
                       cards=PngCards(tmp_path / "cache"))


def picture(kind: str = "PNG", size: tuple[int, int] = (120, 80), mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, "white" if mode == "1" else (30, 90, 200)).save(out, kind)
    return out.getvalue()


async def send(tg: Harness, chat: dict[str, Any], update_id: int) -> str:
    before = len(tg.texts(chat))
    await tg.send(update_id)
    texts = tg.texts(chat)
    assert len(texts) == before + 1, texts[before:]
    return texts[-1]


async def test_a_photo_before_a_poll_is_its_picture_on_the_published_card(
    tg: Harness, service: QuizService, sample_catalog: Catalog, storage: SqliteStorage,
    clock: FakeClock, tmp_path: Path, alice: dict[str, Any], alice_dm: dict[str, Any],
    group: dict[str, Any], bob: dict[str, Any],
) -> None:
    jpeg = picture("JPEG")
    kept = await send(tg, alice_dm, tg.fake.send_photo(alice_dm, alice, jpeg))
    assert kept.startswith(KEPT)
    assert len(tg.fake.calls_of("getFile")) == 1  # the largest size only
    assert "A photo is waiting" in await reply_to(tg, alice_dm, alice, "/draft")
    await send_quiz(tg, alice_dm, alice, "Which stage idles first?")
    await send_quiz(tg, alice_dm, alice, "And without a picture?")
    draft = await reply_to(tg, alice_dm, alice, "/draft")
    assert "1. 🖼 Which stage idles first?" in draft and "2. And without" in draft
    assert "A photo is waiting" not in draft  # the first poll took it
    await reply_to(tg, alice_dm, alice, "/name Stages")
    assert "(questions: 2)" in await reply_to(tg, alice_dm, alice, "/publish")
    [pack] = await storage.authored_packs()
    assert pack.files == (("images/stages-1.jpg", jpeg),)
    assert "image: images/stages-1.jpg" in pack.text

    # both questions, one after the other (a chat gets every question before a repeat)
    await tg.command(group, bob, "/quiz stages")
    clock.advance(QUESTION_SECONDS + 1)
    await tg.tick()
    await tg.command(group, bob, "/quiz stages")
    sent = [c for c in tg.fake.calls if c.method in ("sendPhoto", "sendPoll")]
    [card] = [i for i, c in enumerate(sent) if c.method == "sendPhoto"]
    assert sent[card + 1].params["question"] == "Which stage idles first?"
    assert png_size(sent[card].params["photo"])[0] == WIDTH
    assert len(sent) == 3

    # a new process: the pack and its picture come from the database
    await tg.stop()
    tg.service = QuizService(load_catalog(SAMPLE_PACKS), storage, clock, random.Random(7),
                             cards=PngCards(tmp_path / "elsewhere"))
    assert await tg.service.authoring.load() == 1
    await tg.start()
    quiz = tg.service.catalog.quizzes["stages"]
    path = quiz.image_path(quiz.questions[0], "en")
    assert path is not None and await asyncio.to_thread(Path(path).read_bytes) == jpeg
    await tg.command(group, bob, "/quiz stages")
    assert png_size(tg.fake.calls_of("sendPhoto")[-1].params["photo"])[0] == WIDTH


async def test_a_png_file_is_kept_as_it_is_and_a_later_photo_replaces_it(
    tg: Harness, storage: SqliteStorage, alice: dict[str, Any], alice_dm: dict[str, Any],
) -> None:
    png = picture("PNG", (300, 200))
    kept = await send(tg, alice_dm, tg.fake.send_document(alice_dm, alice, png, "d.png",
                                                          "image/png"))
    assert kept.startswith(KEPT)
    draft = await storage.get_draft("tg:1001")
    assert draft is not None and draft.photo == png
    again = picture("JPEG", (64, 64))
    await send(tg, alice_dm, tg.fake.send_photo(alice_dm, alice, again))
    draft = await storage.get_draft("tg:1001")
    assert draft is not None and draft.photo == again


@pytest.mark.parametrize("sent", ["pdf", "gif", "reported", "pixels"])
async def test_a_file_that_cannot_be_a_picture_is_refused_and_nothing_changes(
    tg: Harness, storage: SqliteStorage, alice: dict[str, Any], alice_dm: dict[str, Any],
    sent: str,
) -> None:
    await send(tg, alice_dm, tg.fake.send_photo(alice_dm, alice, picture("PNG")))
    before = await storage.get_draft("tg:1001")
    fake = tg.fake
    update, expected = {
        "pdf": (lambda: fake.send_document(alice_dm, alice, b"%PDF-1.4 a paper", "p.pdf",
                                           "application/pdf"), NOT_A_PICTURE),
        "gif": (lambda: fake.send_document(alice_dm, alice, picture("GIF"), "a.gif",
                                           "image/gif"), NOT_A_PICTURE),
        # Telegram says how big a file is: one over the cap is not even downloaded
        "reported": (lambda: fake.send_document(alice_dm, alice, picture("PNG"), "big.png",
                                                "image/png",
                                                file_size=limits.IMAGE_BYTES + 1), TOO_BIG),
        "pixels": (lambda: fake.send_document(alice_dm, alice, picture("PNG", (5000, 4000), "1"),
                                              "huge.png", "image/png"), TOO_BIG),
    }[sent]
    downloads = len(fake.downloads)
    reply = await send(tg, alice_dm, update())
    assert reply.startswith(expected) and "nothing changed" in reply.lower()
    assert await storage.get_draft("tg:1001") == before
    if sent == "reported":
        assert len(fake.downloads) == downloads


async def test_a_non_author_is_refused_before_anything_is_downloaded(
    tg: Harness, storage: SqliteStorage, bob: dict[str, Any],
) -> None:
    bob_dm = tg.fake.private_chat(bob)
    reply = await send(tg, bob_dm, tg.fake.send_photo(bob_dm, bob, picture()))
    assert reply.startswith("Only the bot's authors can write quizzes here")
    assert tg.fake.calls_of("getFile") == [] and tg.fake.downloads == []
    assert await storage.get_draft("tg:1002") is None
