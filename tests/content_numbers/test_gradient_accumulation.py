"""Recomputes the figures of the gradient-accumulation pack from their inputs.

The accumulation loops are simulated on a linear model with numpy (gradients summed into one
buffer, as PyTorch's .grad accumulates); the critical-batch figures follow McCandlish et al.
2018 (arXiv:1812.06162): steps S = S_min(1 + B_noise/B), examples E = E_min(1 + B/B_noise).
Each test asserts that the English text states the figure as the computation rounds it; the
last one, that Bengali and Hindi state the same figures.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.content_numbers.bank import Pack

BANK = Pack("gradient-accumulation")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "ga-effective-batch-size", "ga-zero-grad-bug", "ga-batchnorm-micro-batches",
    "ga-packing-masks", "ga-critical-batch-time",
}




def mse_grad(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Gradient of the mean squared error of a linear model over a batch."""
    return np.asarray(2 * x.T @ (x @ w - y) / len(x))


def test_effective_batch_size() -> None:
    micro, steps, workers = 4, 8, 4
    assert micro * steps == 32 and micro * steps * workers == 128 and micro + steps == 12
    says("ga-effective-batch-size", "prompt", "micro-batch size of 4", "8 accumulation")
    says("ga-effective-batch-size", "key", "32")
    says("ga-effective-batch-size", "options", "4", "8", "12")
    says("ga-effective-batch-size", "explanation", "8 micro-batches of 4", "4 × 8 = 32")
    says("ga-effective-batch-size", "details", "On 4 GPUs", "4 × 8 × 4 = 128", "12 (4 + 8)")


def test_zero_grad_bug() -> None:
    rng = np.random.default_rng(0)
    w = rng.normal(size=3)
    batches = [(rng.normal(size=(8, 3)), rng.normal(size=8)) for _ in range(4)]
    # the loop of the question: backward adds into .grad, zero_grad after every micro-batch
    grad = np.zeros(3)
    stepped = None
    for i, (x, y) in enumerate(batches):
        grad = grad + mse_grad(w, x, y) / 4
        if (i + 1) % 4 == 0:
            stepped = grad.copy()
        grad = np.zeros(3)
    assert stepped is not None
    assert np.allclose(stepped, mse_grad(w, *batches[3]) / 4)  # only the fourth, a quarter
    combined = mse_grad(w, np.concatenate([b[0] for b in batches]),
                        np.concatenate([b[1] for b in batches]))
    assert not np.allclose(stepped, combined)
    # the fix, zero_grad only after the step: the mean over the combined batch
    assert np.allclose(sum(mse_grad(w, x, y) / 4 for x, y in batches), combined)
    says("ga-zero-grad-bug", "details", "divided by 4", "a 4x smaller learning rate")


def batchnorm(x: np.ndarray) -> np.ndarray:
    return np.asarray((x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + 1e-5))


def test_batchnorm_micro_batches() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(32, 5))
    per_micro = np.concatenate([batchnorm(x[i:i + 8]) for i in range(0, 32, 8)])
    assert not np.allclose(per_micro, batchnorm(x))  # 8-sample statistics differ
    assert 4 * 8 == 32
    # equal micro-batches, each loss divided by 4: the same mean as over all samples
    losses = rng.normal(size=32)
    assert np.isclose(sum(losses[i:i + 8].mean() / 4 for i in range(0, 32, 8)), losses.mean())
    says("ga-batchnorm-micro-batches", "details", "4 micro-batches of 8", "8-sample",
         "32-sample", "(4 times per optimizer step)", "divided by 4", "1-2 samples")


def test_packing_masks() -> None:
    rows, row_len, mean_len = 8, 2048, 512
    real = rows * mean_len
    assert real == 4096 and real / (rows * row_len) == 0.25
    assert f"{1 - real / (rows * row_len):.0%}" == "75%"
    n = 1000  # sequences in an epoch
    assert n * mean_len / row_len == n / 4
    says("ga-packing-masks", "prompt", "8 sequences", "2048 tokens", "512 tokens",
         "2048-token rows")
    says("ga-packing-masks", "key", "4x fewer rows")
    says("ga-packing-masks", "explanation", "8 × 512 = 4096", "8 × 2048", "75%")
    says("ga-packing-masks", "details", "N rows of 2048", "N × 512 / 2048 = N/4", "4x fewer")
    says("ga-packing-masks", "options", "4x fewer rows")


def test_critical_batch_time() -> None:
    noise, small, large = 1.0, 1.0, 4.0  # in M tokens

    def steps(b: float) -> float:
        return 1 + noise / b  # × S_min

    def tokens(b: float) -> float:
        return 1 + b / noise  # × E_min

    for b in (small, large):
        assert (steps(b) - 1) * (tokens(b) - 1) == pytest.approx(1)
    assert (steps(small), steps(large)) == (2, 1.25)
    assert (tokens(small), tokens(large)) == (2, 5)
    ratio_steps = steps(large) / steps(small)
    assert ratio_steps == 0.625 and f"{1 / ratio_steps:.1f}" == "1.6"
    # accumulation on fixed GPUs: time per step grows with the batch, so time follows tokens
    time = ratio_steps * large / small
    assert time == tokens(large) / tokens(small) == 2.5
    says("ga-critical-batch-time", "prompt", "about 1M tokens", "1M-token", "4x",
         "4M-token")
    says("ga-critical-batch-time", "key", "About 2.5x longer", "1.6x fewer", "4x as long")
    says("ga-critical-batch-time", "explanation", "From 1M to 4M", "from 2 to 1.25 S_min",
         "from 2 to 5 E_min", "2.5x")
    says("ga-critical-batch-time", "details", "0.625 × 4 = 2.5x", "2.5x the compute",
         "1.6x fewer serial steps")
    # distractors: perfect scaling, steps counted as time
    assert large / small == 4
    says("ga-critical-batch-time", "options", "About 4x shorter", "About 1.6x shorter",
         "from 2 S_min to 1.25 S_min")


FIGURE = re.compile(r"\d+(?:[.,]\d+)*(?:e-?\d+)?")


@pytest.mark.parametrize("locale", ["bn", "hi"])
def test_translations_state_the_same_figures(locale: str) -> None:
    """Every figure of an English text appears in the same text in Bengali and Hindi."""
    missing = []
    for qid, q in QUESTIONS.items():
        parts = [("prompt", q["prompt"]), ("explanation", q["explanation"]),
                 ("details", q.get("details") or {}),
                 *((f"option {i + 1}", o) for i, o in enumerate(q.get("options") or ()))]
        for name, texts in parts:
            if not texts:  # a question without details
                continue
            figures = set(FIGURE.findall(texts["en"]))
            found = set(FIGURE.findall(texts.get(locale, "")))
            if figures - found:
                missing.append(f"{qid} {name}: {sorted(figures - found)}")
    assert missing == []
