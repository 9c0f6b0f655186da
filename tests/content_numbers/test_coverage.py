"""Every number a bundled question states is recomputed by a test here.

Each `test_<pack>.py` module beside this one recomputes the figures of some questions and
names them in its module-level `CHECKED: set[str]` (question ids). A question states a number
when its English prompt, options, explanation or details hold a figure; code, formulas and
images are not read, and the other languages say the same figures.

What is not a figure (`stated_numbers`, tried on the examples below):

- digits inside a name: attached to a letter on their left (FP8, H100, bf16, A100, v2, x16,
  E4M3), after a letter and a hyphen (ZeRO-2, GPT-3, top-2), the bit width of a format
  (8-bit, 16-bit), a dimension (2-D, 3D), a schedule like 1F1B, and a version after a
  product's name (Llama 3, PCIe 4.0, CUDA 12.4, Mixtral 8x7B);
- a citation's year: 19xx or 20xx after "et al." or after a capitalised name and before a
  closing bracket or comma ("Dao et al. (2022)", "(Loshchilov & Hutter 2019)");
- a label: a single digit naming a stage, rank, step, GPU, node, layer, chunk, expert or
  option ("stage 1", "rank 0", "stages 1 and 2");
- a complexity, O(...);
- a lone 0 or 1 beside an operator, the constants of a formula ("(p - 1)/m", "b = 1",
  "1/8 of"), which the formula's own figures check.

Everything else with a digit is a figure: "About 0.86 GB", "12 of 16 bytes", "3e-4", "2^16",
"45% MFU", "8 GPUs".
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from bot.content import load_catalog
from bot.content.items import Question, Quiz
from tests.conftest import BUNDLED

HERE = Path(__file__).parent

_NAMES = [
    r"(?<=[^\W\d_])\d[\w.]*",  # FP8, H100, bf16, E4M3: the digits and what follows them
    r"(?<=[^\W\d_]-)(?<!\de-)\d[\w.]*",  # ZeRO-2, GPT-3, top-2 (not 3e-4's exponent)
    r"\b\d+-bit\b", r"\b\d-?D\b", r"\b\d+F\d+B\b",
    r"\b(?:Llama|GPT|PCIe|CUDA|Python|PyTorch|Mixtral|Gen|version)\s+\d[\w.]*(?:\s+x\d+)?",
    r"(?<=et al\.)[,\s(]*(?:19|20)\d\d[a-z]?\b",
    r"(?<=[A-Z][a-z])[a-z]*\s+\(?(?:19|20)\d\d[a-z]?(?=[),;])",
    r"(?<=\()(?:19|20)\d\d(?=[),])",
    r"(?i:\b(?:stages?|ranks?|steps?|gpus?|nodes?|layers?|chunks?|experts?|options?))"
    r"\s+\d\b(?![.,]\d)(?:\s*(?:,|and|or|to)\s*\d\b(?![.,]\d))*",
    r"\bO\([^)]*\)",
    r"(?<=[^\W\d_]-\d/)\d\b",  # ZeRO-2/3
    r"(?<=[-+=/%·×<>≤≥(])\s*[01](?!\d|[.,]\d)", r"(?<![\d.,])[01]\s*(?=[-+=/%·×<>≤≥)])",
]
_NAME = re.compile("|".join(f"(?:{n})" for n in _NAMES))
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*(?:e-?\d+)?")


def stated_numbers(text: str) -> list[str]:
    """The figures of an English text (the module's docstring says what is not one)."""
    return _FIGURE.findall(_NAME.sub(lambda m: " " * len(m.group()), text))


def question_numbers(q: Question) -> list[str]:
    texts = [q.prompt.en, *(o.text.en for o in q.options), q.explanation.en,
             q.details.en if q.details is not None else None]
    return [n for text in texts if text for n in stated_numbers(text)]


def checked_ids() -> dict[str, set[str]]:
    """Each module's CHECKED set, by module name."""
    found: dict[str, set[str]] = {}
    for path in sorted(HERE.glob("test_*.py")):
        module = importlib.import_module(f"{__package__}.{path.stem}")
        checked = getattr(module, "CHECKED", None)
        if checked is not None:
            assert isinstance(checked, set) and all(isinstance(i, str) for i in checked), path
            found[path.stem] = checked
    return found


def uncovered(quizzes: Iterable[Quiz], checked: set[str]) -> list[str]:
    """The questions that state a figure no module recomputes, as pack/question."""
    return [f"{quiz.id}/{q.id}" for quiz in quizzes for q in quiz.questions
            if q.id not in checked and question_numbers(q)]


@pytest.mark.parametrize(("text", "figures"), [
    ("FP8 on H100 and A100 with ZeRO-2, bf16 and GPT-3 or Llama 3 v2", []),
    ("E4M3 and E5M2 in 8-bit; 1F1B in 3D parallelism over PCIe 4.0 x16", []),
    ("Korthikanti et al. (2022) and Dao et al. 2022, (Loshchilov & Hutter 2019)", []),
    ("stage 1 waits for rank 0; stages 1 and 2 keep it; O(1) memory, O(N^2) time", []),
    ("ZeRO-2/3 with CUDA_LAUNCH_BLOCKING=1, then", []),
    ("a factor of 1 + (p - 1)/(p·v); b = 1; 1/8 of the experts", ["8"]),
    ("About 0.86 GB", ["0.86"]),
    ("from 3e-4 to 3e-5 over 10,000 steps, at step 5,000", ["3e-4", "3e-5", "10,000",
                                                            "5,000"]),
    ("Mixtral 8x7B has about 47B parameters; 2 of the 8 experts", ["47", "2", "8"]),
    ("1 GB of gradients over 8 GPUs at 45% MFU; 2^16", ["1", "8", "45", "2", "16"]),
    ("a 2048-token sequence in 2048 (the year-like value is a figure)", ["2048", "2048"]),
])
def test_what_a_figure_is(text: str, figures: list[str]) -> None:
    assert stated_numbers(text) == figures


def test_a_question_stating_a_number_unchecked_is_named(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("""\
id: planted
title: Planted
language: en
questions:
  - id: p-figure
    prompt: "How much memory do 7 billion fp16 weights take?"
    options: [{en: "About 14 GB", correct: true}, "About 7 GB", "About 28 GB"]
    explanation: "Two bytes each."
  - id: p-name
    prompt: "Which format has more exponent bits, FP16 or BF16?"
    options: [{en: "BF16", correct: true}, "FP16", "E4M3"]
    explanation: "Korthikanti et al. (2022) and stage 1 aside, bf16 has 8 exponent bits."
""", encoding="utf-8")
    quizzes = list(load_catalog(tmp_path))
    assert uncovered(quizzes, set()) == ["planted/p-figure", "planted/p-name"]
    assert uncovered(quizzes, {"p-figure"}) == ["planted/p-name"]
    assert uncovered(quizzes, {"p-figure", "p-name"}) == []


def test_checked_ids_are_bundled_questions() -> None:
    """A module that names a question no pack has (renamed, removed) checks nothing."""
    known = {q.id for quiz in load_catalog(BUNDLED) for q in quiz.questions}
    stale = {module: sorted(ids - known) for module, ids in checked_ids().items()
             if ids - known}
    assert stale == {}


def test_every_stated_number_is_recomputed() -> None:
    checked = set().union(*checked_ids().values())
    missing = uncovered(load_catalog(BUNDLED), checked)
    assert missing == [], (f"{len(missing)} questions state numbers that no "
                           "tests/content_numbers/test_*.py module's CHECKED names: "
                           + ", ".join(missing))
