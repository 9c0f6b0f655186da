"""Recomputes the figures of the lora-and-offloading pack from their inputs.

LoRA's counts follow Hu et al. 2021 (arXiv:2106.09685); NF4, its blocks of 64 and double
quantization (8-bit constants in blocks of 256 with an fp32 scale each) follow Dettmers et al.
2023 (arXiv:2305.14314); ZeRO-Offload's traffic follows Ren et al. 2021 (arXiv:2101.06840). GB
are 1e9 bytes, GB/s 1e9 bytes per second. Each test asserts that the English text states the
figure as the computation rounds it; the last one, that Bengali and Hindi state the same
figures.
"""

from __future__ import annotations

import re

import pytest

from tests.content_numbers.bank import Pack

BANK = Pack("lora-and-offloading")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "lo-param-count", "lo-what-lora-saves", "lo-qlora-precision", "lo-65b-in-4bit",
    "lo-double-quant", "lo-zero-offload", "lo-pcie-cost", "lo-qlora-70b-fit",
    "lo-offload-step-time",
}

GB = 1e9
PCIE4_X16 = 25  # GB/s per direction in practice, as the questions take it
DQ_BITS = 8 / 64 + 32 / (64 * 256)  # double-quantized constants per weight




def test_param_count() -> None:
    d = k = 4096
    r = 16
    lora = d * r + r * k
    assert (d * r, lora, d * k, 2 * lora) == (65_536, 131_072, 16_777_216, 262_144)
    assert f"{lora / (d * k):.2%}" == "0.78%" and f"{d * k / 1e6:.1f}" == "16.8"
    assert round(4 * lora * 32 / 1e6) == 17  # four attention projections, 32 layers
    says("lo-param-count", "prompt", "r = 16", "4096 × 4096")
    says("lo-param-count", "options", "65,536", "16,777,216", "131,072", "262,144")
    says("lo-param-count", "explanation", "4096 × 16", "16 × 4096",
         "2 × 4096 × 16 = 131,072", "0.78%", "16.8 million")
    says("lo-param-count", "details", "d = k = 4096 and r = 16", "65,536 + 65,536",
         "16,777,216", "262,144", "32-layer", "about 17M")


def test_what_lora_saves() -> None:
    n = 7e9
    assert (2 * n / GB, 8 * n / GB, 16 * n / GB) == (14, 56, 112)
    says("lo-what-lora-saves", "explanation", "7B", "14 GB of bf16 gradients",
         "56 GB of fp32 moments")
    says("lo-what-lora-saves", "details", "16 bytes per parameter, 112 GB",
         "(14 GB in bf16)")


def test_qlora_precision() -> None:
    assert 2**4 == 16
    says("lo-qlora-precision", "details", "16 levels", "block of 64 weights")


def test_65b_in_4bit() -> None:
    n = 65e9
    weights = n * 4 / 8 / GB
    constants = n * DQ_BITS / 8 / GB
    assert weights == 32.5 and round(constants) == 1 and round(weights + constants) == 34
    assert f"{DQ_BITS:.3f}" == "0.127" and 32 / 64 == 0.5
    assert (n * 2 / GB, n / GB) == (130, 65)
    assert round(weights + n * 0.5 / 8 / GB) == 37  # fp32 constants, no double quantization
    says("lo-65b-in-4bit", "options", "About 34 GB", "About 130 GB", "About 65 GB",
         "About 37 GB")
    says("lo-65b-in-4bit", "explanation", "65e9 × 4 bits = 32.5 GB", "0.127 bits", "(~1 GB)",
         "48 GB GPU")
    says("lo-65b-in-4bit", "details", "65 billion weights take 32.5 GB", "64 weights",
         "32/64 = 0.5 bits", "per 256 blocks", "0.127 bits", "about 1 GB", "48 GB",
         "130 GB is the bf16 size", "65 GB the 8-bit size",
         "37 GB keeps the block constants in fp32 (0.5 bits per weight)")


def test_double_quant() -> None:
    saving = 0.5 - DQ_BITS
    assert f"{saving:.2f}" == "0.37" and round(65e9 * saving / 8 / GB) == 3
    says("lo-double-quant", "explanation", "64-weight block", "0.5 bits", "blocks of 256",
         "about 0.127 bits")
    says("lo-double-quant", "details", "64-weight blocks", "blocks of 256",
         "8/64 + 32/(64·256) ≈ 0.127", "instead of 0.5", "about 0.37 bits",
         "roughly 3 GB for a 65B")


def test_zero_offload() -> None:
    assert 4 + 4 + 4 == 12  # fp32 master weights and two moments
    says("lo-zero-offload", "details", "12 bytes per parameter", "13B model")


def test_pcie_cost() -> None:
    grads = 2 * 7e9 / GB
    assert grads == 14 and grads / PCIE4_X16 == 0.56
    assert grads / PCIE4_X16 * 10 == pytest.approx(5.6)
    assert grads / PCIE4_X16 / 10 == pytest.approx(0.056)
    assert round(grads / 1.8) == 8  # GB/s behind 1.8 s, about a PCIe 3.0 x8 link
    assert round(16 * 16 * 128 / 130 / 8) == 32  # PCIe 4.0 x16: 16 GT/s × 16 lanes, 128b/130b
    says("lo-pcie-cost", "prompt", "7B", "(14 GB)", "25 GB/s")
    says("lo-pcie-cost", "options", "About 5.6 s", "About 0.56 s", "About 0.056 s",
         "About 1.8 s")
    says("lo-pcie-cost", "explanation", "14 GB / 25 GB/s ≈ 0.56 s")
    says("lo-pcie-cost", "details", "32 GB/s per direction", "20-26 GB/s", "14 GB",
         "about 0.56 s", "about 8 GB/s")


def test_qlora_70b_fit() -> None:
    n, adapters, acts, gpu = 70e9, 200e6, 6, 48
    weights4 = n * 4 / 8 / GB
    constants = n * 0.127 / 8 / GB
    weights = n * (4 + 0.127) / 8 / GB
    assert weights4 == 35 and f"{constants:.1f}" == "1.1" and f"{weights:.1f}" == "36.1"
    adapter_state = (2 + 2 + 8) * adapters / GB
    assert adapter_state == pytest.approx(2.4)
    assert (2 * adapters / GB, 8 * adapters / GB) == (0.4, 1.6)
    total = weights + adapter_state + acts
    assert f"{total:.1f}" == "44.5" and f"{gpu - total:.1f}" == "3.5"
    says("lo-qlora-70b-fit", "prompt", "70B", "48 GB", "0.127 bits", "200M", "6 GB")
    says("lo-qlora-70b-fit", "key", "about 3.5 GB spare", "36.1 GB", "2.4 GB", "6 GB")
    says("lo-qlora-70b-fit", "explanation", "70e9 × 4.127 bits ≈ 36.1 GB",
         "12 bytes × 200M = 2.4 GB", "44.5 GB, 3.5 GB under 48")
    says("lo-qlora-70b-fit", "details", "70e9 × 4 bits = 35 GB", "70e9 × 0.127 bits ≈ 1.1 GB",
         "(0.4 GB)", "(1.6 GB)", "36.1 + 2.4 + 6 = 44.5 GB", "about 3.5 GB")
    # distractors: 8 bits per weight, the constants and adapter state forgotten, the
    # optimizer on the frozen base
    assert n / GB == 70
    forgot = gpu - (weights4 + 2 * adapters / GB + acts)
    assert f"{forgot:.1f}" == "6.6"
    assert 8 * n / GB == 560
    says("lo-qlora-70b-fit", "options", "70 GB", "about 6.6 GB spare", "35 GB", "0.4 GB",
         "560 GB")
    says("lo-qlora-70b-fit", "details", "70 GB is the 8-bit size", "6.6 GB spare",
         "560 GB")


def test_offload_step_time() -> None:
    n_b, compute, cpu_per_b = 13, 4.0, 0.15
    fp16 = 2 * n_b  # GB of gradients, and of weights
    transfer = fp16 / PCIE4_X16
    cpu = n_b * cpu_per_b
    assert fp16 == 26 and transfer == 1.04 and cpu == pytest.approx(1.95)
    assert transfer < compute * 2 / 3  # the gradients hide behind backward
    step = compute + cpu + transfer
    assert f"{step:.2f}" == "6.99" and f"{step:.1f}" == "7.0"
    assert f"{compute / step:.0%}" == "57%" and f"{1 - compute / step:.0%}" == "43%"
    says("lo-offload-step-time", "prompt", "13B", "4 s", "0.15 s per billion", "25 GB/s")
    says("lo-offload-step-time", "key", "About 7.0 s", "4 s of compute", "1.95 s",
         "1.04 s")
    says("lo-offload-step-time", "explanation", "26 GB of gradients",
         "(13 × 0.15 = 1.95 s)", "26 GB of weights back (1.04 s)",
         "4 + 1.95 + 1.04 ≈ 7.0 s", "busy 57%")
    says("lo-offload-step-time", "details", "2 bytes × 13e9 = 26 GB at 25 GB/s is 1.04 s",
         "1.95 s on the CPU", "6.99 s", "idle 43%")
    # distractors: everything hidden, the CPU step hidden, the upload forgotten
    assert f"{compute:.1f}" == "4.0" and f"{compute + transfer:.1f}" == "5.0"
    assert f"{compute + cpu:.1f}" == "6.0"
    says("lo-offload-step-time", "options", "About 4.0 s", "About 5.0 s", "About 6.0 s")
    says("lo-offload-step-time", "details", "4.0 s is what", "5.0 s hides", "6.0 s forgets")


FIGURE = re.compile(r"\d+(?:[.,]\d+)*(?:e-?\d+)?")
# millions said in crores (1e7), as Bengali and Hindi readers count: (question, part) -> the
# English figure and the one the translation states instead
CRORE = {("lo-param-count", "explanation"): ("16.8", f"{16.8e6 / 1e7:.2f}"),
         ("lo-param-count", "details"): ("17", f"{17e6 / 1e7:.1f}")}


def test_crores_are_the_millions() -> None:
    assert CRORE[("lo-param-count", "explanation")][1] == "1.68"
    for (qid, part), (_, crores) in CRORE.items():
        for locale, word in (("bn", "কোটি"), ("hi", "करोड़")):
            assert f"{crores} {word}" in text(qid, part, locale)


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
            if (qid, name) in CRORE:
                million, crores = CRORE[(qid, name)]
                if crores in found:
                    found.add(million)
            if figures - found:
                missing.append(f"{qid} {name}: {sorted(figures - found)}")
    assert missing == []
