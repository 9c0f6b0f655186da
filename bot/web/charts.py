"""Charts as inline SVG, drawn on the server: a few dozen rectangles and one polyline need no
JavaScript library, print and scale with the page, and follow its colours (CSS variables,
so dark mode too). Every chart has a <title> and a text table beside it for screen readers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from html import escape

from bot.core.ports import DayCount
from bot.i18n import Translator

WIDTH, HEIGHT, PAD = 600, 160, 8


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
    # a zero-length round-capped line: a dot that stays round when the drawing is stretched
    dots = "".join(f'<line class="dot" x1="{x}" y1="{y}" x2="{x}" y2="{y}"/>'
                   for x, y in (p.split(",") for p in points))
    line = f'<polyline class="line" points="{" ".join(points)}"/>' if points else ""
    last = first + timedelta(count - 1)
    return _frame(title, line + dots, first, last, t.percent(1.0))


def _frame(title: str, body: str, first: date, last: date, top: str) -> str:
    # the labels are HTML around the drawing, so they keep the page's text size at any width
    return (
        f'<figure class="chart-box"><div class="tick">{escape(top)}</div>'
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" preserveAspectRatio="none" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<line class="axis" x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" '
        f'y2="{HEIGHT - PAD}"/>{body}</svg>'
        f'<figcaption class="axis-labels"><span>{first.isoformat()}</span>'
        f'<span>{last.isoformat()}</span></figcaption></figure>')


def share_bar(share: float, correct: bool, title: str) -> str:
    """One option's share as a bar, for its row of a question's table (the right one green)."""
    cls = "bar-right" if correct else "bar"
    return (f'<svg class="share" viewBox="0 0 100 10" preserveAspectRatio="none" role="img" '
            f'aria-label="{escape(title)}"><rect class="track" x="0" y="0" width="100" '
            f'height="10"/><rect class="{cls}" x="0" y="0" width="{100 * share:.1f}" '
            f'height="10"/></svg>')
