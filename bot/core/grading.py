"""Grading an answer of every kind of question: pure functions, no I/O, never raising.

`grade(key, order, response)` reads a person's response (a shown option, several, a typed
number or text, an order) against the question's `Key` and the post's option order, and gives
either a `Graded` answer (what storage records: the canonical option or the canonical text,
right or wrong) or an `Unreadable` one: a response of the wrong shape for the kind (a forged
or stale component) or a typed answer that cannot be read, which is not recorded, so the
person may try again.

Several right answers are scored all or nothing: boards, streaks, FSRS grades and item
analysis count right and wrong, and partial credit on a board would reward picking every
option. The reply still shows how many of the right options were picked (`partial`).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from bot.content.items import Kind, Question
from bot.core.models import Ordered, Picks, Response, Typed

LETTERS = "ABCDEFGHIJKL"  # the options' letters, as every platform labels them
TYPED_CHARS = 200  # longer than any short answer, number or order: not read, not stored


@dataclass(frozen=True, slots=True)
class Key:
    """What a question's answers are graded against, its texts read and normalised once.

    `answers`: the canonical right options (choice, truefalse, multi); `low`..`high`: a
    numeric's inclusive range; `units`: its unit in every language; `forms`: a text's
    accepted answers in every language and its Latin spellings."""

    kind: Kind
    answers: frozenset[int] = frozenset()
    low: float = 0.0
    high: float = 0.0
    units: tuple[str, ...] = ()
    forms: tuple[str, ...] = ()

    @classmethod
    def of(cls, question: Question) -> Key:
        """A question's key (an order's is its options' count: they are listed in order)."""
        kind = question.kind
        if kind is Kind.NUMERIC and question.numeric is not None:
            numeric = question.numeric
            units = numeric.unit.as_dict().values() if numeric.unit is not None else ()
            return cls.numeric(numeric.low, numeric.high, units)
        if kind is Kind.TEXT and question.accept is not None:
            accept = question.accept
            return cls.text([*(f for forms in accept.texts.values() for f in forms),
                             *accept.latin])
        return cls(kind, answers=frozenset(question.answers))

    @classmethod
    def numeric(cls, low: float, high: float, units: Iterable[str] = ()) -> Key:
        # longest first: "GiB" is not read as a number followed by "B"
        folded = {normalise_text(u) for u in units} - {""}
        return cls(Kind.NUMERIC, low=low, high=high,
                   units=tuple(sorted(folded, key=len, reverse=True)))

    @classmethod
    def text(cls, forms: Iterable[str]) -> Key:
        return cls(Kind.TEXT, forms=tuple(dict.fromkeys(
            f for f in map(normalise_text, forms) if f)))


@dataclass(frozen=True, slots=True)
class Graded:
    """A readable answer. `option`: the canonical option picked (choice, truefalse), -1 for
    the other kinds; `response`: their canonical form as stored (multi "0,2", sorted
    canonical options; order "2,0,1", canonical options in the order given; numeric the
    number; text the normalised text); `partial`: for multi (right picks, right options)."""

    correct: bool
    option: int = -1
    response: str | None = None
    partial: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Unreadable:
    """Not an answer to this question, and not recorded. `expected`: the kind of typed
    answer that could not be read (what to tell the person to type); None for a response
    of the wrong shape or out of range (a forged or stale component)."""

    expected: Kind | None = None


def grade(key: Key, order: Sequence[int], response: Response) -> Graded | Unreadable:
    """`order[shown] = canonical`: the post's option order."""
    try:
        return _grade(key, tuple(order), response)
    except (ValueError, TypeError, OverflowError, IndexError):  # never a crash on an answer
        return Unreadable(key.kind if isinstance(response, Typed) else None)


def _grade(key: Key, order: tuple[int, ...], response: Response) -> Graded | Unreadable:
    kind = key.kind
    if kind in (Kind.CHOICE, Kind.TRUEFALSE):
        if not _index(response, len(order)):
            return Unreadable()
        assert isinstance(response, int)
        canonical = order[response]
        return Graded(canonical in key.answers, option=canonical)
    if kind is Kind.MULTI:
        return _multi(key, order, response)
    if kind is Kind.ORDER:
        return _order(order, response)
    if not isinstance(response, Typed) or not isinstance(response.text, str):
        return Unreadable()
    if kind is Kind.NUMERIC:
        number = parse_number(response.text, key.units)
        if number is None:
            return Unreadable(Kind.NUMERIC)
        return Graded(in_range(number, key.low, key.high), response=number_text(number))
    text = normalise_text(response.text) if len(response.text) <= TYPED_CHARS else ""
    if not text:
        return Unreadable(Kind.TEXT)
    return Graded(text_matches(text, key.forms), response=text)


def _index(value: object, size: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < size


def _indexes(values: Iterable[object], size: int) -> list[int] | None:
    """Shown indexes, every one of them an option's; None otherwise."""
    try:
        listed = list(values)
    except TypeError:
        return None
    checked = [i for i in listed if isinstance(i, int) and _index(i, size)]
    return checked if len(checked) == len(listed) else None


def _multi(key: Key, order: tuple[int, ...], response: Response) -> Graded | Unreadable:
    shown: Iterable[object]
    if isinstance(response, Picks):
        shown = response.shown
    elif isinstance(response, Typed):  # letters typed: "A C", "ac", "a, c"
        letters = parse_letters(response.text, len(order))
        if letters is None:
            return Unreadable(Kind.MULTI)
        shown = letters
    else:
        return Unreadable()
    picked = _indexes(shown, len(order))
    if not picked:
        return Unreadable(Kind.MULTI if isinstance(response, Typed) else None)
    canonical = frozenset(order[i] for i in picked)
    return Graded(
        canonical == key.answers,
        response=",".join(map(str, sorted(canonical))),
        partial=(len(canonical & key.answers), len(key.answers)),
    )


def _order(order: tuple[int, ...], response: Response) -> Graded | Unreadable:
    size = len(order)
    shown: Iterable[object]
    if isinstance(response, Ordered):
        shown = response.shown
    elif isinstance(response, Typed):
        parsed = parse_order(response.text, size)
        if parsed is None:
            return Unreadable(Kind.ORDER)
        shown = parsed
    else:
        return Unreadable()
    picked = _indexes(shown, size)
    if not picked or len(picked) != size or len(set(picked)) != size:
        return Unreadable(Kind.ORDER if isinstance(response, Typed) else None)
    canonical = tuple(order[i] for i in picked)
    # the pack lists the items in the right order: canonical index = place in it
    return Graded(canonical == tuple(range(size)), response=",".join(map(str, canonical)))


# --- stored forms, read back (an earlier answer shown again, a summary's counts) ----------


def stored_options(response: str | None) -> tuple[int, ...]:
    """A stored multi's or order's canonical options ("0,2" -> (0, 2)); () when unreadable."""
    if not response:
        return ()
    try:
        return tuple(int(part) for part in response.split(","))
    except ValueError:
        return ()


def stored_number(response: str | None) -> float | None:
    try:
        number = float(response) if response else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) else None


def number_text(number: float) -> str:
    """A number as stored: its shortest exact form, "2.9", "100000" (no ".0")."""
    text = repr(float(number))
    return text[:-2] if text.endswith(".0") else text


def in_range(number: float, low: float, high: float) -> bool:
    """Inclusive, with a margin for the bounds' floating point (2.87 + 0.1 is 2.9699...)."""
    margin = 1e-9 * max(1.0, abs(low), abs(high))
    return low - margin <= number <= high + margin


# --- numbers ------------------------------------------------------------------------------

_SUPERSCRIPTS = {ord(c): d for c, d in zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-", strict=True)}
_SUPERSCRIPT_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻]+")
_MINUS = str.maketrans({"−": "-", "–": "-", "﹣": "-", "－": "-"})
_NUMBER = re.compile(
    r"(?P<sign>[+-])?"
    r"(?P<int>[0-9]+(?:[, ][0-9]+)*)?(?:\.(?P<frac>[0-9]*))?"
    r"(?:[eE](?P<e>[+-]?[0-9]{1,4})"
    r"|[×xX*·](?:10)(?:\^|\*\*)(?P<p>[+-]?[0-9]{1,4}))?"
)
# thousands grouped by threes (1,000,000) or the Indian way (10,00,000: threes, then twos)
_WESTERN = re.compile(r"[0-9]{1,3}(?:S[0-9]{3})+")
_INDIAN = re.compile(r"[0-9]{1,2}(?:S[0-9]{2})*S[0-9]{3}")


def _ascii_digits(text: str) -> str:
    """Every script's decimal digits (Bengali ০-৯, Devanagari ०-९, full width) as 0-9."""
    return "".join(
        str(d) if (d := unicodedata.decimal(ch, None)) is not None else ch for ch in text
    )


def parse_number(text: str, units: Sequence[str] = ()) -> float | None:
    """A typed number, or None. Locale digits, thousands separators (",", a space, a thin
    space; Indian grouping), a decimal point, a sign, an exponent ("1e9", "1.2×10^9",
    "1.2×10⁹") and a trailing unit among `units` (normalised, longest first)."""
    if not isinstance(text, str) or len(text) > TYPED_CHARS:
        return None
    # superscripts before NFKC, which would make "10⁹" read 109
    s = _SUPERSCRIPT_RUN.sub(lambda m: "^" + m.group().translate(_SUPERSCRIPTS), text)
    s = unicodedata.normalize("NFKC", s)  # no-break and thin spaces become spaces
    s = "".join(ch for ch in s if unicodedata.category(ch) != "Cf").translate(_MINUS)
    s = _ascii_digits(s).strip()
    folded = normalise_text(s)
    for unit in units:
        if folded.endswith(unit) and folded != unit:
            s = s[: len(s) - _suffix_length(s, unit)]
            break
    s = " ".join(s.split())
    # spaces around signs and the exponent's parts are not separators
    s = re.sub(r"\s*([eE×xX*·^]|\*\*)\s*", r"\1", s)
    s = re.sub(r"^([+-])\s+", r"\1", s)
    match = _NUMBER.fullmatch(s)
    if match is None or not (match["int"] or match["frac"]):
        return None
    whole = match["int"] or "0"
    if not whole.isdigit():
        separators = set(re.sub("[0-9]", "", whole))
        if len(separators) != 1:
            return None
        pattern = whole.replace(separators.pop(), "S")
        if not (_WESTERN.fullmatch(pattern) or _INDIAN.fullmatch(pattern)):
            return None
        whole = re.sub("[^0-9]", "", whole)
    exponent = match["e"] or match["p"] or "0"
    try:
        number = float(f"{match['sign'] or ''}{whole}.{match['frac'] or '0'}e{exponent}")
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _suffix_length(text: str, unit: str) -> int:
    """How many characters at the end of `text` spell `unit` once normalised."""
    for n in range(1, len(text) + 1):
        if normalise_text(text[-n:]) == unit:
            return n
    return 0


# --- texts --------------------------------------------------------------------------------

_JOINERS = re.compile(r"[\s\-_‐‑‒–—/]+")


def normalise_text(text: str) -> str:
    """A typed text as it is compared: NFC; format characters (zero-width joiner and
    non-joiner, which Bengali and Devanagari keyboards insert or leave out, a soft hyphen)
    and control characters removed; casefolded; Latin diacritics folded (é -> e), Indic
    vowel signs kept; hyphens, underscores and runs of spaces one space; punctuation at the
    ends stripped."""
    if not isinstance(text, str):
        return ""
    # control characters and lone surrogates (no database stores a NUL or an unpaired
    # surrogate in text) are dropped with the format ones; tabs and newlines are spaces
    s = "".join(" " if ch.isspace() else ch for ch in text
                if unicodedata.category(ch) not in ("Cf", "Cs", "Cc") or ch.isspace())
    s = unicodedata.normalize("NFC", s).casefold()
    # only the combining diacritical marks (U+0300-U+036F): Bengali and Devanagari vowel
    # signs and viramas are marks too, and are letters of those words
    s = "".join(ch for ch in unicodedata.normalize("NFD", s) if not 0x300 <= ord(ch) <= 0x36F)
    s = _JOINERS.sub(" ", unicodedata.normalize("NFC", s))
    start, end = 0, len(s)
    while start < end and _edge(s[start]):
        start += 1
    while end > start and _edge(s[end - 1]):
        end -= 1
    return s[start:end]


def _edge(ch: str) -> bool:
    """Stripped at a text's ends: spaces and punctuation (a full stop, a danda, quotes)."""
    return ch.isspace() or unicodedata.category(ch).startswith("P")


def allowed_distance(form: str) -> int:
    """Typos forgiven in an answer as long as `form`: none below 8 characters (a short
    answer one letter away is often another word), 1 up to 15, 2 beyond."""
    return 0 if len(form) < 8 else 1 if len(form) <= 15 else 2


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def text_matches(text: str, forms: Iterable[str]) -> bool:
    """`text` (normalised) is one of `forms` (normalised), or a typo of a long one. Numbers
    in it must be exact: "65 billion" is not "66 billion"."""
    for form in forms:
        if text == form:
            return True
        allowed = allowed_distance(form)
        if allowed and _digits(text) == _digits(form) and \
                Levenshtein.distance(text, form, score_cutoff=allowed) <= allowed:
            return True
    return False


# --- letters and orders -------------------------------------------------------------------

_TOKENS = re.compile(r"[\s,;:>→⟶➔/|.+&()\[\]-]+")


def _tokens(text: str, size: int) -> list[int] | None:
    """Typed option letters ("B A D C", "BADC", "b,a,d,c", "B → A") or numbers from 1
    ("2 1 4 3", "২ ১ ৪ ৩") as shown indexes; None when it is neither."""
    if not isinstance(text, str) or len(text) > TYPED_CHARS or size <= 0:
        return None
    s = _ascii_digits(unicodedata.normalize("NFKC", text)).strip().upper()
    parts = [p for p in _TOKENS.split(s) if p]
    if len(parts) == 1 and len(parts[0]) > 1 and size < 10:  # "BADC", "2143"
        parts = list(parts[0])
    if not parts:
        return None
    if all(len(p) == 1 and p in LETTERS[:size] for p in parts):
        return [LETTERS.index(p) for p in parts]
    if all(p.isdigit() and len(p) <= 2 and 1 <= int(p) <= size for p in parts):
        return [int(p) - 1 for p in parts]
    return None


def parse_letters(text: str, size: int) -> frozenset[int] | None:
    """Several options typed by letter ("A C"), as shown indexes."""
    tokens = _tokens(text, size)
    return frozenset(tokens) if tokens else None


def parse_order(text: str, size: int) -> tuple[int, ...] | None:
    """An order typed by letters or numbers, as shown indexes: every option once."""
    tokens = _tokens(text, size)
    if tokens is None or len(tokens) != size or len(set(tokens)) != size:
        return None
    return tuple(tokens)


def regrade(key: Key, option: int, response: str | None) -> bool | None:
    """A stored answer graded again against `key` (the pack's current one): item analysis
    counts rightness by the key, so a fixed key rescores every answer. None when the stored
    answer cannot be read (an option or a form the kind does not have)."""
    kind = key.kind
    if kind in (Kind.CHOICE, Kind.TRUEFALSE):
        return None if option < 0 else option in key.answers
    if kind is Kind.MULTI:
        picks = stored_options(response)
        return frozenset(picks) == key.answers if picks else None
    if kind is Kind.ORDER:
        sequence = stored_options(response)
        return sequence == tuple(range(len(sequence))) if sequence else None
    if kind is Kind.NUMERIC:
        number = stored_number(response)
        return None if number is None else in_range(number, key.low, key.high)
    return text_matches(response, key.forms) if response else None
