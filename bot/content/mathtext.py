"""Formulas: TeX math made MathML by latex2mathml and drawn by ziamath in its own STIX Two
Math font (glyphs as paths: no TeX installation, no system font), then made pixels by cairosvg.
Imported only when a formula is checked or drawn.

latex2mathml draws an unknown command as its own name and lets a stray `}` pass, so `check`
refuses both: a typo is an error at validation, not a wrong card.
"""

from __future__ import annotations

import functools
import re
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element


class MathError(ValueError):
    """A formula that cannot be parsed or drawn, with its reason."""


# latex2mathml's exceptions carry no message: what each one means
_REASONS = {
    "NumeratorNotFoundError": r"\frac has no numerator",
    "DenominatorNotFoundError": r"\frac has no denominator",
    "ExtraLeftOrMissingRightError": r"a \left without its \right, or a \right without a \left",
    "MissingSuperScriptOrSubscriptError": "^ or _ with nothing after it",
    "DoubleSubscriptsError": "two subscripts in a row (write x_{ab})",
    "DoubleSuperscriptsError": "two superscripts in a row (write x^{ab})",
    "NoAvailableTokensError": "it ends where a command's argument or a group's end is needed",
    "InvalidStyleForGenfracError": r"\genfrac's style must be 0, 1, 2 or 3",
    "MissingEndError": r"a \begin without its \end",
    "InvalidAlignmentError": "an array's columns must be aligned l, c or r",
    "InvalidWidthError": "a width that is not a TeX length",
    "LimitsMustFollowMathOperatorError": r"\limits must follow an operator such as \sum",
}
_COMMAND = re.compile(r"\\[A-Za-z]+")
_ORDINARY = ("∇", "∂")  # symbols in TeX (\nabla, \partial), operators in latex2mathml


def _body(tex: str) -> str:
    """The TeX without its $…$ or $$…$$ (either is allowed, as in the packs so far)."""
    tex = tex.strip()
    for fence in ("$$", "$"):
        if len(tex) > 2 * len(fence) - 1 and tex.startswith(fence) and tex.endswith(fence):
            return tex[len(fence):-len(fence)].strip()
    return tex


def _groups(tex: str) -> None:
    """MathError for a `$` inside, or a brace that is not closed or closes nothing."""
    depth, opened, escaped = 0, [], False
    for at, ch in enumerate(tex):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "$":
            raise MathError(r"a $ inside the formula (a formula is written without $…$; "
                            r"\$ is a dollar sign)")
        elif ch == "{":
            depth += 1
            opened.append(at)
        elif ch == "}":
            if not depth:
                raise MathError(f"a }} that closes no {{, at character {at + 1}")
            depth -= 1
            opened.pop()
    if opened:
        raise MathError(f"a {{ that is never closed, at character {opened[-1] + 1}")


@functools.cache
def _load() -> None:
    """Import ziamath (its STIX font is read then): its font lookup's importlib.resources.path
    is a DeprecationWarning on Python 3.11 and 3.12, nothing this code can act on."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import ziamath  # noqa: F401


def _mathml(tex: str) -> Element:
    """The MathML ziamath draws, or MathError."""
    from xml.etree.ElementTree import ParseError, fromstring

    _load()
    from ziamath.tex import tex2mml  # latex2mathml, with ziamath's fixes for what it draws

    body = _body(tex)
    if not body:
        raise MathError("the formula is empty")
    _groups(body)
    try:
        element = fromstring(tex2mml(body))
    except ParseError:  # latex2mathml passes a bare & through
        raise MathError("it cannot be parsed (an & outside an array or a matrix?)") from None
    except RecursionError:
        raise MathError("it is nested too deeply") from None
    except Exception as exc:  # latex2mathml's own, and its assertions, none with a message
        reason = _REASONS.get(type(exc).__name__) or " ".join(str(exc).split())
        raise MathError(reason or "it cannot be parsed") from None
    for node in element.iter():
        for text in (node.text, node.tail):
            if text and (unknown := _COMMAND.search(text)):
                raise MathError(f"unknown command {unknown.group()}")
        if node.tag.endswith("}mo") and node.text in _ORDINARY:
            node.set("lspace", "0em")  # an operator's spacing parts ∇ from its subscript
            node.set("rspace", "0em")
    return element


def _drawn(element: Element, size: float) -> str:
    """The formula as SVG, `size` pixels the font size; MathError if ziamath cannot lay it
    out."""
    from ziamath.zmath import Math

    try:
        return str(Math(element, size=size).svg())
    except RecursionError:
        raise MathError("it is nested too deeply") from None
    except Exception as exc:  # ziamath on MathML it does not lay out
        raise MathError(f"it cannot be drawn ({type(exc).__name__})") from None


def check(tex: str) -> None:
    """MathError unless `tex` (with or without its $…$) parses and can be drawn."""
    _drawn(_mathml(tex), 24)


def png(tex: str, size: int, color: str = "#212121") -> bytes:
    """`tex` drawn with a `size`-pixel font on a transparent background, as PNG bytes."""
    import cairosvg

    element = _mathml(tex)
    element.set("mathcolor", color)
    return bytes(cairosvg.svg2png(bytestring=_drawn(element, size).encode(), unsafe=False))


_SPACED = frozenset("+-−=·×<>≤≥≈→")  # binary operators and relations, spaced in plain text
_SUPERSCRIPTS = str.maketrans("0123456789+-−=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿ")
_SUBSCRIPTS = str.maketrans("0123456789+-−=()", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎")


def text(tex: str) -> str:
    """The formula as one line of Unicode text, for a terminal or a screen reader: fractions
    as a/b, powers and indices as raised or lowered digits where Unicode has them. Read from
    the same MathML the card draws, so it says what the card shows; the TeX as written if it
    cannot be parsed."""
    try:
        element = _mathml(tex)
    except MathError:
        return _body(tex)
    return " ".join(_plain(element).split())


def _plain(node: Element) -> str:
    tag = node.tag.rsplit("}", 1)[-1]
    parts = [_plain(child) for child in node]
    if tag == "mfrac" and len(parts) == 2:
        return f"{_grouped(parts[0])}/{_grouped(parts[1])}"
    if tag in ("msup", "mover") and len(parts) == 2:
        return parts[0] + _script(parts[1], up=True)
    if tag in ("msub", "munder") and len(parts) == 2:
        return parts[0] + _script(parts[1], up=False)
    if tag in ("msubsup", "munderover") and len(parts) == 3:  # a sum's or an integral's limits
        return parts[0] + _script(parts[1], up=False) + _script(parts[2], up=True) + " "
    if tag == "msqrt":
        return f"√{_grouped(''.join(parts))}"
    if tag == "mspace":
        return " "
    own = (node.text or "").strip() if tag in ("mi", "mn", "mo", "mtext", "ms") else ""
    if tag == "mtext" and node.text:
        own = node.text
    if tag == "mo" and own in _SPACED:
        own = f" {own} "
    return own + "".join(parts)


def _script(part: str, *, up: bool) -> str:
    """A power or an index: raised or lowered characters where Unicode has every one of them,
    else ^(…) or _(…)."""
    part = "".join(part.split())
    moved = part.translate(_SUPERSCRIPTS if up else _SUBSCRIPTS)
    if part and all(a != b for a, b in zip(part, moved, strict=True)):
        return moved
    return ("^" if up else "_") + _grouped(part)


def _grouped(part: str) -> str:
    """`part` in brackets where a / or ^ would otherwise bind only its nearest symbol."""
    part = part.strip()
    simple = len(part) == 1 or part.isalnum() or (part.startswith("(") and part.endswith(")"))
    return part if simple else f"({part})"
