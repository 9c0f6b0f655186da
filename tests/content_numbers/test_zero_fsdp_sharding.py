"""Recomputes the figures of the zero-fsdp-sharding pack from their inputs.

Model state is mixed-precision Adam's 16 bytes per parameter (Rajbhandari et al. 2020,
arXiv:1910.02054): 2 of bf16/fp16 weights, 2 of gradients, 12 of fp32 master weights and two
moments. GB is 1e9 bytes, KiB 1024. Each test asserts that the English text states the figure
as the computation rounds it, and the Bengali and Hindi texts state the same figures.
"""

from __future__ import annotations

import itertools
import re

import pytest

from tests.conftest import BUNDLED
from tests.content_numbers.bank import Pack

BANK = Pack("zero-fsdp-sharding")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "zs-stage1-what", "zs-stage3-memory", "zs-comm-cost", "zs-stage2-gradients",
    "zs-hybrid-shard", "zs-activations-not-sharded", "zs-offload", "zs-fit-8b-budget",
    "zs-trace-exposed-allgather",
}

GB = 1e9
KIB = 1024
WEIGHTS, GRADS, OPTIMIZER = 2, 2, 12  # bytes per parameter
STATE = WEIGHTS + GRADS + OPTIMIZER




def per_gpu(params: float, gpus: int, stage: int) -> float:
    """Model-state bytes per GPU under ZeRO stage 0 (plain data parallelism) to 3."""
    kept = {0: STATE, 1: WEIGHTS + GRADS, 2: WEIGHTS, 3: 0}[stage]
    return params * (kept + (STATE - kept) / gpus)


def test_stage1_what() -> None:
    assert STATE == 16 and OPTIMIZER == 12
    says("zs-stage1-what", "explanation", "12 of 16 bytes")
    says("zs-stage1-what", "details", "4Ψ + 12Ψ/N", "16Ψ")


def test_stage3_memory() -> None:
    psi, n = 7.5e9, 64
    figures = [f"{per_gpu(psi, n, s) / GB:.1f}" for s in (3, 2, 1)]
    assert figures == ["1.9", "16.6", "31.4"] and per_gpu(psi, n, 0) / GB == 120
    says("zs-stage3-memory", "key", "About 1.9 GB")
    says("zs-stage3-memory", "options", "About 16.6 GB", "About 31.4 GB", "About 120 GB")
    says("zs-stage3-memory", "explanation", "16 bytes × 7.5B / 64 ≈ 1.9 GB", "16.6 GB",
         "31.4 GB", "120 GB")
    says("zs-stage3-memory", "details", "16Ψ = 120 GB", "4Ψ + 12Ψ/N ≈ 31.4 GB",
         "2Ψ + 14Ψ/N ≈ 16.6 GB", "16Ψ/N ≈ 1.9 GB")


def test_comm_cost() -> None:
    # ring all-reduce = reduce-scatter + all-gather, about Ψ each; ZeRO-3 gathers twice more
    data_parallel, stage3 = 1 + 1, 1 + 1 + 1
    assert stage3 / data_parallel == 1.5
    says("zs-comm-cost", "key", "About 1.5x")
    says("zs-comm-cost", "explanation", "~2Ψ", "~3Ψ")
    says("zs-comm-cost", "details", "2Ψ total", "3Ψ, 1.5 times")


def test_stage2_gradients() -> None:
    assert WEIGHTS == 2 and GRADS + OPTIMIZER == 14
    says("zs-stage2-gradients", "details", "2Ψ + 14Ψ/N", "about 1.5x")
    says("zs-stage2-gradients", "options", "1.5x traffic")


def test_hybrid_shard() -> None:
    gpus_per_node = 8
    says("zs-hybrid-shard", "details", f"1/{gpus_per_node} of the gradients",
         f"on an {gpus_per_node}-GPU node")


def test_activations_not_sharded() -> None:
    says("zs-activations-not-sharded", "prompt", "on 8 GPUs")
    says("zs-activations-not-sharded", "details", f"{STATE} bytes per parameter")


def test_offload() -> None:
    # the CPU keeps fp32 master weights and two moments; 2 bytes a value cross each way
    assert OPTIMIZER == 3 * 4
    # PCIe 4.0 x16: 16 GT/s on 16 lanes, 128b/130b coding; ~25 GB/s is what transfers reach
    theoretical = 16e9 * 16 * 128 / 130 / 8
    assert 25 * GB < theoretical < 32 * GB
    says("zs-offload", "details", "12 bytes per parameter", "2Ψ bytes of gradients",
         "2Ψ bytes of weights", "roughly 25 GB/s")


def test_fit_8b_budget() -> None:
    params, gpus, seq, hbm = 8e9, 8, 16384, 80 * GB
    state = params * STATE / gpus
    assert params * STATE / GB == 128 and state / GB == 16
    # a Llama-3-8B-like layer in bf16, bytes saved per token: two norm inputs, the QKV and
    # MLP inputs, Q, K and V (8 KV heads of 128), the attention output, and SwiGLU's gate,
    # up and product
    h, kv, ffn, layers, vocab = 4096, 8 * 128, 14336, 32, 128256
    per_layer = 2 * (h + h + h + h + h + h) + 2 * 2 * kv + 2 * 3 * ffn
    assert per_layer == 12 * h + 4 * kv + 6 * ffn and per_layer / KIB == 136
    per_token = per_layer * layers
    assert f"{per_token / 1e6:.1f}" == "4.5"
    activations = 4.5e6 * seq  # the prompt's rounded figure
    total = state + activations
    assert round(activations / GB) == 74 and round(total / GB) == 90 and total > hbm
    says("zs-fit-8b-budget", "prompt", "about 4.5 MB per token", "16384-token", "80 GB")
    says("zs-fit-8b-budget", "key", "16 GB of state plus 74 GB of activations")
    says("zs-fit-8b-budget", "explanation", "128 GB", "(16 GB)", "16384 × 4.5 MB ≈ 74 GB",
         "about 90 GB")
    says("zs-fit-8b-budget", "details", "16 bytes × 8e9 = 128 GB", "12h + 4·1024 + 6·14336",
         "136 KiB", "× 32 layers ≈ 4.5 MB", "× 16384 ≈ 74 GB")
    # the logits in fp32, a gathered block in bf16 (about 1/32 of the weights)
    assert f"{seq * vocab * 4 / GB:.1f}" == "8.4"
    assert round(params * WEIGHTS / layers / GB, 1) <= 0.5
    says("zs-fit-8b-budget", "details", "16384 × 128256 values", "8.4 GB", "~0.4 GB")
    # checkpointing each block keeps its 2h-byte input per token and layer, plus one block
    block_input = 2 * h
    kept = seq * layers * block_input
    assert block_input / KIB == 8 and f"{kept / GB:.1f}" == "4.3"
    assert f"{activations / layers / GB:.1f}" == "2.3"
    assert state + kept + activations / layers + seq * vocab * 4 < hbm
    says("zs-fit-8b-budget", "explanation", "(~4 GB)")
    says("zs-fit-8b-budget", "details", "16384 × 32 × 8 KiB ≈ 4.3 GB", "(~2.3 GB)")
    # the distractors: activations sharded too; the unsharded state; bf16 moments
    assert round((params * STATE + activations) / gpus / GB) == 25
    says("zs-fit-8b-budget", "options", "about 25 GB per GPU", "128 GB of model state",
         "the missing 10 GB")
    saved = params * (8 - 4) / gpus  # two fp32 moments to bf16: 4 bytes per parameter
    assert saved / GB == 4 and total - saved > hbm and round((total - hbm) / GB) == 10
    says("zs-fit-8b-budget", "details", "4 bytes per parameter, 4 GB per GPU, not 10")


def test_trace_exposed_allgather() -> None:
    # the trace: each unit's backward 12 ms, its all-gather 6 ms, never overlapped
    backward, gather = 12, 6
    assert backward + gather == 18 and gather / (backward + gather) == pytest.approx(1 / 3)
    says("zs-trace-exposed-allgather", "details", "12 ms", "6 ms", "18 ms per unit",
         "6 of them (a third)", "AG 6", "bwd 7")
    says("zs-trace-exposed-allgather", "explanation", "a third of the time")
    svg = (BUNDLED / "images" / "zero-fsdp-sharding-trace.svg").read_text(encoding="utf-8")
    rects = [(int(x), int(w)) for x, w in re.findall(
        r'<rect x="(\d+)" y="(?:50|100)" width="(\d+)" height="30" fill="#(?:4c78a8|f58518)"',
        svg)]
    px_per_ms = 5
    assert len(rects) == 10  # five backwards, five gathers
    assert {w // px_per_ms for _, w in rects} == {backward, gather}
    # the gathers fill exactly the compute stream's gaps
    spans = sorted((x, x + w) for x, w in rects)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))


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
