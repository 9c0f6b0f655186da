"""Numbers and percentages as Babel formats them for our locales, without Babel's locale data.

Babel loads a locale's whole CLDR data (about 2 MB of objects each, English included) the
first time it formats a number in it, and keeps it for the process's life; the bot needs two
patterns of it. These are CLDR's for en, bn and hi with Latin digits (what Babel prints by
default): `#,##0.###` and `#,##0%`, grouped by threes in English and the Indian way
(12,34,567) in Bengali and Hindi, rounded half to even. tests/test_i18n.py checks the output
against Babel's own.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

# (primary, secondary) group sizes: "#,##0" and "#,##,##0"
_GROUPS = {"en": (3, 3), "bn": (3, 2), "hi": (3, 2)}
_THOUSANDTH = Decimal("0.001")
_WHOLE = Decimal(1)


def _grouped(digits: str, locale: str) -> str:
    primary, secondary = _GROUPS.get(locale, (3, 3))
    if len(digits) <= primary:
        return digits
    head, tail = digits[:-primary], digits[-primary:]
    groups = [tail]
    while len(head) > secondary:
        groups.append(head[-secondary:])
        head = head[:-secondary]
    groups.append(head)
    return ",".join(reversed(groups))


def _format(value: Decimal, step: Decimal, locale: str) -> str:
    rounded = value.quantize(step, rounding=ROUND_HALF_EVEN)
    whole, _, fraction = f"{abs(rounded):f}".partition(".")
    fraction = fraction.rstrip("0")
    text = _grouped(whole, locale) + (f".{fraction}" if fraction else "")
    return f"-{text}" if rounded.is_signed() else text


def _decimal(value: float) -> Decimal:
    return value if isinstance(value, Decimal) else Decimal(str(value))  # as Babel reads it


def format_decimal(value: float, locale: str) -> str:
    """`#,##0.###`: at most three decimals."""
    return _format(_decimal(value), _THOUSANDTH, locale)


def format_percent(share: float, locale: str) -> str:
    """`#,##0%`: `share` 0.5 is "50%"."""
    return _format(_decimal(share) * 100, _WHOLE, locale) + "%"
