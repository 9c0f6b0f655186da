"""The card renderer and its cache: an SVG from the pack drawn on the card, a card drawn once
and read back after that (also when the catalog is loaded again), a new card when its image
changes, and drawing in a worker thread, never on the event loop."""

from __future__ import annotations

import io
import threading
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PIL import Image

from bot.core.cards import Cards
from bot.core.chat_analysis import Charts
from bot.core.models import ShownQuestion
from bot.reports.card import WIDTH, CardText, card_png
from bot.reports.cards import PngCards
from tests.clock import FakeClock
from tests.sqlite_in_loop import LoopStorage

NOON = datetime(2026, 3, 1, 12, tzinfo=UTC)

SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100">'
       '<rect x="10" y="10" width="80" height="80" fill="#1e88e5"/></svg>')


def shown(**media: str) -> ShownQuestion:
    return ShownQuestion(1, "tg:-1", "q", "Q", "q1", "What is drawn?", ("a", "b"), 0, "", None,
                         "en", None, None, **media)  # type: ignore[arg-type]


def size(png: bytes) -> tuple[int, int]:
    return Image.open(io.BytesIO(png)).size


def test_an_svg_image_is_drawn_on_the_card(tmp_path: Path) -> None:
    (tmp_path / "pic.svg").write_text(SVG)
    plain = card_png(CardText("What is drawn?", None, "text", "x", None, ()))
    with_svg = card_png(CardText("What is drawn?", None, "text", "x", str(tmp_path / "pic.svg"),
                                 ()))
    width, height = size(with_svg)
    assert width == WIDTH
    assert height > size(plain)[1] + 300  # drawn at the card's width: 752 x 376
    pixel = Image.open(io.BytesIO(with_svg)).convert("RGB").getpixel((WIDTH // 2 - 150,
                                                                      height - 250))
    assert pixel == (0x1E, 0x88, 0xE5)  # the SVG's square


def test_a_card_is_drawn_once_and_a_new_image_makes_a_new_one(tmp_path: Path) -> None:
    image = tmp_path / "pic.png"
    Image.new("RGB", (40, 20), "red").save(image)
    cards = PngCards(tmp_path / "cache")
    q = shown(image=str(image))
    first = cards.question_card(q)
    assert cards.question_card(q) == first and cards.drawn == 1
    assert PngCards(tmp_path / "cache").question_card(q) == first  # another process
    Image.new("RGB", (40, 20), "blue").save(image)
    assert cards.question_card(q) != first and cards.drawn == 2
    assert cards.card_key(replace(q, locale="bn", prompt="কী আঁকা?")) != cards.card_key(q)


def test_an_unwritable_cache_only_means_drawing_every_time(tmp_path: Path) -> None:
    (tmp_path / "cache").write_text("a file, not a folder")
    cards = PngCards(tmp_path / "cache")
    q = shown(formula="x^2")
    assert cards.question_card(q) == cards.question_card(q)
    assert cards.drawn == 2


class Recording(PngCards):
    def __init__(self, cache: Path | None, fail: bool = False) -> None:
        super().__init__(cache)
        self.threads: list[threading.Thread] = []
        self.fail = fail

    def question_card(self, question: ShownQuestion) -> bytes:
        self.threads.append(threading.current_thread())
        if self.fail:
            raise RuntimeError("no fonts")
        return super().question_card(question)


async def test_the_core_draws_in_a_worker_thread_and_reuses_an_upload(tmp_path: Path) -> None:
    renderer = Recording(tmp_path / "cache")
    async with LoopStorage() as storage:
        cards = Cards(renderer, storage, FakeClock(NOON), Charts(None, storage))
        assert await cards.card(shown(), "tg") is None  # no code, formula or image
        card = await cards.card(shown(code="x = 1", code_language="python"), "tg")
        assert card is not None and card.png is not None and card.ref is None
        assert renderer.threads and threading.main_thread() not in renderer.threads
        await cards.uploaded(card, "file-1")
        again = await cards.card(shown(code="x = 1", code_language="python"), "tg")
        assert again is not None and again.ref == "file-1" and again.png is None
        assert len(renderer.threads) == 1  # known to Telegram: not drawn, not read
        discord = await cards.card(shown(code="x = 1", code_language="python"), "dc")
        assert discord is not None and discord.ref is None  # per platform


async def test_a_card_that_cannot_be_drawn_leaves_the_question_without_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with LoopStorage() as storage:
        cards = Cards(Recording(None, fail=True), storage, FakeClock(NOON),
                      Charts(None, storage))
        assert await cards.card(shown(formula="x"), "tg") is None
    assert any("question card" in r.getMessage() for r in caplog.records)
