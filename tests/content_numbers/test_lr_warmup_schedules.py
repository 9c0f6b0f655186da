"""Recomputes the figures of the lr-warmup-schedules pack from their inputs.

The cosine schedule is PyTorch's CosineAnnealingLR, lr = min + (max - min)(1 + cos(pi t/T))/2;
Goyal et al. 2017 (arXiv:1706.02677) scale 0.1 per 256 images linearly; the checkpoint interval
is Young's first-order optimum sqrt(2 C M) for a lost fraction C/T + (T/2 + R)/M; the warmup
length is Ma & Yarats 2019 (arXiv:1910.04209), 2/(1 - beta2). Each test asserts that the English
text states the figure as the computation rounds it; the last one, that Bengali and Hindi state
the same figures.
"""

from __future__ import annotations

import math
import re

import pytest

from tests.content_numbers.bank import Pack

BANK = Pack("lr-warmup-schedules")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "lr-large-batch-warmup", "lr-cosine-midpoint", "lr-accumulation-steps", "lr-adamw-decay",
    "lr-wsd", "lr-checkpoint-interval", "lr-beta2-warmup",
}




def test_large_batch_warmup() -> None:
    assert 0.1 * 8192 / 256 == pytest.approx(3.2)
    says("lr-large-batch-warmup", "prompt", "256 → 8192", "0.1 → 3.2")
    says("lr-large-batch-warmup", "options", "batch 8192")
    says("lr-large-batch-warmup", "details", "(3.2 for ResNet-50 at batch 8192)",
         "from 0.1 over the first 5 epochs", "about 8k")


def cosine(t: float, total: float, peak: float, floor: float) -> float:
    return floor + (peak - floor) * (1 + math.cos(math.pi * t / total)) / 2


def test_cosine_midpoint() -> None:
    peak, floor, total = 3e-4, 3e-5, 10_000
    mid = cosine(5_000, total, peak, floor)
    assert f"{mid:.2e}" == "1.65e-04" and mid == pytest.approx(floor + (peak - floor) / 2)
    assert f"{peak - floor:.1e}" == "2.7e-04"
    # distractors: the floor forgotten, half the peak plus the floor, the geometric midpoint
    assert f"{peak / 2:.2e}" == "1.50e-04" and f"{floor + peak / 2:.2e}" == "1.80e-04"
    assert f"{math.sqrt(peak * floor):.2e}" == "9.49e-05"
    says("lr-cosine-midpoint", "prompt", "3e-4 to 3e-5 over 10,000 steps", "step 5,000")
    says("lr-cosine-midpoint", "options", "1.50e-4", "1.80e-4", "9.49e-5", "1.65e-4")
    says("lr-cosine-midpoint", "explanation", "3e-5 + ½ × 2.7e-4 = 1.65e-4")
    says("lr-cosine-midpoint", "details", "1.50e-4 forgets the floor (half of 3e-4)",
         "1.80e-4", "9.49e-5 = √(3e-4 × 3e-5)")


def test_accumulation_steps() -> None:
    assert 2_000 // 4 == 500
    says("lr-accumulation-steps", "prompt", "4-step")
    says("lr-accumulation-steps", "options", "every 4 micro-batches", "4 times")
    says("lr-accumulation-steps", "explanation", "4x too fast", "2,000-step warmup",
         "after 500 updates")
    says("lr-accumulation-steps", "details", "4x too fast")


def test_adamw_decay() -> None:
    assert f"{0.1 * 3e-4:.0e}" == "3e-05"
    says("lr-adamw-decay", "details", "λ = 0.1 at lr = 3e-4", "3e-5 of their value")


def test_wsd() -> None:
    # the decay share that matches cosine's final loss, as Hägele et al. 2024 report it
    says("lr-wsd", "explanation", "(~10-20% of steps)")
    says("lr-wsd", "details", "roughly 10-20% of training")


def lost(interval: float, cost: float, restart: float, mtbf: float) -> float:
    return cost / interval + (interval / 2 + restart) / mtbf


def test_checkpoint_interval() -> None:
    c, r, m = 5.0, 15.0, 8 * 60.0
    best = math.sqrt(2 * c * m)
    assert m == 480 and round(best) == 69
    assert lost(best, c, r, m) == pytest.approx(min(lost(t, c, r, m) for t in range(5, 480)),
                                                abs=1e-4)
    assert f"{c / best:.1%}" == "7.2%" and f"{best / (2 * m):.1%}" == "7.2%"
    assert f"{r / m:.1%}" == "3.1%" and f"{lost(best, c, r, m):.1%}" == "17.6%"
    assert f"{1 - lost(best, c, r, m):.0%}" == "82%"
    says("lr-checkpoint-interval", "prompt", "every 8 hours", "15 min", "5 min")
    says("lr-checkpoint-interval", "key", "every 70 min, about 82%",
         "√(2 × 5 × 480) ≈ 69 min")
    says("lr-checkpoint-interval", "explanation", "√(2 × 5 × 480) ≈ 69 min",
         "7.2% writing checkpoints, 7.2% redone work, 3.1% restarts", "about 82%")
    says("lr-checkpoint-interval", "details", "C = 5 min", "R = 15 min", "M = 480 min",
         "≈ 69 min", "5/69 + 69/960 + 15/480 ≈ 17.6%")
    # each distractor's claim counts one cost only; its real goodput
    claimed = {15: 1 - (15 / 2 + r) / m, 240: 1 - c / 240, 480: 1 - (c + r) / m}
    assert [f"{claimed[t]:.0%}" for t in (15, 240, 480)] == ["95%", "98%", "96%"]
    assert 15 / 2 < 8 and f"{c / 240:.0%}" == "2%"
    says("lr-checkpoint-interval", "options", "Every 15 min, about 95%",
         "under 8 min of work", "Every 4 h, about 98%", "only 2% of the time",
         "Every 8 h, once per failure, about 96%")
    real = {t: 1 - lost(t, c, r, m) for t in (15, 240, 480)}
    assert [f"{real[t]:.0%}" for t in (15, 240, 480)] == ["62%", "70%", "46%"]
    assert f"{c / 15:.0%}" == "33%" and f"{240 / 960:.0%}" == "25%"
    says("lr-checkpoint-interval", "details", "5/15 = 33%", "(62% goodput)",
         "240/960 = 25%", "(70%)", "(46%)")
    # asynchronous checkpointing at half a minute of blocking
    fast = math.sqrt(2 * 0.5 * m)
    assert round(fast) == 22 and f"{1 - lost(fast, 0.5, r, m):.0%}" == "92%"
    says("lr-checkpoint-interval", "details", "C = 0.5 min, T ≈ 22 min", "about 92%")


def test_beta2_warmup() -> None:
    def horizon(beta2: float) -> int:
        return round(1 / (1 - beta2))

    assert (horizon(0.999), horizon(0.95)) == (1000, 20)
    assert (2 * horizon(0.999), 2 * horizon(0.95)) == (2000, 40)
    assert 40 <= 200 < 2000  # the warmup covers 0.95's need, not 0.999's
    # bias correction makes v-hat unbiased whatever beta2: sum of (1 - b) b^(t - i) = 1 - b^t
    for beta2 in (0.999, 0.95):
        t = 200
        weights = sum((1 - beta2) * beta2 ** (t - i) for i in range(1, t + 1))
        assert weights / (1 - beta2**t) == pytest.approx(1)
    says("lr-beta2-warmup", "prompt", "β2 = 0.999", "200-step warmup", "first 300 steps",
         "β2 = 0.95")
    says("lr-beta2-warmup", "options", "At 0.95", "At 0.999", "~1/(1 − β2) steps")
    says("lr-beta2-warmup", "explanation", "1000 at 0.999, 20 at 0.95",
         "a 200-step warmup", "~2000")
    says("lr-beta2-warmup", "details", "2/(1 − β2) steps: 2000 at 0.999, 40 at 0.95",
         "200-step warmup", "β2 = 0.95")


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
            figures = set(FIGURE.findall(texts["en"]))
            found = set(FIGURE.findall(texts.get(locale, "")))
            if figures - found:
                missing.append(f"{qid} {name}: {sorted(figures - found)}")
    assert missing == []
