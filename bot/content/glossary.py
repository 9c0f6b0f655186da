"""The glossary: one Bengali and one Hindi rendering per technical term, checked everywhere.

`<content dir>/glossary/terms.yaml` (a directory, so pack discovery, which reads the
`*.yaml` files of the content directory, never takes it for a pack) lists terms:

    terms:
      - en: [gradient accumulation]       # English forms (whole words, any case)
        bn: গ্রেডিয়েন্ট অ্যাকুমুলেশন          # the rendering, or a list: [preferred, variant, ...]
        hi: ग्रेडिएंट एक्युमुलेशन
        wrong: {hi: [ग्रेडिएंट संचय]}       # renderings that must not appear
        in: [packs]                       # where it applies: packs, ui (default both)

Two checks, on every bn and hi text of the packs and on every msgstr of the interface
catalogs (`bot/i18n/locales/{bn,hi}/LC_MESSAGES/*.po`):
- a text containing a listed wrong rendering;
- a text whose English (the same field of the pack, the msgid) uses the term but which
  contains none of its renderings: the term was rendered another way.
Renderings are matched as substrings, so an inflected form (অ্যাক্টিভেশনের) counts.
Problems are warnings at file:line (`quizbot content validate --strict` makes them errors).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from babel.messages.pofile import read_po

from bot.content import yaml_lines
from bot.content.problems import Problem, clean
from bot.content.yaml_lines import Loc

GLOSSARY = Path("glossary") / "terms.yaml"  # under the content directory
LOCALE_DIR = Path(__file__).resolve().parent.parent / "i18n" / "locales"
TRANSLATED = ("bn", "hi")
SCOPES = ("packs", "ui")


@dataclass(frozen=True)
class Term:
    en: tuple[str, ...]
    renderings: dict[str, tuple[str, ...]]  # locale -> allowed (the first preferred)
    wrong: dict[str, tuple[str, ...]]
    scopes: tuple[str, ...]
    line: int

    def uses(self, english: str) -> bool:
        return any(_english(form).search(english) for form in self.en)

    def kept_in_english(self, text: str) -> bool:
        """The English term itself, kept as a name or given in brackets."""
        return any(_english(form).search(text) for form in self.en)


def _english(form: str) -> re.Pattern[str]:
    # whole words, any case, a plural "s" allowed; not a name in code (optimizer.step())
    return re.compile(rf"(?<![\w.-]){re.escape(form)}s?(?![\w-]|\.\w|\()", re.IGNORECASE)


def _texts(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str) and value.strip():
        return (value.strip(),)
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return tuple(v.strip() for v in value)
    return None


def load(path: Path) -> tuple[list[Term], list[Problem]]:
    """The glossary's terms, and its own problems (errors at its lines)."""
    problems: list[Problem] = []
    name = str(path)

    def add(line: int, message: str) -> None:
        problems.append(Problem(name, line, message))

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(name, 0, f"cannot read the glossary: {clean(str(exc))}")]
    parsed = yaml_lines.parse(text, add)
    if parsed is None:
        return [], problems
    data, lines = parsed
    raw = data.get("terms") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        add(1, "the glossary must be a mapping with 'terms:', a list of terms")
        return [], problems
    terms = []
    for i, item in enumerate(raw):
        line = lines.get(("terms", i), 1)
        if term := _term(item, line, add):
            terms.append(term)
    return terms, problems


def _term(item: Any, line: int, add: Any) -> Term | None:
    if not isinstance(item, dict):
        add(line, "a term must be a mapping with en, bn and hi")
        return None
    unknown = set(item) - {"en", "bn", "hi", "wrong", "in"}
    if unknown:
        add(line, f"unknown key {sorted(unknown)[0]!r} (a term has en, bn, hi, wrong, in)")
        return None
    en = _texts(item.get("en"))
    renderings = {loc: texts for loc in TRANSLATED if (texts := _texts(item.get(loc)))}
    if en is None or len(renderings) != len(TRANSLATED):
        add(line, "a term needs en, bn and hi, each a text or a list of texts")
        return None
    wrong_raw = item.get("wrong", {})
    wrong: dict[str, tuple[str, ...]] = {}
    if not isinstance(wrong_raw, dict) or set(wrong_raw) - set(TRANSLATED):
        add(line, "wrong: must map bn and/or hi to a list of texts")
        return None
    for loc, value in wrong_raw.items():
        if (texts := _texts(value)) is None:
            add(line, f"wrong.{loc} must be a text or a list of texts")
            return None
        wrong[loc] = texts
    scopes = _texts(item.get("in", list(SCOPES)))
    if scopes is None or set(scopes) - set(SCOPES):
        add(line, "in: must list packs and/or ui")
        return None
    return Term(en, renderings, wrong, scopes, line)


# not prose: code (scaler.unscale_(optimizer)) and quoted titles ('Mixed Precision Training')
_NOT_PROSE = re.compile(r"[\w.]+\([^)]*\)|(?<!\w)'[A-Z][^']*'")


def findings(terms: Iterable[Term], scope: str, english: str | None, locale: str,
             text: str) -> Iterator[str]:
    """What is wrong with `text` (in `locale`) next to its English, term by term."""
    english = _NOT_PROSE.sub(" ", english) if english else english
    for term in terms:
        if scope not in term.scopes:
            continue
        allowed = term.renderings[locale]
        for bad in term.wrong.get(locale, ()):
            if bad in text:
                yield (f"{locale}: {bad!r} is a rendering the glossary rules out for "
                       f"{term.en[0]!r}; write {allowed[0]!r}")
                break
        else:
            if (english and term.uses(english) and not any(a in text for a in allowed)
                    and not term.kept_in_english(text)):
                options = " or ".join(repr(a) for a in allowed)
                yield (f"{locale}: the English says {term.en[0]!r} but this text has none of "
                       f"the glossary's {options}")


# --- packs ----------------------------------------------------------------------------------


def _fields(data: Any) -> Iterator[tuple[Loc, dict[str, Any]]]:
    """Every localized text of a pack as (its path, its locale map)."""
    if not isinstance(data, dict):
        return
    if isinstance(data.get("title"), dict):
        yield ("title",), data["title"]
    misconceptions = data.get("misconceptions")  # each statement's en, bn and hi
    for mi, m in enumerate(misconceptions if isinstance(misconceptions, list) else ()):
        if isinstance(m, dict):
            yield ("misconceptions", mi), m
    questions = data.get("questions")
    for qi, q in enumerate(questions if isinstance(questions, list) else ()):
        if not isinstance(q, dict):
            continue
        for key in ("prompt", "explanation", "details"):
            if isinstance(q.get(key), dict):
                yield ("questions", qi, key), q[key]
        options = q.get("options")
        for oi, option in enumerate(options if isinstance(options, list) else ()):
            if isinstance(option, dict):
                yield ("questions", qi, "options", oi), option


def check_pack(path: Path, terms: list[Term]) -> list[Problem]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []  # the pack's own validation says why
    parsed = yaml_lines.parse(text, lambda line, message: None)
    if parsed is None:
        return []
    data, lines = parsed
    problems = []
    for loc, texts in _fields(data):
        english = texts.get("en") if isinstance(texts.get("en"), str) else None
        for locale in TRANSLATED:
            value = texts.get(locale)
            if not isinstance(value, str):
                continue
            line = lines.get((*loc, locale), lines.get(loc, 1))
            for message in findings(terms, "packs", english, locale, value):
                problems.append(Problem(str(path), line, message, warning=True))
    return problems


# --- interface catalogs -----------------------------------------------------------------------


def check_catalog(path: Path, locale: str, terms: list[Term]) -> list[Problem]:
    with path.open("rb") as f:
        catalog = read_po(f, locale=locale)
    problems = []
    for message in catalog:
        if not message.id or not message.string:
            continue
        ids = message.id if isinstance(message.id, tuple | list) else (message.id,)
        strings = message.string if isinstance(message.string, tuple | list) else (
            message.string,)
        english = " ".join(ids)
        for translated in dict.fromkeys(s for s in strings if s):
            for text in findings(terms, "ui", english, locale, translated):
                problems.append(Problem(str(path), message.lineno or 0, text, warning=True))
    return problems


def check(content: Path, pack_files: Iterable[Path], locale_dir: Path = LOCALE_DIR
          ) -> list[Problem]:
    """The glossary's own problems, then the packs' and the interface catalogs' findings;
    nothing when the content directory has no glossary."""
    root = content if content.is_dir() else content.parent
    path = root / GLOSSARY
    if not path.is_file():
        return []
    terms, problems = load(path)
    if any(not p.warning for p in problems):
        return problems
    for pack in pack_files:
        problems += check_pack(pack, terms)
    for locale in TRANSLATED:
        for po in sorted((locale_dir / locale / "LC_MESSAGES").glob("*.po")):
            problems += check_catalog(po, locale, terms)
    return problems
