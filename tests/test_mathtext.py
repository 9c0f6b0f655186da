"""Formulas: what the validator refuses (each with its reason), what it accepts (every formula
of the bundled packs), and the drawing's pixels."""

from __future__ import annotations

import io
import re

import pytest
import yaml
from PIL import Image

from bot.content import mathtext
from tests.conftest import BUNDLED


@pytest.mark.parametrize(("tex", "reason"), [
    (r"\frac{1}{", "never closed"),
    (r"x}", "closes no {"),
    (r"\fracc{1}{2}", r"unknown command \fracc"),  # latex2mathml would draw "\fracc" as text
    (r"\text{\foo} + 1", r"unknown command \foo"),
    (r"\left( x", r"\left without its \right"),
    (r"x^", "nothing after it"),
    (r"a^b^c", "two superscripts"),
    (r"\sqrt", "argument"),
    (r"\begin{matrix} a", r"\begin without its \end"),
    (r"x & y", "an & outside"),
    (r"$x$ and $y$", "a $ inside"),
    (r"$$", "empty"),
    ("{" * 5000 + "x" + "}" * 5000, "nested too deeply"),
])
def test_a_bad_formula_is_refused_with_its_reason(tex: str, reason: str) -> None:
    with pytest.raises(mathtext.MathError) as info:
        mathtext.check(tex)
    assert reason in str(info.value)


def bundled_formulas() -> list[str]:
    found: set[str] = set()
    for path in BUNDLED.glob("*.yaml"):
        for q in yaml.safe_load(path.read_text(encoding="utf-8"))["questions"]:
            formula = q.get("formula") or {}
            found.update(formula.values() if isinstance(formula, dict) else [formula])
    return sorted(found)


def test_every_bundled_formula_and_common_tex_is_accepted() -> None:
    formulas = bundled_formulas()
    assert len(formulas) >= 4  # the packs' formulas are found
    for tex in (*formulas, r"$x^2$", r"\frac12", r"\nabla_\theta \mathcal{L}", r"\{a\} \$5",
                r"\mathrm{softmax}\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V", r"a < b"):
        mathtext.check(tex)


def test_a_formula_is_drawn_in_its_ink_on_a_transparent_background() -> None:
    image = Image.open(io.BytesIO(mathtext.png(r"\frac{a}{b}", 42, "#ff0000"))).convert("RGBA")
    data = image.tobytes()
    assert data[3] == 0  # the top left corner
    inked = [data[i:i + 4] for i in range(0, len(data), 4) if data[i + 3] == 255]
    assert inked and all(p[:3] == b"\xff\x00\x00" for p in inked)
    # a fraction stands taller than one line of the same size
    line = Image.open(io.BytesIO(mathtext.png("a", 42)))
    assert image.height > 1.5 * line.height


def width(tex: str) -> int:
    return Image.open(io.BytesIO(mathtext.png(tex, 42))).width


@pytest.mark.parametrize(("symbol", "then"), [(r"\nabla", "L"), (r"\partial", "x")])
def test_nabla_and_partial_are_not_spaced_like_operators(symbol: str, then: str) -> None:
    """latex2mathml makes them operators, whose spacing parts them from what follows (TeX
    sets them as ordinary symbols): together they are no wider than apart."""
    assert width(f"{symbol} {then}") <= width(symbol) + width(then)


def test_the_svg_has_no_text_left_to_a_font() -> None:
    """Glyphs are paths, so drawing needs no system font."""
    element = mathtext._mathml(r"\mathrm{MFU} = \frac{6N}{\mathrm{peak}}")
    svg = mathtext._drawn(element, 24)
    assert "<path" in svg or "<use" in svg
    assert not re.search(r"<text\b", svg)


@pytest.mark.parametrize(("tex", "text"), [
    (r"\mathrm{bubble} = \frac{p - 1}{m + p - 1}", "bubble = (p − 1)/(m + p − 1)"),
    (r"s\,b\,h\,\left(34 + \frac{5\,a\,s}{h}\right)", "s b h (34 + (5 a s)/h)"),
    (r"x^2 + y_{i} = \sqrt{a+b}", "x² + y_i = √(a + b)"),
    (r"e^{-x^2}", "e^(−x²)"),
    (r"$g = \sum_{i=1}^{k} \nabla L_i$", "g = ∑_(i=1)^k ∇L_i"),
    (r"\frac{1}{\oops}", r"\frac{1}{\oops}"),  # what cannot be read is shown as written
])
def test_a_formula_as_one_line_of_text(tex: str, text: str) -> None:
    assert mathtext.text(tex) == text
