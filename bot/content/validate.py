"""Checking a pack's data: the schema, the platforms' limits and answers given away by length
or wording (cues.py).

What the YAML reading built (yaml_lines.py) is validated here and every problem is reported
at its line, in our own words rather than pydantic's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from bot.content import cues, limits, media
from bot.content.problems import Problem, clean, short
from bot.content.schema import (
    LOCALES,
    Kind,
    LocalizedModel,
    OptionModel,
    Quiz,
    QuizModel,
    pack_language,
)
from bot.content.yaml_lines import BROKEN, Loc

if TYPE_CHECKING:
    from bot.content.loader import Catalog

AddProblem = Callable[[int, str, bool], None]  # (line, message, is_warning)


# --- validation messages in our own words --------------------------------------------------


def describe(loc: Loc) -> str:
    parts: list[str] = []
    for key in loc:
        if isinstance(key, int):
            if parts:
                parts[-1] = f"{parts[-1].removesuffix('s')} {key + 1}"
            else:
                parts.append(f"item {key + 1}")
        elif key == "text" and parts and parts[-1].startswith("option"):
            continue  # Option.text is our model's name, not a key the author wrote
        elif key == "statement" and parts and parts[-1].startswith("misconception"):
            continue  # likewise Misconception.statement
        else:
            parts.append(short(str(key)))
    return ".".join(parts) or "the file"


_SLUG_RULE = "lowercase letters, digits and hyphens (at most 48), starting with a letter or digit"
_SHAPES = {
    "LocalizedModel": "text, or a mapping from language (en, bn, hi) to text",
    "OptionModel": "text, or a mapping from language (en, bn, hi) to text with 'correct: true' on "
    "the right one",
    "QuestionModel": "a mapping with id, prompt, options and explanation",
    "CodeModel": "a mapping with text (and language: python, bash, …)",
    "CodeTextModel": "code, or a mapping from language (en, bn, hi) to code",
    "FormulaModel": "a formula, or a mapping from language (en, bn, hi) to formulas",
    "ImageModel": "a file name, or a mapping from language (en, bn, hi) to file names",
    "ClaimModel": "a mapping with library and claim",
    "MisconceptionModel": "a mapping with id and the statement in each language (en, bn, hi)",
    "QuizModel": "a mapping with id, title and questions",
}


def _message(err: Any) -> str:
    """A pydantic error as a sentence naming the place in the pack."""
    where, kind, ctx, value = describe(err["loc"]), err["type"], err.get("ctx") or {}, err["input"]
    if kind == "missing":
        return f"{where} is missing"
    if kind == "extra_forbidden":
        return f"{where}: unknown key (check the spelling)"
    if kind in ("string_type", "string_too_short"):
        if value is None or (isinstance(value, str) and not value.strip()):
            return f"{where} is empty"
        if isinstance(value, bool | int | float):
            return f"{where} must be text; put it in quotes"
        return f"{where} must be text"
    if kind == "string_unicode":  # a "\ud800" escape: half of a UTF-16 pair
        code = _surrogate(value)
        return f"{where}: contains the unprintable character U+{code}; quiz text must be plain text"
    if kind == "string_pattern_mismatch":
        return f"{where} must be {_SLUG_RULE}"
    if kind == "too_short":
        return f"{where} has {ctx.get('actual_length')}, at least {ctx.get('min_length')} needed"
    if kind == "too_long":
        return f"{where} has {ctx.get('actual_length')}, at most {ctx.get('max_length')} allowed"
    if kind == "list_type":
        return f"{where} must be a list"
    if kind in ("literal_error", "enum"):  # difficulty, bloom, a claim's library, a kind
        return f"{where} must be one of {ctx.get('expected')}, not {clean(repr(value), 60)}"
    if kind in ("bool_type", "bool_parsing"):
        return f"{where} must be true or false"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        shape = _SHAPES.get(str(ctx.get("class_name")), "a mapping")
        return f"{where} must be {shape}"
    message = str(err["msg"]).removeprefix("Value error, ")
    return f"{where}: {clean(message)}"


def _surrogate(value: Any) -> str:
    found = re.search("[\ud800-\udfff]", value) if isinstance(value, str) else None
    return f"{ord(found.group()):04X}" if found else "D800"


def _line_of(lines: dict[Loc, int], loc: Loc) -> int:
    """The line of the deepest part of a pydantic location that the YAML spells."""
    path: Loc = ()
    line = lines.get((), 1)
    for key in loc:
        candidate = (*path, key)
        if candidate in lines:  # model-made keys (Option.text, a plain string's en) are skipped
            path = candidate
            line = lines[candidate]
    return line


# --- platform limits, checked on every part that is valid by itself ------------------------

Finding = tuple[Loc, str, bool]  # (location, message, is_warning)


def _valid(model: type[BaseModel], raw: Any) -> Any:
    if raw is None or raw is BROKEN:
        return None
    try:
        return model.model_validate(raw)
    except ValidationError:
        return None  # reported by the whole-file validation


def _too_long(loc: Loc, text: LocalizedModel | None, limit: int, what: str) -> Iterable[Finding]:
    for locale, value in text.items() if text else ():
        n = limits.tg_len(value)
        if n > limit:
            yield (*loc, locale), f"{what} is {n} characters, the limit is {limit}", False


def _limit_problems(data: dict[str, Any], quiz: QuizModel | None) -> Iterable[Finding]:
    """Limits need only the part they measure, so a schema error elsewhere hides none."""
    if quiz is not None:  # valid as a whole: measure the models, no second validation
        yield from _too_long(("title",), quiz.title, limits.TITLE, "title")
        for qi, q in enumerate(quiz.questions):
            yield from _question_limits(
                ("questions", qi), q.prompt, list(enumerate(q.options or ())), q.explanation,
                q.details
            )
        return
    title = _valid(LocalizedModel, data.get("title"))
    yield from _too_long(("title",), title, limits.TITLE, "title")
    questions = data.get("questions")
    for qi, raw in enumerate(questions if isinstance(questions, list) else ()):
        if isinstance(raw, dict):
            raw_options = raw.get("options")
            options = [
                (oi, option)
                for oi, item in enumerate(raw_options if isinstance(raw_options, list) else ())
                if (option := _valid(OptionModel, item)) is not None
            ]
            yield from _question_limits(
                ("questions", qi),
                _valid(LocalizedModel, raw.get("prompt")),
                options,
                _valid(LocalizedModel, raw.get("explanation")),
                _valid(LocalizedModel, raw.get("details")),
            )


def _question_limits(
    base: Loc,
    prompt: LocalizedModel | None,
    options: list[tuple[int, OptionModel]],
    explanation: LocalizedModel | None,
    details: LocalizedModel | None,
) -> Iterable[Finding]:
    """One question's parts that are valid (None, or left out of options, when not)."""
    yield from _too_long((*base, "prompt"), prompt, limits.TG_QUESTION, "question")
    for oi, option in options:
        yield from _too_long((*base, "options", oi), option.text, limits.TG_OPTION, "option")
    yield from _too_long(
        (*base, "explanation"), explanation, limits.TG_EXPLANATION, "explanation"
    )
    for locale, value in explanation.items() if explanation else ():
        if value.count("\n") > limits.TG_EXPLANATION_NEWLINES:
            yield (
                (*base, "explanation", locale),
                f"explanation has {value.count(chr(10))} line breaks, Telegram allows "
                f"{limits.TG_EXPLANATION_NEWLINES}",
                False,
            )
    yield from _too_long((*base, "details"), details, limits.DETAILS, "details")
    if options:
        first = [loc for loc, _ in options[0][1].text.items()]
        for oi, option in options[1:]:
            locs = [loc for loc, _ in option.text.items()]
            if locs != first:
                yield (
                    (*base, "options", oi),
                    f"option has locales {locs} but option {options[0][0] + 1} has {first}: "
                    "every locale needs the same options",
                    False,
                )
    for what, text in (("prompt", prompt), ("explanation", explanation)):
        if text and (missing := text.missing()):
            yield (*base, what), f"{what} has no {', '.join(missing)} text", True
    if options and (missing := options[0][1].text.missing()):
        yield (*base, "options"), f"options have no {', '.join(missing)} text", True


# --- code, formulas, images and inline code ---------------------------------------------------


def _image_problem(folder: Path | None, files: Mapping[str, bytes] | None,
                   relative: str) -> str | None:
    """Why an image cannot be used, or None: read from `files` (bytes by path) if given,
    else from the pack's folder."""
    try:
        if files is not None:
            if relative not in files:
                return "no such file beside the pack"
            data = files[relative]
            svg = relative.lower().endswith(".svg")
            cap = limits.SVG_BYTES if svg else limits.IMAGE_BYTES
            if len(data) > cap:
                return f"the image is larger than {cap // 1024} KiB, the limit; make it smaller"
            if svg:
                media.check_svg(data)
            else:
                media.check_raster(data)
        elif folder is None:
            return "images need a pack file in a folder to be read from"
        else:
            media.read_image(folder, relative)
    except media.BadImage as exc:
        return str(exc)
    return None


def _media_problems(quiz: QuizModel, folder: Path | None,
                    files: Mapping[str, bytes] | None = None) -> Iterable[Finding]:
    """What the card needs of a valid pack: code that fits it, images that are usable
    files, every declared language where they differ, inline code closed in options."""
    for qi, q in enumerate(quiz.questions):
        base: Loc = ("questions", qi)
        if q.code is not None:
            # each text once, at the first language that has it
            first = {text: locale for locale, text in reversed(q.code.text.items())}
            for text, locale in first.items():
                lines = text.split("\n")
                widest = max(len(line) for line in lines)
                if len(lines) > limits.CARD_CODE_LINES or widest > limits.CARD_CODE_COLUMNS:
                    yield ((*base, "code", "text", locale),
                           f"code has {len(lines)} line(s), the widest {widest} characters; a "
                           f"card holds {limits.CARD_CODE_LINES} lines of "
                           f"{limits.CARD_CODE_COLUMNS}", False)
        for what, texts in (("code", q.code.text if q.code else None),
                            ("formula", q.formula), ("image", q.image),
                            ("image_alt", q.image_alt),
                            ("explanation_image", q.explanation_image),
                            ("explanation_image_alt", q.explanation_image_alt)):
            if texts is not None and (missing := texts.missing()):
                where = (*base, what, "text") if what == "code" else (*base, what)
                yield where, f"{what} has no {', '.join(missing)} version", True
        for what, image, alt in (("image", q.image, q.image_alt),
                                 ("explanation_image", q.explanation_image,
                                  q.explanation_image_alt)):
            yield from _too_long((*base, f"{what}_alt"), alt, limits.IMAGE_ALT, f"{what}_alt")
            seen: set[str] = set()
            for locale, relative in image.items() if image else ():
                if relative in seen:
                    continue
                seen.add(relative)
                where = (*base, what, locale)
                if folder is None and files is None:
                    yield where, "images need a pack file in a folder to be read from", False
                elif (why := _image_problem(folder, files, relative)) is not None:
                    yield where, f"{what} {relative!r}: {why}", False
        for oi, option in enumerate(q.options or ()):
            for locale, text in option.text.items():
                if text.count("`") % 2:
                    yield ((*base, "options", oi, locale),
                           "an option's inline code is not closed: put it between two "
                           "backticks (`x.grad`); the card shows the backtick as it is", True)


# --- answers given away by their length -------------------------------------------------

# More than this share of a pack's questions with the answer as its longest (or shortest)
# option, in one language, is a warning: picking by length alone would score without knowing.
GIVEAWAY_SHARE = 0.4


def _giveaway_problems(quiz: QuizModel) -> Iterable[Finding]:
    """The correct option strictly the longest, or strictly the shortest, too often.

    Questions with two options are left out: one of the two is always the longer. A language
    counts only the questions that spell every option in it (a fallback to English is
    already a warning of its own). Length is counted as the limits count it.
    """
    for locale in LOCALES:
        counted = longest = shortest = 0
        for q in quiz.questions:
            if q.kind is not Kind.CHOICE:  # one key among options: choice only
                continue
            texts = [getattr(o.text, locale) for o in q.options or ()]
            if len(texts) < 3 or any(t is None for t in texts):
                continue
            lengths = [limits.tg_len(t) for t in texts if t is not None]
            answer = lengths.pop(q.answer)
            counted += 1
            longest += answer > max(lengths)
            shortest += answer < min(lengths)
        for n, what in ((longest, "longest"), (shortest, "shortest")):
            if counted and n / counted > GIVEAWAY_SHARE:
                yield (
                    ("questions",),
                    f"in {locale}, the correct option is the {what} in {n} of {counted} "
                    f"questions (over {GIVEAWAY_SHARE:.0%}), so picking the {what} option "
                    "scores without knowing; make the options alike in length and detail",
                    True,
                )


# --- question metadata: what --strict requires, and prerequisites across the bank ------------

REQUIRED_METADATA = ("difficulty", "bloom", "concepts", "sources")


@dataclass
class _Bank:
    """What the packs checked so far say about concepts (collected while a bank loads)."""

    concepts: set[str] = field(default_factory=set)
    prerequisites: set[str] = field(default_factory=set)


# --strict: every question must carry REQUIRED_METADATA
_REQUIRE_METADATA: ContextVar[bool] = ContextVar("require_metadata", default=False)
# while a bank is validated: every pack's concepts and prerequisites, as written
_COLLECTED: ContextVar[_Bank | None] = ContextVar("collected_concepts", default=None)
# the concepts of the whole bank, once known: a prerequisite naming none is an error
_BANK_CONCEPTS: ContextVar[frozenset[str] | None] = ContextVar("bank_concepts", default=None)


@contextmanager
def _set(var: ContextVar[Any], value: Any) -> Iterator[None]:
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


def _slugs(raw: Any) -> list[str]:
    return [x for x in raw if isinstance(x, str)] if isinstance(raw, list) else []


def _collect(data: dict[str, Any]) -> None:
    """The concepts and prerequisites as written, also in a pack that is invalid elsewhere."""
    bank = _COLLECTED.get()
    questions = data.get("questions")
    if bank is None or not isinstance(questions, list):
        return
    for raw in questions:
        if isinstance(raw, dict):
            bank.concepts.update(_slugs(raw.get("concepts")))
            bank.prerequisites.update(_slugs(raw.get("prerequisites")))


def _metadata_problems(quiz: QuizModel) -> Iterable[Finding]:
    known = _BANK_CONCEPTS.get()
    required = _REQUIRE_METADATA.get()
    for qi, q in enumerate(quiz.questions):
        base: Loc = ("questions", qi)
        if required and (missing := [what for what in REQUIRED_METADATA if not getattr(q, what)]):
            yield (base, f"{short(q.id)!r} has no {', '.join(missing)} (--strict "
                   f"requires {', '.join(REQUIRED_METADATA[:-1])} and at least one source of "
                   "every question)", False)
        for pi, prerequisite in enumerate(q.prerequisites):
            if known is not None and prerequisite not in known:
                yield ((*base, "prerequisites", pi),
                       f"prerequisite {prerequisite!r} is no concept of the bank: no question "
                       "of any pack lists it in its concepts", False)
        if q.concepts and prerequisite_loops(q.concepts, q.prerequisites):
            yield ((*base, "prerequisites"),
                   f"{', '.join(prerequisite_loops(q.concepts, q.prerequisites))} is both a "
                   "concept and a prerequisite of the question", False)


def prerequisite_loops(concepts: list[str], prerequisites: list[str]) -> list[str]:
    """A question cannot need what it teaches."""
    return sorted(set(concepts) & set(prerequisites))


# --- misconceptions: the ideas the distractors stand for ---------------------------------------

MISCONCEPTION_STATEMENT = limits.TG_OPTION  # a short statement, shown beside a count


def _misconception_problems(quiz: QuizModel) -> Iterable[Finding]:
    """Every tag names one of the pack's misconceptions; a listed one nobody names warns."""
    listed = {m.id for m in quiz.misconceptions}
    used: set[str] = set()
    for mi, m in enumerate(quiz.misconceptions):
        yield from _too_long(("misconceptions", mi), m.statement, MISCONCEPTION_STATEMENT,
                             "misconception statement")
    for qi, q in enumerate(quiz.questions):
        tagged: list[tuple[Loc, str]] = [
            (("questions", qi, "options", oi, "misconception"), o.misconception)
            for oi, o in enumerate(q.options or ()) if o.misconception is not None]
        if q.misconception is not None:
            tagged.append((("questions", qi, "misconception"), q.misconception))
        for loc, name in tagged:
            used.add(name)
            if name not in listed:
                known = ", ".join(sorted(listed)) or "none: list them under misconceptions:"
                yield (loc, f"misconception {short(name)!r} is not one of the pack's "
                       f"misconceptions (they are: {known})", False)
    for mi, m in enumerate(quiz.misconceptions):
        if m.id not in used:
            yield (("misconceptions", mi), f"misconception {m.id!r} is named by no option",
                   True)


# a peer round's isomorphic question is voted on by tapping an option (bot/core/live.py's kinds)
PAIR_KINDS = (Kind.CHOICE, Kind.TRUEFALSE)


def _pair_problems(quiz: QuizModel) -> Iterable[Finding]:
    """`pair:` names another question of the pack, one voted on by tapping an option."""
    kinds = {q.id: q.kind for q in quiz.questions}
    for qi, q in enumerate(quiz.questions):
        if q.pair is None:
            continue
        where: Loc = ("questions", qi, "pair")
        if q.pair == q.id:
            yield where, "a question is not its own pair: name another question", False
        elif q.pair not in kinds:
            yield (where, f"pair {short(q.pair)!r} is no question of this pack", False)
        elif kinds[q.pair] not in PAIR_KINDS:
            yield (where, f"pair {short(q.pair)!r} is a {kinds[q.pair].value} question; a peer "
                   "round's pair is voted on by tapping (choice or truefalse)", False)


# --- the whole pack ---------------------------------------------------------------------------


def check(data: Any, lines: dict[Loc, int], add: AddProblem,
          folder: Path | None = None, files: Mapping[str, bytes] | None = None) -> Quiz | None:
    """Every problem of one pack's data through `add`; its quiz if the schema takes it (ids
    used in other files are load_catalog's to check). Its images are read from `files`
    (bytes by their path relative to the pack) if given, else from `folder`, the pack's."""
    if not isinstance(data, dict):
        if data is not BROKEN:
            add(lines.get((), 1), f"a quiz file must be {_SHAPES['QuizModel']}", False)
        return None
    _collect(data)
    model: QuizModel | None = None
    try:
        model = QuizModel.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            # already reported: a placeholder's errors, and ids used twice (by load_catalog)
            if err["input"] is BROKEN or err["type"] == "duplicate_question_id":
                continue
            add(_line_of(lines, err["loc"]), _message(err), False)
    with pack_language(data.get("language")):  # its parts in the pack's language
        for loc, message, warning in _limit_problems(data, model):
            add(_line_of(lines, loc), f"{describe(loc)}: {message}", warning)
    if model is None:
        return None
    for loc, message, warning in _metadata_problems(model):
        add(_line_of(lines, loc), f"{describe(loc)}: {message}", warning)
    for loc, message, warning in _misconception_problems(model):
        add(_line_of(lines, loc), f"{describe(loc)}: {message}", warning)
    for loc, message, warning in _pair_problems(model):
        add(_line_of(lines, loc), f"{describe(loc)}: {message}", warning)
    left_out: dict[int, dict[str, None]] = {}
    for loc, message, warning in _media_problems(model, folder, files):
        if media.LEAVE_OUT.get() and not warning and loc[2:3] in (("image",),
                                                                   ("explanation_image",)):
            # quizbot run: the pack loads without that image
            what = str(loc[2])
            left_out.setdefault(int(loc[1]), {}).update({what: None, f"{what}_alt": None})
            message, warning = message + media.LEFT_OUT, True
        add(_line_of(lines, loc), f"{describe(loc)}: {message}", warning)
    if left_out:
        model = model.model_copy(update={"questions": [
            q.model_copy(update=left_out[i]) if i in left_out else q
            for i, q in enumerate(model.questions)]})
    for loc, message, warning in _giveaway_problems(model):
        add(_line_of(lines, loc), message, warning)
    for cue in cues.pack_cues(model):
        where: Loc = ("questions",) if cue.question is None else ("questions", cue.question)
        add(_line_of(lines, where), cue.message, True)
    quiz = Quiz.of(model)
    return quiz if folder is None else quiz.model_copy(update={"folder": str(folder)})


# --- a bank: every pack of a folder, with the checks that need them all ----------------------


def load_bank(target: Path, strict: bool = False) -> tuple[Catalog | None, list[Problem]]:
    """Every pack under `target` validated (never from the content cache), with every
    prerequisite checked against the concepts of the whole bank and, with `strict`, the
    metadata every question must carry: the catalog (None when it has errors) and every
    problem, warnings included.

    The concepts are known only once every pack is read, so a bank with a prerequisite
    that is no concept is read a second time to report it at its line."""
    from bot.content.loader import ContentError, load_catalog

    def load() -> tuple[Catalog | None, list[Problem]]:
        try:
            catalog = load_catalog(target)
        except ContentError as exc:
            return None, list(exc.problems)
        return catalog, list(catalog.warnings)

    bank = _Bank()
    with _set(_REQUIRE_METADATA, strict), _set(_COLLECTED, bank):
        catalog, problems = load()
    if bank.prerequisites <= bank.concepts:
        return catalog, problems
    with (_set(_REQUIRE_METADATA, strict),
          _set(_BANK_CONCEPTS, frozenset(bank.concepts))):
        return load()
