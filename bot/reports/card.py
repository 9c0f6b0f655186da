"""A question's card: one PNG with its prompt, code highlighted by Pygments, a formula drawn
by ziamath (bot/content/mathtext.py), an image from the pack, and the options with their
letters when they carry inline code (which a poll or a button cannot show).

Inline code (`x.grad`) in the prompt and the options is drawn in the monospace font too.
Text goes through the charts' `Drawing` (png.py): split into runs one font can draw and laid
out with raqm, so Bengali and Devanagari are shaped, in the prompt, the options and the
comments of code alike. Code is in a monospace font (Noto Sans Mono, Debian's
fonts-noto-mono, else DejaVu Sans Mono), with the script fonts behind it.

Rendering takes tens of milliseconds: `Cards` (cards.py) runs it in a worker thread and keeps
each card on disk by the hash of what is drawn.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.core.models import ShownQuestion
from bot.core.render import letter
from bot.reports.png import BODY, BODY_LINE, INK, MUTED, PAD, TITLE, TITLE_LINE, Drawing

if TYPE_CHECKING:
    from PIL import Image

WIDTH = 800
CODE, CODE_LINE = 18, 26  # px; 64 columns of Noto Sans Mono fit WIDTH
CODE_PAD = 14
CODE_BACKGROUND = "#f5f7f9"
FORMULA = 42  # px: the formula's font size
IMAGE_HEIGHT = 420  # an image is scaled down to fit WIDTH and this height
STYLE = "default"  # Pygments' style: dark enough on the light card
INLINE_CODE = re.compile(r"`([^`]+)`")


@dataclass(frozen=True, slots=True)
class CardText:
    """What a card shows (a question in one language), also its cache key's source."""

    prompt: str
    code: str | None
    code_language: str
    formula: str | None
    image: str | None  # a file
    options: tuple[str, ...]  # empty: the options stay on the poll or buttons only

    @classmethod
    def of(cls, question: ShownQuestion) -> CardText:
        on_card = any(INLINE_CODE.search(o) for o in question.options)
        return cls(question.prompt, question.code, question.code_language, question.formula,
                   question.image, question.options if on_card else ())


def _tokens(code: str, language: str) -> Iterator[list[tuple[str, str]]]:
    """Each line of `code` as (text, colour) pieces, by Pygments' lexer and style."""
    from pygments import lex
    from pygments.lexers import get_lexer_by_name
    from pygments.styles import get_style_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        lexer = get_lexer_by_name("text", stripnl=False, ensurenl=False)
    style = get_style_by_name(STYLE)
    line: list[tuple[str, str]] = []
    for kind, value in lex(code, lexer):
        colour = style.style_for_token(kind)["color"]
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                yield line
                line = []
            if part:
                line.append((part, f"#{colour}" if colour else INK))
    yield line


def _wrap(d: Drawing, text: str, size: int, width: float) -> list[str]:
    """`text` in lines of at most `width` pixels, at spaces (a longer word on its own)."""
    out: list[str] = []
    for paragraph in text.split("\n"):
        words = paragraph.split(" ")
        line = words.pop(0)
        for word in words:
            if d.measure(f"{line} {word}", size) <= width:
                line += " " + word
            else:
                out.append(line)
                line = word
        out.append(line)
    return out


def _formula(tex: str) -> Image.Image:
    from PIL import Image

    from bot.content import mathtext

    return Image.open(io.BytesIO(mathtext.png(tex, FORMULA, INK))).convert("RGBA")


def _picture(path: str, width: int) -> Image.Image:
    """The pack's image, scaled down to `width` by IMAGE_HEIGHT at most (an SVG drawn at
    that size). Its size is checked again before it is decoded or drawn (the file may have
    changed since the pack was validated); the drawing process bounds the time."""
    from bot.content import media

    with open(path, "rb") as file:
        data = file.read()
    if path.lower().endswith(".svg"):
        import cairosvg  # the validator refused external references (bot/content/media.py)

        size = media.svg_size(media.check_svg(data))
        if size is not None:  # drawn at the size shown, not at the width and then shrunk
            width = max(1, min(width, round(IMAGE_HEIGHT * size[0] / size[1])))
        data = cairosvg.svg2png(bytestring=data, output_width=width, unsafe=False)
    with media.open_raster(data) as opened:
        image = opened.convert("RGBA")
    image.thumbnail((width, IMAGE_HEIGHT))
    return image


def card_drawing(card: CardText) -> Drawing:
    """The card, its height fitted to what it shows."""
    probe = Drawing(WIDTH, 1)
    inner = WIDTH - 2 * PAD
    prompt = _wrap(probe, card.prompt, TITLE, inner)
    code_lines = list(_tokens(card.code, card.code_language)) if card.code else []
    formula = _formula(card.formula) if card.formula else None
    picture = _picture(card.image, inner) if card.image else None
    options = [(f"{letter(i)})", _wrap(probe, text, BODY, inner - 40))
               for i, text in enumerate(card.options)]

    height = PAD + len(prompt) * TITLE_LINE
    if code_lines:
        height += PAD + 2 * CODE_PAD + len(code_lines) * CODE_LINE
    if formula is not None:
        height += PAD + formula.height
    if picture is not None:
        height += PAD + picture.height
    if options:
        height += PAD + sum(len(lines) for _, lines in options) * BODY_LINE
    height += PAD

    d = Drawing(WIDTH, height)
    y = PAD
    for line in prompt:
        _inline(d, PAD, y + TITLE, line, TITLE)
        y += TITLE_LINE
    if code_lines:
        y += PAD
        box = 2 * CODE_PAD + len(code_lines) * CODE_LINE
        d.box(PAD, y, WIDTH - PAD, y + box, CODE_BACKGROUND)
        y += CODE_PAD
        for pieces in code_lines:
            x: float = PAD + CODE_PAD
            for text, colour in pieces:
                x = d.text(x, y + CODE, text, CODE, colour, mono=True)
            y += CODE_LINE
        y += CODE_PAD
    if formula is not None:
        y += PAD
        d.image.paste(formula, ((WIDTH - formula.width) // 2, y), formula)
        y += formula.height
    if picture is not None:
        y += PAD
        d.image.paste(picture, ((WIDTH - picture.width) // 2, y), picture)
        y += picture.height
    if options:
        y += PAD
        for mark, lines in options:
            d.text(PAD, y + BODY, mark, BODY, MUTED)
            for line in lines:
                _inline(d, PAD + 40, y + BODY, line, BODY)
                y += BODY_LINE
    return d


def _inline(d: Drawing, x: float, baseline: float, text: str, size: int) -> None:
    """A line of the prompt or an option, its `inline code` in the monospace font on a light
    box (a line cut inside a span shows its backtick)."""
    for i, part in enumerate(INLINE_CODE.split(text)):
        if i % 2:
            width = d.measure(part, size, mono=True)
            d.box(x - 2, baseline - size, x + width + 2, baseline + size * 0.3, CODE_BACKGROUND)
            x = d.text(x, baseline, part, size, INK, mono=True)
        else:
            x = d.text(x, baseline, part, size)


def card_png(card: CardText) -> bytes:
    """The card as a true-colour PNG (an image's colours survive), WIDTH pixels wide."""
    out = io.BytesIO()
    card_drawing(card).image.save(out, format="PNG", optimize=True)
    return out.getvalue()
