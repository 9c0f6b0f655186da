"""Recomputes the figures of the activation-memory pack from their inputs.

Sizes are in bytes of 16-bit activations and 1-byte dropout masks, as in Korthikanti et al.
2022 (arXiv:2205.05198); GB is 1e9 bytes. Each test asserts that the English text states the
figure as the computation rounds it.
"""

from __future__ import annotations

from tests.content_numbers.bank import Pack

BANK = Pack("activation-memory")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "am-quadratic-term", "am-gpt3-layer", "am-tp-replicated", "am-sequence-parallel",
    "am-selective", "am-full-recompute", "am-pipeline-first-stage", "am-double-sequence",
    "am-modern-layer", "am-logits-share",
}

GB = 1e9




# the per-layer estimate's parts (Korthikanti et al., section 4.1)
ATTENTION = 2 + 2 * 2 + 2 + 2 + 1  # QKV input, Q and K, V, output-projection input, mask
MLP = 2 + 2 * 4 + 2 * 4 + 1  # input, the 4h-wide pre- and post-GeLU tensors, mask
NORMS = 2 + 2
SCORES = 2 + 1 + 2  # softmax output, dropout mask, dropout output: bytes per score


def bracket(s: int, h: int, a: int) -> float:
    return ATTENTION + MLP + NORMS + SCORES * a * s / h


def test_quadratic_term() -> None:
    assert (ATTENTION, MLP, NORMS, SCORES) == (11, 19, 4, 5)
    assert ATTENTION + MLP + NORMS == 34
    says("am-quadratic-term", "details", "11·sbh", "19·sbh", "4·sbh", "5·as²b", "4h-wide")
    says("am-quadratic-term", "explanation", "2 bytes", "dropout mask 1", "dropout output 2")
    says("am-quadratic-term", "key", f"{SCORES}as/h")


def test_gpt3_layer() -> None:
    s, h, a = 2048, 12288, 96
    sbh = s * h
    assert SCORES * a * s / h == 80 and bracket(s, h, a) == 114
    per_layer = sbh * bracket(s, h, a)
    says("am-gpt3-layer", "explanation", "= 80", "is 114", f"{sbh / 1e6:.1f}M",
         f"{per_layer / GB:.2f} GB")
    says("am-gpt3-layer", "key", f"{per_layer / GB:.1f} GB")
    says("am-gpt3-layer", "details", f"{sbh:,}", f"{per_layer / GB:.2f}e9",
         f"{96 * per_layer / GB:.0f} GB")
    # the distractors: the 34·sbh part alone, fp32, full recomputation's 2·sbh
    says("am-gpt3-layer", "options", f"{34 * sbh / GB:.2f} GB", f"{2 * per_layer / GB:.1f} GB",
         f"{2 * sbh / GB:.2f} GB")
    says("am-gpt3-layer", "details", f"{34 * sbh / GB:.2f} GB", f"{2 * per_layer / GB:.1f} GB",
         f"{2 * sbh / GB:.2f} GB", f"{80 / 114:.0%}")


def test_tp_replicated() -> None:
    replicated = NORMS + (2 + 2) + 2  # LayerNorm inputs, QKV and MLP inputs, two masks
    split = 2 * 2 + 2 + 2 + 2 * 2 * 4  # Q and K, V, output-projection input, MLP 4h tensors
    assert (replicated, split) == (10, 24)
    assert replicated + split == ATTENTION + MLP + NORMS
    says("am-tp-replicated", "prompt", "(10 + 24/t + 5as/(ht))", "10·sbh")
    says("am-tp-replicated", "details", "(4·sbh)", "(2·sbh)", "24·sbh/t", "4h")


def test_sequence_parallel() -> None:
    # with both parallelisms every term of sbh(34 + 5as/h) is divided by t
    assert 10 + 24 == 34
    says("am-sequence-parallel", "explanation", f"sbh({10 + 24} + {SCORES}as/h)/t")


def test_selective() -> None:
    s, h, a, t = 2048, 12288, 96, 8
    tp_only = 10 + 24 / t + SCORES * a * s / (h * t)
    selective = 34 / t
    assert round(tp_only / selective) == 5  # "about 5x", together with sequence parallelism
    says("am-selective", "explanation", "34·sbh/t", "about 5x")
    says("am-selective", "details", f"{80 / 114:.0%}", "over 90%", "2·sbh/t",
         "sbh(10 + 24/t)")
    says("am-selective", "options", "2·sbh/t", "34·sbh/t", "5·as²b/t")


def test_full_recompute() -> None:
    s, h = 2048, 12288
    says("am-full-recompute", "details", f"{2 * s * h / 1e6:.0f} MB",
         f"{s * h * bracket(s, h, 96) / GB:.2f} GB")
    # one extra forward on forward + backward (1 + 2): a third more time, within 30-40%
    extra = 100 * 1 / (1 + 2)
    assert 30 <= extra <= 40
    says("am-full-recompute", "details", "30-40%")
    says("am-full-recompute", "key", "2·s·b·h")


def test_interleaved_factor() -> None:
    p, v = 8, 2
    factor = 1 + (p - 1) / (p * v)
    says("am-pipeline-first-stage", "details", "1 + (p - 1)/(p·v)", f"{factor:.2f} at p = {p}",
         f"v = {v}")
    # the formula printed before, with micro-batches m in place of chunks v, gave 1.03 at m = 32
    assert f"{1 + (p - 1) / (p * 32):.2f}" != f"{factor:.2f}"


def test_double_sequence() -> None:
    h, a = 12288, 96
    b1, b2 = bracket(2048, h, a), bracket(4096, h, a)
    assert (b1, b2) == (114, 194)
    growth = 2 * b2 / b1
    says("am-double-sequence", "explanation", "80 to 160", "114 to 194",
         f"2 × 194/114 ≈ {growth:.1f}x")
    says("am-double-sequence", "key", f"{growth:.1f}x")
    assert 34 * 2 + 80 * 4 == 388 and f"{388 / 114:.1f}" == f"{growth:.1f}"
    says("am-double-sequence", "details", "34·2 + 80·4 = 388", f"{80 / 114:.0%}")
    # the distractors: nothing quadratic (2x), everything quadratic (4x), the bracket alone
    says("am-double-sequence", "options", "Exactly 2x", "Exactly 4x", f"{b2 / b1:.1f}x")
    says("am-double-sequence", "details", f"{b2 / b1:.1f}x", "(194/114)")


def test_modern_layer() -> None:
    heads, kv_heads, mlp = 32, 8, 3.5
    kv = kv_heads / heads  # K and V are this fraction of h wide
    parts = {
        "norm inputs": 2 + 2, "QKV input": 2, "Q": 2, "K and V": 2 * 2 * kv,
        "attention output": 2, "MLP input": 2, "gate, up, product": 3 * 2 * mlp,
    }
    total = sum(parts.values())
    assert total == 34
    says("am-modern-layer", "prompt", f"{heads} query heads", f"{kv_heads} KV heads",
         f"{mlp}h")
    says("am-modern-layer", "explanation", f"{2 * kv} each", f"{2 * mlp:.0f} each",
         f": {total:.0f}·sbh")
    says("am-modern-layer", "details", f"{kv}h wide", f"so {2 * kv} each", "(7 + 7 + 7)",
         f"Total {total:.0f}")
    says("am-modern-layer", "key", f"About {total:.0f}")
    # the distractors: the attention output twice, full-width K and V, the norm outputs twice
    wrong = {total + 2, total - 2 * 2 * kv + 2 * 2 * 1, total + 2 + 2}
    assert wrong == {36, 37, 38}
    for figure in sorted(wrong):
        says("am-modern-layer", "options", f"About {figure:.0f}")
        says("am-modern-layer", "details", f"{figure:.0f} ")


def test_logits_share() -> None:
    layers, h, vocab, s = 32, 4096, 128256, 8192
    layer = 34 * s * h
    acts = layers * layer
    logits = s * vocab
    loss = logits * (2 + 4 + 4)  # bf16 logits, their fp32 copy, the fp32 log-softmax
    share = loss / (acts + loss)
    says("am-logits-share", "explanation", f"{acts / GB:.1f} GB", f"{loss / GB:.1f} GB",
         f"as much as {loss / layer:.0f} layers", f"{loss / GB:.1f}/{(acts + loss) / GB:.1f}",
         f"≈ {share:.0%}")
    says("am-logits-share", "key", f"About {share:.0%}")
    says("am-logits-share", "details", f"{layer / GB:.2f} GB", f"{logits / GB:.2f}e9",
         f"{2 * logits / GB:.1f} GB in bf16", f"{4 * logits / GB:.1f} GB",
         f"{share:.0%} of {(acts + loss) / GB:.1f} GB")
    # the distractors: bf16 logits alone, no saved log-softmax, the last position only
    bf16_only = 2 * logits / (acts + 2 * logits)
    no_log_softmax = 6 * logits / (acts + 6 * logits)
    last_position = vocab * 10 / (acts + vocab * 10)
    says("am-logits-share", "options", f"About {bf16_only:.0%}", f"About {no_log_softmax:.0%}")
    says("am-logits-share", "details", f"{bf16_only:.0%} counts", f"{no_log_softmax:.0%} forgets")
    assert last_position < 0.01
    says("am-logits-share", "options", "Under 1%")
