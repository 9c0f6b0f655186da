"""Charts as inline SVG, drawn on the server: a few dozen rectangles and one polyline need no
JavaScript library, print and scale with the page, and follow its colours (CSS variables,
so dark mode too). Every chart has a <title> and a text table beside it for screen readers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from html import escape

from bot.core.ports import DayCount
from bot.i18n import Translator

WIDTH, HEIGHT, PAD = 600, 160, 24


def _days(days: Sequence[DayCount], first: date, count: int) -> list[DayCount]:
    by_day = {d.day: d for d in days}
    return [by_day.get(first + timedelta(n), DayCount(first + timedelta(n), 0, 0))
            for n in range(count)]


def answers_per_day(days: Sequence[DayCount], first: date, count: int, title: str,
                    t: Translator) -> str:
    """Bars of answers per day, the right ones darker."""
    filled = _days(days, first, count)
    most = max((d.answered for d in filled), default=0) or 1
    step = (WIDTH - 2 * PAD) / count
    bars = []
    for n, d in enumerate(filled):
        x = PAD + n * step
        h = (HEIGHT - 2 * PAD) * d.answered / most
        right = (HEIGHT - 2 * PAD) * d.correct / most
        label = escape(f"{d.day.isoformat()}: {t.number(d.answered)} / {t.number(d.correct)}")
        bars.append(
            f'<g><title>{label}</title>'
            f'<rect class="bar" x="{x + 1:.1f}" y="{HEIGHT - PAD - h:.1f}" '
            f'width="{max(step - 2, 1):.1f}" height="{h:.1f}"/>'
            f'<rect class="bar-right" x="{x + 1:.1f}" y="{HEIGHT - PAD - right:.1f}" '
            f'width="{max(step - 2, 1):.1f}" height="{right:.1f}"/></g>')
    return _frame(title, "".join(bars), first, filled[-1].day, t.number(most))


def accuracy_over_time(days: Sequence[DayCount], first: date, count: int, title: str,
                       t: Translator) -> str:
    """A line of each day's share of right answers (days without answers left out)."""
    step = (WIDTH - 2 * PAD) / count
    points = []
    for n, d in enumerate(_days(days, first, count)):
        if d.answered:
            x = PAD + n * step + step / 2
            y = HEIGHT - PAD - (HEIGHT - 2 * PAD) * d.correct / d.answered
            points.append(f"{x:.1f},{y:.1f}")
    dots = "".join(f'<circle class="dot" cx="{p.split(",")[0]}" cy="{p.split(",")[1]}" r="3"/>'
                   for p in points)
    line = f'<polyline class="line" points="{" ".join(points)}"/>' if points else ""
    last = first + timedelta(count - 1)
    return _frame(title, line + dots, first, last, t.percent(1.0))


def _frame(title: str, body: str, first: date, last: date, top: str) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<line class="axis" x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" '
        f'y2="{HEIGHT - PAD}"/>'
        f'<text class="tick" x="{PAD}" y="{PAD - 8}">{escape(top)}</text>'
        f'<text class="tick" x="{PAD}" y="{HEIGHT - 6}">{first.isoformat()}</text>'
        f'<text class="tick end" x="{WIDTH - PAD}" y="{HEIGHT - 6}">{last.isoformat()}</text>'
        f"{body}</svg>")


def option_bars(shares: Sequence[tuple[str, float, bool]], title: str) -> str:
    """One question: a horizontal bar per option (letter, share, correct)."""
    row = 22
    height = row * len(shares) + 4
    bars = []
    for n, (letter, share, correct) in enumerate(shares):
        y = 2 + n * row
        width = (WIDTH - 60) * share
        cls = "bar-right" if correct else "bar"
        bars.append(f'<text class="tick" x="4" y="{y + 15}">{escape(letter)}</text>'
                    f'<rect class="{cls}" x="30" y="{y + 2}" width="{width:.1f}" height="16"/>'
                    f'<text class="tick" x="{34 + width:.1f}" y="{y + 15}">'
                    f"{round(share * 100)}%</text>")
    return (f'<svg class="chart small" viewBox="0 0 {WIDTH} {height}" role="img" '
            f'aria-label="{escape(title)}"><title>{escape(title)}</title>{"".join(bars)}</svg>')
