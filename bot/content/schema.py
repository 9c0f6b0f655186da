"""A quiz pack (one YAML file per quiz): the pydantic models that validate it.

Validation is pydantic's (`QuizModel` and the models under it, with precise error
locations). What the bot keeps in memory is `Quiz`, `Question`, `Option` and `Localized`
(items.py, re-exported here): plain classes with slots, built from a validated model or from
the content cache (bot/content/cache.py). Pydantic models cost about ten times as much to
build, which is most of what loading 10,000 cached questions would cost
(docs/performance.md, Content), and the bot's process, reading its catalog from the cache,
never imports this module.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from bot.content import limits
from bot.content.items import (
    _PACK_LANGUAGE,
    DEFAULT_LOCALE,
    LOCALES,
    Accept,
    Code,
    Deferred,
    Kind,
    Language,
    Localized,
    Misconception,
    Numeric,
    Option,
    Question,
    Quiz,
    _Texts,
    declared_languages,
    expected_locales,
    pack_language,
)

__all__ = [
    "BLOOM_LEVELS", "CLAIM_LIBRARIES", "DEFAULT_LOCALE", "DIFFICULTIES", "LOCALES", "Accept",
    "Code", "Deferred", "Kind", "Language", "Localized", "Misconception", "Numeric", "Option",
    "Question", "Quiz", "QuizModel", "declared_languages", "expected_locales", "pack_language",
    "versioned",
]

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,47}$")]

# Control characters (other than newline and tab), lone surrogates (from "\ud800" escapes) and
# line/paragraph separators: they would reach chat messages and the terminal as they are.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def _printable(text: str) -> str:
    if bad := _UNPRINTABLE.search(text):
        raise PydanticCustomError(
            "unprintable_character",
            "contains the unprintable character {code}; quiz text must be plain text",
            {"code": f"U+{ord(bad.group()):04X}"},
        )
    return text


NonEmpty = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1), AfterValidator(_printable)
]


class LocalizedModel(_Texts, BaseModel):
    """A text in several locales; the pack's language (English unless the pack names another)
    is required, the others fall back to English, else to the language the text has."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    shared: ClassVar[bool] = False

    en: NonEmpty | None = None
    bn: NonEmpty | None = None
    hi: NonEmpty | None = None

    @model_validator(mode="wrap")
    @classmethod
    def _in_pack_language(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        required = _PACK_LANGUAGE.get()
        if isinstance(value, str) and cls.shared:  # every language's, checked once
            model = handler({required: value})
            return model.model_copy(update=dict.fromkeys(LOCALES, getattr(model, required)))
        if isinstance(value, str):  # a plain string is in the pack's language
            value = {required: value}
        if isinstance(value, dict) and required not in value:
            raise ValidationError.from_exception_data(
                cls.__name__, [InitErrorDetails(type="missing", loc=(required,), input=value)]
            )
        return handler(value)


_OPTION_KEYS = ("correct", "misconception")  # an option's keys beside its texts


class OptionModel(BaseModel):
    """An answer option: locale keys plus an optional `correct: true` in the same map, and
    for a wrong one an optional `misconception: <id>` (one of the pack's misconceptions)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: LocalizedModel
    correct: bool = False
    misconception: Slug | None = None

    @model_validator(mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):  # in the pack's language (LocalizedModel)
            return {"text": value}
        if isinstance(value, dict) and "text" not in value:
            texts = {k: v for k, v in value.items() if k not in _OPTION_KEYS}
            return {"text": texts, **{k: value[k] for k in _OPTION_KEYS if k in value}}
        return value

    @model_validator(mode="after")
    def _wrong_ideas_are_wrong(self) -> OptionModel:
        if self.correct and self.misconception is not None:
            raise PydanticCustomError(
                "misconception_on_right", "the right option stands for no misconception: "
                "put misconception: {id} on a wrong option", {"id": self.misconception})
        return self


class MisconceptionModel(BaseModel):
    """One of the pack's misconceptions: an id its distractors name, and a short statement
    of the wrong idea in every language the pack declares (all three if it declares none)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Slug
    statement: LocalizedModel

    @model_validator(mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, dict) and "statement" not in value:
            return {"statement": {k: v for k, v in value.items() if k != "id"},
                    **({"id": value["id"]} if "id" in value else {})}
        return value

    @model_validator(mode="after")
    def _every_language(self) -> MisconceptionModel:
        if missing := self.statement.missing():
            raise PydanticCustomError(
                "misconception_language", "misconception {id} has no {missing} statement: "
                "state it in every language of the pack",
                {"id": self.id, "missing": ", ".join(missing)})
        return self


# --- what a question may show beside its prompt (drawn on its card, bot/reports/card.py) ------


class _SharedModel(LocalizedModel):
    """A text the same in every language unless written per language: a plain string is every
    language's (a code snippet, a formula, an image path); a map lets them differ, with the
    pack's language required, like any text."""

    shared: ClassVar[bool] = True


def _code_text(text: str) -> str:
    """Indentation is meaning in code: only trailing blank lines and spaces go."""
    text = "\n".join(line.rstrip() for line in text.expandtabs(4).splitlines()).strip("\n")
    if not text:
        raise PydanticCustomError("code_empty", "the code is empty", {})
    return _printable(text)


CodeText = Annotated[str, AfterValidator(_code_text)]


class CodeTextModel(_SharedModel):
    en: CodeText | None = None
    bn: CodeText | None = None
    hi: CodeText | None = None


def _lexer(language: str) -> str:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        get_lexer_by_name(language)
    except ClassNotFound:
        raise PydanticCustomError(
            "code_language", "'{language}' is not a language Pygments knows (python, bash, "
            "yaml, text, …)", {"language": language}) from None
    return language


class CodeModel(BaseModel):
    """A snippet, highlighted as `language` (a Pygments name: python, bash, cpp, text)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    language: Annotated[str, AfterValidator(_lexer)] = "python"
    text: CodeTextModel


def _formula(tex: str) -> str:
    from bot.content.mathtext import MathError, check

    try:
        check(tex)
    except MathError as exc:
        raise PydanticCustomError(
            "formula", "the formula does not parse as mathtext (matplotlib's TeX subset): "
            "{why}", {"why": str(exc)}) from None
    return tex


class FormulaModel(_SharedModel):
    """TeX math, in the subset matplotlib's mathtext draws (no TeX installation needed)."""

    en: Annotated[NonEmpty, AfterValidator(_formula)] | None = None
    bn: Annotated[NonEmpty, AfterValidator(_formula)] | None = None
    hi: Annotated[NonEmpty, AfterValidator(_formula)] | None = None


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".svg")


def _image_path(path: str) -> str:
    """A path relative to the pack's folder that stays inside it (the file itself is checked
    by bot/content/media.py, which knows the folder)."""
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "~")) or ":" in parts[0] or ".." in parts or "" in parts:
        raise PydanticCustomError(
            "image_path", "the image must be a path relative to the pack's folder, inside it "
            "(no '..', no absolute path): '{path}'", {"path": path})
    if not path.lower().endswith(IMAGE_SUFFIXES):
        raise PydanticCustomError(
            "image_type", "the image must be a PNG, JPEG or SVG file: '{path}'", {"path": path})
    return path


class ImageModel(_SharedModel):
    """A picture beside the pack, by its path relative to the pack's folder."""

    en: Annotated[NonEmpty, AfterValidator(_image_path)] | None = None
    bn: Annotated[NonEmpty, AfterValidator(_image_path)] | None = None
    hi: Annotated[NonEmpty, AfterValidator(_image_path)] | None = None


# --- what a question tests and what it rests on (docs/content.md, Question metadata) --------

Difficulty = Literal["easy", "medium", "hard"]
Bloom = Literal["remember", "understand", "apply", "analyse", "evaluate", "create"]
DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")
BLOOM_LEVELS: tuple[str, ...] = (
    "remember", "understand", "apply", "analyse", "evaluate", "create")
# the libraries whose releases a reviewer follows: a claim names one, so the list printed by
# `quizbot content claims` can be read library by library when one of them changes
ClaimLibrary = Literal[
    "PyTorch", "DeepSpeed", "Megatron-LM", "Transformers", "PEFT", "bitsandbytes",
    "Transformer Engine", "FlashAttention", "NCCL", "CUDA", "JAX",
]
CLAIM_LIBRARIES: tuple[str, ...] = (
    "PyTorch", "DeepSpeed", "Megatron-LM", "Transformers", "PEFT", "bitsandbytes",
    "Transformer Engine", "FlashAttention", "NCCL", "CUDA", "JAX",
)

# "arXiv:2205.05198" (an old-style or versioned id too), or an https link; either may be
# followed by a note after a space ("... (Megatron-LM core_r0.12.0)")
_ARXIV = re.compile(r"arXiv:(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?")
_LINK = re.compile(r"https://[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::\d+)?(?:[/?#]\S*)?")
# a release in a link or its note: 2.5, v0.14.4, core_r0.12.0, /releases/tag/..., or a commit
_VERSION = re.compile(r"\d+\.\d+|/releases/tag/|/(?:blob|tree)/[0-9a-f]{7,40}/")
_UNVERSIONED_HOSTS = ("arxiv.org", "doi.org")


def _source(text: str) -> str:
    head, _, note = text.partition(" ")
    if not (_ARXIV.fullmatch(head) or _LINK.fullmatch(head)) or (note and not note.strip()):
        raise PydanticCustomError(
            "source", "a source is an arXiv id (arXiv:2205.05198) or an https link, optionally "
            "followed by a note after a space, not '{text}'", {"text": text})
    return _printable(text)


def versioned(source: str) -> bool:
    """Whether a source names a release of what it documents: a link (or its note) with a
    version number, a release tag or a commit. A paper is not a release of a library."""
    head, _, note = source.partition(" ")
    if not head.startswith("https://"):
        return False
    host = head.removeprefix("https://").split("/", 1)[0].lower()
    path = head.removeprefix("https://")[len(host):]
    if any(host == h or host.endswith("." + h) for h in _UNVERSIONED_HOSTS):
        path = ""
    return bool(_VERSION.search(path) or _VERSION.search(note))


Source = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1),
                   AfterValidator(_source)]


class ClaimModel(BaseModel):
    """A statement that holds for some releases of a library and may stop holding."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    library: ClaimLibrary
    claim: NonEmpty


# --- the keys of the kinds other than choice (docs/content.md, Kinds of question) ----------

# what each kind takes besides prompt and explanation: the keys it needs and those it may have
_KEYS: dict[Kind, tuple[tuple[str, ...], tuple[str, ...]]] = {
    Kind.CHOICE: (("options",), ()),
    Kind.MULTI: (("options",), ()),
    Kind.TRUEFALSE: (("truth",), ()),
    Kind.NUMERIC: (("numeric",), ("unit",)),
    Kind.TEXT: (("accept",), ("latin",)),
    Kind.ORDER: (("options",), ()),
}
_KIND_KEYS = ("options", "truth", "numeric", "unit", "accept", "latin")
# how many options each kind with options takes
OPTION_COUNTS: dict[Kind, tuple[int, int]] = {
    Kind.CHOICE: (limits.MIN_OPTIONS, limits.MAX_OPTIONS),
    Kind.MULTI: (3, limits.MAX_OPTIONS),
    Kind.ORDER: (limits.MIN_ORDER_ITEMS, limits.MAX_ORDER_ITEMS),
}


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise PydanticCustomError("finite_number", "must be a finite number", {})
    return value


Finite = Annotated[float, AfterValidator(_finite)]


class NumericModel(BaseModel):
    """A number and how far from it an answer may be: `tolerance` either way, or the range
    `min`..`max` around it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: Finite
    tolerance: Annotated[Finite, Field(ge=0)] | None = None
    min: Finite | None = None
    max: Finite | None = None

    @model_validator(mode="after")
    def _one_range(self) -> NumericModel:
        ranged = self.min is not None or self.max is not None
        if self.tolerance is not None and ranged:
            raise PydanticCustomError(
                "numeric_range", "give a tolerance or min and max, not both", {})
        if self.tolerance is None and not ranged:
            raise PydanticCustomError(
                "numeric_range", "give a tolerance (0 for the exact value) or min and max", {})
        if ranged and (self.min is None or self.max is None):
            raise PydanticCustomError("numeric_range", "give both min and max", {})
        if ranged and not (self.min is not None and self.max is not None
                           and self.min <= self.value <= self.max):
            raise PydanticCustomError(
                "numeric_range", "min <= value <= max must hold (min {min}, value {value}, max "
                "{max})", {"min": self.min, "value": self.value, "max": self.max})
        return self

    @property
    def bounds(self) -> tuple[float, float]:
        """The inclusive range of right answers."""
        if self.tolerance is not None:  # in decimal, as written: 0.4 - 0.05 is 0.35
            value, tolerance = Decimal(repr(self.value)), Decimal(repr(self.tolerance))
            return float(value - tolerance), float(value + tolerance)
        assert self.min is not None and self.max is not None
        return self.min, self.max


def _typed_form(text: str) -> str:
    if limits.tg_len(text) > limits.TYPED_ANSWER:
        raise PydanticCustomError(
            "typed_too_long", "an accepted answer is {n} characters, at most {limit} (an "
            "answer is typed in a message or a form)",
            {"n": limits.tg_len(text), "limit": limits.TYPED_ANSWER})
    return text


TypedForm = Annotated[NonEmpty, AfterValidator(_typed_form)]
Forms = Annotated[list[TypedForm], Field(min_length=1)]


class AcceptModel(BaseModel):
    """The answers accepted, per language: a list of forms (a plain list is the pack's
    language's); every language the pack declares needs its own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    en: Forms | None = None
    bn: Forms | None = None
    hi: Forms | None = None

    @model_validator(mode="before")
    @classmethod
    def _in_pack_language(cls, value: Any) -> Any:
        if isinstance(value, list | str):  # the pack's language's forms
            return {_PACK_LANGUAGE.get(): [value] if isinstance(value, str) else value}
        if isinstance(value, dict):  # one form needs no list
            return {k: [v] if isinstance(v, str) else v for k, v in value.items()}
        return value

    @model_validator(mode="after")
    def _every_language(self) -> AcceptModel:
        if missing := [loc for loc in expected_locales() if getattr(self, loc) is None]:
            raise PydanticCustomError(
                "accept_missing", "no accepted answers in {missing}: give them in every "
                "language of the pack", {"missing": ", ".join(missing)})
        return self

    def items(self) -> list[tuple[str, list[str]]]:
        return [(loc, forms) for loc in LOCALES if (forms := getattr(self, loc)) is not None]


def _latin(text: str) -> str:
    if not all(c.isascii() or "\u00c0" <= c <= "\u024f" for c in text):
        raise PydanticCustomError(
            "latin", "'{text}' is not in Latin letters (latin: lists transliterations, e.g. "
            "punargonona)", {"text": text})
    return _typed_form(text)


class QuestionModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Slug
    kind: Kind = Kind.CHOICE
    prompt: LocalizedModel
    code: CodeModel | None = None
    formula: FormulaModel | None = None
    image: ImageModel | None = None
    # the text a screen reader gives for the image, in each language of the pack
    image_alt: LocalizedModel | None = Field(default=None, validate_default=True)
    # choice, multi and order: options (order: listed in the right order)
    options: list[OptionModel] | None = Field(
        default=None, max_length=limits.MAX_OPTIONS, validate_default=True)
    truth: bool | None = Field(default=None, validate_default=True)  # truefalse
    # truefalse: the misconception its wrong side stands for (an option names its own)
    misconception: Slug | None = Field(default=None, validate_default=True)
    numeric: NumericModel | None = Field(default=None, validate_default=True)
    unit: LocalizedModel | None = Field(default=None, validate_default=True)
    accept: AcceptModel | None = Field(default=None, validate_default=True)  # text
    latin: list[Annotated[NonEmpty, AfterValidator(_latin)]] = Field(
        default_factory=list, validate_default=True)
    explanation: LocalizedModel
    details: LocalizedModel | None = None
    # a picture that explains (sent with the explanation: a photo, so PNG or JPEG), and what
    # it shows in each language of the question, as image and image_alt
    explanation_image: ImageModel | None = None
    explanation_image_alt: LocalizedModel | None = Field(default=None, validate_default=True)
    # optional in a pack; `quizbot content validate --strict` (CI) requires difficulty, bloom,
    # concepts and a source of every question
    difficulty: Difficulty | None = None
    bloom: Bloom | None = None
    concepts: list[Slug] | None = Field(default=None, min_length=1)
    prerequisites: list[Slug] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    claims: list[ClaimModel] = Field(default_factory=list)
    # an isomorphic question of the pack (the same idea, other surface), answered alone after
    # a peer round's revote on this one (bot/core/peer.py)
    pair: Slug | None = None

    @field_validator("concepts", "prerequisites", "sources")
    @classmethod
    def _listed_once(cls, values: list[str] | None) -> list[str] | None:
        if values and (twice := sorted({v for v in values if values.count(v) > 1})):
            raise PydanticCustomError(
                "listed_twice", "listed more than once: {twice}", {"twice": ", ".join(twice)})
        return values

    @field_validator("claims")
    @classmethod
    def _claims_have_a_release(
        cls, claims: list[ClaimModel], info: ValidationInfo
    ) -> list[ClaimModel]:
        sources = info.data.get("sources") or []  # absent when the sources are invalid
        if claims and "sources" in info.data and not any(versioned(s) for s in sources):
            raise PydanticCustomError(
                "claim_unversioned", "claims need a source naming the release they hold for "
                "(a link with a version, a release tag or a commit in it, or a note such as "
                "'(DeepSpeed v0.16.4)'); the sources are: {sources}",
                {"sources": ", ".join(sources) or "none"})
        return claims

    @field_validator("image_alt", "explanation_image_alt")
    @classmethod
    def _image_described(
        cls, alt: LocalizedModel | None, info: ValidationInfo
    ) -> LocalizedModel | None:
        name = info.field_name or "image_alt"
        image = name.removesuffix("_alt")  # image, explanation_image
        if info.data.get(image) is None:
            if alt is not None and image in info.data:
                raise PydanticCustomError(
                    "kind_key", "{name} describes an image, and the question has no {image}",
                    {"name": name, "image": image})
            return alt
        if alt is None:
            raise PydanticCustomError(
                "image_alt", "an {image} needs {name}: what it shows, in each language of the "
                "question (a screen reader reads it)", {"name": name, "image": image})
        # in each language the prompt is written in (the pack's other languages warn, as
        # every text does)
        prompt = info.data.get("prompt")
        written = [loc for loc, _ in prompt.items()] if prompt is not None else []
        if missing := [loc for loc in written if getattr(alt, loc) is None]:
            raise PydanticCustomError(
                "image_alt", "{name} has no {missing} text, and the prompt has: a reader in "
                "that language would get no text for the image",
                {"name": name, "missing": ", ".join(missing)})
        return alt

    @field_validator("explanation_image")
    @classmethod
    def _explanation_image_is_a_photo(cls, image: ImageModel | None) -> ImageModel | None:
        # sent as a photo (Telegram's explanation media, a Discord embed's image): an SVG
        # is drawn only on a question's card
        for _, path in image.items() if image is not None else ():
            if path.lower().endswith(".svg"):
                raise PydanticCustomError(
                    "image_type", "explanation_image must be a PNG or JPEG file (it is sent "
                    "as a photo; an SVG is only drawn on a question's card): '{path}'",
                    {"path": path})
        return image

    @field_validator("misconception")
    @classmethod
    def _true_or_false(cls, value: str | None, info: ValidationInfo) -> str | None:
        kind = info.data.get("kind")
        if value is not None and kind is not None and kind is not Kind.TRUEFALSE:
            raise PydanticCustomError(
                "kind_key", "a {kind} question has no misconception of its own: put "
                "misconception: {id} on the wrong option it stands for",
                {"kind": kind.value, "id": value})
        return value

    @field_validator(*_KIND_KEYS)
    @classmethod
    def _belongs_to_kind(cls, value: Any, info: ValidationInfo) -> Any:
        """Each kind's keys, and only those (nothing to check when the kind is invalid)."""
        kind = info.data.get("kind")
        name = info.field_name
        if kind is None or name is None:
            return value
        needed, allowed = _KEYS[kind]
        given = value is not None and value != []
        if given and name not in needed + allowed:
            takes = ", ".join(needed + allowed)
            raise PydanticCustomError(
                "kind_key", "a {kind} question has no {name} (it takes {takes})",
                {"kind": kind.value, "name": name, "takes": takes})
        if not given and name in needed:
            raise PydanticCustomError("missing", "a {kind} question needs {name}",
                                      {"kind": kind.value, "name": name})
        if name == "options" and value is not None:
            return _options_of(kind, value)
        return value

    @property
    def answer(self) -> int:
        """The first right option; -1 for the kinds with none (numeric, text, order)."""
        return self.answers[0] if self.answers else -1

    @property
    def answers(self) -> tuple[int, ...]:
        if self.kind is Kind.TRUEFALSE:
            return (0,) if self.truth else (1,)
        if self.kind in (Kind.CHOICE, Kind.MULTI):
            return tuple(i for i, o in enumerate(self.options or ()) if o.correct)
        return ()


def _options_of(kind: Kind, options: list[OptionModel]) -> list[OptionModel]:
    """The options' count and right ones, for their kind."""
    low, high = OPTION_COUNTS[kind]
    if len(options) < low:
        raise PydanticCustomError(
            "too_short", "too short", {"actual_length": len(options), "min_length": low})
    if len(options) > high:
        raise PydanticCustomError(
            "too_long", "too long", {"actual_length": len(options), "max_length": high})
    n = sum(o.correct for o in options)
    if kind is Kind.CHOICE and n != 1:
        raise PydanticCustomError(
            "one_correct_option",
            "exactly one option must have 'correct: true', found {n}",
            {"n": n},
        )
    if kind is Kind.MULTI and not (2 <= n < len(options)):
        raise PydanticCustomError(
            "multi_correct", "a multi question needs at least two options with 'correct: "
            "true' and at least one without, found {n} of {total}",
            {"n": n, "total": len(options)})
    if kind is Kind.ORDER and n:
        raise PydanticCustomError(
            "order_correct", "an order question's options are listed in the right order, "
            "none with 'correct: true'", {})
    if kind is Kind.ORDER and any(o.misconception for o in options):
        raise PydanticCustomError(
            "order_misconception", "an order question's items are all right: none stands "
            "for a misconception (tag a choice, multi or true/false question's wrong option)",
            {})
    return options


class QuizModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Slug
    # a pack in one language only names it, a pack in some languages lists them (the first
    # is required of every text); without it every text needs English and the others warn
    language: Language | list[Language] | None = None
    title: LocalizedModel
    tags: list[Slug] = Field(default_factory=list)
    # the wrong ideas its distractors may stand for (`misconception: <id>` on an option)
    misconceptions: list[MisconceptionModel] = Field(default_factory=list)
    questions: list[QuestionModel] = Field(min_length=1)

    @model_validator(mode="wrap")
    @classmethod
    def _texts_in_pack_language(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        with pack_language(data.get("language") if isinstance(data, dict) else None):
            return handler(data)

    @field_validator("language")
    @classmethod
    def _languages_listed_once(
        cls, value: Language | list[Language] | None
    ) -> Language | list[Language] | None:
        if isinstance(value, list) and (not value or len(set(value)) < len(value)):
            raise PydanticCustomError(
                "languages_listed", "list each language once, e.g. [en, bn]", {})
        return value

    @property
    def main_language(self) -> str | None:
        """The language every text has, if the pack names one."""
        declared = declared_languages(self.language)
        return declared[0] if declared else None

    @field_validator("misconceptions")
    @classmethod
    def _misconceptions_listed_once(
        cls, listed: list[MisconceptionModel]
    ) -> list[MisconceptionModel]:
        ids = [m.id for m in listed]
        if twice := sorted({i for i in ids if ids.count(i) > 1}):
            raise PydanticCustomError(
                "listed_twice", "misconception listed more than once: {twice}",
                {"twice": ", ".join(twice)})
        return listed

    @field_validator("questions")
    @classmethod
    def _unique_question_ids(cls, questions: list[QuestionModel]) -> list[QuestionModel]:
        seen: set[str] = set()
        for q in questions:
            if q.id in seen:
                # the loader reports this itself, at every place the id is used
                raise PydanticCustomError(
                    "duplicate_question_id", "question id {id!r} is used twice", {"id": q.id}
                )
            seen.add(q.id)
        return questions
