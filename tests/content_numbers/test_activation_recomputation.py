"""Recomputes the figures of the activation-recomputation pack from their inputs.

FLOPs of a step count forward as 1 and backward as 2; memory is in GB of 1e9 bytes, with the
per-layer estimate sbh(34 + 5as/h) of Korthikanti et al. 2022 (arXiv:2205.05198).
"""

from __future__ import annotations

from tests.content_numbers.bank import Pack

BANK = Pack("activation-recomputation")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "ar-memory-trade", "ar-measure-overhead", "ar-selective-recompute",
    "ar-optimizer-state-oom", "ar-fit-policy",
}

GB = 1e9
FORWARD, BACKWARD = 1, 2  # a backward costs about two forwards




def full_recompute_overhead() -> float:
    return FORWARD / (FORWARD + BACKWARD)


def test_memory_trade() -> None:
    step = FORWARD + BACKWARD
    says("ar-memory-trade", "explanation", f"~{full_recompute_overhead():.0%} more FLOPs")
    says("ar-memory-trade", "details", f"from about {step} to {step + FORWARD}",
         f"up to ~{full_recompute_overhead():.0%}")


def test_measure_overhead() -> None:
    # the distractor's fixed 40% exceeds what even full recomputation costs
    assert 0.40 > full_recompute_overhead()
    says("ar-measure-overhead", "options", "exactly 40%")
    says("ar-measure-overhead", "details", f"up to ~{full_recompute_overhead():.0%}")


def test_selective_recompute() -> None:
    # GPT-3 175B at t = 8: tensor parallelism alone against selective plus sequence parallel
    s, h, a, t = 2048, 12288, 96, 8
    tp_only = 10 + 24 / t + 5 * a * s / (h * t)
    assert round(tp_only / (34 / t)) == 5
    says("ar-selective-recompute", "details", "about 5x", "over 90%")


def test_optimizer_state_oom() -> None:
    weights, grads, master, momentum, variance = 2, 2, 4, 4, 4
    per_param = weights + grads + master + momentum + variance
    assert per_param == 16
    says("ar-optimizer-state-oom", "details", f"about {per_param} bytes",
         f"{weights} for FP16/BF16 weights", f"{grads} for gradients",
         f"{master + momentum + variance} for the FP32",
         f"about {7e9 * per_param / GB:.0f} GB")


def test_fit_policy() -> None:
    params, layers, h, a, s, gpus, hbm, reserve = 13e9, 40, 5120, 40, 4096, 8, 80, 10
    sbh = s * h
    states = params * 16 / gpus / GB
    left = hbm - states - reserve
    scores = 5 * a * s / h
    everything = layers * sbh * (34 + scores) / GB
    selective = layers * sbh * 34 / GB
    full = layers * 2 * sbh / GB
    one_layer = sbh * (34 + scores) / GB
    assert selective < left < everything
    says("ar-fit-policy", "explanation", f"= {states:.0f} GB", f"= {left:.0f} GB",
         f"5as/h = {scores:.0f}", f"40 × {34 + scores:.0f}·sbh = {everything:.0f} GB",
         f"= {selective:.1f} GB")
    says("ar-fit-policy", "key", f"{selective:.1f} GB", f"{left:.0f} GB left")
    says("ar-fit-policy", "details", f"{sbh / 1e6:.1f}M", f"{one_layer:.2f} GB",
         f"{everything:.0f} GB for 40 layers", f"{everything:.0f}/8 = {everything / gpus:.0f} GB",
         f"= {selective:.1f} GB", f"{full:.1f} GB of layer inputs")
    # the distractors: activations sharded like states, the states counted twice, and full
    says("ar-fit-policy", "options", f"{everything:.0f} GB", f"{everything / gpus:.0f} GB",
         f"{states:.0f} GB", f"{full:.1f} GB")
    assert selective + states > left  # what counting the states twice would conclude
