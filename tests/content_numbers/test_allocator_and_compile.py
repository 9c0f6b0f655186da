"""Recomputes the figures of the allocator-and-compile pack from their inputs (GB: 1e9 bytes)."""

from __future__ import annotations

import re

from tests.conftest import BUNDLED
from tests.content_numbers.bank import Pack

BANK = Pack("allocator-and-compile")
PACK = BANK.data
QUESTIONS = BANK.questions
text = BANK.text
says = BANK.says

CHECKED: set[str] = {
    "ac-reserved-vs-allocated", "ac-fragmentation", "ac-recompile-shapes", "ac-step-spike",
    "ac-launch-bound",
}

GB = 1e9




def test_reserved_vs_allocated() -> None:
    smi, allocated = 70, 40
    says("ac-reserved-vs-allocated", "prompt", f"{smi} GB", f"reports {allocated} GB")
    says("ac-reserved-vs-allocated", "options", f"leaks {smi - allocated} GB")


def test_fragmentation() -> None:
    request, free = 2, 6
    assert free > request  # enough in total, none of it in one piece
    says("ac-fragmentation", "prompt", f"a {request} GiB allocation", f"{free} GiB are reserved")
    says("ac-fragmentation", "explanation", f"The {free} GiB", f"smaller than {request} GiB")


def test_recompile_limit() -> None:
    # torch._dynamo.config's default recompile limit, and the sizes it still specializes on
    says("ac-recompile-shapes", "details", "8 by default", "sizes 0 and 1")


def test_step_spike() -> None:
    params, fp32, hbm, activations = 2.25e9, 4, 40, 8
    weights = params * fp32 / GB
    grads = weights
    state = 2 * weights  # exp_avg and exp_avg_sq
    temporary = weights  # torch._foreach_sqrt over every exp_avg_sq
    after_backward = weights + grads
    with_state = after_backward + state
    asked = with_state + temporary
    later_forward = weights + state + activations  # the grads are set to None by then
    assert with_state <= hbm < asked and later_forward <= hbm
    says("ac-step-spike", "prompt", "2.25B", f"{hbm} GB GPU")
    says("ac-step-spike", "explanation", f"Params {weights:.0f} GB", f"grads {grads:.0f} GB",
         f"{after_backward:.0f} GB", f"({state:.0f} GB)", f"reaching {with_state:.0f} GB",
         f"{temporary:.0f} GB sqrt", f"{asked:.0f} GB")
    says("ac-step-spike", "key", f"{state:.0f} GB state", f"{temporary:.0f} GB foreach",
         f"{with_state:.0f} GB")
    says("ac-step-spike", "details", f"{fp32} bytes × 2.25e9 = {weights:.0f} GB",
         f"ends at {after_backward:.0f} GB", f"{state:.0f} GB, up to {with_state:.0f} GB",
         f"a {temporary:.0f} GB list", f"{asked:.0f} GB exceeds {hbm}",
         f"{weights:.0f} + {state:.0f} + {activations} = {later_forward:.0f} GB",
         f"in the {hbm - with_state:.0f} GB left")
    # the distractors: the room left, the grads' 9 GB
    says("ac-step-spike", "options", f"{hbm - with_state:.0f} GB are free",
         f"frees their {grads:.0f} GB")


def test_step_spike_image_agrees() -> None:
    """The snapshot is drawn at 4 px per GB from y = 250: its bands show the same figures."""
    svg = (BUNDLED / "images" / "allocator-and-compile-step-spike.svg").read_text("utf-8")

    def gb(y: float) -> float:
        return (250 - y) / 4

    found = re.findall(
        r'<rect x="\d+" y="(\d+)" width="(\d+)" height="(\d+)" fill="(#[0-9a-f]{6})"/>', svg)
    bands = {fill: (gb(float(y) + float(height)), gb(float(y)))  # the legend's squares aside
             for y, width, height, fill in found if fill != "#ffffff" and int(width) > 12}
    assert bands["#4c78a8"] == (0, 9)  # params
    assert bands["#54a24b"] == (9, 18)  # grads, after backward
    assert bands["#b279a2"] == (18, 36)  # exp_avg and exp_avg_sq
    request = re.search(r'<rect x="\d+" y="(\d+)" width="\d+" height="(\d+)" fill="none"', svg)
    assert request is not None
    assert (gb(float(request[1]) + float(request[2])), gb(float(request[1]))) == (36, 45)
    assert '<line x1="90" y1="90" x2="480" y2="90"' in svg and gb(90) == 40  # the capacity
    assert 'points="90,214 250,182 250,214"' in svg and gb(182) == 9 + 8  # forward's peak


def test_launch_bound() -> None:
    kernels, gpu_us, cpu_us = 1200, 15, 25
    cpu = kernels * cpu_us / 1000
    gpu = kernels * gpu_us / 1000
    step = max(cpu, gpu)  # launches are asynchronous: the slower side sets the pace
    says("ac-launch-bound", "explanation", f"{kernels} × {cpu_us} µs = {cpu:.0f} ms",
         f"{kernels} × {gpu_us} µs = {gpu:.0f} ms", f"about {gpu:.0f} ms, {step / gpu:.1f}x")
    says("ac-launch-bound", "key", f"About {step:.0f} ms", f"about {gpu:.0f} ms")
    says("ac-launch-bound", "details", f"{cpu_us - gpu_us} µs gaps",
         f"busy {gpu:.0f} of every {cpu:.0f} ms ({gpu / cpu:.0%})", f"{cpu + gpu:.0f} ms")
    # the distractors: GPU-bound, launches and kernels in series
    says("ac-launch-bound", "options", f"About {gpu:.0f} ms, GPU-bound",
         f"About {cpu + gpu:.0f} ms", f"{(cpu + gpu) / gpu:.1f}x faster")
