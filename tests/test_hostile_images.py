"""Hostile pictures in a pack or a chat: refused with one sentence before anything is decoded or
drawn (a PNG claiming 20000x20000 pixels, an SVG of 10^4 <use> of an 18k-point path,
references in a circle, a picture too tall to read, CSS escapes hiding a url()), and a picture
that passes the checks but draws too slowly stopped at the drawing's time limit: the card goes
out without it, logged once."""

from __future__ import annotations

import io
import logging
import struct
import time
import zlib
from pathlib import Path

import pytest
from PIL import Image

from bot.content import Catalog, media
from bot.core.errors import AuthoringError
from bot.core.models import Person, ShownQuestion
from bot.core.ports import Storage
from bot.core.service import QuizService
from bot.reports.cards import PngCards
from bot.reports.worker import DrawingProcess
from tests.clock import FakeClock

ROOT = Path(__file__).resolve().parent.parent
SVG_NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'


def png_claiming(width: int, height: int) -> bytes:
    """A PNG of about 69 bytes whose header claims `width` x `height` pixels."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b""))
            + chunk(b"IEND", b""))


def svg(body: str, size: str = 'width="640" height="300"') -> bytes:
    return f"<svg {SVG_NS} {size}>{body}</svg>".encode()


def use_bomb(uses: int = 100, points: int = 18_000) -> bytes:
    """The attack: one long path drawn `uses`^2 times by <use> (a group of `uses` <use>
    itself used `uses` times), in under 100 KB."""
    path = "M0 0" + "l1 1" * points
    return svg(f'<defs><path id="p" d="{path}"/><g id="g">' + '<use href="#p"/>' * uses
               + '</g></defs>' + '<use href="#g"/>' * uses)


def test_a_png_claiming_20000x20000_pixels_is_refused_from_its_header() -> None:
    data = png_claiming(20000, 20000)
    assert len(data) < 70
    with pytest.raises(media.ImageTooLarge, match="20000x20000 pixels"):
        media.check_raster(data)
    # below Pillow's own bomb check (which warns), above ours
    with pytest.raises(media.ImageTooLarge, match="9000x9000 pixels"):
        media.check_raster(png_claiming(9000, 9000))


def test_the_use_bomb_is_refused_quickly_with_one_sentence() -> None:
    data = use_bomb()
    assert len(data) < 100 * 1024
    started = time.monotonic()
    with pytest.raises(media.BadImage, match=r"expanded\), more than"):
        media.check_svg(data)
    assert time.monotonic() - started < 5
    with pytest.raises(media.BadImage, match=r"72,00\d path points"):  # 4 uses of 18k
        media.check_svg(use_bomb(uses=2))
    # nested <use>: each level multiplies (a billion laughs in elements)
    levels = '<g id="l0"><rect width="1" height="1"/></g>' + "".join(
        f'<g id="l{i}">' + f'<use href="#l{i - 1}"/>' * 10 + "</g>" for i in range(1, 30))
    media.check_svg(svg(f"<defs>{levels}</defs>"))  # defined, drawn nowhere
    with pytest.raises(media.BadImage, match="over 150,000 elements"):
        media.check_svg(svg(f'<defs>{levels}</defs><use href="#l29"/>'))


def test_markers_count_once_per_vertex() -> None:
    marker = ('<marker id="m"><path d="' + "M0 0" + "l1 1" * 200 + '"/></marker>')
    line = '<polyline points="' + " ".join(f"{i},{i}" for i in range(100)) + '"'
    with pytest.raises(media.BadImage, match="path points"):
        media.check_svg(svg(f'<defs>{marker}</defs>{line} marker-mid="url(#m)"/>'))
    with pytest.raises(media.BadImage, match="path points"):  # the same through CSS
        media.check_svg(svg(f"<defs>{marker}</defs><style>polyline {{ marker-mid: url(#m) }}"
                            f"</style>{line}/>"))
    media.check_svg(svg(f"<defs>{marker}</defs>{line}/>"))  # unused: drawn never


def test_circles_nesting_and_shapes_are_refused() -> None:
    with pytest.raises(media.BadImage, match="circle"):
        media.check_svg(svg('<g id="a"><g id="b"><use href="#a"/></g></g>'))
    with pytest.raises(media.BadImage, match="circle"):
        media.check_svg(svg('<pattern id="p"><rect fill="url(#p)"/></pattern>'))
    with pytest.raises(media.BadImage, match="deep"):
        media.check_svg(svg("<g>" * 100 + "</g>" * 100))
    with pytest.raises(media.BadImage, match="as tall as wide"):
        media.check_svg(svg("<rect/>", 'viewBox="0 0 1 100000"'))
    with pytest.raises(media.BadImage, match="draws nothing"):
        media.check_svg(svg("<rect/>", 'width="0" height="10"'))


@pytest.mark.parametrize("css", [r"fill: u\72l(http://x/)", r"fill: u\000072 l(http://x/)",
                                 r"fill: \75 rl(a.png)", r"@\69mport 'x.css'"])
def test_css_escapes_do_not_hide_a_reference(css: str) -> None:
    with pytest.raises(media.BadImage, match="refers to another file"):
        media.check_svg(svg(f'<rect style="{css}"/>'))
    with pytest.raises(media.BadImage, match="refers to another file"):
        media.check_svg(svg(f"<style>rect {{ {css} }}</style><rect/>"))


def test_the_bundled_pictures_are_within_every_budget() -> None:
    pictures = sorted((ROOT / "content" / "images").glob("*.svg"))
    assert pictures
    for path in pictures:
        elements, points = media.svg_cost(media.check_svg(path.read_bytes()))
        assert elements < media.SVG_ELEMENTS // 10 and points < media.SVG_POINTS // 10


def test_validation_names_the_file_and_line_of_a_bad_picture(tmp_path: Path) -> None:
    from bot.content.loader import load_file
    from bot.content.schema import QuestionModel

    (tmp_path / "bomb.png").write_bytes(png_claiming(20000, 20000))
    (tmp_path / "bomb.svg").write_bytes(use_bomb())
    alt = "    image_alt: a picture\n" if "image_alt" in QuestionModel.model_fields else ""
    questions = "".join(
        f"  - id: q{i}\n    prompt: What is this?\n    image: {name}\n{alt}"
        "    options:\n      - text: A\n        correct: true\n      - B\n"
        "    explanation: x\n" for i, name in enumerate(("bomb.png", "bomb.svg")))
    pack = tmp_path / "pack.yaml"
    pack.write_text(f"id: hostile\ntitle: Hostile\nquestions:\n{questions}")
    quiz, problems = load_file(pack)
    errors = [p for p in problems if not p.warning]
    assert quiz is None
    first = errors[0]
    assert (first.line, "bomb.png" in first.message, "20000x20000" in first.message) \
        == (6, True, True)
    assert any("bomb.svg" in p.message and "elements" in p.message for p in errors)


def slow_svg(lines: int = 30) -> bytes:
    """Within every budget, but slow to draw (cairo strokes each tiny dash)."""
    return svg("".join(f'<path d="M0 {i} L640 300 L0 300 L640 0" stroke="black" '
                       'stroke-width="40" stroke-dasharray="0.01" fill="none"/>'
                       for i in range(lines)))


def test_a_picture_that_draws_too_long_is_left_off_the_card(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "slow.svg").write_bytes(slow_svg())
    media.check_svg(slow_svg())  # it passes the checks: the time limit is what stops it
    q = ShownQuestion(1, "tg:-1", "q", "Q", "q1", "What is drawn?", ("a", "b"), 0, "", None,
                      "en", None, None, image=str(tmp_path / "slow.svg"))
    drawing = DrawingProcess(limit=3)
    cards = PngCards(tmp_path / "cache", drawing)
    try:
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, "bot.reports.cards"):
            png = cards.question_card(q)
            assert time.monotonic() - started < 20 and drawing.timed_out == 1
            _, height = Image.open(io.BytesIO(png)).size
            assert height < 200  # the prompt and nothing below it
            assert cards.question_card(q) == png and drawing.timed_out == 1  # not tried again
        warnings = [r for r in caplog.records if "without its picture" in r.getMessage()]
        assert len(warnings) == 1 and "slow.svg" in warnings[0].getMessage()
        assert not (tmp_path / "cache" / "cards").exists()  # not kept: tried again next start
    finally:
        drawing.close()


async def test_a_png_bomb_sent_for_a_draft_is_refused_as_too_large(
        sample_catalog: Catalog, storage: Storage, clock: FakeClock) -> None:
    author = Person("tg:1001", "Ada")
    service = QuizService(sample_catalog, storage, clock, authors={author.key})

    async def fetch() -> bytes:
        return png_claiming(20000, 20000)

    with pytest.raises(AuthoringError, match="too large"):  # not "something went wrong"
        await service.authoring.photo(author, "en", 69, fetch)
    assert await storage.get_draft(author.key) is None


def hostile_pack(folder: Path) -> Path:
    """A pack with the PNG bomb on its first question and a plain second question."""
    from bot.content.schema import QuestionModel

    folder.mkdir(exist_ok=True)
    (folder / "bomb.png").write_bytes(png_claiming(20000, 20000))
    alt = "    image_alt: a picture\n" if "image_alt" in QuestionModel.model_fields else ""
    (folder / "hostile.yaml").write_text(
        "id: hostile\ntitle: Hostile\nquestions:\n"
        f"  - id: h-1\n    prompt: What is this?\n    image: bomb.png\n{alt}"
        "    options:\n      - text: A\n        correct: true\n      - B\n    explanation: x\n"
        "  - id: h-2\n    prompt: And this?\n"
        "    options:\n      - text: A\n        correct: true\n      - B\n    explanation: x\n")
    return folder


def test_the_running_bot_leaves_a_bad_image_out_and_logs_its_file(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from bot.content import ContentError, load_catalog

    root = hostile_pack(tmp_path / "packs")
    with pytest.raises(ContentError, match="20000x20000"):  # validation refuses it
        load_catalog(root)
    for _ in range(2):  # the second start does not take it from the cache
        caplog.clear()
        with caplog.at_level(logging.WARNING, "bot.content.loader"):
            catalog = load_catalog(root, tmp_path / "cache", leave_out_bad_images=True)
        quiz = catalog.get("hostile")
        assert quiz is not None and [q.image for q in quiz.questions] == [None, None]
        [line] = [r.getMessage() for r in caplog.records]
        assert "hostile.yaml:6: warning:" in line and "bomb.png" in line
        assert line.endswith(media.LEFT_OUT)
    # fixed, the picture is back at the next start
    Image.new("RGB", (40, 30), "red").save(root / "bomb.png")
    quiz = load_catalog(root, tmp_path / "cache", leave_out_bad_images=True).get("hostile")
    assert quiz is not None and quiz.questions[0].image is not None
