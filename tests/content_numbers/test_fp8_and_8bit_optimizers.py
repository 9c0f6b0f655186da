"""Recomputes the figures of the fp8-and-8bit-optimizers pack from their inputs.

FP8 limits follow Micikevicius et al. 2022 (arXiv:2209.05433): E4M3 has bias 7 and no
infinities (its all-ones mantissa at the top exponent is NaN), E5M2 is IEEE-like with bias 15.
8-bit optimizer state follows Dettmers et al. 2022 (arXiv:2110.02861): 1 byte per value, one
fp32 scale per block of 2048. H100 SXM peaks are NVIDIA's data sheet (dense). The trace of
f8-trace-speedup is read from its SVG. GB are 1e9 bytes. Each test asserts that the English text
states the figure as the computation rounds it; the last one, that Bengali and Hindi state the
same figures.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import BUNDLED
from tests.content_numbers.bank import Pack

BANK = Pack("fp8-and-8bit-optimizers")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says
TRACE = BUNDLED / "images" / "fp8-and-8bit-optimizers-trace.svg"

CHECKED: set[str] = {
    "f8-formats", "f8-scale", "f8-speedup", "f8-eight-bit-adam-memory", "f8-block-wise",
    "f8-accumulation", "f8-trace-speedup", "f8-fit-8bit-adam",
}

H100_BF16 = 989  # dense TFLOP/s
H100_FP8 = 1979
GB = 1e9




def fp8_max(exponent_bits: int, mantissa_bits: int, ieee: bool) -> float:
    bias = 2 ** (exponent_bits - 1) - 1
    if ieee:  # the top exponent holds inf and NaN
        return float((2 - 2.0**-mantissa_bits) * 2.0 ** (2**exponent_bits - 2 - bias))
    # E4M3: the top exponent is used, only its all-ones mantissa is NaN
    return float((2 - 2.0 ** -(mantissa_bits - 1)) * 2.0 ** (2**exponent_bits - 1 - bias))


def fp8_min_subnormal(exponent_bits: int, mantissa_bits: int) -> float:
    bias = 2 ** (exponent_bits - 1) - 1
    return float(2.0 ** (1 - bias - mantissa_bits))


def test_formats() -> None:
    assert fp8_max(4, 3, ieee=False) == 448 and fp8_max(5, 2, ieee=True) == 57344
    assert fp8_min_subnormal(4, 3) == 2**-9 and fp8_min_subnormal(5, 2) == 2**-16
    assert 1 + 4 + 3 == 1 + 5 + 2 == 8
    says("f8-formats", "key", "57344")
    says("f8-formats", "explanation", "(4 exponent, 3 mantissa bits)", "448", "57344")
    says("f8-formats", "details", "4 bits on the exponent and 3 on the mantissa",
         "largest normal value 448", "2^-9", "5 and 2", "57344", "2^-16", "same 5 exponent",
         "which has 8")


def test_scale() -> None:
    amax, e4m3, e5m2 = 3584, 448, 57344
    assert e4m3 / amax == 0.125 and amax * 0.125 == e4m3
    assert amax * 0.5 == 1792 > e4m3
    assert amax / e4m3 == 8  # the inverse
    assert e5m2 / amax == 16 and amax * 16 == e5m2  # E5M2's scale, not E4M3's
    says("f8-scale", "prompt", "3584", "448")
    says("f8-scale", "options", "8", "16", "0.5", "0.125")
    says("f8-scale", "explanation", "448 / 3584 = 1/8")
    says("f8-scale", "details", "3584·0.125 = 448", "0.5 would give 1792",
         "16 = 57344/3584 would suit E5M2", "8 is the inverse")


def test_speedup() -> None:
    assert round(H100_FP8 / H100_BF16) == 2 and 16 / 8 == 2 and 32 / 8 == 4
    says("f8-speedup", "key", "2x: about 1979 against 989")
    says("f8-speedup", "options", "4x", "1.3x")
    says("f8-speedup", "explanation", "989 dense", "1979 in FP8", "1.3-1.5x")
    says("f8-speedup", "details", "989 dense bf16", "1979 dense FP8", "2:4 sparsity",
         "gives 2x, not 4x", "1.3-1.5x")


def test_eight_bit_adam_memory() -> None:
    n = 7e9
    fp32, q8 = 8 * n / GB, 2 * n / GB
    assert (fp32, q8, fp32 - q8) == (56, 14, 42)
    scales = 2 * 4 / 2048  # two states, one fp32 scale per block of 2048
    assert f"{scales:.3f}" == "0.004"
    assert (4 * n - 1 * n) / GB == 21 and (4 * n / GB, 1 * n / GB) == (28, 7)
    assert 12 * n / GB == 84 > fp32  # master weights and both moments: more than the states
    assert 16 - 8 + 2 == 10
    says("f8-eight-bit-adam-memory", "prompt", "7B")
    says("f8-eight-bit-adam-memory", "options", "About 42 GB", "About 14 GB", "About 21 GB",
         "About 84 GB")
    says("f8-eight-bit-adam-memory", "explanation", "8 bytes per parameter (56 GB)",
         "take 2 (14 GB", "56 - 14 = 42 GB")
    says("f8-eight-bit-adam-memory", "details", "8 bytes × 7e9 = 56 GB", "block of 2048",
         "(14 GB)", "about 0.004 bytes", "21 GB", "(28 - 7)", "84 GB",
         "about 16 to about 10 bytes")


def test_block_wise() -> None:
    assert 2**8 == 256
    says("f8-block-wise", "prompt", "2048 values")
    says("f8-block-wise", "explanation", "256 codes", "2048 values")


def test_accumulation() -> None:
    # the report's measurements, as it states them
    says("f8-accumulation", "prompt", "about 14 bits")
    says("f8-accumulation", "key", "every 128 products")
    says("f8-accumulation", "options", "14 elements")
    says("f8-accumulation", "explanation", "intervals of 128 elements")
    says("f8-accumulation", "details", "about 14 bits", "near 2% for K = 4096",
         "interval of 128 elements", "14 elements")
    assert 4096 // 128 == 32  # promotions per dot product of K = 4096


def trace_kernels() -> list[tuple[str, float, str]]:
    """(name, ms, colour) of each kernel in the SVG's table, in order, and each block's
    width in the timeline checked against it."""
    ns = {"s": "http://www.w3.org/2000/svg"}
    root = ET.parse(TRACE).getroot()
    blocks = [r for r in root.iterfind("s:rect", ns) if r.get("y") == "52"
              and r.get("fill") != "#f2f2f2"]
    texts = [t for t in root.iterfind("s:text", ns) if t.get("font-size") == "11"]
    rows: dict[str, dict[str, str]] = {}
    for t in texts:
        rows.setdefault(t.get("y", ""), {})[t.get("x", "")] = t.text or ""
    kernels = []
    for y in sorted(rows, key=float):
        row = rows[y]
        if row.get("56", "").isdigit() and "72" in row and "300" in row:
            kernels.append((row["72"], float(row["300"])))
    assert len(blocks) == len(kernels) == 8
    out = []
    for block, (name, ms) in zip(blocks, kernels, strict=True):
        assert float(block.get("width", "0")) == pytest.approx(ms * 18)  # 18 px per ms
        out.append((name, ms, block.get("fill", "")))
    return out


def test_trace_speedup() -> None:
    kernels = trace_kernels()
    gemm = sum(ms for name, ms, _ in kernels if "GEMM" in name)
    attention = sum(ms for name, ms, _ in kernels if "Attention" in name)
    total = sum(ms for _, ms, _ in kernels)
    rest = total - gemm - attention
    assert (total, gemm, attention, rest) == (30, 20, 6, 4)
    casts = 4 * 0.5
    fp8 = gemm / 2 + attention + rest + casts
    assert fp8 == 22 and f"{total / fp8:.2f}" == "1.36"
    says("f8-trace-speedup", "prompt", "four linear layers", "0.5 ms")
    says("f8-trace-speedup", "key", "About 1.36x")
    says("f8-trace-speedup", "explanation", "20 of the 30 ms", "they take 10",
         "2 ms of casts", "(6 ms)", "(4 ms)", "30 / 22 ≈ 1.36x")
    says("f8-trace-speedup", "details", "3 + 2 + 10 + 5 = 20 ms", "FlashAttention 6 ms",
         "1 + 1.5 + 1.5 = 4 ms", "4 × 0.5 = 2 ms", "10 + 6 + 4 + 2 = 22 ms", "1.3-1.5x")
    # distractors: the FP8 peak on everything, no casts, attention halved too
    assert total / (total / 2) == 2 and total / (gemm / 2 + attention + rest) == 1.5
    no_casts = gemm / 2 + attention + rest
    attention_halved = (gemm + attention) / 2 + rest + casts
    assert (no_casts, attention_halved) == (20, 19)
    assert f"{total / attention_halved:.2f}" == "1.58"
    says("f8-trace-speedup", "options", "About 2x", "About 1.5x", "About 1.58x")
    says("f8-trace-speedup", "details", "1.5x (30 / 20)", "1.58x (30 / 19)")


def test_fit_8bit_adam() -> None:
    n, gpu, acts = 7e9, 80, 4
    weights = grads = 2 * n / GB
    moments32, moments8 = 8 * n / GB, 2 * n / GB
    assert (weights, moments32, moments8) == (14, 56, 14)
    assert weights + grads + moments32 + acts == 88 > gpu
    assert (2 + 2 + 8) * n / GB == 84
    assert weights + grads + moments8 + acts == 46
    scales_mb = n / 2048 * 2 * 4 / 1e6
    assert round(scales_mb) == 27
    says("f8-fit-8bit-adam", "prompt", "7B", "80 GB", "4 GB")
    says("f8-fit-8bit-adam", "key", "88 GB", "about 46 GB")
    says("f8-fit-8bit-adam", "explanation", "2 + 2 + 8 bytes × 7e9 = 84 GB", "4 GB",
         "88 GB", "2 bytes per parameter, 14 GB instead of 56", "14 + 14 + 14 + 4 = 46 GB")
    says("f8-fit-8bit-adam", "details", "14 GB", "56 GB", "88 GB, over 80", "block of 2048",
         "about 27 MB", "46 GB in all")
    # distractors: the gradients forgotten, accumulation "dividing" the gradients by 4
    assert weights + moments32 + acts == 74
    assert grads / 4 == 3.5
    says("f8-fit-8bit-adam", "options", "about 74 GB", "4 micro-batches", "3.5 GB")
    says("f8-fit-8bit-adam", "details", "74 GB forgets the 14 GB", "stay at 14 GB")
    # an fp32 master copy on top of the 8-bit states still fits
    master = 4 * n / GB
    assert master == 28 and weights + grads + moments8 + acts + master == 74 < gpu
    says("f8-fit-8bit-adam", "details", "4 bytes per parameter, 28 GB", "fit at 74 GB")


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
