"""Every kind of question through the question banks (docs/content.md, What each format
carries): the kinds pack exported and imported again in en, bn and hi, and the banks' own
spellings of each kind read as that kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.content import Quiz, load_catalog
from bot.content.formats import gift, moodle_xml
from bot.content.items import Kind
from bot.content.schema import LOCALES
from tests.test_formats import bank, imported, refused
from tests.test_formats import no_settings_from_the_environment as _settings  # noqa: F401

KINDS = Path(__file__).parent / "data" / "kinds"


def keys(quiz: Quiz, lang: str, order: bool = True, unit: bool = True) -> dict[str, object]:
    out: dict[str, object] = {}
    for q in quiz.questions:
        if q.kind is Kind.ORDER and not order:
            continue
        n = q.numeric
        forms = sorted({*q.accept.forms(lang), *q.accept.latin}) if q.accept else None
        out[q.id] = (q.kind, q.prompt.get(lang), [o.text.get(lang) for o in q.options],
                     q.answers, forms, q.explanation.get(lang),
                     (n.low, n.high, n.unit.get(lang) if n.unit and unit else None) if n
                     else None)
    return out


@pytest.mark.parametrize("language", LOCALES)
def test_the_kinds_pack_round_trips_through_moodle_xml(tmp_path: Path, language: str) -> None:
    [quiz] = load_catalog(KINDS)
    path = bank(tmp_path, moodle_xml.dump([quiz], language), "kinds.xml")
    [back] = imported(tmp_path, "moodle-xml", path, "--lang", language)
    assert keys(back, language) == keys(quiz, language)
    assert back.question("k-order").kind is Kind.ORDER


@pytest.mark.parametrize("language", LOCALES)
def test_the_kinds_pack_round_trips_through_gift_but_its_order(tmp_path: Path,
                                                               language: str) -> None:
    [quiz] = load_catalog(KINDS)
    text = gift.dump([quiz], language)
    assert "// left out: k-order, an order question (GIFT has no ordering)" in text
    [back] = imported(tmp_path, "gift", bank(tmp_path, text, "kinds.gift"), "--lang", language)
    assert keys(back, language, order=False, unit=False) == keys(
        quiz, language, order=False, unit=False)


def test_gift_spells_each_kind(tmp_path: Path) -> None:
    text = ("::m::Which grow activations? {~%50%micro-batch ~%50%sequence ~%-100%learning rate}"
            "\n\n::n1::Bytes per fp16 value? {#2}\n\n"
            "::n2::About how many GB? {#2.87:0.1}\n\n"
            "::n3::A range? {#2.7..3.0 ####between the two}\n\n"
            "::t::Name the technique. {=recomputation =activation checkpointing}\n\n"
            "::tf::bf16 has 8 exponent bits. {TRUE}\n")
    [quiz] = imported(tmp_path, "gift", bank(tmp_path, text, "k.gift"))
    q = {x.id: x for x in quiz.questions}
    assert q["m"].kind is Kind.MULTI and q["m"].answers == (0, 1)
    n1, n2, n3 = q["n1"].numeric, q["n2"].numeric, q["n3"].numeric
    assert n1 is not None and (n1.low, n1.high) == (2, 2)
    assert n2 is not None and (n2.value, n2.low, n2.high) == (2.87, 2.77, 2.97)
    assert n3 is not None and (n3.low, n3.high) == (2.7, 3.0)
    assert q["n3"].explanation.en == "between the two"
    t = q["t"].accept
    assert t is not None and t.texts == {"en": ("recomputation", "activation checkpointing")}
    assert q["tf"].kind is Kind.TRUEFALSE and q["tf"].answer == 0


def test_gift_refuses_a_numerical_answer_that_is_no_number(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    [error] = refused(tmp_path, "gift", bank(tmp_path, "::n::How many? {#two}\n", "n.gift"),
                      capsys)
    assert "n.gift:1: error: a numerical answer 'two' is not a number" in error


def test_moodle_xml_reads_an_ordering_question_by_its_positions(tmp_path: Path) -> None:
    xml = """<?xml version="1.0" encoding="UTF-8"?>
<quiz>
  <question type="ordering">
    <name><text>o</text></name>
    <questiontext format="plain_text"><text>Order them.</text></questiontext>
    <generalfeedback format="plain_text"><text>F then B.</text></generalfeedback>
    <answer fraction="2"><text>backward</text></answer>
    <answer fraction="1"><text>forward</text></answer>
    <answer fraction="3"><text>step</text></answer>
  </question>
  <question type="multichoice">
    <name><text>m</text></name>
    <questiontext format="plain_text"><text>Which?</text></questiontext>
    <single>false</single>
    <answer fraction="33.33333"><text>a</text></answer>
    <answer fraction="33.33333"><text>b</text></answer>
    <answer fraction="33.33333"><text>c</text></answer>
    <answer fraction="-100"><text>d</text></answer>
  </question>
</quiz>
"""
    [quiz] = imported(tmp_path, "moodle-xml", bank(tmp_path, xml, "o.xml"))
    order, multi = quiz.questions
    assert order.kind is Kind.ORDER
    assert [o.text.en for o in order.options] == ["forward", "backward", "step"]
    assert multi.kind is Kind.MULTI and multi.answers == (0, 1, 2)
    assert multi.explanation.en == "✅ a, b, c"  # no feedback: the key explains it


def test_aiken_says_it_carries_one_answer(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    text = "Which grow activations?\nA. micro-batch\nB. sequence\nC. learning rate\nANSWER: A, B\n"
    [error] = refused(tmp_path, "aiken", bank(tmp_path, text, "a.txt"), capsys)
    assert error.startswith("a.txt:5: error: ANSWER is 'A, B': Aiken carries one right answer")
    assert "GIFT or Moodle XML" in error
