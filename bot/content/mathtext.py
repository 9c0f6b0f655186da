"""Formulas: TeX math in the subset matplotlib's mathtext parses and draws, so no TeX
installation is needed. matplotlib is imported only when a formula is checked or drawn."""

from __future__ import annotations

import functools
import io
from typing import Any


class MathError(ValueError):
    """A formula mathtext cannot parse, with its reason."""


def _math(tex: str) -> str:
    tex = tex.strip()
    return tex if tex.startswith("$") and tex.endswith("$") and len(tex) > 1 else f"${tex}$"


@functools.cache
def _parser() -> Any:
    from matplotlib.mathtext import MathTextParser

    return MathTextParser("path")


def check(tex: str) -> None:
    """MathError unless mathtext parses `tex` (with or without its $…$)."""
    try:
        _parser().parse(_math(tex), dpi=72)
    except ValueError as exc:
        raise MathError(" ".join(str(exc).split())) from None


def png(tex: str, size: int, color: str = "#212121") -> bytes:
    """`tex` drawn at `size` points on a transparent background, as PNG bytes (Agg)."""
    from matplotlib.figure import Figure
    from matplotlib.font_manager import FontProperties

    # math_to_image, with a colour and a transparent background
    parser = _parser()
    prop = FontProperties(size=size)
    width, height, depth, _, _ = parser.parse(_math(tex), dpi=72, prop=prop)
    fig = Figure(figsize=(width / 72, height / 72))
    fig.text(0, depth / height, _math(tex), fontproperties=prop, color=color)
    out = io.BytesIO()
    fig.savefig(out, dpi=100, format="png", transparent=True)
    return out.getvalue()
