"""Recomputes the figures of the ddp-overlap pack from their inputs (GB: 1e9 bytes, MB: 1e6)."""

from __future__ import annotations

import math

from tests.content_numbers.bank import Pack

BANK = Pack("ddp-overlap")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "ddp-why-buckets", "ddp-bucket-view", "ddp-ring-volume", "ddp-alpha-beta",
    "ddp-checkpoint-interval",
}




def ring_all_reduce(n_bytes: float, ranks: int, alpha: float, bandwidth: float) -> float:
    """The alpha-beta cost of a ring all-reduce: 2(N - 1) steps of n/N bytes each."""
    steps = 2 * (ranks - 1)
    return steps * alpha + steps * (n_bytes / ranks) / bandwidth


def test_why_buckets() -> None:
    # DDP's defaults: bucket_cap_mb = 25, and a first bucket of 1 MB
    says("ddp-why-buckets", "prompt", "about 25 MB")
    says("ddp-why-buckets", "details", "25 MB by default", "the first bucket is 1 MB")


def test_bucket_view() -> None:
    params, bf16 = 7e9, 2
    says("ddp-bucket-view", "details",
         f"for a 7B model in bf16, about {params * bf16 / 1e9:.0f} GB")


def test_ring_volume() -> None:
    gpus, data = 8, 1.0
    sent = 2 * (gpus - 1) / gpus * data
    says("ddp-ring-volume", "explanation", f"2 × {gpus - 1}/{gpus} × 1 GB = {sent:.2f} GB")
    says("ddp-ring-volume", "key", f"About {sent:.2f} GB")
    says("ddp-ring-volume", "details", f"= {sent:.2f} GB")
    # the distractors: the whole gradient to every GPU or to every peer, and each phase
    # sending all of it, forgetting that a GPU keeps its own chunk
    says("ddp-ring-volume", "options", f"About {gpus * data:.0f} GB",
         f"About {(gpus - 1) * data:.0f} GB", f"About {2 * data:.0f} GB")
    says("ddp-ring-volume", "details", f"{gpus * data:.0f} GB or {(gpus - 1) * data:.0f} GB",
         f"{2 * data:.0f} GB forgets the (N - 1)/N")


def test_alpha_beta() -> None:
    grads, bucket, ranks, alpha, bandwidth, backward = 2e9, 25e6, 64, 10e-6, 20e9, 0.250
    latency = 2 * (ranks - 1) * alpha
    per_bucket = ring_all_reduce(bucket, ranks, alpha, bandwidth)
    buckets = grads / bucket
    total = buckets * per_bucket
    big = 100e6
    total_big = grads / big * ring_all_reduce(big, ranks, alpha, bandwidth)
    assert total > backward > total_big
    ms = 1e3
    says("ddp-alpha-beta", "explanation", f"= {latency * ms:.2f} ms of latency",
         f"= {(per_bucket - latency) * ms:.2f} ms", f"{buckets:.0f} buckets: {total * ms:.0f} ms",
         f"{grads / big:.0f} × {ring_all_reduce(big, ranks, alpha, bandwidth) * ms:.1f} ms = "
         f"{total_big * ms:.0f} ms")
    says("ddp-alpha-beta", "key", f"About {total * ms:.0f} ms", f"to {total_big * ms:.0f} ms")
    last = ring_all_reduce(big, ranks, alpha, bandwidth)
    says("ddp-alpha-beta", "details", f"{latency * ms:.2f} ms per bucket",
         f"of the {per_bucket * ms:.2f} ms", f"{total * ms:.0f} ms, more than the "
         f"{backward * ms:.0f} ms", f"({last * ms:.1f} ms)")
    assert math.isclose(latency / per_bucket, 1 / 3, abs_tol=0.02)  # "a third"
    # the distractors: no latency term, 5 MB buckets, all the buckets at once
    bandwidth_only = buckets * (per_bucket - latency)
    small = 5e6
    total_small = grads / small * ring_all_reduce(small, ranks, alpha, bandwidth)
    says("ddp-alpha-beta", "options", f"About {bandwidth_only * ms:.0f} ms", "5 MB buckets",
         f"About {per_bucket * ms:.1f} ms")
    says("ddp-alpha-beta", "details", f"{bandwidth_only * ms:.0f} ms drops the latency",
         f"{grads / small:.0f} calls and {total_small * ms:.0f} ms")
    assert total_small > backward


def test_checkpoint_interval() -> None:
    save, mtbf = 60.0, 6 * 3600.0
    interval = math.sqrt(2 * save * mtbf)  # Young 1974

    def lost(tau: float, c: float = save) -> float:
        return c / tau + tau / (2 * mtbf)

    says("ddp-checkpoint-interval", "explanation", f"√(2 × 60 s × {mtbf:.0f} s) ≈ {interval:.0f} s",
         f"about {interval / 60:.0f} min", f"60/{interval:.0f} ≈ {save / interval:.1%}",
         f"{interval:.0f}/{2 * mtbf:.0f} ≈ {interval / (2 * mtbf):.1%}",
         f"about {lost(interval):.1%} in all")
    says("ddp-checkpoint-interval", "key", f"every {interval / 60:.0f} minutes",
         f"about {lost(interval):.0%}")
    says("ddp-checkpoint-interval", "details", f"≈ {interval:.0f} s",
         f"{save / interval:.1%} each, {lost(interval):.1%} in all")
    # the distractors: once per failure interval, without the 2, every 2 minutes
    once = save / mtbf
    no_two = math.sqrt(save * mtbf)
    says("ddp-checkpoint-interval", "options", "every 6 hours, losing " f"{once:.1%}",
         f"every {no_two / 60:.0f} minutes, losing about {save / no_two:.0%}")
    says("ddp-checkpoint-interval", "details", f"stalls {once:.1%}",
         f"redoes {mtbf / 2 / 3600:.0f} hours per failure, {0.5:.0%}",
         f"stalls {save / 120:.0%}", f"= {no_two / 60:.0f} min")
    assert lost(120) > 0.5 and lost(mtbf) > 0.5 and 120 / mtbf < 0.01  # "under 1%" redone
    # asynchronous saves that stall 5 s
    fast = math.sqrt(2 * 5 * mtbf)
    says("ddp-checkpoint-interval", "details", f"{fast:.0f} s", f"about {lost(fast, 5):.1%}")
