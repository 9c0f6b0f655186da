"""Misconceptions in a pack (docs/content.md, Misconceptions): the pack's list, a wrong option's
`misconception:` tag (a true/false question's on the question, for its wrong side), the
errors at their lines, and what the catalog, the content cache and the export hold of it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from bot.content import load_catalog
from bot.content.loader import load_file

PACK = """\
id: demo
title:
  en: Demo
  bn: ডেমো
  hi: डेमो
misconceptions:
  - id: bigger-is-faster
    en: A bigger batch always trains faster
    bn: বড় ব্যাচ সবসময় দ্রুত ট্রেন করে
    hi: बड़ा बैच हमेशा तेज़ ट्रेन करता है
  - id: free-lunch
    en: Memory savings cost nothing
    bn: মেমরি সাশ্রয়ের কোনো খরচ নেই
    hi: मेमोरी की बचत की कोई कीमत नहीं
questions:
  - id: d-choice
    prompt: {en: Pick one, bn: একটি বাছুন, hi: एक चुनें}
    options:
      - {en: Right, bn: ঠিক, hi: सही, correct: true}
      - {en: Wrong, bn: ভুল, hi: ग़लत, misconception: bigger-is-faster}
      - {en: Also wrong, bn: এটাও ভুল, hi: यह भी ग़लत}
    explanation: {en: Because, bn: কারণ, hi: क्योंकि}
  - id: d-multi
    kind: multi
    prompt: {en: Pick two, bn: দুটি বাছুন, hi: दो चुनें}
    options:
      - {en: One, bn: এক, hi: एक, correct: true}
      - {en: Two, bn: দুই, hi: दो, misconception: free-lunch}
      - {en: Three, bn: তিন, hi: तीन, correct: true}
    explanation: {en: Because, bn: কারণ, hi: क्योंकि}
  - id: d-tf
    kind: truefalse
    truth: false
    misconception: free-lunch
    prompt: {en: It is free, bn: এটা বিনামূল্যে, hi: यह मुफ़्त है}
    explanation: {en: Because, bn: কারণ, hi: क्योंकि}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "demo.yaml"
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def errors(path: Path) -> list[str]:
    quiz, found = load_file(path)
    assert quiz is None, "a pack with an error must not load"
    return [f"{p.line}: {p.message}" for p in found if not p.warning]


def test_tags_reach_the_catalog_by_canonical_option(tmp_path: Path) -> None:
    quiz, found = load_file(write(tmp_path, PACK))
    assert quiz is not None, found
    assert [p for p in found if not p.warning] == []
    assert [m.id for m in quiz.misconceptions] == ["bigger-is-faster", "free-lunch"]
    free_lunch = quiz.misconception("free-lunch")
    assert free_lunch is not None and quiz.misconception("nothing") is None
    assert free_lunch.statement.get("hi") == "मेमोरी की बचत की कोई कीमत नहीं"
    q = {x.id: x for x in quiz.questions}
    assert q["d-choice"].misconceptions == (None, "bigger-is-faster", None)
    assert q["d-multi"].misconception_of(1) == "free-lunch"
    assert q["d-multi"].misconception_of(0) is None
    # the statement is false: True is the wrong side, canonical option 0
    assert q["d-tf"].misconceptions == ("free-lunch", None)


def test_the_cache_and_the_export_carry_them(tmp_path: Path) -> None:
    write(tmp_path, PACK)
    cache = tmp_path / "cache"
    parsed = load_catalog(tmp_path / "demo.yaml", cache).quizzes["demo"]
    cached = load_catalog(tmp_path / "demo.yaml", cache).quizzes["demo"]
    assert cached.questions[0].deferred, "the second load is the cache's"
    assert cached == parsed
    assert [q.misconceptions for q in cached.questions] == \
        [q.misconceptions for q in parsed.questions]
    exported = json.loads(json.dumps(cached.export()))
    assert exported["misconceptions"][0] == {
        "id": "bigger-is-faster", "en": "A bigger batch always trains faster",
        "bn": "বড় ব্যাচ সবসময় দ্রুত ট্রেন করে", "hi": "बड़ा बैच हमेशा तेज़ ट्रेन करता है"}
    assert exported["questions"][0]["misconceptions"] == [None, "bigger-is-faster", None]
    assert "misconceptions" not in exported["questions"][1] or \
        exported["questions"][1]["misconceptions"][1] == "free-lunch"


def test_an_unknown_id_is_refused_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, PACK.replace("hi: ग़लत, misconception: bigger-is-faster",
                                        "hi: ग़लत, misconception: bigger-is-slower"))
    found = errors(path)
    line = PACK.splitlines().index(
        "      - {en: Wrong, bn: ভুল, hi: ग़लत, misconception: bigger-is-faster}") + 1
    assert found == [f"{line}: question 1.option 2.misconception: misconception "
                     "'bigger-is-slower' is not one of the pack's misconceptions (they are: "
                     "bigger-is-faster, free-lunch)"], found


def test_a_tag_on_the_right_option_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, PACK.replace("hi: सही, correct: true}",
                                        "hi: सही, correct: true, misconception: free-lunch}"))
    (message,) = errors(path)
    assert "question 1.option 1: the right option stands for no misconception" in message


def test_a_statement_missing_a_language_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, PACK.replace("    hi: बड़ा बैच हमेशा तेज़ ट्रेन करता है\n", ""))
    (message,) = errors(path)
    assert message.startswith("7: misconception 1: misconception bigger-is-faster has "
                              "no hi statement"), message


def test_a_one_language_pack_states_them_in_its_language(tmp_path: Path) -> None:
    text = """\
    id: solo
    language: bn
    title: একক
    misconceptions:
      - id: free-lunch
        bn: মেমরি সাশ্রয়ের কোনো খরচ নেই
    questions:
      - id: s-one
        prompt: একটি বাছুন
        options:
          - {bn: ঠিক, correct: true}
          - {bn: ভুল, misconception: free-lunch}
        explanation: কারণ
    """
    quiz, found = load_file(write(tmp_path, text))
    assert quiz is not None, found
    assert quiz.questions[0].misconceptions == (None, "free-lunch")


def test_where_a_tag_does_not_belong(tmp_path: Path) -> None:
    twice = PACK.replace("  - id: free-lunch\n", "  - id: bigger-is-faster\n", 1)
    assert any("misconception listed more than once: bigger-is-faster" in m
               for m in errors(write(tmp_path, twice)))
    on_choice = PACK.replace("  - id: d-multi\n", "  - id: d-multi\n    misconception: "
                             "free-lunch\n")
    assert any("a multi question has no misconception" in m
               for m in errors(write(tmp_path, on_choice)))


def test_a_misconception_nobody_names_warns(tmp_path: Path) -> None:
    path = write(tmp_path, PACK.replace("    misconception: free-lunch\n", "").replace(
        ", misconception: free-lunch", ""))
    quiz, found = load_file(path)
    assert quiz is not None
    assert any(p.warning and "misconception 'free-lunch' is named by no option" in p.message
               for p in found)
