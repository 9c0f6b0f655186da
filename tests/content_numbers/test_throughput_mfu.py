"""Recomputes the figures of the throughput-mfu pack from their inputs.

FLOPs per token follow Kaplan et al. 2020 (arXiv:2001.08361): 2N forward, 4N backward; MFU
and HFU follow Chowdhery et al. 2022 (arXiv:2204.02311), appendix B. Byte counts are bf16
(2 bytes per value); MB and GB are 1e6 and 1e9 bytes. Each test asserts that the English text
states the figure as the computation rounds it, and the Bengali and Hindi texts state the
same figures.
"""

from __future__ import annotations

import re

import pytest

from tests.content_numbers.bank import Pack

BANK = Pack("throughput-mfu")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "tp-mfu-definition", "tp-mfu-compute", "tp-ridge-point", "tp-which-memory-bound",
    "tp-batch-efficiency", "tp-vocab-padding", "tp-hfu-vs-mfu", "tp-six-n",
    "tp-days-goodput", "tp-packing-mfu",
}

A100_BF16 = 312e12  # dense bf16 FLOP/s
A100_HBM = 2e12  # bytes/s, rounded as the prompt rounds it
H100_BF16 = 989e12
H100_SPARSE = 1979e12
H100_HBM = 3.35e12
DAY = 86400




def pct(x: float) -> str:
    return f"{x:.0%}"


def test_mfu_definition() -> None:
    # 2N forward + 4N backward; PaLM 540B's reported MFU
    assert 2 + 4 == 6
    says("tp-mfu-definition", "explanation", "about 6N")
    says("tp-mfu-definition", "details", "46.2% MFU for its 540B", "35-55%", "100%")


def test_mfu_compute() -> None:
    n, tokens = 7e9, 3000
    achieved = tokens * 6 * n
    assert achieved == pytest.approx(1.26e14)
    says("tp-mfu-compute", "explanation", "3000 × 6 × 7e9 = 1.26e14", "3.12e14",
         f"≈ {achieved / A100_BF16:.2f}")
    says("tp-mfu-compute", "key", f"About {achieved / A100_BF16:.0%}")
    says("tp-mfu-compute", "details", f"6N = {6 * n:.1e}".replace("e+10", "e10"), "1.26e14",
         "40% of 312")
    # the distractors: 2N (forward only), 8N (an extra forward: HFU), 12N (doubled)
    for flops, label in ((2, "13%"), (8, "54%"), (12, "81%")):
        assert pct(tokens * flops * n / A100_BF16) == label
        says("tp-mfu-compute", "options", f"About {label}")
        says("tp-mfu-compute", "details", label)


def test_ridge_point() -> None:
    ridge = A100_BF16 / A100_HBM
    assert round(ridge) == 156
    says("tp-ridge-point", "key", "About 156")
    says("tp-ridge-point", "explanation", "312e12 / 2e12 ≈ 156")
    says("tp-ridge-point", "details", f"about {round(H100_BF16 / H100_HBM)}", "989", "3.35")
    # off by ten each way, and the inverse ratio
    assert (round(ridge / 10), round(ridge * 10)) == (16, 1560)
    assert f"{A100_HBM / A100_BF16:.3f}" == "0.006"
    says("tp-ridge-point", "options", "About 16", "About 1560", "About 0.006")
    # elementwise bf16: 1 FLOP per 4 bytes (read and write 2 bytes); matmul n/3 per byte
    n = 3000
    assert 2 * n**3 / (3 * n * n * 2) == n / 3
    says("tp-ridge-point", "details", "1 FLOP per 4 bytes", "n/3 FLOPs per byte")


def test_which_memory_bound() -> None:
    n = 4096
    square = 2 * n**3 / (3 * n * n * 2)
    assert f"{2 * n**3:.1e}" == "1.4e+11" and round(square) == 1365
    assert n * n * 2 / 2**20 == 32  # MiB, written "32 MB"
    says("tp-which-memory-bound", "details", "2·4096³ = 1.4e11", "3 × 32 MB",
         f"about {round(square)} FLOPs per byte")
    t, k, m = 8192, 4096, 16384
    mlp = 2 * t * k * m / (2 * (t * k + k * m + t * m))
    assert round(mlp) == 2341
    says("tp-which-memory-bound", "details", f"about {round(mlp)}")
    hw, c = 56, 256
    conv_flops = 2 * hw * hw * c * c * 9
    conv_bytes = 2 * (2 * hw * hw * c + c * c * 9)  # input, output, 3x3 weights
    assert f"{conv_flops:.1e}" == "3.7e+09" and f"{conv_bytes / 1e6:.1f}" == "4.4"
    assert round(conv_flops / conv_bytes, -1) == 840
    says("tp-which-memory-bound", "details", "≈ 3.7e9", "about 4.4 MB", "about 840")
    ln = t * k * 2 / 2**20
    assert ln == 64
    # 5-8 FLOPs per element over 4 bytes moved (read and write)
    assert 8 / 4 < 4
    says("tp-which-memory-bound", "details", "reads 64 MB and writes 64 MB", "5-8 FLOPs",
         "under 4 FLOPs per byte")
    says("tp-which-memory-bound", "explanation", "~156")


def test_batch_efficiency() -> None:
    # 2·T·d² FLOPs on 2·d² bytes of weights: T FLOPs per byte, the ridge at T ≈ 156
    d, tokens = 4096, 156
    assert 2 * tokens * d * d / (2 * d * d) == pytest.approx(A100_BF16 / A100_HBM, rel=0.01)
    says("tp-batch-efficiency", "details", "2·T·d² FLOPs", "2·d² bytes", "about 156")
    says("tp-batch-efficiency", "prompt", "from 1 to 8")


def test_vocab_padding() -> None:
    assert 50304 % 64 == 0 and 50304 // 64 == 786 and 50257 % 2 == 1
    assert 50304 - 50257 == 47 and (2**15, 2**16) == (32768, 65536)
    assert -(-50257 // 64) * 64 == 50304  # the next multiple of 64
    says("tp-vocab-padding", "explanation", "50304 = 64 × 786")
    says("tp-vocab-padding", "details", "adds 47 rows", "2^15 = 32768", "2^16 = 65536",
         "multiples of 8", "of 64 or 128", "about a 25% speed-up")


def test_hfu_vs_mfu() -> None:
    hfu = 0.52
    mfu = hfu * 6 / 8
    assert pct(mfu) == "39%"
    says("tp-hfu-vs-mfu", "key", "39%")
    says("tp-hfu-vs-mfu", "explanation", "8N FLOPs", "6N", "52% × 0.75 = 39%")
    # distractors: no recomputation, multiplied, both passes twice (12N); backward alone 10N
    assert pct(hfu * 8 / 6) == "69%" and pct(hfu * 6 / 12) == "26%"
    assert pct(hfu * 6 / 10) == "31%"
    says("tp-hfu-vs-mfu", "options", "52%", "69%", "26%")
    says("tp-hfu-vs-mfu", "details", "52% would ignore", "69% multiplies", "(12N executed",
         "10N, would give 31%", "MFU × 8/6")


def test_six_n() -> None:
    forward, backward = 2, 2 + 2  # multiply-add; input and weight gradients
    assert forward + backward == 6 and 6 + 2 == 8
    says("tp-six-n", "key", "2N forward; 4N backward")
    says("tp-six-n", "explanation", "(2N)", "4N")
    says("tp-six-n", "details", "2 FLOPs", "4 FLOPs per weight", "C ≈ 6N·D",
         "(8N with a full extra forward)")


def test_days_goodput() -> None:
    n, tokens, gpus, mfu, goodput = 70e9, 2e12, 1024, 0.45, 0.90
    flops = 6 * n * tokens
    rate = gpus * H100_BF16 * mfu
    useful = flops / rate
    assert f"{flops:.1e}" == "8.4e+23" and f"{rate:.2e}" == "4.56e+17"
    assert f"{useful:.2e}" == "1.84e+06"
    days = useful / DAY
    assert f"{days:.1f}" == "21.3" and f"{days / goodput:.1f}" == "23.7"
    says("tp-days-goodput", "key", f"About {days / goodput:.0f} days")
    says("tp-days-goodput", "explanation", "= 8.4e23", "= 4.56e17", "1.84e6 s", "21.3 days",
         "21.3 / 0.9 ≈ 23.7")
    says("tp-days-goodput", "details", "8.4e23", "4.56e17", "21.3 days", "23.7 days")
    # distractors: no lost time, multiplied by the goodput, the sparsity peak
    assert round(days) == 21 and round(days * goodput) == 19
    assert round(flops / (gpus * H100_SPARSE * mfu) / DAY) == 11
    says("tp-days-goodput", "options", "About 21 days", "About 19 days", "About 11 days")
    says("tp-days-goodput", "details", "21 days ignores", "19 days multiplies",
         "11 days uses the 1979")


def test_packing_mfu() -> None:
    logged, real, row = 0.48, 600, 2048
    assert pct(logged * real / row) == "14%" and f"{logged * real / row:.1%}" == "14.1%"
    says("tp-packing-mfu", "key", "About 14%", "600 of 2048")
    says("tp-packing-mfu", "explanation", "48% × 600/2048 ≈ 14%")
    says("tp-packing-mfu", "details", "= 14.1%", f"{1 - real / row:.0%} of that work")
    # distractors: 29% taken for the pad share, the real share itself, pads counted
    assert pct(real / row) == "29%" and pct(logged * (1 - real / row)) == "34%"
    says("tp-packing-mfu", "options", "About 34%", "About 29%", "About 48%")


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
