"""Load quiz packs from YAML, validate them, and point every problem at its file and line.

Loading is all or nothing: a catalog with any error is refused whole, so a running bot never
serves half a pack.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError

from bot.content import limits
from bot.content.schema import Localized, Question, Quiz

Loc = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int  # 1-based; 0 when unknown
    message: str
    warning: bool = False

    def __str__(self) -> str:
        kind = "warning" if self.warning else "error"
        return f"{self.file}:{self.line}: {kind}: {self.message}"


class ContentError(Exception):
    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass
class Catalog:
    quizzes: dict[str, Quiz] = field(default_factory=dict)
    warnings: list[Problem] = field(default_factory=list)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.quizzes.values())

    def get(self, quiz_id: str) -> Quiz | None:
        return self.quizzes.get(quiz_id)

    def with_tag(self, tag: str) -> list[Quiz]:
        return [q for q in self.quizzes.values() if tag in q.tags]

    def question(self, quiz_id: str, question_id: str) -> Question:
        return self.quizzes[quiz_id].question(question_id)


def _line_of(node: Any, loc: Loc) -> int:
    """Follow a pydantic error location through ruamel's tree to the nearest known line."""
    line = getattr(getattr(node, "lc", None), "line", -1)
    for key in loc:
        lc = getattr(node, "lc", None)
        try:
            if isinstance(key, int) and isinstance(node, list) and key < len(node):
                if lc is not None:
                    line = lc.item(key)[0]
                node = node[key]
            elif isinstance(node, dict) and key in node:
                if lc is not None:
                    line = lc.value(key)[0] if not hasattr(node[key], "lc") else lc.key(key)[0]
                node = node[key]
            # keys the YAML does not spell (e.g. Option.text) keep the parent's line
        except (KeyError, IndexError, TypeError):
            break
    return line + 1


def _describe(loc: Loc) -> str:
    parts: list[str] = []
    for key in loc:
        if key == "text" and parts and parts[-1].startswith("option"):
            continue
        if isinstance(key, int):
            parts[-1] = f"{parts[-1].rstrip('s')} {key + 1}"
        else:
            parts.append(str(key))
    return ".".join(parts) or "file"


def _limit_problems(quiz: Quiz) -> Iterable[tuple[Loc, str, bool]]:
    """(location, message, is_warning) for every platform limit a quiz breaks."""

    def check(loc: Loc, text: Localized, limit: int, what: str) -> Iterable[tuple[Loc, str, bool]]:
        for locale, value in text.items():
            n = limits.tg_len(value)
            if n > limit:
                yield (*loc, locale), f"{what} is {n} characters, the limit is {limit}", False

    yield from check(("title",), quiz.title, limits.TITLE, "title")
    for qi, q in enumerate(quiz.questions):
        base: Loc = ("questions", qi)
        yield from check((*base, "prompt"), q.prompt, limits.TG_QUESTION, "question")
        for oi, opt in enumerate(q.options):
            yield from check((*base, "options", oi), opt.text, limits.TG_OPTION, "option")
        yield from check(
            (*base, "explanation"), q.explanation, limits.TG_EXPLANATION, "explanation"
        )
        for locale, value in q.explanation.items():
            if value.count("\n") > limits.TG_EXPLANATION_NEWLINES:
                yield (
                    (*base, "explanation", locale),
                    f"explanation has {value.count(chr(10))} line breaks, Telegram allows "
                    f"{limits.TG_EXPLANATION_NEWLINES}",
                    False,
                )
        if q.details:
            yield from check((*base, "details"), q.details, limits.DETAILS, "details")
        option_locales = [tuple(loc for loc, _ in o.text.items()) for o in q.options]
        if len(set(option_locales)) > 1:
            for oi, locs in enumerate(option_locales):
                if locs != option_locales[0]:
                    yield (
                        (*base, "options", oi),
                        f"option has locales {list(locs)} but option 1 has "
                        f"{list(option_locales[0])}: every locale needs the same options",
                        False,
                    )
        for what, text in (("prompt", q.prompt), ("explanation", q.explanation)):
            if missing := text.missing():
                yield (*base, what), f"{what} has no {', '.join(missing)} text", True
        if missing := q.options[0].text.missing():
            yield (*base, "options"), f"options have no {', '.join(missing)} text", True


def load_file(path: Path) -> tuple[Quiz | None, list[Problem]]:
    name = str(path)
    yaml = YAML(typ="rt")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        return None, [Problem(name, (mark.line + 1) if mark else 0, f"invalid YAML: {exc.problem}")]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(name, 0, f"cannot read file: {exc}")]
    if not isinstance(data, dict):
        return None, [Problem(name, 1, "a quiz file must be a mapping with id, title, questions")]
    try:
        quiz = Quiz.model_validate(data)
    except ValidationError as exc:
        return None, [
            Problem(name, _line_of(data, err["loc"]), f"{_describe(err['loc'])}: {err['msg']}")
            for err in exc.errors()
        ]
    problems = [
        Problem(name, _line_of(data, loc), f"{_describe(loc)}: {msg}", warning)
        for loc, msg, warning in _limit_problems(quiz)
    ]
    return quiz, problems


def _quiz_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted([*root.glob("*.yaml"), *root.glob("*.yml")])


def load_catalog(root: Path | str) -> Catalog:
    """Load every pack under `root`; raise ContentError listing every problem if any."""
    root = Path(root)
    if not root.exists():
        raise ContentError([Problem(str(root), 0, "no such file or directory")])
    files = _quiz_files(root)
    if not files:
        raise ContentError([Problem(str(root), 0, "no quiz files (*.yaml) found")])
    catalog = Catalog()
    problems: list[Problem] = []
    question_owner: dict[str, str] = {}
    for path in files:
        quiz, found = load_file(path)
        problems.extend(found)
        if quiz is None:
            continue
        if quiz.id in catalog.quizzes:
            problems.append(Problem(str(path), 1, f"quiz id {quiz.id!r} is already used"))
            continue
        for q in quiz.questions:
            if q.id in question_owner:
                problems.append(
                    Problem(
                        str(path), 0,
                        f"question id {q.id!r} is already used in {question_owner[q.id]}",
                    )
                )
            question_owner[q.id] = str(path)
        catalog.quizzes[quiz.id] = quiz
    errors = [p for p in problems if not p.warning]
    if errors:
        raise ContentError(problems)
    catalog.warnings = problems
    return catalog
