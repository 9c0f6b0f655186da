"""Recomputes the figures of the parallel-layouts pack from their inputs.

Tensor parallelism follows Shoeybi et al. 2019 (arXiv:1909.08053), layouts Narayanan et al.
2021 (arXiv:2104.04473); a ring all-reduce of n bytes over t ranks moves 2(t - 1)/t · n per
GPU (the alpha-beta model without latency). MB and GB are 1e6 and 1e9 bytes, MiB 2^20. Each
test asserts that the English text states the figure as the computation rounds it, and the
Bengali and Hindi texts state the same figures.
"""

from __future__ import annotations

import re

import pytest

from tests.content_numbers.bank import Pack

BANK = Pack("parallel-layouts")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "pl-column-row", "pl-tp-allreduces", "pl-tp-in-node", "pl-causal-balance",
    "pl-nesting-order", "pl-dp-size", "pl-deeper-pipeline", "pl-tp-alpha-beta",
    "pl-ulysses-vs-ring",
}

MIB = 2**20




def ring_allreduce_s(size: float, ranks: int, bandwidth: float) -> float:
    return 2 * (ranks - 1) / ranks * size / bandwidth


def test_column_row() -> None:
    says("pl-column-row", "explanation", "the 4h hidden units")


def test_tp_allreduces() -> None:
    # Megatron's f and g: one of each per block, attention and MLP; each an all-reduce once
    blocks, forward_per_block, backward_per_block = 2, 1, 1
    assert blocks * forward_per_block == 2 and blocks * backward_per_block == 2
    says("pl-tp-allreduces", "key", "2: one after attention, one after the MLP")
    says("pl-tp-allreduces", "explanation", "2 in forward, 2 more in backward")
    says("pl-tp-allreduces", "details", "2 all-reduces per layer", "backward 2")
    # a transformer layer's matmuls: QKV, QKᵀ, scores × V, output, and the MLP's two
    assert len(["qkv", "qk", "sv", "out", "fc1", "fc2"]) == 6
    says("pl-tp-allreduces", "options", "6: one for each of the layer's six matmuls", "4:",
         "1:")


def test_tp_in_node() -> None:
    # b·s·h values per all-reduce, 2 in forward and 2 in backward per layer
    assert 2 + 2 == 4
    says("pl-tp-in-node", "details", "four times per layer per step", "600 GB/s",
         "25-50 GB/s")
    # InfiniBand HDR and NDR: 200 and 400 Gb/s per GPU
    assert (200 / 8, 400 / 8) == (25, 50)
    says("pl-tp-in-node", "prompt", "t ≤ 8 on 8-GPU nodes")


def test_causal_balance() -> None:
    gpus = 4
    # with contiguous quarters, causal work in half-block units: 1, 3, 5, 7
    work = [2 * i + 1 for i in range(gpus)]
    assert work == [1, 3, 5, 7] and work[-1] / work[0] == 7
    says("pl-causal-balance", "details", "about 7 times", "(1 + 3 + 5 + 7 block pairs)")
    # 2·CP chunks, GPU i takes i and 2·CP - 1 - i: every GPU the same work
    chunks = 2 * gpus
    pairs = [(i + 1) + (chunks - i) for i in range(gpus)]
    assert len(set(pairs)) == 1 and (chunks, chunks - 1) == (8, 7)
    says("pl-causal-balance", "explanation", "4 quarters of keys", "8 chunks",
         "chunks i and 7 - i")
    says("pl-causal-balance", "details", "2·CP chunks", "2·CP - 1 - i")


def test_nesting_order() -> None:
    says("pl-nesting-order", "prompt", "nodes of 8 GPUs")


def test_dp_size() -> None:
    world, tp, pp = 1024, 8, 16
    replica = tp * pp
    assert replica == 128 and world // replica == 8
    says("pl-dp-size", "key", "8")
    says("pl-dp-size", "explanation", "TP × PP = 8 × 16 = 128", "1024 / 128 = 8")
    # the distractors: one replica's size, dividing by PP only, no relation
    assert world // pp == 64
    says("pl-dp-size", "options", "128", "64", "1000")
    says("pl-dp-size", "details", "128 is the size of one replica", "64 divides by 16 only",
         "1000 has no relation")


def test_deeper_pipeline() -> None:
    says("pl-deeper-pipeline", "details", "(p - 1)/m of the ideal time",
         "(p - 1)/(m + p - 1)")
    says("pl-deeper-pipeline", "options", "Pipelines deeper than 8 stages")


def test_tp_alpha_beta() -> None:
    t, size, matmuls, per_step = 8, 64 * MIB, 12e-3, 4
    nvlink, ib = 200e9, 25e9
    moved = 2 * (t - 1) / t * size
    assert 2 * (t - 1) / t == 1.75 and round(moved / 1e6) == 117
    assert f"{size / 1e6:.1f}" == "67.1"
    one_nv, one_ib = ring_allreduce_s(size, t, nvlink), ring_allreduce_s(size, t, ib)
    assert f"{one_nv * 1e3:.2f}" == "0.59" and f"{one_ib * 1e3:.2f}" == "4.70"
    comm_nv, comm_ib = per_step * one_nv, per_step * one_ib
    assert f"{comm_nv * 1e3:.1f}" == "2.3" and f"{comm_ib * 1e3:.1f}" == "18.8"
    assert f"{(matmuls + comm_nv) * 1e3:.1f}" == "14.3"
    assert f"{(matmuls + comm_ib) * 1e3:.1f}" == "30.8"

    def shares(count: int, size_: float) -> tuple[str, ...]:
        """The share of the layer's time in `count` all-reduces, on NVLink and on IB."""
        out = []
        for bandwidth in (nvlink, ib):
            comm = count * ring_allreduce_s(size_, t, bandwidth)
            out.append(f"{comm / (matmuls + comm):.0%}")
        return tuple(out)

    assert shares(per_step, size) == ("16%", "61%")
    says("pl-tp-alpha-beta", "key", "About 16% on NVLink and 61% on InfiniBand")
    says("pl-tp-alpha-beta", "explanation", "1.75 × 64 MiB ≈ 117 MB", "0.59 ms", "4.7 ms",
         "2.3 of 14.3 ms ≈ 16%", "18.8 of 30.8 ms ≈ 61%")
    says("pl-tp-alpha-beta", "details", "67.1 MB", "117 MB per GPU", "0.59 ms", "4.70 ms",
         "2.35 ms next to 12 ms (16%)", "18.8 ms (61%)")
    # latency: about 10 µs per step, 2(t - 1) = 14 steps
    assert 2 * (t - 1) == 14 and f"{14 * 10e-6 * 1e3:.2f}" == "0.14"
    says("pl-tp-alpha-beta", "details", "α ≈ 10 µs × 14 steps", "0.14 ms")
    # the distractors: one all-reduce, the forward's two, each GPU's 1/8 share
    assert shares(1, size) == ("5%", "28%") and shares(2, size) == ("9%", "44%")
    assert shares(per_step, size / t) == ("2%", "16%")
    says("pl-tp-alpha-beta", "options", "About 5% on NVLink and 28%",
         "About 9% on NVLink and 44%", "About 2% on NVLink and 16%")
    says("pl-tp-alpha-beta", "details", "5% and 28%", "9% and 44%", "2% and 16%")


def test_ulysses_vs_ring() -> None:
    q_heads, kv_heads, gpus, per_node = 64, 8, 16, 8
    assert q_heads % gpus == 0 and kv_heads % gpus != 0  # 16 ways split Q, not K and V
    assert gpus // kv_heads == 2 and kv_heads == per_node and gpus // per_node == 2
    says("pl-ulysses-vs-ring", "prompt", "64 query heads, 8 KV heads", "1M-token",
         "16 GPUs, 2 nodes of 8", "16-way")
    says("pl-ulysses-vs-ring", "key", "8 KV heads cannot go 16 ways")
    says("pl-ulysses-vs-ring", "details", "replicate each KV head on two GPUs",
         "Ulysses 8 over NVLink", "ring 2 across")


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
