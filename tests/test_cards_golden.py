"""Golden images: a question card in each script (en, bn, hi) and the close summary chart's
Bengali and Hindi labels, compared with references drawn once and committed, within a small
tolerance, so a font or shaping regression fails. The comparison itself is shown to catch
unshaped Bengali (Pillow's basic layout instead of raqm).

To draw the references again after an intended change of the drawing:
    QUIZBOT_GOLDEN=write .venv/bin/python -m pytest tests/test_cards_golden.py
and look at every image before committing it.
"""

from __future__ import annotations

import io
import os
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from bot.reports import fonts, summary_png
from bot.reports.card import CardText, card_png
from tests.test_charts import BENGALI_TEXT, HINDI_TEXT, question, summary

GOLDEN = Path(__file__).parent / "data" / "golden"
STAGES = Path(__file__).parent / "data" / "cards" / "stages.png"
# A pixel differs when a channel moves by more than STRONG (anti-aliasing differences between
# FreeType builds stay below it); a card matches when under SHARE of its pixels differ.
STRONG = 96
SHARE = 0.002

CODE = """for step, batch in enumerate(loader):
    loss = model(batch) / accum  # {comment}
    loss.backward()
    if (step + 1) % accum == 0:
        optimizer.step()"""
# a bundled pack's formula: a fraction, \left( \right) around it, thin spaces
FORMULA = r"s\,b\,h\,\left(34 + \frac{5\,a\,s}{h}\right)"
CARDS = {
    "en": CardText("What does this loop compute once `accum` batches are in?",
                   CODE.format(comment="scaled"), "python", FORMULA, str(STAGES),
                   ("The mean gradient of `accum` batches", "The sum of the gradients",
                    "One batch's gradient")),
    "bn": CardText("`accum` ব্যাচের পর এই লুপ কী হিসাব করে? গ্রেডিয়েন্ট অ্যাকুমুলেশনের যুক্তাক্ষর",
                   CODE.format(comment="ভাগ করা হলো"), "python", r"M \propto \sqrt{N}", None,
                   ("`accum` ব্যাচের গড় গ্রেডিয়েন্ট", "গ্রেডিয়েন্টের যোগফল", "একটি ব্যাচের গ্রেডিয়েন্ট")),
    "hi": CardText("`accum` बैचों के बाद यह लूप क्या गणना करता है? ग्रेडिएंट एक्युमुलेशन",
                   CODE.format(comment="भाग दिया गया"), "python", r"M \propto \sqrt{N}", None,
                   ("`accum` बैचों का औसत ग्रेडिएंट", "ग्रेडिएंट का योग", "एक बैच का ग्रेडिएंट")),
}


def needs_fonts(locale: str) -> None:
    if not fonts.can_write(locale) or not fonts.mono_faces()[0].family.startswith("Noto"):
        pytest.skip("the references are drawn with Noto (apt-get install fonts-noto-core "
                    "fonts-noto-mono) and raqm")


def differing(png: bytes, reference: Path) -> float:
    """The share of pixels that differ strongly from the reference (1.0: another size)."""
    drawn = Image.open(io.BytesIO(png)).convert("RGB")
    expected = Image.open(reference).convert("RGB")
    if drawn.size != expected.size:
        return 1.0
    diff = ImageChops.difference(drawn, expected).convert("L").point(
        lambda v: 255 if v > STRONG else 0)
    return sum(diff.histogram()[255:]) / (drawn.width * drawn.height)


def matches(png: bytes, name: str) -> float:
    reference = GOLDEN / name
    if os.environ.get("QUIZBOT_GOLDEN") == "write":
        reference.write_bytes(png)
    return differing(png, reference)


@pytest.mark.parametrize("locale", ["en", "bn", "hi"])
def test_a_card_in_each_script_matches_its_reference(locale: str) -> None:
    needs_fonts(locale)
    assert matches(card_png(CARDS[locale]), f"card-{locale}.png") < SHARE


@pytest.mark.parametrize(("locale", "texts"), [("bn", BENGALI_TEXT), ("hi", HINDI_TEXT)])
def test_the_summary_charts_labels_match_their_reference(
    locale: str, texts: tuple[str, tuple[str, ...]]
) -> None:
    needs_fonts(locale)
    png = summary_png(summary(question(locale, *texts)))
    assert matches(png, f"summary-{locale}.png") < SHARE


def test_unshaped_bengali_does_not_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tolerance is tight enough to see conjuncts and vowel signs drawn unshaped."""
    needs_fonts("bn")
    monkeypatch.setattr(fonts, "shaping", lambda: False)
    fonts.font.cache_clear()
    try:
        assert differing(card_png(CARDS["bn"]), GOLDEN / "card-bn.png") > SHARE
    finally:
        fonts.font.cache_clear()


def test_a_formula_without_its_thin_spaces_does_not_match() -> None:
    """The tolerance sees a formula laid out otherwise (the card keeps its size)."""
    needs_fonts("en")
    card = replace(CARDS["en"], formula=FORMULA.replace(r"\,", ""))
    assert differing(card_png(card), GOLDEN / "card-en.png") > SHARE
