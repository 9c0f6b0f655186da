"""Wording cues (bot/content/cues.py) and the glossary (bot/content/glossary.py): a biased pack
is warned at its lines, an unbiased one is not, and `--strict` turns the warnings into errors."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot.content import glossary, load_catalog
from bot.content.cues import (
    ALPHA,
    MIN_QUESTIONS,
    Score,
    bank_scores,
    failure,
    never_keyed,
    numeric_values,
    position_skewed,
    tail,
    too_often,
)
from tests.conftest import BUNDLED


def pack(questions: list[tuple[str, list[str], int]], pack_id: str = "cues") -> str:
    """A one-language (English) pack: (prompt, options, index of the key) per question."""
    lines = [f"id: {pack_id}", "title: {en: Cues}", "language: en", "questions:"]
    for qi, (prompt, options, key) in enumerate(questions):
        lines += [f"  - id: {pack_id}-{qi}", f'    prompt: "{prompt}"', "    options:"]
        for oi, option in enumerate(options):
            correct = ", correct: true" if oi == key else ""
            lines.append(f'      - {{en: "{option}"{correct}}}')
        lines.append("    explanation: Because.")
        lines += METADATA
    return "\n".join(lines) + "\n"


# what `--strict` requires of every question, so that the cues are all it finds
METADATA = ["    difficulty: easy", "    bloom: remember", "    concepts: [cues]",
            '    sources: ["arXiv:2205.05198"]']


# Eight questions, four options, keys spread 2/2/2/2, options of equal length, no absolute
# or "none" word, no word shared between options or with the prompt.
UNBIASED = [
    (f"Question {n} about topic{n}?",
     [f"alpha{n} bravo{n}", f"gamma{n} delta{n}", f"kappa{n} omega{n}", f"sigma{n} theta{n}"],
     n % 4)
    for n in range(8)
]


def write(tmp_path: Path, text: str, name: str = "cues.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def warnings(path: Path) -> list[str]:
    return [str(w) for w in load_catalog(path).warnings]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True,
                          timeout=60)


def test_an_unbiased_pack_has_no_cue(tmp_path: Path) -> None:
    path = write(tmp_path, pack(UNBIASED))
    assert warnings(path) == []
    proc = run_cli("content", "validate", "--strict", str(path))
    assert proc.returncode == 0, proc.stderr


def test_keys_in_one_position_are_flagged(tmp_path: Path) -> None:
    skewed = [(p, o, 0 if n < 5 else k) for n, (p, o, k) in enumerate(UNBIASED)]
    path = write(tmp_path, pack(skewed))
    assert warnings(path) == [
        f"{path}:4: warning: the correct option is option 1 in 5 of 8 questions (chance: 8/4); "
        "spread the keys over the positions"
    ]
    four = [(p, o, 0 if n < 4 else 1 + n % 3) for n, (p, o, k) in enumerate(UNBIASED)]
    assert warnings(write(tmp_path, pack(four))) == []  # 4 of 8 in one place: chance


def test_the_option_echoing_the_stem_keyed_too_often_is_flagged(tmp_path: Path) -> None:
    echo = [
        (f"Why does sharding{n} reduce memory{n}?",
         [f"alphabet{n} bridge{n}", f"sharding{n} memory{n}", f"colonels{n} danger{n}",
          f"elephant{n} forest{n}"],
         1 if n < 4 else (0, 2, 3, 0)[n - 4])
        for n in range(8)
    ]
    [warning] = warnings(write(tmp_path, pack(echo)))
    assert "the option sharing the most words with the question is the correct one in 4 of 8" \
        in warning and ":4: warning:" in warning
    echo[3] = (echo[3][0], echo[3][1], 0)  # 3 of 8: within chance
    assert warnings(write(tmp_path, pack(echo))) == []


def test_the_key_the_distractors_were_written_from_is_flagged(tmp_path: Path) -> None:
    kin = [
        (f"Question {n}?",
         [f"fast{n} link{n}", f"fast{n} hard{n}", f"slow{n} link{n}", f"gray{n} moth{n}"],
         0 if n < 4 else 1 + n % 3)
        for n in range(8)
    ]
    [warning] = warnings(write(tmp_path, pack(kin)))
    assert "the correct option shares the most words with the other options in 4 of 8" in warning


def test_absolute_words_only_in_distractors(tmp_path: Path) -> None:
    only = [
        (p, [o if i == k else f"only {o}" if i % 2 else f"never {o}"
             for i, o in enumerate(opts)], k)
        for p, opts, k in UNBIASED
    ]
    found = warnings(write(tmp_path, pack(only)))
    # each question on its own: the key is the only option without one
    per_question = [w for w in found if "the only one without an absolute word" in w]
    assert len(per_question) == 8 and ":5: warning: in en, the correct option is the only one " \
        "without an absolute word (never, only)" in per_question[0]
    # and over the pack: 24 absolute options, none keyed
    assert any("in en, absolute words (never, only) appear in 24 options and never in a "
               "correct one" in w for w in found), found


def test_absolutes_in_some_keys_are_fine(tmp_path: Path) -> None:
    mixed = [
        (p, [f"only {o}" if i == k else f"never {o}" if i == (k + 1) % 4 else o
             for i, o in enumerate(opts)], k)
        for p, opts, k in UNBIASED
    ]
    assert warnings(write(tmp_path, pack(mixed))) == []


def test_none_options_never_keyed(tmp_path: Path) -> None:
    nothing = [(p, [*o[:3], f"None of these {n}"], k % 3) for n, (p, o, k) in enumerate(UNBIASED)]
    found = warnings(write(tmp_path, pack(nothing)))
    assert any('8 "none/nothing" options are never the answer' in w for w in found), found
    keyed = list(nothing)
    keyed[0] = (keyed[0][0], keyed[0][1], 3)
    assert not any("none/nothing" in w for w in warnings(write(tmp_path, pack(keyed))))


def test_cues_are_counted_per_language(tmp_path: Path) -> None:
    """A Bengali text with absolute words only in distractors, the English clean."""
    text = textwrap.dedent("""\
        id: bn-cue
        title: {en: Cue, bn: সংকেত, hi: संकेत}
        questions:
          - id: bn-cue-1
            prompt: {en: Which one?, bn: কোনটি?, hi: कौन-सा?}
            options:
              - {en: red apple, bn: লাল আপেল, hi: लाल सेब, correct: true}
              - {en: green pear, bn: শুধু সবুজ নাশপাতি, hi: हरा नाशपाती}
              - {en: blue plum, bn: কখনো নীল বরই, hi: नीला बेर}
              - {en: black fig, bn: সব কালো ডুমুর, hi: काला अंजीर}
            explanation: {en: Because., bn: কারণ।, hi: क्योंकि।}
        """)
    found = [w for w in warnings(write(tmp_path, text)) if "absolute" in w]
    assert [w.split(": ", 1)[1] for w in found] == [
        "warning: in bn, the correct option is the only one without an absolute word (কখনো, "
        "শুধু, সব), which points to it; word the options alike"]
    assert found[0].startswith(f"{tmp_path / 'cues.yaml'}:4:")


def test_strict_makes_cues_errors(tmp_path: Path) -> None:
    skewed = [(p, o, 0 if n < 5 else k) for n, (p, o, k) in enumerate(UNBIASED)]
    path = write(tmp_path, pack(skewed))
    lenient = run_cli("content", "validate", str(path))
    assert lenient.returncode == 0 and f"{path}:4: warning:" in lenient.stderr
    strict = run_cli("content", "validate", "--strict", str(path))
    assert strict.returncode == 1 and f"{path}:4: error: the correct option is option 1" \
        in strict.stderr


def test_the_thresholds_are_the_documented_binomial_tails() -> None:
    four_options = [0.25] * 8
    assert tail(four_options, 3) == pytest.approx(0.3215, abs=1e-4)
    assert tail(four_options, 4) == pytest.approx(0.1138, abs=1e-4)
    assert tail(four_options, 5) == pytest.approx(0.0273, abs=1e-4)
    assert not too_often(four_options, 3) and too_often(four_options, 4)
    assert tail(four_options, 4) < ALPHA < tail(four_options, 3)
    assert not never_keyed([0.25] * 6) and never_keyed([0.25] * 7)  # 0.178 vs 0.133
    assert position_skewed([0] * 4 + [1, 2, 3, 1], 4) is None
    assert position_skewed([0] * 5 + [1, 2, 3], 4) == (0, 5)


def test_bundled_packs_pass_strict() -> None:
    proc = run_cli("content", "validate", "--strict")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


# --- the whole bank: strategies against chance -----------------------------------------------

def numeric_bank(keys: list[int], n: int = 12) -> list[tuple[str, list[str], int]]:
    """Questions with four values in one unit, the key at sorted position keys[i % len]."""
    return [(f"Question {q} about topic{q}?",
             [f"About {v}.{q % 10} GB" for v in (1, 3, 5, 7)], keys[q % len(keys)])
            for q in range(n)]


def scored(path: Path) -> dict[tuple[str, str], Score]:
    return {(s.strategy.name, s.locale): s for s in bank_scores(load_catalog(path))}


def test_numeric_keys_always_in_the_middle_fail(tmp_path: Path) -> None:
    path = write(tmp_path, pack(numeric_bank([1, 2])))
    middle = scored(path)["middle-value", "en"]
    assert (middle.n, middle.score, middle.chance) == (12, 0.5, 0.25)
    assert middle.failed and middle.points == pytest.approx(25.0)
    assert set(middle.feeding()) == {f"cues/cues-{q}" for q in range(12)}
    proc = run_cli("content", "validate", "--strict", str(path))
    assert proc.returncode == 1
    assert "a reader who would among numeric options in one unit, pick a middle value " \
        "scores 50.0% against chance 25.0% over 12 questions (25.0 points above" in proc.stderr
    # the table says each strategy's score, chance and difference
    assert re.search(r"middle-value +12 +50\.0% +25\.0% +\+25\.0 +FAIL", proc.stderr)


def test_numeric_keys_spread_like_chance_pass(tmp_path: Path) -> None:
    path = write(tmp_path, pack(numeric_bank([0, 1, 2, 3])))
    scores = scored(path)
    assert scores["middle-value", "en"].score == pytest.approx(0.25)
    assert not any(s.failed for s in scores.values())
    proc = run_cli("content", "validate", "--strict", str(path))
    assert proc.returncode == 0, proc.stderr


def test_a_key_never_the_longest_fails_below_chance(tmp_path: Path) -> None:
    """Two-sided: a reader who drops the longest option gains when it is never the key."""
    lengths = ["aa", "bbbb", "cccccc", "dddddddd"]
    questions = [(f"Question {q} about topic{q}?",
                  [f"{word}{q % 10}" for word in lengths], q % 3) for q in range(12)]
    path = write(tmp_path, pack(questions))
    scores = scored(path)
    longest = scores["longest", "en"]
    assert (longest.score, longest.chance) == (0.0, 0.25)
    assert longest.failed and longest.points == pytest.approx(-25.0)
    assert len(longest.feeding()) == 12  # every question loses: any of them can be rewritten
    proc = run_cli("content", "validate", "--strict", str(path))
    assert proc.returncode == 1
    assert "over 12 questions (25.0 points below; at most 5)" in proc.stderr


def test_an_odd_opening_keyed_too_often_fails(tmp_path: Path) -> None:
    questions = [(f"Question {q} about topic{q}?",
                  [f"Nothing: x{q % 10}", f"Some: y{q % 10}", f"Some: z{q % 10}",
                   f"Some: w{q % 10}"], 0 if q < 6 else 1 + q % 3) for q in range(12)]
    odd = scored(write(tmp_path, pack(questions)))["odd-opening", "en"]
    assert (odd.n, odd.score) == (12, 0.5) and odd.failed


def test_a_strategy_on_few_questions_is_shown_not_judged(tmp_path: Path) -> None:
    middle = scored(write(tmp_path, pack(numeric_bank([1], n=MIN_QUESTIONS - 1))))[
        "middle-value", "en"]
    assert middle.points == pytest.approx(25.0) and not middle.judged and not middle.failed


def test_the_cues_command_prints_the_report_of_a_passing_bank(tmp_path: Path) -> None:
    path = write(tmp_path, pack(UNBIASED + numeric_bank([0, 1, 2, 3])))
    proc = run_cli("content", "cues", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "en:" in proc.stdout and "bn:" not in proc.stdout  # an English-only bank
    assert re.search(r"longest +20 +25\.0% +25\.0% +\+0\.0", proc.stdout)
    assert "FAIL" not in proc.stdout


def test_numbers_inside_names_are_not_values() -> None:
    assert numeric_values(["FP8", "FP16", "BF16", "FP32"]) is None
    assert numeric_values(["H100: 80 GB", "H100: 40 GB", "H100: 94 GB"]) == [80, 40, 94]
    assert numeric_values(["1,200 tokens", "12 tokens", "2.5 tokens"]) == [1200, 12, 2.5]
    assert numeric_values(["About 1 GB", "About 2 TB", "About 3 GB"]) is None  # units differ
    assert numeric_values(["ZeRO-1", "ZeRO-2", "ZeRO-3"]) is None


def test_the_bundled_bank_is_within_the_bounds_in_every_language() -> None:
    scores = bank_scores(load_catalog(BUNDLED))
    assert {s.locale for s in scores} == {"en", "bn", "hi"}
    failed = [failure(s) for s in scores if s.failed]
    assert failed == []


# --- the glossary ------------------------------------------------------------------------------

GLOSSARY = """\
terms:
  - en: gradient accumulation
    bn: গ্রেডিয়েন্ট অ্যাকুমুলেশন
    hi: [ग्रेडिएंट एक्युमुलेशन, ग्रेडिएंट एक्यूमुलेशन]
    wrong: {hi: [ग्रेडिएंट संचय]}
  - {en: option, bn: বিকল্প, hi: विकल्प, wrong: {bn: [অপশন]}, in: [ui]}
"""

GLOSSED_PACK = """\
id: glossed
title: {en: Gradient accumulation, bn: গ্রেডিয়েন্ট অ্যাকুমুলেশন, hi: ग्रेडिएंट संचय}
questions:
  - id: glossed-1
    prompt:
      en: What does gradient accumulation save?
      bn: গ্রেডিয়েন্ট জমানো কী বাঁচায়?
      hi: ग्रेडिएंट एक्यूमुलेशन क्या बचाता है?
    options:
      - {en: Memory, bn: মেমরি, hi: मेमोरी, correct: true}
      - {en: Time, bn: সময়, hi: समय}
    explanation:
      en: It runs micro-batches in turn.
      bn: এটি (gradient accumulation) মাইক্রো-ব্যাচ পরপর চালায়।
      hi: यह माइक्रो-बैच बारी-बारी से चलाता है।
""" + "\n".join(METADATA) + "\n"


def glossed(tmp_path: Path) -> Path:
    (tmp_path / "glossary").mkdir()
    (tmp_path / "glossary" / "terms.yaml").write_text(GLOSSARY, encoding="utf-8")
    write(tmp_path, GLOSSED_PACK, "glossed.yaml")
    return tmp_path


def test_the_glossary_flags_wrong_and_other_renderings_at_their_lines(tmp_path: Path) -> None:
    root = glossed(tmp_path)
    ui = tmp_path / "locales"
    found = [str(p) for p in glossary.check(root, [root / "glossed.yaml"], ui)]
    pack_file = root / "glossed.yaml"
    assert found == [
        f"{pack_file}:2: warning: hi: 'ग्रेडिएंट संचय' is a rendering the glossary rules out "
        "for 'gradient accumulation'; write 'ग्रेडिएंट एक्युमुलेशन'",
        f"{pack_file}:7: warning: bn: the English says 'gradient accumulation' but this text has "
        "none of the glossary's 'গ্রেডিয়েন্ট অ্যাকুমুলেশন'",
    ]  # hi line 8 uses an allowed variant; bn line 16 keeps the English term in brackets


def test_the_glossary_checks_the_interface_catalogs(tmp_path: Path) -> None:
    root = glossed(tmp_path)
    po = tmp_path / "locales" / "bn" / "LC_MESSAGES"
    po.mkdir(parents=True)
    (po / "quizbot.po").write_text(textwrap.dedent("""\
        msgid ""
        msgstr ""
        "Language: bn\\n"

        msgid "That is not one of the options."
        msgstr "এটা দেওয়া অপশনগুলোর মধ্যে নেই।"

        msgid "Pick an option."
        msgstr "একটি বিকল্প বেছে নিন।"
        """), encoding="utf-8")
    found = [str(p) for p in glossary.check(root, [], tmp_path / "locales")]
    assert found == [f"{po / 'quizbot.po'}:5: warning: bn: 'অপশন' is a rendering the glossary "
                     "rules out for 'option'; write 'বিকল্প'"]


def test_a_broken_glossary_is_an_error_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "glossary").mkdir()
    (tmp_path / "glossary" / "terms.yaml").write_text(
        "terms:\n  - {en: layer, bn: লেয়ার}\n", encoding="utf-8")
    [problem] = glossary.check(tmp_path, [])
    assert not problem.warning and problem.line == 2 and "needs en, bn and hi" in problem.message


def test_strict_validate_fails_on_a_glossary_slip(tmp_path: Path) -> None:
    root = glossed(tmp_path)
    proc = run_cli("content", "validate", "--strict", str(root))
    assert proc.returncode == 1
    assert f"{root / 'glossed.yaml'}:2: error: hi: 'ग्रेडिएंट संचय'" in proc.stderr


def test_the_bundled_glossary_is_loaded_and_clean() -> None:
    terms, problems = glossary.load(BUNDLED / glossary.GLOSSARY)
    assert problems == [] and len(terms) >= 20
    files = sorted(BUNDLED.glob("*.yaml"))
    assert glossary.check(BUNDLED, files) == []
