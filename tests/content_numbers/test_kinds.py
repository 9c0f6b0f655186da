"""Recomputes the keys of the bundled questions of the kinds other than choice (a number with
its tolerance, the right set of a select-all, the right order, a statement's truth, the
accepted terms) from their inputs, and the figures their texts state, in en, bn and hi."""

from __future__ import annotations

import numpy as np
import pytest

from bot.content import load_catalog
from bot.content.items import Kind, Question
from tests.conftest import BUNDLED
from tests.content_numbers.bank import Pack

GB = 1e9

CHECKED: set[str] = {
    "am-layer-gigabytes", "mp-model-state-7b", "mp-eight-exponent-bits", "do-exposed-causes",
    "pp-1f1b-order", "ga-step-order", "ar-full-cost-statement",
}
# the keys checked here, whether or not the texts state a figure
KEYS: set[str] = CHECKED | {"ar-technique-name", "mp-loss-scaling-term",
                            "fa-linear-memory-statement"}


def bundled(pack: str, qid: str) -> Question:
    return load_catalog(BUNDLED).question(pack, qid)


def test_every_bundled_question_of_another_kind_has_its_key_checked() -> None:
    others = {q.id: q.kind for quiz in load_catalog(BUNDLED) for q in quiz.questions
              if q.kind is not Kind.CHOICE}
    assert set(others) == KEYS
    # at least two of each kind, each in en, bn and hi
    for kind in Kind:
        if kind is not Kind.CHOICE:
            assert sum(k is kind for k in others.values()) >= 2, kind


def test_one_layer_of_activations_in_gigabytes() -> None:
    s, b, h, a = 2048, 1, 4096, 32
    assert 5 * a * s / h == 80
    total = s * b * h * (34 + 5 * a * s / h)
    assert total == 956_301_312 and round(total / GB, 2) == 0.96
    assert round(32 * total / GB) == 31  # the details' 32 layers
    q = bundled("activation-memory", "am-layer-gigabytes")
    assert q.numeric is not None and q.numeric.low <= total / GB <= q.numeric.high
    # a reader who takes GiB, or drops the quadratic term, is outside the tolerance
    assert not q.numeric.low <= total / 2**30 <= q.numeric.high
    assert not q.numeric.low <= s * b * h * 34 / GB <= q.numeric.high
    pack = Pack("activation-memory")
    for locale in ("en", "bn", "hi"):
        for figure in ("2048", "4096", "32", "34"):
            assert figure in pack.text("am-layer-gigabytes", "prompt", locale)
        for figure in ("80", "956,301,312", "0.96"):
            assert figure in pack.text("am-layer-gigabytes", "explanation", locale)


def test_mixed_precision_model_state_of_7b() -> None:
    per_parameter = {"fp16 weights": 2, "fp16 gradients": 2, "fp32 master weights": 4,
                     "exp_avg": 4, "exp_avg_sq": 4}
    total = sum(per_parameter.values()) * 7e9
    assert sum(per_parameter.values()) == 16 and total / GB == 112
    q = bundled("mixed-precision", "mp-model-state-7b")
    assert q.numeric is not None and q.numeric.low <= total / GB <= q.numeric.high
    assert not q.numeric.low <= 8 * 7e9 / GB <= q.numeric.high  # forgetting the master copy
    pack = Pack("mixed-precision")
    for locale in ("en", "bn", "hi"):
        assert "7" in pack.text("mp-model-state-7b", "prompt", locale)
        for figure in ("2 + 2 + 4 + 4 + 4", "16", "112"):
            assert figure in pack.text("mp-model-state-7b", "explanation", locale)


# sign, exponent, mantissa bits
LAYOUTS = {"fp32": (1, 8, 23), "bf16": (1, 8, 7), "TF32": (1, 8, 10), "fp16": (1, 5, 10)}


def test_the_formats_with_eight_exponent_bits() -> None:
    assert np.finfo(np.float32).nexp == 8 and np.finfo(np.float16).nexp == 5
    assert np.finfo(np.float16).nmant == LAYOUTS["fp16"][2]
    q = bundled("mixed-precision", "mp-eight-exponent-bits")
    right = {q.options[i].text.en for i in q.answers}
    assert right == {name for name, (_, e, _) in LAYOUTS.items() if e == 8}
    assert {o.text.en for o in q.options} == set(LAYOUTS)
    pack = Pack("mixed-precision")
    for locale in ("en", "bn", "hi"):
        explanation = pack.text("mp-eight-exponent-bits", "explanation", locale)
        for name in ("bf16", "TF32", "fp16"):
            assert "+".join(map(str, LAYOUTS[name])) in explanation
        assert "8" in pack.text("mp-eight-exponent-bits", "prompt", locale)


def exposed_allreduce(backward: float, buckets: list[float], ready: list[float],
                      bandwidth: float, per_step: int = 1) -> float:
    """Time past the end of backward that all-reduce takes: each bucket (bytes) starts when
    it is ready (a time in backward) and the link is free; `per_step` all-reduces of the
    whole set per optimizer step (accumulation without no_sync)."""
    free = 0.0
    for size, at in zip(buckets, ready, strict=True):
        free = max(free, at) + size / bandwidth
    return per_step * max(0.0, free - backward)


def test_what_leaves_all_reduce_exposed() -> None:
    backward, size = 1.0, 100e6  # 1 s of backward, 100 MB of gradients
    small = [25e6] * 4  # DDP's default 25 MB buckets, ready through backward
    ready = [0.25, 0.5, 0.75, 1.0]
    fast = 1e9  # 25 ms per bucket
    base = exposed_allreduce(backward, small, ready, fast)
    one_bucket = exposed_allreduce(backward, [size], [1.0], fast)
    every_micro_batch = exposed_allreduce(backward, small, ready, fast, per_step=4)
    slow_link = exposed_allreduce(backward, small, ready, fast / 10)
    assert base == pytest.approx(0.025)
    assert one_bucket == pytest.approx(0.1) and one_bucket > base
    assert every_micro_batch == pytest.approx(4 * base)
    assert slow_link > 2 * base
    q = bundled("ddp-overlap", "do-exposed-causes")
    assert len(q.answers) == 3 and "Pinned" in q.options[3].text.get("en") and 3 not in q.answers
    pack = Pack("ddp-overlap")
    for locale in ("en", "bn", "hi"):
        assert "25 MB" in pack.text("do-exposed-causes", "details", locale)


def one_f_one_b(stage: int, stages: int, micro_batches: int) -> list[str]:
    """The order a stage runs its forwards (F) and backwards (B) in under 1F1B."""
    warmup = min(stages - stage, micro_batches)
    out = [f"F{i}" for i in range(1, warmup + 1)]
    forward, backward = warmup + 1, 1
    while backward <= micro_batches:
        out.append(f"B{backward}")
        backward += 1
        if forward <= micro_batches:
            out.append(f"F{forward}")
            forward += 1
    return out


def test_the_first_stage_under_1f1b() -> None:
    order = one_f_one_b(0, 4, 8)
    assert " ".join(order) == "F1 F2 F3 F4 B1 F5 B2 F6 B3 F7 B4 F8 B5 B6 B7 B8"
    assert one_f_one_b(3, 4, 8)[:3] == ["F1", "B1", "F2"]  # the last stage alternates at once
    in_flight = max(sum(1 for s in order[:i + 1] if s[0] == "F")
                    - sum(1 for s in order[:i + 1] if s[0] == "B") for i in range(len(order)))
    assert in_flight == 4
    q = bundled("pipeline-parallelism", "pp-1f1b-order")
    names = {"Forward": "F", "Backward": "B"}
    steps = [names[o.text.get("en").split()[0]] + o.text.get("en").split()[-1]
             for o in q.options]
    assert sorted(steps, key=order.index) == steps  # listed in the right order
    # GPipe's order (every forward first) is not it
    gpipe = [f"F{i}" for i in range(1, 9)] + [f"B{i}" for i in range(1, 9)]
    assert sorted(steps, key=gpipe.index) != steps
    pack = Pack("pipeline-parallelism")
    for locale in ("en", "bn", "hi"):
        assert " ".join(order) in pack.text("pp-1f1b-order", "explanation", locale)


def test_one_accumulated_step() -> None:
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(8, 3)), rng.normal(size=3)
    y = rng.normal(size=8)

    def grad(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:  # of the mean squared error
        gradient: np.ndarray = 2 * xs.T @ (xs @ w - ys) / len(ys)
        return gradient

    accumulated = np.zeros(3)  # zeroed first
    for part in range(4):  # forward, loss / 4, backward adding into .grad
        rows = slice(2 * part, 2 * part + 2)
        accumulated += grad(x[rows], y[rows]) / 4
    assert np.allclose(accumulated, grad(x, y))  # one step on the mean of all 4
    q = bundled("gradient-accumulation", "ga-step-order")
    texts = [o.text.get("en") for o in q.options]
    assert texts[0].startswith("Zero") and texts[-1].startswith("Step")
    assert "by 4" in texts[1] and "other 3" in texts[3]


def test_full_recomputation_costs_a_third() -> None:
    forward, backward = 1, 2
    assert round(100 * ((forward + backward + forward) / (forward + backward) - 1)) == 33
    q = bundled("activation-recomputation", "ar-full-cost-statement")
    assert q.kind is Kind.TRUEFALSE and q.answer == 0  # true
    pack = Pack("activation-recomputation")
    for locale in ("en", "bn", "hi"):
        assert "33%" in pack.text("ar-full-cost-statement", "prompt", locale)
        assert "4/3" in pack.text("ar-full-cost-statement", "explanation", locale)


def test_flash_attention_memory_is_linear() -> None:
    # per head: the full score matrix is s² values; FlashAttention keeps O, and the row
    # statistics (max and sum: 2 per row) for backward
    for s in (1024, 2048, 4096):
        assert (2 * s) / s == 2  # linear: doubles with s
        assert (2 * s) ** 2 / s ** 2 == 4  # the score matrix: quadruples
    q = bundled("flash-attention", "fa-linear-memory-statement")
    assert q.kind is Kind.TRUEFALSE and q.answer == 0


@pytest.mark.parametrize(("pack", "qid", "terms"), [
    ("activation-recomputation", "ar-technique-name",
     {"en": "activation checkpointing", "bn": "অ্যাক্টিভেশন চেকপয়েন্টিং",
      "hi": "एक्टिवेशन चेकपॉइंटिंग"}),
    ("mixed-precision", "mp-loss-scaling-term",
     {"en": "loss scaling", "bn": "লস স্কেলিং", "hi": "लॉस स्केलिंग"}),
])
def test_the_accepted_terms_are_the_explanations(pack: str, qid: str,
                                                 terms: dict[str, str]) -> None:
    q = bundled(pack, qid)
    assert q.accept is not None
    for locale, term in terms.items():
        assert term in q.accept.texts[locale]
        # the explanation names the key, the prompt does not give it away
        assert term.lower() in q.explanation.get(locale).lower()
        assert term.split()[-1].lower() not in q.prompt.get(locale).lower()
