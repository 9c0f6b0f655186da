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

import re
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

from bot.content.items import (
    _PACK_LANGUAGE,
    DEFAULT_LOCALE,
    LOCALES,
    Code,
    Deferred,
    Language,
    Localized,
    Option,
    Question,
    Quiz,
    _Texts,
    declared_languages,
    expected_locales,
    pack_language,
)

__all__ = [
    "BLOOM_LEVELS", "CLAIM_LIBRARIES", "DEFAULT_LOCALE", "DIFFICULTIES", "LOCALES", "Code",
    "Deferred", "Language", "Localized", "Option", "Question", "Quiz", "QuizModel",
    "declared_languages", "expected_locales", "pack_language", "versioned",
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


class OptionModel(BaseModel):
    """An answer option: locale keys plus an optional `correct: true` in the same map."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: LocalizedModel
    correct: bool = False

    @model_validator(mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):  # in the pack's language (LocalizedModel)
            return {"text": value}
        if isinstance(value, dict) and "text" not in value:
            texts = {k: v for k, v in value.items() if k != "correct"}
            return {"text": texts, **({"correct": value["correct"]} if "correct" in value else {})}
        return value


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


class QuestionModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Slug
    prompt: LocalizedModel
    code: CodeModel | None = None
    formula: FormulaModel | None = None
    image: ImageModel | None = None
    options: list[OptionModel] = Field(min_length=2, max_length=10)
    explanation: LocalizedModel
    details: LocalizedModel | None = None
    # optional in a pack; `quizbot content validate --strict` (CI) requires difficulty, bloom,
    # concepts and a source of every question
    difficulty: Difficulty | None = None
    bloom: Bloom | None = None
    concepts: list[Slug] | None = Field(default=None, min_length=1)
    prerequisites: list[Slug] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    claims: list[ClaimModel] = Field(default_factory=list)

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

    @field_validator("options")
    @classmethod
    def _exactly_one_correct(cls, options: list[OptionModel]) -> list[OptionModel]:
        n = sum(o.correct for o in options)
        if n != 1:
            raise PydanticCustomError(
                "one_correct_option",
                "exactly one option must have 'correct: true', found {n}",
                {"n": n},
            )
        return options

    @property
    def answer(self) -> int:
        return next(i for i, o in enumerate(self.options) if o.correct)


class QuizModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Slug
    # a pack in one language only names it, a pack in some languages lists them (the first
    # is required of every text); without it every text needs English and the others warn
    language: Language | list[Language] | None = None
    title: LocalizedModel
    tags: list[Slug] = Field(default_factory=list)
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
