"""Charts as PNG, drawn with Pillow: a question's close summary and the item analysis.

Each option is one bar across the chart with its label written on it: `B) its text` on the
left, `count (share)` on the right and ✓ on the correct one, by the letters in the order its
readers saw (the summary's shown order; the report's `ItemStats.shown`). The words are in the
reader's language; every string goes through `Drawing.text`, which splits it into runs one
font can draw (bot/reports/fonts.py) and lays each out with raqm, so Bengali conjuncts and
Devanagari vowel signs are shaped. Where no installed font has the language's script (or
Pillow has no raqm), the labels are in English, logged once, and pack text nobody can draw
is left out (an option by its letter, a question by its id).

Bars are rectangles, so Pillow draws the whole chart: one text path, no plotting library.
Pillow is imported when a chart is drawn, so a bot or a `quizbot report` without one never
loads it.

Sizes are in pixels of the sent image; the smallest text is SMALL (18 px), and the item
analysis is capped (bot/core/chat_analysis.py) so that Telegram's downscaling of a photo to
1,280 pixels on its longer side keeps it above 11 px.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.core.models import ItemStats, PostSummary, QuizReport
from bot.core.render import letter
from bot.i18n import Translator, translator
from bot.reports import fonts
from bot.reports.fonts import drawable
from bot.reports.worker import DrawingProcess

if TYPE_CHECKING:  # Pillow is imported when a chart is drawn
    from PIL import Image, ImageFont

    Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

log = logging.getLogger(__name__)

WIDTH = 720
PAD = 24
TITLE, BODY, SMALL = 26, 22, 18  # font sizes (pixels)
TITLE_LINE, BODY_LINE, SMALL_LINE = 36, 32, 28  # line heights
ROW = 36  # one option's bar
ROW_GAP = 6
GAP = 14  # between questions

BACKGROUND = "#ffffff"
INK = "#212121"
MUTED = "#546e7a"
TRACK = "#eef1f3"  # the bar's full width (100%)
CORRECT = "#81c784"
OTHER = "#b0bec5"
ELLIPSIS = "…"
PALETTE = 64  # colours in the PNG

_logged: set[str] = set()


@dataclass(frozen=True, slots=True)
class Drawn:
    """One run of text as drawn: the seam the golden tests read (no OCR)."""

    text: str
    family: str  # the font's family ("" when no font was found: Pillow's built-in one)
    path: str
    size: int


@dataclass
class Drawing:
    """An image and every string drawn on it, in order."""

    width: int
    height: int
    image: Image.Image = field(init=False)
    strings: list[str] = field(default_factory=list)  # each call's whole string
    runs: list[Drawn] = field(default_factory=list)  # how each was split among fonts

    def __post_init__(self) -> None:
        from PIL import Image, ImageDraw

        self.image = Image.new("RGB", (self.width, self.height), BACKGROUND)
        self._draw = ImageDraw.Draw(self.image)

    def _pieces(self, text: str, size: int, mono: bool = False
                ) -> list[tuple[str, Font, Drawn]]:
        from PIL import ImageFont

        faces = fonts.mono_faces() if mono else fonts.faces()
        out: list[tuple[str, Font, Drawn]] = []
        for run, face in fonts.runs(text, faces):
            face = face or (faces[0] if faces else None)
            if face is None:
                out.append((run, ImageFont.load_default(size), Drawn(run, "", "", size)))
            else:
                out.append((run, fonts.font(face.path, size),
                            Drawn(run, face.family, face.path, size)))
        return out

    def measure(self, text: str, size: int, mono: bool = False) -> float:
        return sum(f.getlength(run) for run, f, _ in self._pieces(text, size, mono))

    def fit(self, text: str, size: int, width: float) -> str:
        """`text` on one line of at most `width` pixels, cut at a word (or else between
        characters that are not marks) with an ellipsis."""
        text = " ".join(text.split())
        if self.measure(text, size) <= width:
            return text
        words = text.split(" ")
        while len(words) > 1:
            words.pop()
            candidate = " ".join(words).rstrip(",;:–—-") + ELLIPSIS
            if self.measure(candidate, size) <= width:
                return candidate
        cut = len(text)
        while cut > 1:
            cut -= 1
            if fonts.clings(text[cut]) or text[cut - 1] in fonts.VIRAMAS:
                continue
            candidate = text[:cut] + ELLIPSIS
            if self.measure(candidate, size) <= width:
                return candidate
        return ELLIPSIS

    def text(self, x: float, baseline: float, text: str, size: int, fill: str = INK,
             *, right: bool = False, mono: bool = False) -> float:
        """`text` from (x, baseline), or ending at x when `right` (`mono`: in the monospace
        font, for code); recorded. Returns the x where it ends."""
        if not text:
            return x
        pieces = self._pieces(text, size, mono)
        if right:
            x -= sum(f.getlength(run) for run, f, _ in pieces)
        self.strings.append(text)
        for run, font, drawn in pieces:
            self._draw.text((x, baseline), run, font=font, fill=fill, anchor="ls")
            x += font.getlength(run)
            self.runs.append(drawn)
        return x

    def box(self, x0: float, y0: float, x1: float, y1: float, fill: str) -> None:
        if x1 > x0:
            self._draw.rounded_rectangle((x0, y0, x1, y1), radius=4, fill=fill)

    def png(self) -> bytes:
        """A 64-colour PNG: a chart has a handful of colours and their anti-aliased edges,
        so it is a third the size of a true-colour one and looks the same."""
        out = io.BytesIO()
        self.image.quantize(PALETTE).save(out, format="PNG")
        return out.getvalue()


def labels(locale: str) -> Translator:
    """The chart's words in `locale`, or in English where no font (or no raqm) can write
    it: said once per language in the log."""
    if fonts.can_write(locale):
        return translator(locale)
    if locale not in _logged:
        _logged.add(locale)
        log.warning("no font for the %s script (fonts-noto-core) or no raqm layout in Pillow: "
                    "chart labels in English (logged once)", locale)
    return translator("en")


def _bar(d: Drawing, y: float, label: str, count: int, share: float | None,
         correct: bool, t: Translator) -> None:
    """One option: the track, the share filled in, its label on the left, the figures on
    the right."""
    x0, x1 = PAD, d.width - PAD
    d.box(x0, y, x1, y + ROW, TRACK)
    d.box(x0, y, x0 + (x1 - x0) * (share or 0.0), y + ROW, CORRECT if correct else OTHER)
    mark = "✓" if drawable("✓") else "*"  # no symbol font: the report's own mark
    figures = f"{t.number(count)} ({t.percent(share or 0.0)})" + (f" {mark}" if correct else "")
    baseline = y + ROW / 2 + BODY * 0.36
    d.text(x1 - 10, baseline, figures, BODY, right=True)
    room = (x1 - 10) - (x0 + 10) - d.measure(figures, BODY) - 16
    d.text(x0 + 10, baseline, d.fit(label, BODY, room), BODY)


def _option_label(letter_: str, text: str) -> str:
    return f"{letter_}) {text}" if text and drawable(text) else f"{letter_})"


# a question's close summary -------------------------------------------------------------------
def summary_chart_size(options: int) -> tuple[int, int]:
    """(width, height) in pixels of a closed question's chart with `options` options."""
    head = PAD + 2 * TITLE_LINE + BODY_LINE + 8
    return WIDTH, head + max(1, options) * (ROW + ROW_GAP) + PAD - ROW_GAP


def summary_drawing(summary: PostSummary) -> Drawing:
    q = summary.question
    t = labels(q.locale)
    d = Drawing(*summary_chart_size(len(summary.per_option)))
    y: float = PAD
    prompt = q.prompt if drawable(q.prompt) else q.question_id
    for line in _wrap(d, prompt, TITLE, d.width - 2 * PAD, lines=2):
        d.text(PAD, y + TITLE, line, TITLE)
        y += TITLE_LINE
    y = PAD + 2 * TITLE_LINE
    n = summary.answered
    tally = t.ngettext("{n} person answered", "{n} people answered", n)
    if n:
        tally += " · " + t.gettext("{share} right", share=t.percent(summary.share_right))
    d.text(PAD, y + BODY, tally, BODY, MUTED)
    y += BODY_LINE + 8
    for i, count in enumerate(summary.per_option):
        text = q.options[i] if i < len(q.options) else ""
        _bar(d, y, _option_label(letter(i), text), count, count / n if n else 0.0,
             i == q.correct, t)
        y += ROW + ROW_GAP
    return d


def summary_png(summary: PostSummary) -> bytes:
    """A closed question's share of answers on each option, in the order and letters the
    chat saw, the correct one marked; exactly summary_chart_size(options) pixels."""
    return summary_drawing(summary).png()


def _wrap(d: Drawing, text: str, size: int, width: float, lines: int) -> list[str]:
    """`text` in at most `lines` lines of `width` pixels, the last one cut to fit."""
    words = " ".join(text.split()).split(" ")
    out: list[str] = []
    while words and len(out) < lines - 1:
        line = words.pop(0)
        while words and d.measure(f"{line} {words[0]}", size) <= width:
            line += " " + words.pop(0)
        if d.measure(line, size) > width:  # one word wider than the line
            words.insert(0, line)
            break
        out.append(line)
    if words:
        out.append(d.fit(" ".join(words), size, width))
    return out


# the item analysis ----------------------------------------------------------------------------
def _item_height(item: ItemStats) -> int:
    return BODY_LINE + len(item.option_counts) * (ROW + ROW_GAP) + GAP


def chart_size(reports: Sequence[QuizReport]) -> tuple[int, int]:
    """(width, height) in pixels: a heading, then per quiz its title line and a panel per
    question (one line saying "no answers yet" when there is no quiz)."""
    height = PAD + TITLE_LINE + SMALL_LINE
    if not reports:
        return WIDTH, height + BODY_LINE + PAD
    for report in reports:
        height += GAP + BODY_LINE + sum(_item_height(i) for i in report.items)
    return WIDTH, height + PAD - GAP


def chart_drawing(reports: Sequence[QuizReport], title: str | None = None,
                  locale: str = "en") -> Drawing:
    t = labels(locale)
    d = Drawing(*chart_size(reports))
    y: float = PAD
    heading = title if title and drawable(title) else t.gettext("Item analysis")
    d.text(PAD, y + TITLE, d.fit(heading, TITLE, d.width - 2 * PAD), TITLE)
    y += TITLE_LINE
    if not reports:
        d.text(PAD, y + SMALL_LINE + BODY, t.gettext("No answers yet."), BODY, MUTED)
        return d
    note = (t.gettext("Letters as this chat last saw each question.") if reports[0].as_seen
            else t.gettext("Letters in the pack's order (each chat saw its own shuffle)."))
    d.text(PAD, y + SMALL, d.fit(note, SMALL, d.width - 2 * PAD), SMALL, MUTED)
    y += SMALL_LINE
    for report in reports:
        y += GAP
        people = t.ngettext("{n} person", "{n} people", report.people)
        answers = t.ngettext("{n} answer", "{n} answers", report.answers)
        figures = f"{people} · {answers}"
        d.text(d.width - PAD, y + BODY, figures, BODY, MUTED, right=True)
        name = f"{report.title} ({report.quiz_id})" if drawable(report.title) else report.quiz_id
        room = d.width - 2 * PAD - d.measure(figures, BODY) - 16
        d.text(PAD, y + BODY, d.fit(name, BODY, room), BODY)
        y += BODY_LINE
        for item in report.items:
            y = _item(d, y, item, t)
    return d


def _item(d: Drawing, y: float, item: ItemStats, t: Translator) -> float:
    """A question's panel from `y`: its prompt and figures, a bar per option; the next y."""
    n = item.answered
    figures = t.ngettext("{n} answer", "{n} answers", n)
    if n:
        figures += " · " + t.gettext("{share} right", share=t.percent(item.share_right or 0.0))
    d.text(d.width - PAD, y + SMALL, figures, SMALL, MUTED, right=True)
    prompt = item.prompt if drawable(item.prompt) else item.question_id
    room = d.width - 2 * PAD - d.measure(figures, SMALL) - 16
    d.text(PAD, y + SMALL, d.fit(prompt, SMALL, room), SMALL)
    y += BODY_LINE
    for option in item.shown_options():
        _bar(d, y, _option_label(option.letter, option.text), option.count, option.share,
             option.correct, t)
        y += ROW + ROW_GAP
    return y - ROW_GAP + GAP


def chart_png(reports: Sequence[QuizReport], title: str | None = None,
              locale: str = "en") -> bytes:
    """The chart as PNG bytes, exactly chart_size(reports) pixels."""
    return chart_drawing(reports, title, locale).png()


class PngCharts:
    """The core's ChartRenderer (bot/core/ports/), wired in by bot/app.py. With `drawing`,
    every chart is drawn in that child process (bot/reports/worker.py), so the bot's process
    never loads Pillow and its fonts."""

    def __init__(self, drawing: DrawingProcess | None = None) -> None:
        self.drawing = drawing

    def report_chart(self, reports: Sequence[QuizReport], locale: str) -> bytes:
        if self.drawing is not None:
            return self.drawing.run(chart_png, reports, None, locale)
        return chart_png(reports, None, locale)

    def summary_chart(self, summary: PostSummary) -> bytes:
        if self.drawing is not None:
            return self.drawing.run(summary_png, summary)
        return summary_png(summary)

