"""Pydantic models of a quiz pack (one YAML file per quiz)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any, Literal

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
# says `language:` (a pack written in one language, e.g. from Telegram polls). Set by Quiz.
_PACK_LANGUAGE: ContextVar[str] = ContextVar("pack_language", default=DEFAULT_LOCALE)

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


@contextmanager
def pack_language(language: object) -> Iterator[None]:
    """Validate parts of a pack (not the whole Quiz, which sets it) in its `language:`."""
    token = _PACK_LANGUAGE.set(language if isinstance(language, str) and language in LOCALES
                               else DEFAULT_LOCALE)
    try:
        yield
    finally:
        _PACK_LANGUAGE.reset(token)


class Localized(BaseModel):
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

    def get(self, locale: str) -> str:
        text = getattr(self, locale, None) or self.en or self.bn or self.hi
        assert text is not None  # the validator requires one
        return text

    def items(self) -> list[tuple[str, str]]:
        return [(loc, text) for loc in LOCALES if (text := getattr(self, loc)) is not None]

    def missing(self) -> list[str]:
        return [loc for loc in LOCALES if getattr(self, loc) is None]

    def as_dict(self) -> dict[str, str]:
        return dict(self.items())


class Option(BaseModel):
    """An answer option: locale keys plus an optional `correct: true` in the same map."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: Localized
    correct: bool = False

    @model_validator(mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):  # in the pack's language (Localized)
            return {"text": value}
        if isinstance(value, dict) and "text" not in value:
            texts = {k: v for k, v in value.items() if k != "correct"}
            return {"text": texts, **({"correct": value["correct"]} if "correct" in value else {})}
        return value


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Slug
    prompt: Localized
    options: list[Option] = Field(min_length=2, max_length=10)
    explanation: Localized
    details: Localized | None = None

    @field_validator("options")
    @classmethod
    def _exactly_one_correct(cls, options: list[Option]) -> list[Option]:
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


class Quiz(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Slug
    # a pack in one language only names it; without it every text needs English
    language: Language | None = None
    title: Localized
    tags: list[Slug] = Field(default_factory=list)
    questions: list[Question] = Field(min_length=1)

    @model_validator(mode="wrap")
    @classmethod
    def _texts_in_pack_language(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        with pack_language(data.get("language") if isinstance(data, dict) else None):
            return handler(data)

    @field_validator("questions")
    @classmethod
    def _unique_question_ids(cls, questions: list[Question]) -> list[Question]:
        seen: set[str] = set()
        for q in questions:
            if q.id in seen:
                # the loader reports this itself, at every place the id is used
                raise PydanticCustomError(
                    "duplicate_question_id", "question id {id!r} is used twice", {"id": q.id}
                )
            seen.add(q.id)
        return questions

    def question(self, question_id: str) -> Question:
        for q in self.questions:
            if q.id == question_id:
                return q
        raise KeyError(f"quiz {self.id!r} has no question {question_id!r}")

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
