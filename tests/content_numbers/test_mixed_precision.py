"""Recomputes the figures of the mixed-precision pack from their inputs.

Format limits come from the IEEE-style layouts (fp16 1-5-10, bf16 1-8-7, fp32 1-8-23) and are
checked against numpy's float16 and a bf16 made by rounding float32 bits; GradScaler's
defaults are PyTorch's (init_scale 2^16, backoff 0.5, growth 2, growth_interval 2000). GB are
1e9 bytes. Each test asserts that the English text states the figure as the computation
rounds it; the last one, that Bengali and Hindi state the same figures.
"""

from __future__ import annotations

import math
import re
import struct

import numpy as np
import pytest

from tests.content_numbers.bank import Pack

BANK = Pack("mixed-precision")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "mp-bf16-vs-fp16", "mp-loss-scaling-why", "mp-dynamic-scaling", "mp-master-weights",
    "mp-autocast-fp32-ops", "mp-memory-savings", "mp-clip-after-unscale", "mp-pure-bf16",
    "mp-fit-amp-budget", "mp-scaler-always-skips",
}

FP16 = np.finfo(np.float16)
GB = 1e9




def bf16(x: float) -> float:
    """x rounded to bfloat16 (round to nearest even on the float32 bits)."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


def test_bf16_vs_fp16() -> None:
    assert float(FP16.max) == 65504 == (2 - 2**-10) * 2**15
    assert float(FP16.tiny) == 2**-14 and f"{2**-14:.0e}" == "6e-05"
    assert float(FP16.smallest_subnormal) == 2**-24 and f"{2**-24:.0e}" == "6e-08"
    assert f"{2**-25:.0e}" == "3e-08"
    assert float(np.float16(2**-25 * 0.99)) == 0.0  # below half the smallest value
    assert f"{2**-126:.0e}" == "1e-38"  # bf16's smallest normal is fp32's
    # significant decimal digits: (mantissa bits + 1) × log10 2
    assert math.floor(8 * math.log10(2)) == 2 and math.floor(11 * math.log10(2)) == 3
    says("mp-bf16-vs-fp16", "explanation", "8 exponent bits", "~1e-38", "has 5",
         "~3e-8 (half of 2^-24)")
    says("mp-bf16-vs-fp16", "details", "fp32 1-8-23, fp16 1-5-10, bf16 1-8-7",
         "about 2-3 significant", "fp16 about 3-4", "1e-38", "65504", "2^-14 ≈ 6e-5",
         "2^-24 ≈ 6e-8", "about 3e-8")


def test_loss_scaling_why() -> None:
    assert 2**16 == 65536
    says("mp-loss-scaling-why", "details", "2^-24", "2^16")


def test_dynamic_scaling() -> None:
    says("mp-dynamic-scaling", "options", "65504")
    says("mp-dynamic-scaling", "explanation", "×0.5", "2000 clean steps", "(×2)")
    says("mp-dynamic-scaling", "details", "65536 (2^16)", "2000 consecutive", "65504")


def test_master_weights() -> None:
    one = np.float16(1.0)
    assert float(np.nextafter(one, np.float16(2)) - one) == 2**-10
    assert f"{2**-10:.3f}" == "0.001"
    assert one + np.float16(1e-5) == one and one + np.float16(0.0001) == one
    assert np.float32(1.0) + np.float32(1e-5) != np.float32(1.0)
    says("mp-master-weights", "explanation", "2^-10 ≈ 0.001", "1e-5")
    says("mp-master-weights", "details", "1.0 + 0.0001 is still 1.0", "4 bytes",
         "(2 + 2)", "(8)", "about 16 bytes")
    assert 2 + 2 + 4 + 8 == 16


def test_autocast_fp32_ops() -> None:
    assert round(math.log(65504), 1) == 11.1
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.float16(11.2)))  # past the maximum
    says("mp-autocast-fp32-ops", "explanation", "~11.1", "e^11.1 ≈ 65504")


def test_memory_savings() -> None:
    fp32_adam = 4 + 4 + 8
    mixed = 2 + 2 + 4 + 8
    assert fp32_adam == mixed == 16
    says("mp-memory-savings", "explanation", "~16 bytes")
    says("mp-memory-savings", "details", "4 (weights) + 4 (gradients) + 8 (two moments) = 16",
         "2 (fp16 weights) + 2 (fp16 gradients) + 4 (fp32 master weights) + 8 (fp32 moments) "
         "= 16")
    says("mp-memory-savings", "options", "2 bytes per parameter instead of 4")


def test_clip_after_unscale() -> None:
    says("mp-clip-after-unscale", "explanation", "(e.g. 65536)")
    says("mp-clip-after-unscale", "details", "max_norm = 1.0", "1/S")


def test_pure_bf16() -> None:
    assert bf16(1.0 + 2**-7) - 1.0 == 2**-7 and f"{2**-7:.3f}" == "0.008"
    assert bf16(1.0 + 1e-4) == 1.0 and bf16(1.0 + 2**-9) == 1.0
    says("mp-pure-bf16", "explanation", "8 bits of precision", "2^-7 ≈ 0.008", "1e-4")
    says("mp-pure-bf16", "details", "7 mantissa bits plus an implicit leading 1", "65504")
    says("mp-pure-bf16", "options", "about 65504", "8 bits of precision")


def test_fit_amp_budget() -> None:
    n, gpu, sample, overhead = 3e9, 80, 6, 3
    state = (4 + 4 + 8) * n / GB
    copies = 2 * n / GB
    free = gpu - state - copies - overhead
    assert (state, copies, free) == (48, 6, 23)
    assert int(free // sample) == 3
    says("mp-fit-amp-budget", "prompt", "3B", "80 GB", "6 GB", "3 GB")
    says("mp-fit-amp-budget", "key", "3: 48 GB", "6 GB of bf16", "3 GB leave 23 GB")
    says("mp-fit-amp-budget", "explanation", "16 bytes × 3e9 = 48 GB", "(6 GB)",
         "80 − 57 = 23 GB", "3 samples fit, 4 do not")
    says("mp-fit-amp-budget", "details", "4 + 4 + 8 = 16 bytes", "2 bytes × 3e9 = 6 GB",
         "48 + 6 + 3 = 57 GB leaves 23 GB", "3 × 6 = 18 GB", "4 × 6 = 24 GB")
    # the distractors: no weight copies; bf16 moments; bf16 weights and gradients (which
    # would need no copies)
    for bytes_per_param, copies_gb, label, left, fits in (
            (16, 0, "4: 48 GB", 29, 4), (4 + 4 + 4, 6, "5:", 35, 5), (2 + 2 + 8, 0, "6:", 41, 6)):
        room = gpu - bytes_per_param * n / GB - copies_gb - overhead
        assert room == left and int(room // sample) == fits
        says("mp-fit-amp-budget", "options", label)
        says("mp-fit-amp-budget", "details", f"{left} GB and {fits}")
    says("mp-fit-amp-budget", "options", "leave 29 GB", "12 GB, not 24", "state is 36 GB")
    assert 12 + 12 + 12 == 36 and 4 * n / GB == 12


def test_scaler_always_skips() -> None:
    scale = 65536.0
    for _ in range(30):
        scale *= 0.5
    assert scale == 2**-14 and f"{scale:.0e}" == "6e-05" and f"{scale:.1e}" == "6.1e-05"
    assert 65536 / 2**16 == 1
    says("mp-scaler-always-skips", "prompt", "65536", "about 6e-5 after 30 steps")
    says("mp-scaler-always-skips", "explanation", "6e-5", "above 65504")
    says("mp-scaler-always-skips", "details", "65536 / 2^30 = 2^-14 ≈ 6.1e-5",
         "already 1 after 16 halvings", "2000 clean steps", "above 65504")
    says("mp-scaler-always-skips", "options", "65536", "start at 1")


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
