"""The pack validator: each kind of bad pack gets its own clear error naming file and line."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot.content import ContentError, load_catalog
from bot.content.limits import tg_len
from tests.conftest import BUNDLED

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


def test_bundled_content_is_valid_and_complete() -> None:
    catalog = load_catalog(BUNDLED)
    assert {"activation-recomputation", "gradient-accumulation"} <= set(catalog.quizzes)
    for quiz in catalog:
        assert len(quiz.questions) == 8
        for q in quiz.questions:
            assert q.explanation.en and len(q.options) == 4


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
            assert q["options"][q["answer"]]["en"] == source.options[source.answer].text.en
