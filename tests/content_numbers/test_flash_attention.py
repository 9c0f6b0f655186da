"""Recomputes the figures of the flash-attention pack from their inputs (GB: 1e9 bytes)."""

from __future__ import annotations

import math

from tests.content_numbers.bank import Pack

BANK = Pack("flash-attention")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "fa-tiling", "fa-why-faster", "fa-online-softmax", "fa-memory-saved", "fa-still-quadratic",
    "fa-long-context-mfu", "fa-varlen-packing",
}




def test_tiling() -> None:
    # HBM bandwidth of A100 (1.5-2 TB/s) to H100 (3.35 TB/s SXM) and shared memory per SM
    # (A100 164 KB, H100 228 KB): "1.5-3 TB/s" and "up to ~200 KB"
    a100_kb, h100_kb = 164, 228
    assert a100_kb < 200 < h100_kb
    says("fa-tiling", "details", "1.5-3 TB/s", "~200 KB per SM")


def test_why_faster() -> None:
    peak, hbm_low, hbm_high = 312e12, 1.5e12, 2e12
    ridge = peak / hbm_high  # FLOPs per byte above which a kernel is compute-bound
    assert ridge > 100 and peak / hbm_low > ridge
    says("fa-why-faster", "details", "312 TFLOP/s", "1.5-2 TB/s", "well over 100 FLOPs",
         "15% faster")  # Dao et al. 2022, BERT-large end to end


def test_online_softmax_matches_and_block_softmaxes_do_not() -> None:
    row = [0.3, 2.0, -1.0, 4.5, 0.0, 1.5]
    full = [math.exp(x - max(row)) for x in row]
    full = [e / sum(full) for e in full]
    m, total = -math.inf, 0.0
    for block in (row[:3], row[3:]):  # one pass, rescaling when the max grows
        new_m = max(m, *block)
        total = total * math.exp(m - new_m) + sum(math.exp(x - new_m) for x in block)
        m = new_m
    online = [math.exp(x - m) / total for x in row]
    assert all(math.isclose(a, b) for a, b in zip(online, full, strict=True))
    per_block = [math.exp(x) / sum(math.exp(y) for y in block)
                 for block in (row[:3], row[3:]) for x in block]
    assert math.isclose(sum(per_block), 2)  # each block normalized to 1 on its own
    says("fa-online-softmax", "details", "normalized to 1 on its own")


def test_memory_saved() -> None:
    s, heads, fp16, fp32, layers, h = 8192, 32, 2, 4, 32, 4096
    per_head = s * s * fp16
    tensor = heads * per_head
    says("fa-memory-saved", "explanation", f"{heads} heads × {s}² scores × {fp16} bytes = "
         f"{tensor / 1e9:.1f}e9 bytes", f"{heads} × {s} × {fp32} bytes ≈ "
         f"{heads * s * fp32 / 1e6:.0f} MB")
    says("fa-memory-saved", "key", f"About {tensor / 1e9:.1f} GB")
    says("fa-memory-saved", "details", f"{s}² = {s * s / 1e6:.1f} million",
         f"{per_head / 1e6:.0f} MB per head", f"{heads} heads make {tensor / 1e9:.1f} GB",
         f"{layers * tensor / 1e9:.0f} GB")
    # the distractors: one head, the linear s·h output, 4-byte scores
    says("fa-memory-saved", "options", f"About {per_head / 1e6:.0f} MB",
         f"About {s * h * fp16 / 1e6:.0f} MB", f"About {2 * tensor / 1e9:.1f} GB")
    says("fa-memory-saved", "details", f"{s * h * fp16 / 1e6:.0f} MB is s·h·2 bytes with h = {h}",
         f"{2 * tensor / 1e9:.1f} GB counts 4-byte")


def test_still_quadratic() -> None:
    matmuls, flops_per_mac = 2, 2  # QKᵀ and P·V
    says("fa-still-quadratic", "details", f"{matmuls * flops_per_mac}·s²·d FLOPs per head")


def test_long_context_mfu() -> None:
    layers, h, n, s, logged = 32, 4096, 7.5e9, 131072, 0.14
    six_n = 6 * n
    attention = 6 * s * h * layers  # causal: 2·s·h per token and layer in forward, times 3
    ratio = attention / six_n
    true = logged * (1 + ratio)
    says("fa-long-context-mfu", "explanation", f"= {attention:.3g}".replace("e+", "e"),
         f"{ratio:.1f} × 6N ({six_n:.2g})".replace("e+", "e"),
         f"14% × {1 + ratio:.1f} ≈ {true:.0%}")
    says("fa-long-context-mfu", "key", f"About {true:.0%}", f"{ratio:.1f} times")
    says("fa-long-context-mfu", "details", f"{ratio:.2f} times 6N", f"{1 + ratio:.2f} times",
         f"≈ {true:.0%}", f"6 × 7.5e9 = {six_n:.2g}".replace("e+", "e"))
    # the distractors: the full s×s matrix, one layer, attention for free
    full = 2 * ratio
    one_layer = ratio / layers
    says("fa-long-context-mfu", "options", f"About {logged * (1 + full):.0%}",
         f"{full:.1f} times", f"About {logged * (1 + one_layer):.0%}", f"adds {one_layer:.0%}",
         f"About {logged:.0%}")
    says("fa-long-context-mfu", "details", f"{logged * (1 + full):.0%} counts the full",
         f"{logged * (1 + one_layer):.0%} forgets")
    says("fa-long-context-mfu", "details", f"s = 8192 the same ratio is "
         f"{8192 * h * layers / n:.2f}")


def test_varlen_packing() -> None:
    docs, row = [1024, 2048, 5120], 8192
    offsets = [0]
    for length in docs:
        offsets.append(offsets[-1] + length)
    assert offsets[-1] == row
    says("fa-varlen-packing", "prompt", f"cu_seqlens = {offsets}")
    share = sum(length * length for length in docs) / row**2  # causal l²/2 per document
    says("fa-varlen-packing", "key", f"about {share:.0%} of run A's")
    says("fa-varlen-packing", "explanation", f"{share:.2f} of {row}²")
    says("fa-varlen-packing", "details", f"= {share:.2f} of A",
         f"sees the {offsets[2]} tokens before it")
    equal = 3 * (row / 3) ** 2 / row**2  # the distractor's third: equal lengths only
    assert math.isclose(equal, 1 / 3) and not math.isclose(share, equal, abs_tol=0.05)
    says("fa-varlen-packing", "options", "fall to a third")
