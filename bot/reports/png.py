"""The item-analysis chart: per quiz, one small group of bars per question (the share of
answers on each option), the correct option highlighted. Rendered headless to PNG bytes.

matplotlib is imported inside `chart_png` only, and drawn through its Agg canvas on a
`Figure` of its own (no pyplot, no global state, no display needed): importing this module
costs nothing, and a bot that never draws a chart never loads matplotlib.
"""

from __future__ import annotations

import io
import string
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.core.analysis import QuizReport
from bot.core.models import PostSummary

if TYPE_CHECKING:  # types only: matplotlib is imported when a chart is drawn
    from matplotlib.axes import Axes
    from matplotlib.ticker import Formatter

DPI = 100
MIN_WIDTH = 800  # pixels
WIDTH_PER_QUESTION = 100
WIDTH_MARGIN = 160
HEIGHT_PER_QUIZ = 360
HEIGHT_MARGIN = 100

# a question's close summary (/settings chart on): one bar per option
SUMMARY_WIDTH = 480
SUMMARY_PER_OPTION = 36
SUMMARY_MARGIN = 84

CORRECT = "#2e7d32"
OTHER = "#b0bec5"
LETTERS = string.ascii_uppercase


def chart_size(reports: Sequence[QuizReport]) -> tuple[int, int]:
    """(width, height) in pixels: wide enough for the quiz with the most questions, one row
    per quiz (one row saying "no answers yet" when there is none)."""
    questions = max((len(r.items) for r in reports), default=0)
    width = max(MIN_WIDTH, WIDTH_MARGIN + WIDTH_PER_QUESTION * questions)
    height = HEIGHT_MARGIN + HEIGHT_PER_QUIZ * max(1, len(reports))
    return width, height


def chart_png(reports: Sequence[QuizReport], title: str = "Item analysis") -> bytes:
    """The chart as PNG bytes, exactly chart_size(reports) pixels."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import PercentFormatter

    width, height = chart_size(reports)
    figure = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    figure.suptitle(f"{title}: share of answers on each option", fontsize=12)
    if not reports:
        empty = figure.add_subplot()
        empty.set_axis_off()
        empty.text(0.5, 0.5, "no answers yet", ha="center", va="center", fontsize=14)
    else:
        axes = figure.subplots(len(reports), 1, squeeze=False)[:, 0]
        for ax, report in zip(axes, reports, strict=True):
            _draw_quiz(ax, report, PercentFormatter(1.0))
        figure.legend(
            handles=[Patch(color=CORRECT, label="correct option"),
                     Patch(color=OTHER, label="other options")],
            loc="outside lower center", ncols=2, fontsize=9, frameon=False,
        )
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=DPI)
    return out.getvalue()


def _draw_quiz(ax: Axes, report: QuizReport, percent: Formatter) -> None:
    slots = max(report.max_options, 1)
    width = 0.8 / slots
    positions: list[float] = []
    letters: list[str] = []
    for x, item in enumerate(report.items):
        shares = item.option_shares or tuple(0.0 for _ in item.option_counts)
        k = len(shares)
        xs = [x + (o - (k - 1) / 2) * width for o in range(k)]
        colors = [CORRECT if o == item.answer else OTHER for o in range(k)]
        ax.bar(xs, shares, width=width * 0.9, color=colors)
        positions += xs
        letters += [LETTERS[o] for o in range(k)]
        label = f"n={item.answered}" if item.answered else "no answers"
        ax.text(x, 1.02, label, ha="center", va="bottom", fontsize=7, color="#455a64")
    ax.set_xlim(-0.6, max(len(report.items), 1) - 0.4)
    ax.set_ylim(0, 1.12)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.yaxis.set_major_formatter(percent)
    ax.set_xticks(positions, letters, minor=True, fontsize=6)
    ax.set_xticks(range(len(report.items)), [i.question_id for i in report.items],
                  rotation=15, ha="right", fontsize=8)
    ax.tick_params(axis="x", which="major", pad=12, length=0)
    ax.tick_params(axis="x", which="minor", length=0)
    ax.set_title(f"{report.title} ({report.quiz_id}): {report.people} people, "
                 f"{report.answers} answers", fontsize=10, loc="left")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def summary_chart_size(options: int) -> tuple[int, int]:
    """(width, height) in pixels of a closed question's chart with `options` options."""
    return SUMMARY_WIDTH, SUMMARY_MARGIN + SUMMARY_PER_OPTION * max(1, options)


def summary_png(summary: PostSummary) -> bytes:
    """A closed question's share of answers on each option, in the order the chat saw them,
    the correct one highlighted; exactly summary_chart_size(options) pixels. Letters,
    numbers and shares only: no text that would need a Bengali or Hindi font."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    counts = summary.per_option
    k = len(counts)
    width, height = summary_chart_size(k)
    figure = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    n = summary.answered
    shares = [c / n if n else 0.0 for c in counts]
    ys = list(range(k))
    ax.barh(ys, shares, height=0.7,
            color=[CORRECT if o == summary.question.correct else OTHER for o in range(k)])
    for y, (count, share) in enumerate(zip(counts, shares, strict=True)):
        ax.text(share + 0.01, y, f"{count} ({share:.0%})", va="center", fontsize=9)
    ax.set_yticks(ys, [LETTERS[o] for o in range(k)], fontsize=10)
    ax.invert_yaxis()  # A on top, as the options are listed
    ax.set_xlim(0, 1.18)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_title(f"n={n}", fontsize=10, loc="left")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=DPI)
    return out.getvalue()


class PngCharts:
    """The core's ChartRenderer (bot/core/ports.py), wired in by bot/app.py."""

    def report_chart(self, reports: Sequence[QuizReport], title: str) -> bytes:
        return chart_png(reports, title)

    def summary_chart(self, summary: PostSummary) -> bytes:
        return summary_png(summary)
