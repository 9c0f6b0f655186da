"""A quiz pack (one YAML file per quiz): the pydantic models that validate it, and the light
objects the catalog holds.

Validation is pydantic's (`QuizModel` and the models under it, with precise error
locations). What the bot keeps in memory is `Quiz`, `Question`, `Option` and `Localized`: plain
classes with slots, built from a validated model or from the content cache
(bot/content/cache.py). Pydantic models cost about ten times as much to build, which is most of
what loading 10,000 cached questions would cost (docs/performance.md, Content).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

LOCALES: tuple[str, ...] = ("en", "bn", "hi")
DEFAULT_LOCALE = "en"
Language = Literal["en", "bn", "hi"]

# The language every text of the pack being validated must have: English, unless the pack
# says `language:` (a pack written in one language, e.g. from Telegram polls, or the first of
# the languages it lists). Set by QuizModel.
_PACK_LANGUAGE: ContextVar[str] = ContextVar("pack_language", default=DEFAULT_LOCALE)
# The languages the pack declares (`language: bn`, `language: [en, bn]`), whose missing texts
# are worth a warning; every locale when it declares none.
_PACK_LANGUAGES: ContextVar[tuple[str, ...]] = ContextVar("pack_languages", default=LOCALES)

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


def declared_languages(language: object) -> tuple[str, ...]:
    """A pack's `language:` (one locale or a list of them) as the locales it declares, the
    first being the one every text must have; () when it declares none (or not validly)."""
    listed = [language] if isinstance(language, str) else language
    if not isinstance(listed, list):
        return ()
    known = tuple(dict.fromkeys(x for x in listed if isinstance(x, str) and x in LOCALES))
    return known if len(known) == len(listed) else ()


@contextmanager
def pack_language(language: object) -> Iterator[None]:
    """Validate parts of a pack (not the whole QuizModel, which sets it) in its `language:`."""
    declared = declared_languages(language)
    token = _PACK_LANGUAGE.set(declared[0] if declared else DEFAULT_LOCALE)
    listed = _PACK_LANGUAGES.set(declared or LOCALES)
    try:
        yield
    finally:
        _PACK_LANGUAGE.reset(token)
        _PACK_LANGUAGES.reset(listed)


def expected_locales() -> tuple[str, ...]:
    """The locales the pack being validated declares (every locale if it declares none)."""
    return _PACK_LANGUAGES.get()


class _Texts:
    """Reading a text in several locales (`en`, `bn`, `hi` attributes): the same for the
    validating model and the catalog's light object."""

    __slots__ = ()

    def get(self, locale: str) -> str:
        """The text in `locale`, else English, else the language it has."""
        text: str | None = getattr(self, locale) if locale in LOCALES else None
        if not text:  # validation requires one
            text = next(t for loc in LOCALES if (t := getattr(self, loc)))
        return text

    def items(self) -> list[tuple[str, str]]:
        return [(loc, text) for loc in LOCALES if (text := getattr(self, loc)) is not None]

    def missing(self) -> list[str]:
        """The locales the pack declares (all if it declares none) this text lacks."""
        return [loc for loc in expected_locales() if getattr(self, loc) is None]

    def as_dict(self) -> dict[str, str]:
        return dict(self.items())


class LocalizedModel(_Texts, BaseModel):
    """A text in several locales; the pack's language (English unless the pack names another)
    is required, the others fall back to English, else to the language the text has."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    en: NonEmpty | None = None
    bn: NonEmpty | None = None
    hi: NonEmpty | None = None

    @model_validator(mode="wrap")
    @classmethod
    def _in_pack_language(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        required = _PACK_LANGUAGE.get()
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


class QuestionModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Slug
    prompt: LocalizedModel
    options: list[OptionModel] = Field(min_length=2, max_length=10)
    explanation: LocalizedModel
    details: LocalizedModel | None = None

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


# --- what the catalog holds --------------------------------------------------------------------
#
# Immutable by contract (attributes are Final for the type checker; nothing assigns them). Built
# from a validated QuizModel (`Quiz.of`) or from the cache's plain data (bot/content/cache.py),
# never from unvalidated input.


class _Light:
    __slots__ = ()
    _fields: tuple[str, ...] = ()  # the constructor's parameters, also attributes

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Any:
        """A copy with some fields replaced (pydantic's name, which tests used)."""
        return type(self)(**{**{f: getattr(self, f) for f in self._fields}, **(update or {})})


class Localized(_Texts, _Light):
    """A text in several locales: the pack's language always (English unless the pack names
    another); the others fall back to English, else to the language the text has."""

    __slots__ = ("bn", "en", "hi")
    _fields = ("en", "bn", "hi")

    def __init__(self, en: str | None, bn: str | None = None, hi: str | None = None) -> None:
        # a text left the same in another language (a name, a number) is kept once: the
        # catalog stays in memory for the process's life
        if bn is not None and bn == en:
            bn = en
        if hi is not None and (hi == en or hi == bn):
            hi = en if hi == en else bn
        self.en: Final = en
        self.bn: Final = bn
        self.hi: Final = hi

    @classmethod
    def of(cls, model: LocalizedModel) -> Localized:
        return cls(model.en, model.bn, model.hi)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Localized):
            return NotImplemented
        return (self.en, self.bn, self.hi) == (other.en, other.bn, other.hi)

    def __hash__(self) -> int:
        return hash((self.en, self.bn, self.hi))

    def __repr__(self) -> str:
        return f"Localized({', '.join(f'{k}={v!r}' for k, v in self.items())})"


class Option(_Light):
    __slots__ = ("correct", "text")
    _fields = ("text", "correct")

    def __init__(self, text: Localized, correct: bool = False) -> None:
        self.text: Final = text
        self.correct: Final = correct

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Option):
            return NotImplemented
        return (self.text, self.correct) == (other.text, other.correct)

    __hash__ = None  # type: ignore[assignment]  # like the pydantic model it replaces

    def __repr__(self) -> str:
        return f"Option({self.text!r}{', correct=True' if self.correct else ''})"


class Question(_Light):
    """`answer` is the index of the correct option (stored, not searched)."""

    __slots__ = ("answer", "details", "explanation", "id", "options", "prompt")
    _fields = ("id", "prompt", "options", "explanation", "details")  # answer: from the options

    def __init__(
        self,
        id: str,
        prompt: Localized,
        options: list[Option],
        explanation: Localized,
        details: Localized | None = None,
        answer: int | None = None,
    ) -> None:
        self.id: Final = id
        self.prompt: Final = prompt
        self.options: Final = options
        self.explanation: Final = explanation
        self.details: Final = details
        self.answer: Final[int] = (
            next(i for i, o in enumerate(options) if o.correct) if answer is None else answer
        )

    @classmethod
    def of(cls, model: QuestionModel) -> Question:
        return cls(
            model.id,
            Localized.of(model.prompt),
            [Option(Localized.of(o.text), o.correct) for o in model.options],
            Localized.of(model.explanation),
            Localized.of(model.details) if model.details is not None else None,
            model.answer,
        )

    def _key(self) -> tuple[Any, ...]:
        return (self.id, self.prompt, self.options, self.explanation, self.details, self.answer)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Question):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Question(id={self.id!r}, prompt={self.prompt!r}, answer={self.answer})"


class Quiz(_Light):
    __slots__ = ("_by_id", "id", "language", "questions", "tags", "title")
    _fields = ("id", "title", "tags", "questions", "language")

    def __init__(
        self, id: str, title: Localized, tags: list[str], questions: list[Question],
        language: str | None = None,
    ) -> None:
        self.id: Final = id
        self.language: Final = language  # a one-language pack names it
        self.title: Final = title
        self.tags: Final = tags
        self.questions: Final = questions
        self._by_id: Final = {q.id: q for q in questions}

    @classmethod
    def of(cls, model: QuizModel) -> Quiz:
        return cls(
            model.id, Localized.of(model.title), list(model.tags),
            [Question.of(q) for q in model.questions], model.main_language,
        )

    @classmethod
    def model_validate(cls, data: Any) -> Quiz:
        """Validate plain data as a pack (pydantic's ValidationError if it is not one); the
        loader does this too, and also checks limits and reports lines."""
        return cls.of(QuizModel.model_validate(data))

    def question(self, question_id: str) -> Question:
        try:
            return self._by_id[question_id]
        except KeyError:
            raise KeyError(f"quiz {self.id!r} has no question {question_id!r}") from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quiz):
            return NotImplemented
        return (self.id, self.title, self.tags, self.questions, self.language) == (
            other.id, other.title, other.tags, other.questions, other.language
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Quiz(id={self.id!r}, {len(self.questions)} questions)"

    def export(self) -> dict[str, Any]:
        """The documented JSON export shape."""
        return {
            "id": self.id,
            **({"language": self.language} if self.language else {}),
            "title": self.title.as_dict(),
            "tags": list(self.tags),
            "questions": [
                {
                    "id": q.id,
                    "prompt": q.prompt.as_dict(),
                    "options": [o.text.as_dict() for o in q.options],
                    "answer": q.answer,
                    "explanation": q.explanation.as_dict(),
                    **({"details": q.details.as_dict()} if q.details else {}),
                }
                for q in self.questions
            ],
        }
