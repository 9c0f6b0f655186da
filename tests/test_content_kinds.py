"""Kinds of question in a pack (docs/content.md, Kinds of question): each kind's keys and
only those, its errors at their lines, and what the catalog, the content cache and the export
hold of it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bot.content import load_catalog
from bot.content.items import FALSE, TRUE, Kind
from bot.content.loader import load_file

KINDS = Path(__file__).parent / "data" / "kinds"

HEAD = """\
id: demo
language: en
title: Demo
questions:
  - id: d-one
    prompt: What is it?
    explanation: Because.
"""


def pack(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "demo.yaml"
    path.write_text(HEAD + textwrap.indent(textwrap.dedent(body), "    "), "utf-8")
    return path


def errors(path: Path) -> list[str]:
    quiz, found = load_file(path)
    assert quiz is None, "a pack with an error must not load"
    return [str(p).split(": error: ", 1)[1] for p in found if not p.warning]


def test_the_kinds_pack_loads_every_kind() -> None:
    quiz, found = load_file(KINDS / "kinds.yaml")
    assert quiz is not None, found
    assert [p for p in found if not p.warning] == []
    q = {x.id: x for x in quiz.questions}
    assert [x.kind for x in quiz.questions] == list(Kind)
    assert (q["k-choice"].answer, q["k-choice"].answers) == (0, (0,))
    assert (q["k-multi"].answer, q["k-multi"].answers) == (0, (0, 1, 3))
    tf = q["k-tf"]
    assert [o.text for o in tf.options] == [TRUE, FALSE]
    assert (tf.answer, tf.answers, [o.correct for o in tf.options]) == (1, (1,), [False, True])
    assert TRUE.get("bn") == "সত্য" and FALSE.get("hi") == "ग़लत"
    num = q["k-num"]
    assert (num.options, num.answer, num.answers) == ([], -1, ())
    assert num.numeric is not None and num.numeric.unit is not None
    assert (num.numeric.value, num.numeric.low, num.numeric.high) == (0.4, 0.35, 0.45)
    text = q["k-text"]
    assert text.accept is not None and text.options == [] and text.answer == -1
    assert text.accept.texts["bn"][0] == "পুনর্গণনা" and "punargonona" in text.accept.latin
    assert text.accept.forms("hi") == ("रीकम्प्यूटेशन", "पुनर्गणना")
    order = q["k-order"]
    assert len(order.options) == 4 and not any(o.correct for o in order.options)
    assert (order.answer, order.answers) == (-1, ())


def test_kinds_survive_the_content_cache(tmp_path: Path) -> None:
    first = load_catalog(KINDS, tmp_path)
    again = load_catalog(KINDS, tmp_path)  # from the cache, texts read when asked for
    assert len(list((tmp_path / "content").iterdir())) == 1
    for a, b in zip(first.quizzes["kinds"].questions, again.quizzes["kinds"].questions,
                    strict=True):
        assert b.deferred and a == b
        assert (a.kind, a.answer, a.answers, a.numeric, a.accept, a.image_alt) == (
            b.kind, b.answer, b.answers, b.numeric, b.accept, b.image_alt)
        assert [o.correct for o in a.options] == [o.correct for o in b.options]
    assert again.quizzes["kinds"].export() == first.quizzes["kinds"].export()


def test_the_export_says_each_kind() -> None:
    quiz = load_catalog(KINDS).quizzes["kinds"]
    out = {q["id"]: q for q in quiz.export()["questions"]}
    assert "kind" not in out["k-choice"]
    assert out["k-multi"]["kind"] == "multi" and out["k-multi"]["answers"] == [0, 1, 3]
    assert out["k-tf"]["options"][0]["en"] == "True" and out["k-tf"]["answer"] == 1
    assert out["k-num"]["numeric"] == {"value": 0.4, "low": 0.35, "high": 0.45,
                                       "unit": {"en": "GB", "bn": "GB", "hi": "GB"}}
    assert out["k-text"]["accept"]["latin"] == ["punargonona", "recomputation"]
    assert out["k-order"]["answer"] == -1 and len(out["k-order"]["options"]) == 4


@pytest.mark.parametrize(("body", "line", "message"), [
    # multi: at least two right and one wrong
    ("kind: multi\noptions:\n  - {en: a, correct: true}\n  - {en: b}\n  - {en: c}\n", 9,
     "question 1.options: a multi question needs at least two options with 'correct: true' "
     "and at least one without, found 1 of 3"),
    ("kind: multi\noptions:\n  - {en: a, correct: true}\n  - {en: b, correct: true}\n"
     "  - {en: c, correct: true}\n", 9,
     "found 3 of 3"),
    ("kind: multi\noptions:\n  - {en: a, correct: true}\n  - {en: b, correct: true}\n", 9,
     "question 1.options has 2, at least 3 needed"),
    # choice keeps its one key
    ("options:\n  - {en: a, correct: true}\n  - {en: b, correct: true}\n", 8,
     "exactly one option must have 'correct: true', found 2"),
    ("kind: choice\n", 5, "question 1.options is missing"),
    # truefalse: a truth, no options
    ("kind: truefalse\n", 5, "question 1.truth is missing"),
    ("kind: truefalse\ntruth: maybe\n", 9, "question 1.truth must be true or false"),
    ("kind: truefalse\ntruth: true\noptions: [a, b]\n", 10,
     "a truefalse question has no options (it takes truth)"),
    # numeric: a value and a tolerance or a range
    ("kind: numeric\n", 5, "question 1.numeric is missing"),
    ("kind: numeric\nnumeric: {value: 3}\n", 9, "give a tolerance (0 for the exact value)"),
    ("kind: numeric\nnumeric: {value: 3, tolerance: -1}\n", 9,
     "question 1.numeric.tolerance"),
    ("kind: numeric\nnumeric: {value: 3, min: 4, max: 5}\n", 9, "min <= value <= max"),
    ("kind: numeric\nnumeric: {value: 3, tolerance: 1, min: 2, max: 4}\n", 9, "not both"),
    ("kind: numeric\nnumeric: {value: 3, min: 2}\n", 9, "give both min and max"),
    ("kind: numeric\nnumeric: {value: .inf, tolerance: 1}\n", 9, "finite"),
    ("kind: choice\nunit: GB\noptions:\n  - {en: a, correct: true}\n  - {en: b}\n", 9,
     "a choice question has no unit (it takes options)"),
    # text: accepted forms in each language
    ("kind: text\n", 5, "question 1.accept is missing"),
    ("kind: text\naccept: {en: []}\n", 9, "question 1.accept.en has 0, at least 1 needed"),
    ("kind: text\naccept: {en: ['  ']}\n", 9, "question 1.accept.en 1 is empty"),
    ("kind: text\naccept: {en: [" + "x" * 101 + "]}\n", 9, "at most 100"),
    ("kind: text\naccept: [a]\nlatin: [পুনর্গণনা]\n", 10, "is not in Latin letters"),
    ("kind: numeric\nnumeric: {value: 1, tolerance: 0}\nlatin: [a]\n", 10,
     "a numeric question has no latin"),
    # order: 2..6 items, none marked
    ("kind: order\noptions: [a]\n", 9, "question 1.options has 1, at least 2 needed"),
    ("kind: order\noptions: [a, b, c, d, e, f, g]\n", 9, "has 7, at most 6 allowed"),
    ("kind: order\noptions:\n  - {en: a, correct: true}\n  - {en: b}\n", 9,
     "listed in the right order, none with 'correct: true'"),
    ("kind: essay\n", 8, "question 1.kind must be one of 'choice', 'multi', 'truefalse', "
     "'numeric', 'text' or 'order', not 'essay'"),
])
def test_each_kind_takes_its_keys(tmp_path: Path, body: str, line: int, message: str) -> None:
    found = errors(pack(tmp_path, body))
    assert any(message in e for e in found), found
    _, problems = load_file(tmp_path / "demo.yaml")
    assert any(p.line == line and message in p.message for p in problems if not p.warning), \
        [(p.line, p.message) for p in problems]


def test_accepted_forms_are_needed_in_every_language_of_the_pack(tmp_path: Path) -> None:
    path = tmp_path / "demo.yaml"
    path.write_text(HEAD.replace("language: en", "language: [en, bn]") + textwrap.indent(
        "kind: text\naccept: {en: [recomputation]}\n", "    "), "utf-8")
    found = errors(path)
    assert any("no accepted answers in bn" in e for e in found), found
    path.write_text(path.read_text("utf-8").replace(
        "{en: [recomputation]}", "{en: [recomputation], bn: পুনর্গণনা}"), "utf-8")
    quiz, problems = load_file(path)
    assert quiz is not None, problems
    accept = quiz.questions[0].accept
    assert accept is not None and accept.texts == {"en": ("recomputation",),
                                                   "bn": ("পুনর্গণনা",)}


def test_a_range_and_a_plain_list_of_forms(tmp_path: Path) -> None:
    quiz, problems = load_file(pack(tmp_path, """\
        kind: numeric
        numeric: {value: 2.87, min: 2.7, max: 3}
        """))
    assert quiz is not None, problems
    numeric = quiz.questions[0].numeric
    assert numeric is not None and (numeric.low, numeric.high, numeric.unit) == (2.7, 3.0, None)
    quiz, problems = load_file(pack(tmp_path, "kind: text\naccept: [Gradient checkpointing]\n"))
    assert quiz is not None, problems
    accept = quiz.questions[0].accept
    assert accept is not None and accept.forms("bn") == ("Gradient checkpointing",)


def test_each_kind_fits_both_platforms() -> None:
    """What the validator allows is within what either platform takes for the kind."""
    from bot.content import limits
    from bot.content.schema import OPTION_COUNTS

    for low, high in OPTION_COUNTS.values():
        # a poll (several right ones: multi), a select menu, a row of buttons per option
        assert 2 <= low and high <= min(limits.TG_POLL_MAX_OPTIONS, limits.DC_SELECT_OPTIONS,
                                        limits.DC_BUTTONS)
    assert OPTION_COUNTS[Kind.ORDER][1] == limits.MAX_ORDER_ITEMS == 6
    # a typed answer: a Discord text input, a Telegram message, a reply that states it
    assert limits.TYPED_ANSWER <= min(limits.DC_TEXT_INPUT, limits.TG_MESSAGE, limits.TG_ALERT)
    assert limits.IMAGE_ALT == 1024 == limits.TG_CAPTION == limits.DC_ATTACHMENT_DESCRIPTION


JUNK = ("kind: multi", "kind: order", "kind: numeric", "kind: text", "kind: truefalse",
        "truth: 3", "numeric: {value: x}", "numeric: {value: 1, min: 2, max: 0}", "accept: 5",
        "accept: {en: [[1]]}", "latin: [1, 2]", "unit: []", "options: 7", "image_alt: {en: x}",
        "numeric: [1]", "accept: {xx: [a]}", "options: [{en: a, correct: true}]", "kind: null",
        "numeric: {value: .nan, tolerance: 1}", "truth: true", "accept: [a]")


def test_a_broken_kind_is_a_problem_never_an_exception() -> None:
    """The kinds pack with keys added, removed and cut at random (seeded): every load ends
    in a quiz or problems at lines, never in anything raised."""
    import random

    from bot.content.loader import load_text

    source = (KINDS / "kinds.yaml").read_text("utf-8").split("\n")
    rng = random.Random(34)
    refused = 0
    for _ in range(200):
        lines = list(source)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(8, len(lines))
            choice = rng.random()
            if choice < 0.4:
                lines.insert(at, "    " + rng.choice(JUNK))
            elif choice < 0.7:
                del lines[at]
            else:
                lines[at] = lines[at][: rng.randrange(len(lines[at]) + 1)]
        quiz, problems = load_text("\n".join(lines), "kinds.yaml")
        assert quiz is not None or any(not p.warning and p.line >= 1 for p in problems)
        refused += quiz is None
    assert refused > 50  # the mutations do break packs
