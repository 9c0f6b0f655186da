"""`quizbot content claims`: every version-sensitive claim of a bank, grouped by library in the
schema's order, each with its pack, question and sources."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bot.content import load_catalog
from bot.content.claims import claims, report
from tests.conftest import BUNDLED

PACK = """\
id: {pack}
title: Claims
language: en
questions:
{questions}"""

QUESTION = """\
  - id: {qid}
    prompt: "What about {qid}?"
    options:
      - {{en: "Alpha", correct: true}}
      - "Bravo"
      - "Gamma"
    explanation: "Because."
    sources: ["https://github.com/microsoft/DeepSpeed/blob/v0.16.4/deepspeed/x.py"]
    claims:
{claims}
"""


def write(root: Path, pack: str, *questions: tuple[str, list[tuple[str, str]]]) -> None:
    text = PACK.format(pack=pack, questions="".join(
        QUESTION.format(qid=qid, claims="\n".join(
            f'      - {{library: {library}, claim: "{claim}"}}' for library, claim in said))
        for qid, said in questions))
    (root / f"{pack}.yaml").write_text(text, encoding="utf-8")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True,
                          timeout=60)


def test_claims_are_grouped_by_library(tmp_path: Path) -> None:
    write(tmp_path, "b-pack", ("b-one", [("DeepSpeed", "no_sync() raises under ZeRO-2 and 3")]))
    write(tmp_path, "a-pack", ("a-one", [("PyTorch", "backward_prefetch is BACKWARD_PRE"),
                                         ("DeepSpeed", "stage 3 prefetches by bucket")]))
    found = claims(load_catalog(tmp_path))
    assert [(c.library, c.quiz, c.question) for c in found] == [
        ("PyTorch", "a-pack", "a-one"), ("DeepSpeed", "a-pack", "a-one"),
        ("DeepSpeed", "b-pack", "b-one")]
    proc = run_cli("content", "claims", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    source = "    source: https://github.com/microsoft/DeepSpeed/blob/v0.16.4/deepspeed/x.py"
    assert proc.stdout.splitlines() == [
        "PyTorch (1 claim)",
        "  a-pack/a-one: backward_prefetch is BACKWARD_PRE",
        source,
        "",
        "DeepSpeed (2 claims)",
        "  a-pack/a-one: stage 3 prefetches by bucket",
        source,
        "  b-pack/b-one: no_sync() raises under ZeRO-2 and 3",
        source,
        "",
        "3 claims about 2 libraries: recheck a library's claims against their sources when it "
        "releases",
    ]


def test_a_bank_without_claims_says_so(tmp_path: Path) -> None:
    write(tmp_path, "a-pack", ("a-one", []))
    text = (tmp_path / "a-pack.yaml").read_text(encoding="utf-8").replace("    claims:\n", "")
    (tmp_path / "a-pack.yaml").write_text(text, encoding="utf-8")
    assert report(load_catalog(tmp_path)) == "no version-sensitive claims"


def test_a_bank_that_does_not_load_lists_no_claims(tmp_path: Path) -> None:
    write(tmp_path, "a-pack", ("a-one", [("Deepspeed", "misspelt library")]))
    proc = run_cli("content", "claims", str(tmp_path))
    assert proc.returncode == 1
    assert "claim 1.library must be one of" in proc.stderr and proc.stdout == ""


def test_the_bundled_claims_print() -> None:
    proc = run_cli("content", "claims", str(BUNDLED))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()
