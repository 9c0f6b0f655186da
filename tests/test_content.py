"""The pack validator: each kind of bad pack gets its own clear error naming file and line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.content import ContentError, load_catalog, loader, yaml_lines
from bot.content.items import Kind
from bot.content.limits import PACK_FILE_BYTES, tg_len
from bot.content.loader import MAX_PROBLEMS_PER_FILE
from tests.conftest import BUNDLED

try:  # the parser yaml_lines uses when PyYAML has libyaml
    from yaml.cyaml import CParser as LIBYAML
except ImportError:
    LIBYAML = None


@pytest.fixture(autouse=True, params=["libyaml", "pure"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test with both of PyYAML's parsers: libyaml when PyYAML has it, and the
    pure-Python one that reads a file libyaml refused."""
    if request.param == "libyaml" and LIBYAML is None:
        pytest.skip("PyYAML with libyaml is not installed")
    if request.param == "pure":
        monkeypatch.setattr(yaml_lines, "_CParser", None)
    return str(request.param)

GOOD = """\
id: demo
title: {en: Demo}
tags: [demo]
questions:
  - id: d-one
    prompt: {en: Question one?}
    options:
      - {en: Yes, correct: true}
      - {en: No}
    explanation: {en: Because.}
"""


def write(tmp_path: Path, text: str, name: str = "demo.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(ContentError) as info:
        load_catalog(path)
    return [str(p) for p in info.value.problems if not p.warning]


def test_good_pack_loads(tmp_path: Path) -> None:
    catalog = load_catalog(write(tmp_path, GOOD))
    quiz = catalog.quizzes["demo"]
    assert quiz.questions[0].answer == 0
    assert quiz.title.get("bn") == "Demo"  # missing locale falls back to English


@pytest.mark.parametrize(
    ("change", "line", "message"),
    [
        (("      - {en: No}", "      - {en: No, correct: true}"), 7, "exactly one option"),
        (("      - {en: Yes, correct: true}", "      - {en: Yes}"), 7, "found 0"),
        (("      - {en: No}\n", ""), 7, "at least 2"),
        (("    prompt: {en: Question one?}", "    prompt: {bn: প্রশ্ন}"), 6, "prompt.en"),
        (("    explanation: {en: Because.}", "    explain: {en: Because.}"), 10, "explain"),
        (("  - id: d-one", "  - id: D One"), 5, "question 1.id"),
        (("title: {en: Demo}", "title: {en: Demo, fr: Démo}"), 2, "title.fr"),
        (("      - {en: No}", "      - {en: No, bn: না}"), 9, "every locale needs the same"),
        (("    prompt: {en: Question one?}", f"    prompt: {{en: {'x' * 301}}}"), 6, "301"),
        (("      - {en: No}", f"      - {{en: {'n' * 101}}}"), 9, "option is 101"),
        (("    explanation: {en: Because.}", f"    explanation: {{en: {'e' * 201}}}"), 10,
         "explanation is 201"),
        (("    explanation: {en: Because.}", '    explanation: {en: "a\\nb\\nc\\nd"}'), 10,
         "3 line breaks"),
    ],
)
def test_each_bad_pack_names_line_and_problem(
    tmp_path: Path, change: tuple[str, str], line: int, message: str
) -> None:
    old, new = change
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new))
    found = problems(path)
    assert found, "expected an error"
    assert any(f"{path}:{line}:" in p and message in p for p in found), found


def test_yaml_syntax_error_points_at_line(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("tags: [demo]", "tags: [demo"))
    [problem] = problems(path)
    assert problem.startswith(f"{path}:") and "invalid YAML" in problem


def test_duplicate_key_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("tags: [demo]", "tags: [demo]\ntags: [again]"))
    assert "invalid YAML" in problems(path)[0]


def test_duplicate_question_ids_within_a_quiz_are_reported_at_both_lines(
    tmp_path: Path,
) -> None:
    extra = GOOD.split("questions:\n")[1]
    path = write(tmp_path, GOOD + extra)
    assert problems(path) == [
        f"{path}:5: error: question id 'd-one' is used more than once (also at line 11)",
        f"{path}:11: error: question id 'd-one' is used more than once (also at line 5)",
    ]


def test_ids_unique_across_files_reported_at_both_places(tmp_path: Path) -> None:
    a = write(tmp_path, GOOD, "a.yaml")
    b = write(tmp_path, GOOD.replace("id: demo", "id: other"), "b.yaml")
    assert problems(tmp_path) == [
        f"{a}:5: error: question id 'd-one' is used more than once (also at {b}:5)",
        f"{b}:5: error: question id 'd-one' is used more than once (also at {a}:5)",
    ]


def test_quiz_ids_unique_across_files(tmp_path: Path) -> None:
    a = write(tmp_path, GOOD, "a.yaml")
    b = write(tmp_path, GOOD.replace("d-one", "d-two"), "b.yaml")
    assert problems(tmp_path) == [
        f"{a}:1: error: quiz id 'demo' is used more than once (also at {b}:1)",
        f"{b}:1: error: quiz id 'demo' is used more than once (also at {a}:1)",
    ]


def test_one_bad_file_refuses_the_whole_catalog(tmp_path: Path) -> None:
    write(tmp_path, GOOD, "a.yaml")
    write(tmp_path, "id: broken\n", "b.yaml")
    with pytest.raises(ContentError):
        load_catalog(tmp_path)


def test_length_counts_utf16_code_units() -> None:
    assert tg_len("abc") == 3
    assert tg_len("🧠") == 2  # one astral character is two UTF-16 units
    assert tg_len("কি") == 2  # a Bengali conjunct counts its code points


def test_emoji_push_an_option_over_the_limit(tmp_path: Path) -> None:
    option = "🧠" * 50 + "x"  # 50 characters but 101 UTF-16 units
    path = write(tmp_path, GOOD.replace("      - {en: No}", f"      - {{en: '{option}'}}"))
    assert any("option is 101" in p for p in problems(path))


def test_missing_locale_is_a_warning_not_an_error(tmp_path: Path) -> None:
    catalog = load_catalog(write(tmp_path, GOOD))
    assert any("no bn, hi" in str(w) for w in catalog.warnings)


BENGALI = """\
id: demo
language: bn
title: ডেমো
questions:
  - id: d-one
    prompt: প্রশ্ন এক?
    options:
      - {bn: হ্যাঁ, correct: true}
      - না
    explanation: কারণ।
"""


@pytest.mark.parametrize(("language", "warned"), [
    ("en", []), ("[en, bn]", ["no bn text"]), ("[en, bn, hi]", ["no bn, hi text"]),
])
def test_a_pack_is_warned_only_about_the_languages_it_declares(
    tmp_path: Path, language: str, warned: list[str]
) -> None:
    pack = GOOD.replace("id: demo\n", f"id: demo\nlanguage: {language}\n")
    catalog = load_catalog(write(tmp_path, pack))
    found = [str(w) for w in catalog.warnings]
    assert len(found) == 3 * len(warned), found  # prompt, options, explanation
    assert all(any(w in f for w in warned) for f in found), found
    assert catalog.quizzes["demo"].language == "en"


def test_a_bengali_pack_is_not_warned_about_english(tmp_path: Path) -> None:
    catalog = load_catalog(write(tmp_path, BENGALI))
    assert catalog.warnings == []
    quiz = catalog.quizzes["demo"]
    assert quiz.language == "bn" and quiz.questions[0].prompt.get("en") == "প্রশ্ন এক?"


def test_a_listed_language_is_required_first_and_named_once(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("id: demo\n", "id: demo\nlanguage: [bn, en]\n"))
    assert any("prompt.bn" in p for p in problems(path)), problems(path)
    path = write(tmp_path, GOOD.replace("id: demo\n", "id: demo\nlanguage: [en, en]\n"))
    assert any("list each language once" in p for p in problems(path)), problems(path)


def test_bundled_content_is_valid_and_complete() -> None:
    catalog = load_catalog(BUNDLED)
    assert {"activation-recomputation", "gradient-accumulation"} <= set(catalog.quizzes)
    for quiz in catalog:
        # ten choice questions, and questions of the other kinds where they fit
        assert len([q for q in quiz.questions if q.kind is Kind.CHOICE]) == 10
        for q in quiz.questions:
            assert q.explanation.en
            assert len(q.options) == 4 if q.kind is Kind.CHOICE else q.kind is not Kind.MULTI \
                or len(q.options) >= 3


# --- answers given away by their length --------------------------------------------------


def lengths_pack(answers: list[str], hi: list[str] | None = None) -> str:
    """A pack with one question per entry: "long" makes the correct option the longest,
    "short" the shortest, "mid" neither, "two" a two-option question whose answer is longer.
    `hi` gives Hindi the same way (every option then has a hi text); English otherwise only."""
    shapes = {
        "long": ["a" * 30, "b" * 10, "c" * 20],
        "short": ["a" * 5, "b" * 10, "c" * 20],
        "mid": ["a" * 15, "b" * 10, "c" * 20],
        "two": ["a" * 30, "b" * 10],
    }
    lines = ["id: lengths", "title: {en: Lengths}", "questions:"]
    for qi, shape in enumerate(answers):
        lines += [f"  - id: len-{qi}", f"    prompt: {{en: Question {qi}?}}", "    options:"]
        hi_texts = shapes[hi[qi]] if hi else None
        for oi, text in enumerate(shapes[shape]):
            hi_part = f", hi: {hi_texts[oi]}" if hi_texts else ""
            correct = ", correct: true" if oi == 0 else ""
            lines.append(f"      - {{en: {text}{hi_part}{correct}}}")
        lines.append("    explanation: {en: Because.}")
    return "\n".join(lines) + "\n"


def giveaways(path: Path) -> list[str]:
    return [str(w) for w in load_catalog(path).warnings if "scores without knowing" in str(w)]


def test_an_answer_longest_in_over_40_percent_is_a_warning_at_questions(tmp_path: Path) -> None:
    path = write(tmp_path, lengths_pack(["long", "long", "long", "mid", "short"]))
    assert giveaways(path) == [
        f"{path}:3: warning: in en, the correct option is the longest in 3 of 5 questions "
        "(over 40%), so picking the longest option scores without knowing; make the options "
        "alike in length and detail"
    ]


def test_an_answer_shortest_in_over_40_percent_is_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path, lengths_pack(["short", "short", "short", "mid", "long"]))
    [warning] = giveaways(path)
    assert "in en, the correct option is the shortest in 3 of 5 questions" in warning


def test_40_percent_exactly_is_fine_and_ties_are_not_longest(tmp_path: Path) -> None:
    path = write(tmp_path, lengths_pack(["long", "long", "short", "short", "mid"]))
    assert giveaways(path) == []
    tie = lengths_pack(["long", "long", "long", "mid", "mid"]).replace("b" * 10, "b" * 30)
    assert giveaways(write(tmp_path, tie)) == []  # an answer as long as another is not longest


def test_the_share_is_counted_per_language(tmp_path: Path) -> None:
    path = write(tmp_path, lengths_pack(["long", "mid", "short", "mid"],
                                        hi=["long", "long", "mid", "mid"]))
    warnings = giveaways(path)
    assert len(warnings) == 1
    assert "in hi, the correct option is the longest in 2 of 4 questions" in warnings[0]


def test_two_option_questions_are_not_counted(tmp_path: Path) -> None:
    """With two options one is always the longer: such questions would always warn."""
    path = write(tmp_path, lengths_pack(["two", "two", "two", "mid", "mid"]))
    assert giveaways(path) == []
    assert giveaways(write(tmp_path, lengths_pack(["two", "two"]))) == []


def test_a_giveaway_is_a_warning_the_pack_still_loads(tmp_path: Path) -> None:
    path = write(tmp_path, lengths_pack(["long"]))
    catalog = load_catalog(path)
    assert "lengths" in catalog.quizzes and all(w.warning for w in catalog.warnings)
    proc = run_cli("content", "validate", str(path))
    assert proc.returncode == 0 and proc.stdout.startswith("ok: 1 quiz, ")
    assert f"{path}:3: warning: in en, the correct option is the longest in 1 of 1" in proc.stderr


def test_bundled_packs_do_not_give_the_answer_away() -> None:
    """Stricter than the warning: in each language the answer is strictly the longest option
    in at most a quarter of the bundled questions, and strictly the shortest in at most a
    quarter; no bundled pack warns about anything."""
    catalog = load_catalog(BUNDLED)
    assert [str(w) for w in catalog.warnings] == []
    for locale in ("en", "bn", "hi"):
        longest = shortest = total = 0
        for quiz in catalog:
            for q in quiz.questions:
                if q.kind is not Kind.CHOICE:  # one key among options: choice only
                    continue
                lengths = [tg_len(o.text.get(locale)) for o in q.options]
                answer = lengths.pop(q.answer)
                total += 1
                longest += answer > max(lengths)
                shortest += answer < min(lengths)
        assert longest <= total / 4, (locale, longest, total)
        assert shortest <= total / 4, (locale, shortest, total)


BENGALI_AND_DEVANAGARI_DIGITS = set("০১২৩৪৫৬৭৮৯०१२३४५६७८९")


def test_bundled_packs_are_complete_in_every_language() -> None:
    """Every text in en, bn and hi (no English fallback), details on every choice question,
    accepted answers in every language, and Latin digits everywhere, as in the bot's own
    messages."""
    catalog = load_catalog(BUNDLED)
    assert {
        "activation-recomputation", "gradient-accumulation", "mixed-precision",
        "zero-fsdp-sharding", "pipeline-parallelism", "lr-warmup-schedules",
        # issue 24
        "activation-memory", "flash-attention", "fp8-and-8bit-optimizers",
        "moe-expert-parallelism", "ddp-overlap", "throughput-mfu", "allocator-and-compile",
        "parallel-layouts", "lora-and-offloading",
    } <= set(catalog.quizzes)
    for quiz in catalog:
        assert quiz.tags and not quiz.title.missing(), quiz.id
        texts = [quiz.title]
        for q in quiz.questions:
            assert q.details is not None or q.kind is not Kind.CHOICE, q.id
            texts += [q.prompt, q.explanation, *(o.text for o in q.options),
                      *(t for t in (q.details, q.image_alt) if t is not None)]
            if q.numeric is not None and q.numeric.unit is not None:
                texts.append(q.numeric.unit)
            if q.accept is not None:
                assert set(q.accept.texts) == {"en", "bn", "hi"}, q.id
        for text in texts:
            assert not text.missing(), (quiz.id, text.en)
            for locale, value in text.items():
                assert not BENGALI_AND_DEVANAGARI_DIGITS & set(value), (quiz.id, locale, value)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], capture_output=True, text=True, timeout=60
    )


def test_cli_validate_reports_and_fails(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("      - {en: No}", "      - {en: No, correct: true}"))
    proc = run_cli("content", "validate", str(path))
    assert proc.returncode == 1
    assert f"{path}:7: error:" in proc.stderr and "nothing loaded" in proc.stderr


def test_cli_validate_bundled_ok() -> None:
    proc = run_cli("content", "validate")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok: ")


def test_cli_export_json_shape() -> None:
    proc = run_cli("content", "export", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    quizzes = json.loads(proc.stdout)
    catalog = load_catalog(BUNDLED)
    assert {q["id"] for q in quizzes} == set(catalog.quizzes)
    for quiz in quizzes:
        assert set(quiz) >= {"id", "title", "tags", "questions"}
        for q in quiz["questions"]:
            assert set(q) >= {"id", "prompt", "options", "answer", "explanation"}
            source = catalog.question(quiz["id"], q["id"])
            assert q.get("kind", "choice") == source.kind.value
            if q["answer"] >= 0:  # numeric, text and order have no right option
                assert q["options"][q["answer"]]["en"] == source.options[source.answer].text.en


# --- hostile and broken files: a file:line problem, never a traceback, never a hang ----------

POSIX = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX special files")


@POSIX
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    write(tmp_path, GOOD, "a.yaml")
    os.mkfifo(tmp_path / "x.yaml")
    assert problems(tmp_path) == [
        f"{tmp_path / 'x.yaml'}:1: error: not a regular file (a pipe, socket or device); "
        "a quiz pack must be a plain file"
    ]


@POSIX
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_symlink_to_dev_zero_is_refused_without_reading(tmp_path: Path) -> None:
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    [problem] = problems(tmp_path)
    assert problem.endswith("not a regular file (a pipe, socket or device); "
                            "a quiz pack must be a plain file")


def test_a_directory_named_like_a_pack_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dir.yaml").mkdir()
    write(tmp_path, GOOD, "a.yaml")
    [problem] = problems(tmp_path)
    assert problem.startswith(f"{tmp_path / 'dir.yaml'}:1: error: not a regular file")


def test_a_file_over_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "#" * (PACK_FILE_BYTES - len(GOOD.encode())) + "\n")
    [problem] = problems(path)
    assert problem == (
        f"{path}:1: error: the file is larger than 1 MiB, the limit for one pack; "
        "split it into several packs"
    )


def test_a_file_at_the_size_cap_is_read(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "#" * (PACK_FILE_BYTES - len(GOOD.encode()) - 1) + "\n")
    assert path.stat().st_size == PACK_FILE_BYTES
    assert load_catalog(path).quizzes["demo"]


def test_hidden_files_are_not_packs(tmp_path: Path) -> None:
    write(tmp_path, GOOD, "a.yaml")
    (tmp_path / "._a.yaml").write_bytes(b"\x00\x05\x16\x07binary metadata")
    assert set(load_catalog(tmp_path).quizzes) == {"demo"}


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\x00", "U+0000 (NUL)"),
        ("\x1b", "U+001B (ESC)"),
        ("\x07", "U+0007 (BEL)"),
        ("\x7f", "U+007F (DEL)"),
        ("\x85", "U+0085 (NEL)"),
        ("\u2028", "U+2028 (LINE SEPARATOR)"),
        ("\ufeff", "U+FEFF (BYTE ORDER MARK)"),
        ("\r", "U+000D (CR)"),
    ],
)
def test_control_characters_in_the_file_name_their_line(
    tmp_path: Path, char: str, shown: str
) -> None:
    path = write(tmp_path, GOOD.replace("Question one?", f"Question{char} one?"))
    kind = "character" if char in "\u2028\ufeff" else "control character"
    assert problems(path) == [
        f"{path}:6: error: the {kind} {shown} in column 26; a quiz file must be plain text"
    ]


@pytest.mark.parametrize("escape", ["\\e", "\\0", "\\x07", "\\u202E\\u0000", "\\ud800"])
def test_escaped_control_characters_in_text_are_refused(tmp_path: Path, escape: str) -> None:
    path = write(tmp_path, GOOD.replace("{en: Question one?}", f'{{en: "Question{escape}"}}'))
    [problem] = problems(path)
    assert problem.startswith(f"{path}:6: error: question 1.prompt.en: contains the "
                              "unprintable character U+")


def test_invalid_utf8_names_its_line_and_the_rest_is_still_checked(tmp_path: Path) -> None:
    path = tmp_path / "demo.yaml"
    path.write_bytes(GOOD.replace("Because.", "Bec\xffause.").encode("latin-1"))
    assert problems(path) == [
        f"{path}:10: error: not valid UTF-8 (byte 0xFF in column 26); save the file as UTF-8"
    ]
    path.write_bytes(b"# \xff\n" + GOOD.replace("tags: [demo]", "tags: [Demo]").encode())
    assert problems(path) == [
        f"{path}:1: error: not valid UTF-8 (byte 0xFF in column 3); save the file as UTF-8",
        f"{path}:4: error: tag 1 must be lowercase letters, digits and hyphens (at most 48), "
        "starting with a letter or digit",
    ]


@pytest.mark.parametrize(
    "nested",
    ["[" * 5000 + "]" * 5000, "{a: " * 5000 + "}" * 5000, "\n" + "- " * 5000 + "x",
     "\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 200))],
    ids=["flow-list", "flow-map", "block-list", "block-map"],
)
def test_deep_nesting_is_refused_at_its_line(tmp_path: Path, nested: str) -> None:
    path = write(tmp_path, GOOD.replace("title: {en: Demo}", f"title: {nested}"))
    found = problems(path)
    assert any(
        p.startswith(f"{path}:") and p.endswith("nested more than 20 levels deep; a pack needs 6")
        for p in found
    ), found


@pytest.mark.parametrize("number", ["1" * 5000, "0x" + "f" * 5000, "-" + "9" * 5000])
def test_a_huge_number_is_refused_before_conversion(tmp_path: Path, number: str) -> None:
    path = write(tmp_path, GOOD.replace("title: {en: Demo}", f"title: {number}"))
    assert problems(path) == [
        f"{path}:2: error: a number {len(number)} characters long; put it in quotes if it is text"
    ]


def test_anchors_aliases_merge_keys_tags_and_complex_keys_are_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        GOOD.replace("title: {en: Demo}", "title: &t {en: Demo}\nx: *t")
        .replace("explanation: {en: Because.}", "explanation: !!binary aGk=")
        + "<<: {id: other}\n? [a, b]\n: c\n",
    )
    assert problems(path) == [
        f"{path}:2: error: anchors (&name) are not supported: write the value out",
        f"{path}:3: error: aliases (*name) are not supported: write it out",
        f"{path}:11: error: the tag !!binary is not supported; a pack is plain text, lists and "
        "mappings",
        f"{path}:12: error: merge keys (<<) are not supported: write the keys out",
        f"{path}:13: error: a key must be plain text, not a list or a mapping",
    ]


def test_several_documents_and_an_empty_file(tmp_path: Path) -> None:
    several = write(tmp_path, GOOD + "---\n" + GOOD, "a.yaml")
    empty = write(tmp_path, "# nothing yet\n", "b.yaml")
    assert problems(tmp_path) == [
        f"{several}:11: error: more than one YAML document (---); a pack is a single document",
        f"{empty}:1: error: the file is empty; a quiz file is a mapping with id, title and "
        "questions",
    ]


def test_a_date_or_yes_is_text_not_a_type_error(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("{en: Demo}", "{en: 2024-13-45}"))
    quiz = load_catalog(path).quizzes["demo"]
    assert quiz.title.en == "2024-13-45"
    assert quiz.questions[0].options[0].text.en == "Yes"


def test_a_number_where_text_belongs_says_to_quote_it(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("{en: No}", "{en: 42}"))
    assert problems(path) == [
        f"{path}:9: error: question 1.option 2.en must be text; put it in quotes"
    ]


def test_keys_from_the_file_cannot_garble_the_terminal(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + '"\\e[2Jk": 1\n')
    [problem] = problems(path)
    assert "\x1b" not in problem and "\\x1b[2Jk" in problem


def test_every_problem_of_every_file_in_one_run_sorted(tmp_path: Path) -> None:
    """A schema error hides neither the length errors nor the ids used twice of its file."""
    a = write(
        tmp_path,
        GOOD.replace("{en: Question one?}", "{en: " + "q" * 301 + "}")
        .replace("      - {en: No}", "      - {en: No, correct: true}")
        .replace("tags: [demo]", "tags: [Demo]")
        + GOOD.split("questions:\n")[1].replace("Because.", "e" * 201),
        "a.yaml",
    )
    b = write(tmp_path, "id: b\ntitle: [unclosed\n", "b.yaml")
    c = write(tmp_path, GOOD.replace("id: demo", "id: c").replace("Yes", "Y\x1bes"), "c.yaml")
    assert problems(tmp_path) == [
        f"{a}:3: error: tag 1 must be lowercase letters, digits and hyphens (at most 48), "
        "starting with a letter or digit",
        f"{a}:5: error: question id 'd-one' is used more than once (also at line 11, {c}:5)",
        f"{a}:6: error: question 1.prompt.en: question is 301 characters, the limit is 300",
        f"{a}:7: error: question 1.options: exactly one option must have 'correct: true', "
        "found 2",
        f"{a}:11: error: question id 'd-one' is used more than once (also at line 5, {c}:5)",
        f"{a}:16: error: question 2.explanation.en: explanation is 201 characters, the limit "
        "is 200",
        f"{b}:3: error: invalid YAML: expected ',' or ']', but got '<stream end>'",
        f"{c}:5: error: question id 'd-one' is used more than once (also at {a}:5, {a}:11)",
        f"{c}:8: error: the control character U+001B (ESC) in column 15; a quiz file must be "
        "plain text",
    ]


@pytest.mark.parametrize(
    "bad",
    [
        "id: Demo\ntitle: 5\nquestions: {}\nextra: 1\n",
        GOOD.replace("    explanation: {en: Because.}\n", "    explanation: {en: ''}\n"),
        GOOD.replace("correct: true", "correct: maybe"),
        GOOD.replace("      - {en: No}\n", "").replace("title: {en: Demo}", "title: [a]"),
        GOOD.replace("    prompt: {en: Question one?}\n", "    prompt: {}\n"),
    ],
)
def test_messages_are_in_our_own_words(tmp_path: Path, bad: str) -> None:
    found = problems(write(tmp_path, bad))
    assert found
    pydantic_words = ("Value error", "Input should", "Field required", "Extra inputs",
                      "String should", "List should", "validation error")
    for problem in found:
        assert not any(word in problem for word in pydantic_words), problem


def test_problems_per_file_are_capped(tmp_path: Path) -> None:
    path = write(tmp_path, "".join(f"k{i}: 1\n" for i in range(500)))
    found = problems(path)
    assert len(found) == MAX_PROBLEMS_PER_FILE + 1
    assert found[-1].endswith("more problems in this file")


# --- fuzzing: loading a pack succeeds or raises ContentError, quickly -----------------------

FUZZ = settings(
    max_examples=int(os.environ.get("QUIZBOT_FUZZ_EXAMPLES", "150")),  # raise it to fuzz longer
    deadline=timedelta(seconds=2),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def load_or_problems(path: Path) -> None:
    """Loading succeeds or raises ContentError whose every problem is one clean line."""
    try:
        load_catalog(path)
    except ContentError as exc:
        assert exc.problems
        for problem in exc.problems:
            text = str(problem)
            assert text.startswith(f"{path}:") and "\n" not in text and "\x1b" not in text


@FUZZ
@given(data=st.binary(max_size=4000))
def test_fuzz_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_bytes(data)
    load_or_problems(path)


YAMLISH = st.text(
    alphabet=st.sampled_from(
        [
            *"[]{}:-,?!&*#|>'\"%@` \n\t\\0123456789abcdeyxEnu.~=<",
            *["\x00", "\x1b", "\r", "\x85", "\u2028", "\ufeff", "\ud7ff", "প", "🧠"],
        ]
    ),
    max_size=600,
)


@FUZZ
@given(text=YAMLISH)
def test_fuzz_yamlish_text(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    load_or_problems(path)


@FUZZ
@given(text=YAMLISH, at=st.integers(min_value=0, max_value=len(GOOD)))
def test_fuzz_text_spliced_into_a_good_pack(tmp_path: Path, text: str, at: int) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_text(GOOD[:at] + text + GOOD[at:], encoding="utf-8")
    load_or_problems(path)


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=120),
    st.sampled_from(["en", "bn", "hi", "correct", "d-one", "x" * 301, "2024-13-45", "yes"]),
)
KEYS = st.one_of(
    st.sampled_from(["id", "title", "tags", "questions", "prompt", "options", "explanation",
                     "details", "correct", "en", "bn", "hi", "text"]),
    st.text(max_size=12),
)
STRUCTURES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6), st.dictionaries(KEYS, inner, max_size=6)
    ),
    max_leaves=40,
)


def pack_like(value: Any) -> st.SearchStrategy[dict[str, Any]]:
    """A pack whose parts are replaced by random structures, to reach deep validation."""
    question = st.fixed_dictionaries(
        {"id": st.one_of(st.just("d-one"), value), "prompt": value, "explanation": value},
        optional={"options": st.lists(value, max_size=12), "details": value},
    )
    return st.fixed_dictionaries(
        {"id": st.one_of(st.just("demo"), value), "title": value},
        optional={"tags": value, "questions": st.lists(question, max_size=4)},
    )


@FUZZ
@given(data=st.one_of(STRUCTURES, pack_like(STRUCTURES)), style=st.sampled_from(["block", "json"]))
def test_fuzz_structures(tmp_path: Path, data: Any, style: str) -> None:
    path = tmp_path / "fuzz.yaml"
    if style == "json":  # JSON is YAML, and spells floats and escapes differently
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8",
                        errors="surrogatepass")
    else:
        with path.open("w", encoding="utf-8", errors="surrogatepass") as out:
            yaml.safe_dump(data, out, default_flow_style=False, allow_unicode=True)
    load_or_problems(path)


# --- the two parsers agree --------------------------------------------------------------


def load_with(path: Path, fast: bool) -> tuple[Any, list[str]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yaml_lines, "_CParser", LIBYAML if fast else None)
        quiz, found = loader.load_file(path)
    return quiz, [str(p) for p in found]


@pytest.mark.skipif(LIBYAML is None, reason="PyYAML with libyaml is not installed")
@FUZZ
@given(
    text=st.text(alphabet=st.sampled_from(list("[]{}:-,?!&*#|>'\"%@` \n\\0123456789abxyEn.~=<")),
                 max_size=60),
    at=st.integers(min_value=0, max_value=len(GOOD)),
)
def test_libyaml_and_pure_python_load_the_same_pack(tmp_path: Path, text: str, at: int) -> None:
    """Where a pack loads, it loads the same with either parser (tabs aside: the pure one refuses
    some tabs that YAML allows, and libyaml's reading is the one used)."""
    path = tmp_path / "fuzz.yaml"
    path.write_text(GOOD[:at] + text + GOOD[at:], encoding="utf-8")
    fast, slow = load_with(path, True), load_with(path, False)
    assert fast[0] == slow[0]
    if fast[0] is not None:
        assert fast[1] == slow[1]  # the same warnings at the same lines


def test_libyaml_reads_yaml_1_2(tmp_path: Path) -> None:
    """libyaml follows YAML 1.1 (`yes`, `on`, `1:20`, `0123`); packs are read as YAML 1.2."""
    path = write(tmp_path, GOOD.replace("{en: No}", "{en: on}").replace("Demo}", "1:20}"))
    quiz = load_catalog(path).quizzes["demo"]
    assert quiz.title.en == "1:20"
    assert quiz.questions[0].options[1].text.en == "on"
