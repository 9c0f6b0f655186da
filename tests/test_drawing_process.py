"""Cards and charts drawn in a child process (bot/reports/worker.py): the same bytes as drawn
in the process, none of the drawing libraries loaded in the process that asked, the child
ended when idle or closed, and a child that died replaced by the next drawing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from bot.core.models import ItemStats, PostSummary, QuizReport, ShownQuestion
from bot.reports.card import CardText, card_png
from bot.reports.cards import PngCards
from bot.reports.png import PngCharts, chart_png, summary_png
from bot.reports.worker import DrawingProcess, DrawingStopped, DrawingTimedOut

ROOT = Path(__file__).resolve().parent.parent


def shown(**media: str) -> ShownQuestion:
    return ShownQuestion(1, "tg:-1", "q", "Q", "q1", "What is `x`?", ("a", "b"), 0, "", None,
                         "en", None, None, **media)  # type: ignore[arg-type]


def _pid(_: int) -> int:
    return os.getpid()


def test_a_card_drawn_in_the_child_is_the_card_drawn_here(tmp_path: Path) -> None:
    drawing = DrawingProcess()
    try:
        q = shown(formula="x^2", code="print(1)", code_language="python")
        cards = PngCards(tmp_path / "cache", drawing)
        assert cards.question_card(q) == card_png(CardText.of(q))
        assert cards.drawn == 1 and drawing.started == 1
        assert cards.question_card(q) and cards.drawn == 1  # read back, not drawn again
    finally:
        drawing.close()
    assert not drawing.running


def test_a_chart_drawn_in_the_child_is_the_chart_drawn_here() -> None:
    summary = PostSummary(7, "tg:-1", shown(), 4, 3, (3, 1), ())
    reports = [QuizReport("q", "Quiz", 3, (ItemStats("q1", "What?", 0, (2, 1), None, 0, None,
                                                      (), ("a", "b")),))]
    drawing = DrawingProcess()
    try:
        assert PngCharts(drawing).summary_chart(summary) == summary_png(summary)
        assert PngCharts(drawing).report_chart(reports, "bn") == chart_png(reports, None, "bn")
        assert drawing.started == 1  # one child for every drawing
    finally:
        drawing.close()


def test_the_asking_process_loads_no_drawing_library(tmp_path: Path) -> None:
    script = f"""
import json, sys
from pathlib import Path
from bot.core.models import ShownQuestion
from bot.reports.cards import PngCards
from bot.reports.worker import DrawingProcess
q = ShownQuestion(1, "tg:-1", "q", "Q", "q1", "What?", ("a", "b"), 0, "", None, "en", None,
                  None, formula="x^2", code="print(1)", code_language="python")
drawing = DrawingProcess()
png = PngCards(Path({str(tmp_path)!r}), drawing).question_card(q)
drawing.close()
heavy = sorted(m for m in ("PIL", "ziamath", "latex2mathml", "pygments") if m in sys.modules)
print(json.dumps([png[:8].hex(), heavy]))
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    magic, heavy = json.loads(out.stdout)
    assert magic == "89504e470d0a1a0a" and heavy == []


def test_an_idle_child_ends_and_the_next_drawing_starts_another() -> None:
    drawing = DrawingProcess(idle=0.2)
    try:
        first = drawing.run(_pid, 0)
        for _ in range(100):
            if not drawing.running:
                break
            time.sleep(0.05)
        assert not drawing.running
        assert drawing.run(_pid, 0) != first and drawing.started == 2
    finally:
        drawing.close()


def test_a_child_that_died_is_replaced() -> None:
    drawing = DrawingProcess()
    try:
        os.kill(drawing.run(_pid, 0), signal.SIGKILL)
        with pytest.raises(BrokenProcessPool):
            drawing.run(_pid, 0)
        assert drawing.run(_pid, 0) > 0 and drawing.started == 2
    finally:
        drawing.close()


def _gone(pid: int, within: float) -> bool:
    """Whether process `pid` ends (or is a zombie) within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def test_a_drawing_past_its_limit_is_stopped_and_its_child_killed() -> None:
    drawing = DrawingProcess(limit=60)
    try:
        child = drawing.run(_pid, 0)  # started (its start counts in its first drawing)
        drawing.limit = 0.5
        started = time.monotonic()
        with pytest.raises(DrawingTimedOut):
            drawing.run(time.sleep, 60)
        assert time.monotonic() - started < 5
        assert _gone(child, 5) and not drawing.running and drawing.timed_out == 1
        drawing.limit = 60
        assert drawing.run(_pid, 0) not in (0, child) and drawing.started == 2
    finally:
        drawing.close()


def test_close_kills_the_child_in_the_middle_of_a_drawing() -> None:
    import threading

    drawing = DrawingProcess(limit=120)
    errors: list[BaseException] = []

    def draw() -> None:
        try:
            drawing.run(time.sleep, 60)
        except BaseException as exc:
            errors.append(exc)

    child = drawing.run(_pid, 0)
    thread = threading.Thread(target=draw)
    thread.start()
    started = time.monotonic()
    drawing.close()
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - started < 5
    assert _gone(child, 5) and len(errors) == 1 and isinstance(errors[0], DrawingStopped)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_the_child_dies_with_the_bot_also_in_the_middle_of_a_drawing(sig: int) -> None:
    script = """
import os, threading, time
from bot.reports.worker import DrawingProcess
drawing = DrawingProcess(limit=600)
print(drawing.run(os.getpid), flush=True)
threading.Thread(target=drawing.run, args=(time.sleep, 600), daemon=True).start()
print("drawing", flush=True)
time.sleep(600)
"""
    bot = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE,
                           text=True)
    try:
        assert bot.stdout is not None
        child = int(bot.stdout.readline())
        assert bot.stdout.readline() == "drawing\n"
        bot.send_signal(sig)
        bot.wait(10)
        assert _gone(child, 5)
    finally:
        bot.kill()
        bot.wait()
