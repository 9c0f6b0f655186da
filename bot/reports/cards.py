"""Question cards kept on disk by the hash of what they show: each card is drawn once per
(question, language, theme) and read back after that, also by the next process.

The key covers every text drawn, the image's bytes (so an edited picture makes a new card),
the theme, this package's drawing code and the formula renderer's code and versions; the
folder is QUIZBOT_CACHE_DIR's `cards/`, beside the content cache. A folder that cannot be
written only means drawing every time.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import tempfile
from dataclasses import replace
from pathlib import Path

from bot.core.models import ShownQuestion
from bot.reports.card import STYLE, CardText, card_png
from bot.reports.worker import DrawingProcess, DrawingTimedOut

log = logging.getLogger(__name__)

SUBDIR = "cards"
THEME = f"light-{STYLE}"
_SOURCES = ("card.py", "cards.py", "fonts.py", "png.py", "../content/mathtext.py")
_FORMULAS = ("ziamath", "latex2mathml")  # their versions: how a formula is laid out


@functools.cache
def _code_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in _SOURCES:
        digest.update((here / name).read_bytes())
    for package in _FORMULAS:
        try:
            digest.update(version(package).encode())
        except PackageNotFoundError:
            pass
    return digest.hexdigest()[:16]


def card_key(card: CardText) -> str:
    """The SHA-256 of what the card shows and how it is drawn."""
    digest = hashlib.sha256(json.dumps(
        [_code_version(), THEME, card.prompt, card.code, card.code_language, card.formula,
         card.options], ensure_ascii=False).encode())
    if card.image is not None:
        digest.update(Path(card.image).read_bytes())
    return digest.hexdigest()


class PngCards:
    """The core's CardRenderer (bot/core/ports/platform.py): blocking, called in a worker thread.
    With `drawing`, a card not kept yet is drawn in that child process (worker.py), so the
    bot's process never loads Pillow, ziamath or Pygments for it; `quizbot run` does that."""

    def __init__(self, cache_dir: Path | None, drawing: DrawingProcess | None = None) -> None:
        self.directory = cache_dir / SUBDIR if cache_dir is not None else None
        self.drawing = drawing
        self.drawn = 0  # cards drawn (not read back) by this process
        # cards whose picture took the drawing past its limit: drawn without it, once, and
        # not kept on disk (a slow moment is not a verdict on the picture forever)
        self._without_picture: dict[str, bytes] = {}

    def card_key(self, question: ShownQuestion) -> str:
        return card_key(CardText.of(question))

    def question_card(self, question: ShownQuestion) -> bytes:
        card = CardText.of(question)
        key = card_key(card)
        path = self.directory / f"{key}.png" if self.directory is not None else None
        if path is not None:
            try:
                return path.read_bytes()
            except OSError:
                pass  # not drawn yet
        if key in self._without_picture:
            return self._without_picture[key]
        if self.drawing is None:
            png = card_png(card)
        else:
            try:
                png = self.drawing.run(card_png, card)
            except DrawingTimedOut:
                if card.image is None:
                    raise
                log.warning("the card of question %s is sent without its picture %s: "
                            "drawing it ran over %g s", question.question_id, card.image,
                            self.drawing.limit)
                png = self.drawing.run(card_png, replace(card, image=None))
                self._without_picture[key] = png
                self.drawn += 1
                return png
        self.drawn += 1
        if path is not None:
            self._store(path, png)
        return png

    def _store(self, path: Path, png: bytes) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".png")
            with os.fdopen(fd, "wb") as file:
                file.write(png)
            os.replace(tmp, path)
        except OSError as exc:
            log.info("question cards are not kept (%s): each is drawn when sent", exc)
