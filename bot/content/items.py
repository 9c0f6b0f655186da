"""What the catalog holds: `Quiz`, `Question`, `Option`, `Code` and `Localized`, plain classes
with slots, and the locales. No pydantic here: the bot's process reads its catalog from the
content cache (cache.py) and never imports the schema's validating models (schema.py), which
the loader and the content commands import when a pack must be parsed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple, Protocol

if TYPE_CHECKING:
    from bot.content.schema import LocalizedModel, QuestionModel, QuizModel

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


class Kind(StrEnum):
    """The kinds of question. A pack's question says `kind:` (choice when it says none)."""

    CHOICE = "choice"  # one right option
    MULTI = "multi"  # select all that apply: right when every right option and no other is
    TRUEFALSE = "truefalse"  # two options, True then False, never shuffled
    NUMERIC = "numeric"  # a typed number within a tolerance or a range, with a unit
    TEXT = "text"  # a short typed answer, accepted in each language's forms
    ORDER = "order"  # its options (two to six) put in order; the pack lists them in it

    @property
    def typed(self) -> bool:
        """Answered by typing, with no options to pick."""
        return self in (Kind.NUMERIC, Kind.TEXT)


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


# --- what the catalog holds --------------------------------------------------------------------
#
# Immutable by contract (attributes are Final for the type checker; nothing assigns them). Built
# from a validated QuizModel (`Quiz.of`) or from the cache's plain data (bot/content/cache.py),
# never from unvalidated input.


class _Light:
    __slots__ = ()
    _fields: tuple[str, ...] = ()  # the constructor's parameters, also attributes
    _compared: tuple[str, ...] | None = None  # what equality compares (None: _fields)

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f) for f in self._compared or self._fields)

    # defining __eq__ leaves these unhashable (Python sets __hash__ to None), like the
    # pydantic models they replace; Localized and Code hash their key
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self._key() == other._key()

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

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Localized({', '.join(f'{k}={v!r}' for k, v in self.items())})"


class Option(_Light):
    __slots__ = ("correct", "text")
    _fields = ("text", "correct")

    def __init__(self, text: Localized, correct: bool = False) -> None:
        self.text: Final = text
        self.correct: Final = correct

    def __repr__(self) -> str:
        return f"Option({self.text!r}{', correct=True' if self.correct else ''})"


class Code(_Light):
    """A snippet and the Pygments language it is highlighted as."""

    __slots__ = ("language", "text")
    _fields = ("language", "text")

    def __init__(self, language: str, text: Localized) -> None:
        self.language: Final = language
        self.text: Final = text

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Code({self.language!r}, {self.text!r})"


class Meta(_Light):
    """What a question tests and what it rests on, as the pack states it: its difficulty
    (easy, medium, hard) and Bloom level, the concepts it tests and those it assumes, its
    sources, and its version-sensitive claims as (library, claim)."""

    __slots__ = ("bloom", "claims", "concepts", "difficulty", "prerequisites", "sources")
    _fields = ("difficulty", "bloom", "concepts", "prerequisites", "sources", "claims")

    def __init__(
        self, difficulty: str | None = None, bloom: str | None = None,
        concepts: tuple[str, ...] = (), prerequisites: tuple[str, ...] = (),
        sources: tuple[str, ...] = (), claims: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.difficulty: Final = difficulty
        self.bloom: Final = bloom
        self.concepts: Final = tuple(concepts)
        self.prerequisites: Final = tuple(prerequisites)
        self.sources: Final = tuple(sources)
        self.claims: Final = tuple((library, claim) for library, claim in claims)

    def __bool__(self) -> bool:
        return any(self._key())

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        shown = zip(self._fields, self._key(), strict=True)
        return f"Meta({', '.join(f'{k}={v!r}' for k, v in shown if v)})"

    @classmethod
    def of(cls, model: QuestionModel) -> Meta | None:
        meta = cls(model.difficulty, model.bloom, tuple(model.concepts or ()),
                   tuple(model.prerequisites), tuple(model.sources),
                   tuple((c.library, c.claim) for c in model.claims))
        return meta if meta else None

    def as_list(self) -> list[Any]:
        """The plain form the content cache stores."""
        return [self.difficulty, self.bloom, list(self.concepts), list(self.prerequisites),
                list(self.sources), [list(c) for c in self.claims]]

    @classmethod
    def from_list(cls, row: list[Any]) -> Meta:
        difficulty, bloom, concepts, prerequisites, sources, claims = row
        return cls(difficulty, bloom, tuple(concepts), tuple(prerequisites), tuple(sources),
                   tuple((library, claim) for library, claim in claims))

    def export(self) -> dict[str, Any]:
        """The keys a pack spells, those it has."""
        out: dict[str, Any] = {}
        for name in ("difficulty", "bloom"):
            if (value := getattr(self, name)) is not None:
                out[name] = value
        for name in ("concepts", "prerequisites", "sources"):
            if values := getattr(self, name):
                out[name] = list(values)
        if self.claims:
            out["claims"] = [{"library": library, "claim": claim}
                             for library, claim in self.claims]
        return out


class Misconception(_Light):
    """A wrong idea a pack's distractors may stand for: its id (a slug, unique in the pack)
    and a short statement of it in every language of the pack."""

    __slots__ = ("id", "statement")
    _fields = ("id", "statement")

    def __init__(self, id: str, statement: Localized) -> None:
        self.id: Final = id
        self.statement: Final = statement

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Misconception({self.id!r}, {self.statement!r})"

    def export(self) -> dict[str, Any]:
        return {"id": self.id, **self.statement.as_dict()}


class Numeric(_Light):
    """A numeric question's key: `value`, and the inclusive range `low`..`high` a typed number
    is right in (from the pack's tolerance, or its min and max); `unit`, if it names one."""

    __slots__ = ("high", "low", "unit", "value")
    _fields = ("value", "low", "high", "unit")

    def __init__(self, value: float, low: float, high: float,
                 unit: Localized | None = None) -> None:
        self.value: Final = value
        self.low: Final = low
        self.high: Final = high
        self.unit: Final = unit

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Numeric({self.value!r}, {self.low!r}..{self.high!r}, unit={self.unit!r})"

    def export(self) -> dict[str, Any]:
        return {"value": self.value, "low": self.low, "high": self.high,
                **({"unit": self.unit.as_dict()} if self.unit is not None else {})}


class Accept(_Light):
    """A typed question's key: the accepted forms per locale, as the pack writes them, and
    the Latin spellings (transliterations) accepted from anyone."""

    __slots__ = ("latin", "texts")
    _fields = ("texts", "latin")

    def __init__(self, texts: dict[str, tuple[str, ...]], latin: tuple[str, ...] = ()) -> None:
        self.texts: Final = {loc: tuple(forms) for loc, forms in texts.items()}
        self.latin: Final = tuple(latin)

    def __hash__(self) -> int:
        return hash((tuple(self.texts.items()), self.latin))

    def __repr__(self) -> str:
        return f"Accept({self.texts!r}, latin={self.latin!r})"

    def forms(self, locale: str) -> tuple[str, ...]:
        """The forms written for `locale`, else English's, else the first language's."""
        return self.texts.get(locale) or self.texts.get(DEFAULT_LOCALE) or next(
            iter(self.texts.values()), ())

    def export(self) -> dict[str, Any]:
        return {"texts": {loc: list(forms) for loc, forms in self.texts.items()},
                **({"latin": list(self.latin)} if self.latin else {})}


# a true/false question's two options, always in this order (canonical 0 is True)
TRUE = Localized("True", "সত্য", "सही")
FALSE = Localized("False", "মিথ্যা", "ग़लत")


def truefalse_options(truth: bool) -> list[Option]:
    """The options of a true/false question whose statement is `truth`."""
    return [Option(TRUE, truth), Option(FALSE, not truth)]


class Texts(NamedTuple):
    """A question's texts: what a question from the content cache reads when asked for."""

    prompt: Localized
    options: list[Option]
    explanation: Localized
    details: Localized | None


class Deferred(Protocol):
    """Where a question's texts are kept until they are asked for (the content cache's entry
    file, bot/content/cache.py): they are nearly all of a catalog's memory, and only a
    question being asked, answered or shown needs them."""

    def load(self) -> Texts: ...


class Question(_Light):
    """`answers` are the indexes of the right options (stored, not searched): one for choice
    and true/false, two or more for multi, none for numeric, text and order; `answer` is the
    first of them (-1 when there is none). An order question's options are in the right
    order. `numeric` and `accept` are the keys of the typed kinds. `code`, `formula` and
    `image` (a path relative to the pack's folder, described by `image_alt`) are drawn on the
    question's card. `misconceptions`: by canonical option, the misconception a distractor
    stands for (a true/false question's: its wrong side's). The texts (prompt, options,
    explanation, details) are held, or read when asked for from where `deferred` says (a
    question from the content cache)."""

    __slots__ = ("_deferred", "_texts", "accept", "answer", "answers", "code",
                 "explanation_image", "explanation_image_alt", "formula", "id", "image",
                 "image_alt", "kind", "meta", "misconceptions", "numeric", "pair")
    _fields = ("id", "prompt", "options", "explanation", "details", "code", "formula", "image",
               "meta", "kind", "answers", "numeric", "accept", "image_alt", "misconceptions",
               "pair", "explanation_image", "explanation_image_alt")

    def __init__(
        self,
        id: str,
        prompt: Localized | None,
        options: list[Option] | None,
        explanation: Localized | None,
        details: Localized | None = None,
        answer: int | None = None,
        *,
        code: Code | None = None,
        formula: Localized | None = None,
        image: Localized | None = None,
        meta: Meta | None = None,
        deferred: Deferred | None = None,
        kind: Kind = Kind.CHOICE,
        answers: tuple[int, ...] | None = None,
        numeric: Numeric | None = None,
        accept: Accept | None = None,
        image_alt: Localized | None = None,
        misconceptions: tuple[str | None, ...] = (),
        pair: str | None = None,
        explanation_image: Localized | None = None,
        explanation_image_alt: Localized | None = None,
    ) -> None:
        given = [text is not None for text in (prompt, options, explanation)]
        if not (all(given) if deferred is None else not any(given) and answer is not None):
            raise ValueError("a question's texts are held or deferred (with its answer), one "
                             "of the two")
        if answers is None:  # searched in the options held, else the one answer given
            answers = tuple(i for i, o in enumerate(options) if o.correct) if options \
                is not None else (answer,) if answer is not None and answer >= 0 else ()
        self.id: Final = id
        self._texts: Final = None if prompt is None or options is None or explanation is None \
            else Texts(prompt, options, explanation, details)
        self._deferred: Final = deferred
        self.kind: Final = Kind(kind)
        self.answers: Final[tuple[int, ...]] = tuple(answers)
        self.answer: Final[int] = (
            (self.answers[0] if self.answers else -1) if answer is None else answer
        )
        self.numeric: Final = numeric
        self.accept: Final = accept
        self.code: Final = code
        self.formula: Final = formula
        self.image: Final = image
        self.image_alt: Final = image_alt
        self.meta: Final = meta  # None when the pack states none
        # by canonical option: the id of the pack's misconception that wrong option stands
        # for, or None; () when no option of the question names one. Held with the question
        # (not with its deferred texts), so a chat's misconceptions read no texts.
        self.misconceptions: Final[tuple[str | None, ...]] = tuple(misconceptions)
        self.pair: Final = pair  # the pack's isomorphic question (a peer round's transfer)
        # a picture sent with the explanation (a path, as `image`), and its text
        self.explanation_image: Final = explanation_image
        self.explanation_image_alt: Final = explanation_image_alt

    def _held(self) -> Texts:
        """Its texts: held, or read from where they are deferred to."""
        if self._deferred is not None:
            return self._deferred.load()
        assert self._texts is not None
        return self._texts

    @property
    def prompt(self) -> Localized:
        return self._held().prompt

    @property
    def options(self) -> list[Option]:
        return self._held().options

    @property
    def explanation(self) -> Localized:
        return self._held().explanation

    @property
    def details(self) -> Localized | None:
        return self._held().details

    @property
    def deferred(self) -> bool:
        """Whether its texts are read when asked for, not held."""
        return self._deferred is not None

    @property
    def has_media(self) -> bool:
        """Whether it shows code, a formula or an image (so it has a card)."""
        return self.code is not None or self.formula is not None or self.image is not None

    @classmethod
    def of(cls, model: QuestionModel) -> Question:
        kind = model.kind
        if kind is Kind.TRUEFALSE:
            options = truefalse_options(bool(model.truth))
            tags: list[str | None] = [None, None]
            tags[1 if model.truth else 0] = model.misconception  # the wrong side's
        else:  # an order question's options are the items in the right order, none marked
            options = [Option(Localized.of(o.text), o.correct) for o in model.options or ()]
            tags = [o.misconception for o in model.options or ()]
        numeric = None
        if model.numeric is not None:
            low, high = model.numeric.bounds
            numeric = Numeric(model.numeric.value, low, high,
                              Localized.of(model.unit) if model.unit is not None else None)
        accept = None
        if model.accept is not None:
            accept = Accept({loc: tuple(forms) for loc, forms in model.accept.items()},
                            tuple(model.latin))
        return cls(
            model.id,
            Localized.of(model.prompt),
            options,
            Localized.of(model.explanation),
            Localized.of(model.details) if model.details is not None else None,
            code=Code(model.code.language, Localized.of(model.code.text))
            if model.code is not None else None,
            formula=Localized.of(model.formula) if model.formula is not None else None,
            image=Localized.of(model.image) if model.image is not None else None,
            meta=Meta.of(model),
            kind=kind,
            numeric=numeric,
            accept=accept,
            image_alt=Localized.of(model.image_alt) if model.image_alt is not None else None,
            misconceptions=tuple(tags) if any(tags) else (),
            pair=model.pair,
            explanation_image=Localized.of(model.explanation_image)
            if model.explanation_image is not None else None,
            explanation_image_alt=Localized.of(model.explanation_image_alt)
            if model.explanation_image_alt is not None else None,
        )

    def misconception_of(self, option: int) -> str | None:
        """The misconception canonical `option` stands for, if the pack names one."""
        tags = self.misconceptions
        return tags[option] if 0 <= option < len(tags) else None

    def __repr__(self) -> str:
        return (f"Question(id={self.id!r}, prompt={self.prompt!r}, kind={self.kind.value}, "
                f"answers={self.answers})")

    def export_media(self) -> dict[str, Any]:
        """code, formula and image in the export's shape (none when it has none)."""
        out: dict[str, Any] = {}
        if self.code is not None:
            out["code"] = {"language": self.code.language, "text": self.code.text.as_dict()}
        if self.formula is not None:
            out["formula"] = self.formula.as_dict()
        if self.image is not None:
            out["image"] = self.image.as_dict()
        if self.image_alt is not None:
            out["image_alt"] = self.image_alt.as_dict()
        return out

    def export_kind(self) -> dict[str, Any]:
        """What the export says of a kind other than choice (nothing for choice)."""
        if self.kind is Kind.CHOICE:
            return {}
        out: dict[str, Any] = {"kind": self.kind.value}
        if self.kind is Kind.MULTI:
            out["answers"] = list(self.answers)
        if self.numeric is not None:
            out["numeric"] = self.numeric.export()
        if self.accept is not None:
            out["accept"] = self.accept.export()
        return out

    def export_misconceptions(self) -> dict[str, Any]:
        """Which options stand for which misconception (nothing when none does), and the
        question's pair (none when it names none)."""
        return {**({"misconceptions": list(self.misconceptions)} if self.misconceptions else {}),
                **({"pair": self.pair} if self.pair else {})}


class Quiz(_Light):
    __slots__ = ("_by_id", "folder", "id", "language", "misconceptions", "questions", "tags",
                 "title")
    _fields = ("id", "title", "tags", "questions", "language", "folder", "misconceptions")
    # not where it was read
    _compared = ("id", "title", "tags", "questions", "language", "misconceptions")

    def __init__(
        self, id: str, title: Localized, tags: list[str], questions: list[Question],
        language: str | None = None, folder: str | None = None,
        misconceptions: tuple[Misconception, ...] = (),
    ) -> None:
        self.id: Final = id
        self.folder: Final = folder  # the pack's folder, where its images are (the loader's)
        self.language: Final = language  # a one-language pack names it
        self.title: Final = title
        self.tags: Final = tags
        self.questions: Final = questions
        self.misconceptions: Final = tuple(misconceptions)  # the pack's list, in its order
        self._by_id: Final = {q.id: q for q in questions}

    @classmethod
    def of(cls, model: QuizModel) -> Quiz:
        return cls(
            model.id, Localized.of(model.title), list(model.tags),
            [Question.of(q) for q in model.questions], model.main_language,
            misconceptions=tuple(Misconception(m.id, Localized.of(m.statement))
                                 for m in model.misconceptions),
        )

    @classmethod
    def model_validate(cls, data: Any) -> Quiz:
        """Validate plain data as a pack (pydantic's ValidationError if it is not one); the
        loader does this too, and also checks limits and reports lines."""
        from bot.content.schema import QuizModel

        return cls.of(QuizModel.model_validate(data))

    def image_path(self, question: Question, locale: str) -> str | None:
        """The file of `question`'s image in `locale`, or None if it has none."""
        if question.image is None or self.folder is None:
            return None
        return str(Path(self.folder) / question.image.get(locale))

    def explanation_image_path(self, question: Question, locale: str) -> str | None:
        """The file of the picture `question`'s explanation shows in `locale`, or None."""
        if question.explanation_image is None or self.folder is None:
            return None
        return str(Path(self.folder) / question.explanation_image.get(locale))

    def question(self, question_id: str) -> Question:
        try:
            return self._by_id[question_id]
        except KeyError:
            raise KeyError(f"quiz {self.id!r} has no question {question_id!r}") from None

    def misconception(self, misconception_id: str) -> Misconception | None:
        return next((m for m in self.misconceptions if m.id == misconception_id), None)

    def __repr__(self) -> str:
        return f"Quiz(id={self.id!r}, {len(self.questions)} questions)"

    def export(self) -> dict[str, Any]:
        """The documented JSON export shape."""
        return {
            "id": self.id,
            **({"language": self.language} if self.language else {}),
            "title": self.title.as_dict(),
            "tags": list(self.tags),
            **({"misconceptions": [m.export() for m in self.misconceptions]}
               if self.misconceptions else {}),
            "questions": [
                {
                    "id": q.id,
                    "prompt": q.prompt.as_dict(),
                    "options": [o.text.as_dict() for o in q.options],
                    "answer": q.answer,
                    **q.export_kind(),
                    **q.export_misconceptions(),
                    "explanation": q.explanation.as_dict(),
                    **({"details": q.details.as_dict()} if q.details else {}),
                    **q.export_media(),
                    **(q.meta.export() if q.meta is not None else {}),
                }
                for q in self.questions
            ],
        }
