"""What an answer of each kind reads as (bot/core/answer_text.py): the right answer with its
letters, tolerance or unit, and the person's answer shown back, in en, bn and hi."""

from __future__ import annotations

from bot.content.items import Accept, Kind, Localized, Numeric, Option, Question, truefalse_options
from bot.core import answer_text


def _q(kind: Kind, options: list[Option], **more: object) -> Question:
    return Question(f"q-{kind.value}", Localized("Prompt?", "প্রশ্ন?", "प्रश्न?"), options,
                    Localized("Because."), kind=kind, **more)  # type: ignore[arg-type]


def _options(*texts: str, right: tuple[int, ...] = ()) -> list[Option]:
    return [Option(Localized(t, f"{t}-bn", f"{t}-hi"), i in right) for i, t in enumerate(texts)]


MULTI = _q(Kind.MULTI, _options("north", "south", "east", "west", right=(0, 2, 3)))
ORDER = _q(Kind.ORDER, _options("one", "two", "three", "four"))
TF = _q(Kind.TRUEFALSE, truefalse_options(False))
NUMERIC = _q(Kind.NUMERIC, [], numeric=Numeric(2.87, 2.77, 2.97, Localized("GB", "জিবি")))
RANGE = _q(Kind.NUMERIC, [], numeric=Numeric(2.87, 2.7, 3.0))
BIG = _q(Kind.NUMERIC, [], numeric=Numeric(100000, 100000, 100000))
TEXT = _q(Kind.TEXT, [], accept=Accept({"en": ("recomputation", "gradient checkpointing"),
                                        "bn": ("পুনর্গণনা",)}, ("punargonona",)))


def test_right_options_as_shown():
    order = (3, 2, 1, 0)  # shown A is canonical 3
    assert answer_text.right_shown(MULTI, order) == (0, 1, 3)
    assert answer_text.right_shown(ORDER, (2, 0, 3, 1)) == (1, 3, 0, 2)
    assert answer_text.right_shown(TF, (0, 1)) == ()
    assert answer_text.one_right(TF, (0, 1)) == 1
    assert answer_text.one_right(MULTI, order) == -1
    assert answer_text.one_right(NUMERIC, ()) == -1


def test_correct_texts_per_kind_and_language():
    assert answer_text.correct_text(MULTI, (3, 2, 1, 0), "en") == "A) west, B) east, D) north"
    assert answer_text.correct_text(MULTI, (0, 1, 2, 3), "bn") == \
        "A) north-bn, C) east-bn, D) west-bn"
    assert answer_text.correct_text(ORDER, (2, 0, 3, 1), "en") == \
        "B) one → D) two → A) three → C) four"
    assert answer_text.correct_text(TF, (0, 1), "bn") == "মিথ্যা"
    assert answer_text.correct_text(NUMERIC, (), "en") == "2.87 GB (±0.1)"
    assert answer_text.correct_text(NUMERIC, (), "bn") == "2.87 জিবি (±0.1)"
    assert answer_text.correct_text(RANGE, (), "en") == "2.87 (2.7–3)"
    assert answer_text.correct_text(BIG, (), "hi") == "1,00,000"
    assert answer_text.correct_text(TEXT, (), "en") == "recomputation"
    assert answer_text.correct_text(TEXT, (), "bn") == "পুনর্গণনা"
    assert answer_text.correct_text(TEXT, (), "hi") == "recomputation"  # none written in hi


def test_responses_shown_back():
    order = (3, 2, 1, 0)
    # canonical 0 (shown D, right), 1 (shown C, wrong)
    assert answer_text.response_text(MULTI, order, "0,1", "en") == "C ✗, D ✓"
    assert answer_text.partial(MULTI, "0,1") == (1, 3)
    assert answer_text.partial(TF, None) is None
    assert answer_text.response_text(ORDER, (2, 0, 3, 1), "2,0,1,3", "en") == "A → B → D → C"
    assert answer_text.response_text(NUMERIC, (), "2.9", "en") == "2.9 GB"
    assert answer_text.response_text(BIG, (), "1234567", "bn") == "12,34,567"
    assert answer_text.response_text(TEXT, (), "punargonona", "bn") == "punargonona"
    assert answer_text.response_text(TF, (0, 1), None, "en") == ""
    assert answer_text.chosen_text(TF, 0, "hi") == "सही"
    # a response that cannot be read back shows nothing rather than failing
    assert answer_text.response_text(MULTI, order, "x", "en") == ""
    assert answer_text.response_text(NUMERIC, (), None, "en") == ""
