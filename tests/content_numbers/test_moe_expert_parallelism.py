"""Recomputes the figures of the moe-expert-parallelism pack from their inputs.

Expert capacity follows Fedus et al. 2022 (arXiv:2101.03961): tokens / experts × capacity
factor; Mixtral's sizes are Jiang et al. 2024 (arXiv:2401.04088); hidden states cross the
all-to-all in bf16 (2 bytes). MB is 1e6 bytes, KiB 1024. Each test asserts that the English
text states the figure as the computation rounds it, and the Bengali and Hindi texts state the
same figures.
"""

from __future__ import annotations

import re

import pytest

from tests.content_numbers.bank import Pack

BANK = Pack("moe-expert-parallelism")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "moe-active-params", "moe-capacity", "moe-overflow", "moe-balance-loss",
    "moe-where-experts-live", "moe-gradient-sync", "moe-dropless", "moe-hot-expert",
    "moe-dispatch-volume",
}

MB = 1e6




def capacity(tokens: int, experts: int, factor: float) -> float:
    return tokens / experts * factor


def test_active_params() -> None:
    total, active, experts, k = 46.7e9, 12.9e9, 8, 2
    # shared + experts·e = total, shared + k·e = active
    expert = (total - active) / (experts - k)
    shared = total - experts * expert
    assert f"{expert / 1e9:.1f}" == "5.6" and f"{shared / 1e9:.1f}" == "1.6"
    assert round(active / 1e9) == 13 and round(total / 1e9) == 47
    says("moe-active-params", "key", "About 13B")
    says("moe-active-params", "explanation", "2 of 8 experts", "about 12.9B active")
    says("moe-active-params", "details", "46.7B total and 12.9B active", "far smaller than 56B")
    assert 8 * 7 == 56
    # the distractors: every expert, one expert's share alone, half the model
    assert round(expert / 1e9) == 6 and round(round(total / 1e9) / 2) == 24  # half of 47B
    says("moe-active-params", "options", "About 47B", "About 6B", "About 24B")
    says("moe-active-params", "details", "47B would be the case if every expert ran",
         "about 6B is one expert's share", "24B is simply half")


def test_capacity() -> None:
    tokens, experts, factor = 1024, 8, 1.25
    assert capacity(tokens, experts, factor) == 160 and tokens / experts == 128
    says("moe-capacity", "key", "160")
    says("moe-capacity", "explanation", "1.25 × 1024 / 8 = 160", "128 would be")
    assert 160 - 128 == 32
    says("moe-capacity", "details", "32 extra slots", "128 is the perfectly even share")
    # the distractors: no division by the experts, division by the factor
    assert tokens * factor == 1280 and round(tokens / experts / factor) == 102
    says("moe-capacity", "options", "1280", "102")
    says("moe-capacity", "details", "1280 multiplies 1024 by 1.25", "102 divides by 1.25",
         "1.0 to 1.25")


def test_overflow() -> None:
    says("moe-overflow", "details", "a capacity factor of about 1.25")


def test_balance_loss() -> None:
    # the Switch Transformer's coefficient α = 10^-2; uniform routing minimises N·Σ fᵢ·Pᵢ
    n = 8
    uniform = n * sum((1 / n) * (1 / n) for _ in range(n))
    skewed = n * (1.0 * 1.0)  # every token and all probability on one expert
    assert uniform == pytest.approx(1) and skewed > uniform
    says("moe-balance-loss", "details", "α around 0.01")


def test_where_experts_live() -> None:
    experts, ep = 64, 8
    assert experts // ep == 8
    says("moe-where-experts-live", "key", "Each GPU holds 8 whole experts")
    says("moe-where-experts-live", "explanation", "(64 / 8 = 8 each)")
    says("moe-where-experts-live", "options", "a 1/8 slice of the 64 experts")


def test_gradient_sync() -> None:
    gpus, ep = 64, 8
    replicas = gpus // ep
    assert replicas == 8 and gpus * 8 == 512
    says("moe-gradient-sync", "key", "8: the GPUs with a copy of that expert")
    says("moe-gradient-sync", "explanation", "8 expert-parallel groups of 8", "64 / 8 = 8")
    says("moe-gradient-sync", "options", "64: every GPU", "1: an expert",
         "512: all 8 experts on each of the 64")
    says("moe-gradient-sync", "details", "8 GPUs", "over all 64", "512 counts expert slots")


def test_dropless() -> None:
    # a capacity factor of 2 pads every expert to twice its even share
    tokens, experts = 1024, 8
    assert capacity(tokens, experts, 2) == 2 * tokens / experts
    says("moe-dropless", "options", "fixes the capacity factor at 2")
    says("moe-dropless", "details", "a capacity factor of 2 still drops tokens under skew and "
         "doubles padding")


def test_hot_expert() -> None:
    tokens, experts, factor, hot = 8192, 8, 1.25, 3200
    mean, slots = tokens / experts, capacity(tokens, experts, factor)
    assert (mean, slots) == (1024, 1280)
    dropped = hot - slots
    assert dropped == 1920 and f"{dropped / hot:.0%}" == "60%"
    says("moe-hot-expert", "prompt", "8192 tokens", "1024 each", "1.25", "3200 tokens")
    says("moe-hot-expert", "key", "60%: all 8 experts get 1280 slots")
    says("moe-hot-expert", "explanation", "1.25 × 8192/8 = 1280", "3200 - 1280 = 1920",
         "60%")
    assert hot / mean == 3.125 and f"{hot / mean:.1f}" == "3.1"
    says("moe-hot-expert", "details", "1280 for every expert", "3.125 times the mean",
         "1920 of its tokens (60%)", "3.1 times the mean work", "α ≈ 0.01")
    # the distractors: the slack share, capacity from the expert's own count, the kept share
    assert f"{1 - 1 / factor:.0%}" == "20%" and f"{slots / hot:.0%}" == "40%"
    assert factor * hot == 4000 > hot
    says("moe-hot-expert", "options", "20%: 1 - 1/1.25", "1.25 × its own 3200",
         "40% (1280 / 3200)")
    # a factor fitting the hot expert pads all 8 to 3200: 2.5 times the even capacity
    assert hot / mean == pytest.approx(3.125) and hot / slots == 2.5
    says("moe-hot-expert", "details", "Raising the factor to 3.125", "pad all 8 experts to 3200",
         "2.5 times the expert compute")


def test_dispatch_volume() -> None:
    gpus, per_node, k, hidden, tokens, ib = 64, 8, 2, 4096, 8192, 50e9
    copies = tokens * k
    vector = hidden * 2
    total = copies * vector
    remote = total * (gpus - per_node) / gpus
    assert copies == 16384 and vector / 1024 == 8
    assert f"{total / MB:.1f}" == "134.2" and f"{remote / MB:.1f}" == "117.4"
    assert (gpus - per_node, (gpus - per_node) / gpus) == (56, 7 / 8)
    assert f"{remote / ib * 1e3:.2f}" == "2.35"
    says("moe-dispatch-volume", "key", "About 117 MB, 2.3 ms", "7/8 of the 16384")
    says("moe-dispatch-volume", "explanation", "8192 tokens × 2 copies × 4096 × 2 bytes = 134 MB",
         "56 of 64", "117 MB, 2.3 ms at 50 GB/s")
    says("moe-dispatch-volume", "details", "16384 hidden vectors of 8 KiB", "134.2 MB",
         "8 of the 64", "56 across", "7/8 × 134.2 = 117.4 MB", "2.35 ms")
    # dispatch and combine, forward and backward
    assert f"{4 * remote / ib * 1e3:.1f}" == "9.4"
    says("moe-dispatch-volume", "details", "4 such transfers", "about 9.4 ms",
         "at most 4 nodes")
    # the distractors: one copy per token, split over the 8 nodes, only indices and gates
    once = tokens * vector * 7 / 8
    assert round(once / MB) == 59 and f"{once / ib * 1e3:.1f}" == "1.2"
    assert round(remote / 8 / MB) == 15 and f"{remote / 8 / ib * 1e3:.1f}" == "0.3"
    side = copies * (4 + 4)  # an int32 index and an fp32 gate value per copy
    assert f"{side / MB:.2f}" == "0.13" and round(side / ib * 1e6) == 3
    says("moe-dispatch-volume", "options", "About 59 MB, 1.2 ms", "About 15 MB, 0.3 ms",
         "About 0.13 MB, 3 µs")


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
