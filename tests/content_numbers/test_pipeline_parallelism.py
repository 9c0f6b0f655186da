"""Recomputes the figures of the pipeline-parallelism pack from their inputs.

p stages, m micro-batches, v model chunks per GPU, as in Narayanan et al. 2021
(arXiv:2104.04473): the idle share of a synchronous schedule is (p - 1)/(m + p - 1), the bubble
overhead relative to the ideal time (p - 1)/m, interleaved (p - 1)/(v·m); in 1F1B stage i
(from 0) holds up to p - i micro-batches. Each test asserts that the English text states the
figure as the computation rounds it, and the Bengali and Hindi texts state the same figures.
"""

from __future__ import annotations

import re

import pytest

from tests.content_numbers.bank import Pack

BANK = Pack("pipeline-parallelism")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "pp-bubble-fraction", "pp-interleaved", "pp-stage-balance", "pp-stage0-oom",
    "pp-critical-batch",
}

GB = 1e9




def idle_share(p: int, m: int) -> float:
    return (p - 1) / (m + p - 1)


def overhead(p: int, m: int, v: int = 1) -> float:
    return (p - 1) / (v * m)


def in_flight(p: int, stage: int) -> int:
    """Micro-batches whose activations stage `stage` (from 0) holds at its peak in 1F1B:
    p - 1 - stage warm-up forwards and one more before its first backward."""
    return (p - 1 - stage) + 1


def test_bubble_fraction() -> None:
    p, m = 4, 12
    assert f"{idle_share(p, m):.0%}" == "20%" and (p - 1, m + p - 1) == (3, 15)
    says("pp-bubble-fraction", "key", "20%")
    says("pp-bubble-fraction", "explanation", "3/15 = 20%", "25% is (p - 1)/m")
    # the distractors: the overhead relative to the ideal, no micro-batching, 1/m
    assert f"{overhead(p, m):.0%}" == "25%" and f"{(p - 1) / p:.0%}" == "75%"
    # counting p idle slots instead of p - 1
    assert f"{p / (m + p - 1):.0%}" == "27%" and (p, m + p - 1) == (4, 15)
    says("pp-bubble-fraction", "options", "25%", "75%", "27%")
    says("pp-bubble-fraction", "details", "3/12 = 25%", "75%", "(3 of 4 stages waiting)",
         "27% is p/(m + p - 1) = 4/15")
    assert f"{idle_share(p, 32):.0%}" == "9%"
    says("pp-bubble-fraction", "details", "m = 32 gives 3/35 ≈ 9%")


def test_interleaved() -> None:
    gpus, layers, v = 4, 16, 2
    per_chunk = layers // (gpus * v)
    first_gpu = [list(range(c * gpus * per_chunk + 1, c * gpus * per_chunk + per_chunk + 1))
                 for c in range(v)]
    assert first_gpu == [[1, 2], [9, 10]]
    says("pp-interleaved", "details", "with 4 GPUs and 16 layers",
         "holds layers 1-2 and 9-10 instead of 1-4")
    assert overhead(8, 16, 4) == overhead(8, 16) / 4


def test_stage_balance() -> None:
    slow = 1.3
    assert f"{1 - 1 / slow:.0%}" == "23%"
    says("pp-stage-balance", "prompt", "30% longer")
    says("pp-stage-balance", "explanation", "~23% of each slot (1 - 1/1.3)")


def test_stage0_oom() -> None:
    p, state, per_micro, hbm = 8, 20 * GB, 6 * GB, 80 * GB
    held = [in_flight(p, s) for s in range(p)]
    assert held == [8, 7, 6, 5, 4, 3, 2, 1]
    first, last = state + held[0] * per_micro, state + held[-1] * per_micro
    assert (first / GB, last / GB) == (68, 26) and last < first < hbm
    says("pp-stage0-oom", "prompt", "8 stages", "20 GB", "6 GB per stage", "80 GB",
         "near 26 GB")
    says("pp-stage0-oom", "key", "8 micro-batches are in flight on stage 0, 1 on stage 7")
    says("pp-stage0-oom", "explanation", "p - i micro-batches", "20 + 8 × 6 = 68 GB",
         "26 GB")
    says("pp-stage0-oom", "details", "8, 7, ..., 1 for p = 8", "20 + 48 = 68 GB", "26 GB")
    # the embedding's Adam state cannot explain the gap
    vocab, h = 128256, 4096
    embedding = vocab * h * 16
    assert f"{embedding / GB:.1f}" == "8.4" and (first - last) / GB == 42 > embedding / GB
    says("pp-stage0-oom", "details", "128256 × 4096 × 16 bytes ≈ 8.4 GB", "42 GB gap")
    says("pp-stage0-oom", "options", "8 GB the others never hold")


def test_critical_batch() -> None:
    p, dp, tokens, critical = 16, 32, 4096, 4e6
    m = int(critical // (dp * tokens))
    assert m == 30 and (p - 1, overhead(p, m)) == (15, 0.5)
    says("pp-critical-batch", "prompt", "16-stage", "DP = 32", "4096 tokens", "about 4M",
         "at most 30 micro-batches", "15/30 = 50%")
    v = 4
    assert overhead(p, m, v) == 15 / 120 == 0.125
    says("pp-critical-batch", "key", "15/120 ≈ 12.5%")
    says("pp-critical-batch", "explanation", "15/(4 × 30) = 12.5%", "4x")
    says("pp-critical-batch", "details", "4M tokens / (32 × 4096", "≈ 30", "15/120 ≈ 12.5%")
    # the distractors: 150 micro-batches (10%, a 19.7M-token batch, about 5 times past it),
    # DP doubled at the same batch (m = 15: 100%)
    big = 150
    assert f"{overhead(p, big):.0%}" == "10%"
    assert f"{big * dp * tokens / 1e6:.1f}" == "19.7" and round(big * dp * tokens / critical) == 5
    assert overhead(p, m // 2) == 1.0
    says("pp-critical-batch", "options", "150 micro-batches", "10%", "Double DP to 64")
    says("pp-critical-batch", "details", "19.7M-token batch", "about 5 times",
         "m to 15", "15/15 = 100%")


FIGURE = re.compile(r"\d+(?:[.,]\d+)*(?:e-?\d+)?")


@pytest.mark.parametrize("locale", ["bn", "hi"])
def test_translations_state_the_same_figures(locale: str) -> None:
    """Every figure of an English text appears in the same text in Bengali and Hindi."""
    missing = []
    for qid, q in QUESTIONS.items():
        parts = [("prompt", q["prompt"]), ("explanation", q["explanation"]),
                 ("details", q.get("details") or {}),
                 *((f"option {i + 1}", o) for i, o in enumerate(q["options"]))]
        for name, texts in parts:
            if "en" not in texts:
                continue
            figures = set(FIGURE.findall(texts["en"]))
            found = set(FIGURE.findall(texts.get(locale, "")))
            if figures - found:
                missing.append(f"{qid} {name}: {sorted(figures - found)}")
    assert missing == []
