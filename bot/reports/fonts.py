"""Fonts for charts: found by family through fontconfig, each with the characters it covers,
and text split into runs that one font can draw, so Bengali, Devanagari and Latin in one
label each get a font that has them. Pillow lays every run out with raqm (HarfBuzz), which
shapes conjuncts and vowel signs; without raqm, Indic text would come out unshaped, so a
chart in such a script then falls back to English labels (bot/reports/png.py).

Without fontconfig's `fc-list`, the fonts are looked for at Debian's paths
(`fonts-noto-core`, `fonts-dejavu-core`) and assumed to cover their script's block.
"""

from __future__ import annotations

import bisect
import functools
import logging
import shutil
import subprocess
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Pillow is imported when a chart is drawn
    from PIL import ImageFont

log = logging.getLogger(__name__)

# (family, a known path, the block it is for when its coverage cannot be asked): Latin first,
# so Latin letters take Noto Sans even where a script font has some too
FAMILIES: tuple[tuple[str, str, tuple[int, int] | None], ...] = (
    ("Noto Sans", "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf", (0x20, 0x24F)),
    ("Noto Sans Bengali", "/usr/share/fonts/truetype/noto/NotoSansBengali-Regular.ttf",
     (0x980, 0x9FF)),
    ("Noto Sans Devanagari", "/usr/share/fonts/truetype/noto/NotoSansDevanagari-Regular.ttf",
     (0x900, 0x97F)),
    ("Noto Sans Symbols2", "/usr/share/fonts/truetype/noto/NotoSansSymbols2-Regular.ttf",
     (0x2190, 0x2BFF)),  # ✓
    ("DejaVu Sans", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", (0x20, 0x24F)),
)
# code on a question's card (bot/reports/card.py): Debian's fonts-noto-mono, else DejaVu's
MONO_FAMILIES: tuple[tuple[str, str, tuple[int, int] | None], ...] = (
    ("Noto Sans Mono", "/usr/share/fonts/truetype/noto/NotoSansMono-Regular.ttf", (0x20, 0x24F)),
    ("DejaVu Sans Mono", "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", (0x20, 0x24F)),
)
REGULAR = ("Regular", "Book")  # DejaVu calls its regular face Book
# the script each interface language is written in, by a letter of it: a chart in that
# language needs a font that has it
SCRIPT_SAMPLE = {"bn": "ক", "hi": "क"}
JOINERS = frozenset("\u200c\u200d")  # zero-width (non-)joiners belong to their neighbours
VIRAMAS = frozenset("\u094d\u09cd")  # a cut right after one would break a conjunct
SHAPED = range(0x900, 0xE00)  # the Indic blocks: unreadable unless shaped


@dataclass(frozen=True, slots=True)
class Face:
    """One font file and the code points it has, as sorted inclusive ranges."""

    family: str
    path: str
    ranges: tuple[tuple[int, int], ...]

    def covers(self, char: str) -> bool:
        point = ord(char)
        i = bisect.bisect_right(self.ranges, (point, 0x10FFFF)) - 1
        return i >= 0 and self.ranges[i][0] <= point <= self.ranges[i][1]


def parse_charset(text: str) -> tuple[tuple[int, int], ...]:
    """fontconfig's charset (`20-7e a0-17f 2013`, hexadecimal) as ranges."""
    ranges = []
    for part in text.split():
        start, _, end = part.partition("-")
        ranges.append((int(start, 16), int(end or start, 16)))
    return tuple(sorted(ranges))


def _fc_face(family: str) -> Face | None:
    """The regular face of `family` as fontconfig knows it, or None if it has none."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return None
    try:
        out = subprocess.run(
            [fc_list, "-f", "%{family[0]}\t%{style[0]}\t%{file}\t%{charset}\n", family],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("fc-list failed (%s): fonts looked for at known paths", exc)
        return None
    for line in out.splitlines():
        name, style, path, charset = [*line.split("\t"), "", "", ""][:4]
        if name == family and style in REGULAR and path.endswith((".ttf", ".otf")) and charset:
            return Face(family, path, parse_charset(charset))
    return None


@functools.cache
def faces() -> tuple[Face, ...]:
    """The installed faces of FAMILIES, in their order (found once per process)."""
    return _installed(FAMILIES)


@functools.cache
def mono_faces() -> tuple[Face, ...]:
    """A monospace face first (the first of MONO_FAMILIES installed), then faces(): code's
    comments and strings in Bengali or Devanagari still get a font that has them."""
    return _installed(MONO_FAMILIES)[:1] + faces()


def _installed(families: Sequence[tuple[str, str, tuple[int, int] | None]]) -> tuple[Face, ...]:
    found = []
    has_fc = shutil.which("fc-list") is not None
    for family, path, block in families:
        face = _fc_face(family) if has_fc else None
        if face is None and block is not None and Path(path).is_file():
            face = Face(family, path, (block,))
        if face is not None:
            found.append(face)
    return tuple(found)


def shaping() -> bool:
    """Whether Pillow lays text out with raqm (needed for Bengali and Devanagari)."""
    from PIL import features

    return bool(features.check("raqm"))


def face_for(char: str, available: Sequence[Face]) -> Face | None:
    return next((f for f in available if f.covers(char)), None)


def can_write(locale: str, available: Sequence[Face] | None = None) -> bool:
    """Whether a chart can draw `locale`'s script, shaped: a font has it and raqm is here."""
    sample = SCRIPT_SAMPLE.get(locale)
    if sample is None:
        return bool(faces() if available is None else available)
    return shaping() and face_for(sample, faces() if available is None else available) is not None


def clings(char: str) -> bool:
    """A mark, a joiner or a space: drawn with the run before it, never starting one."""
    return char in JOINERS or char.isspace() or unicodedata.category(char).startswith("M")


def runs(text: str, available: Sequence[Face]) -> Iterator[tuple[str, Face | None]]:
    """`text` split into (run, face) pieces, each drawn by one face: a run keeps its face
    while that face has the next character, so spaces, digits and marks stay in it. None:
    no face has the run's first character (it is drawn with the first face, as boxes)."""
    current: Face | None = None
    start = 0
    for i, char in enumerate(text):
        if i == start:
            current = face_for(char, available)
            continue
        if clings(char) or (current is not None and current.covers(char)):
            continue
        yield text[start:i], current
        start = i
        current = face_for(char, available)
    if start < len(text):
        yield text[start:], current


def drawable(text: str) -> bool:
    """Whether an installed font has every character of `text`, shaped where it must be."""
    if not shaping() and any(ord(c) in SHAPED for c in text):
        return False
    return all(face is not None for _, face in runs(text, faces()))


@functools.cache
def font(path: str, size: int) -> ImageFont.FreeTypeFont:
    from PIL import ImageFont

    layout = ImageFont.Layout.RAQM if shaping() else ImageFont.Layout.BASIC
    return ImageFont.truetype(path, size, layout_engine=layout)
