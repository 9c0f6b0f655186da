"""A problem in a content file, as `file:line: error: what` (or `warning:`).

The one type every content reader reports with (quiz packs, the CSV import, authoring), and
the escaping that keeps input (file names, keys, values) from garbling a terminal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_ESCAPE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def clean(text: str, limit: int = 400) -> str:
    """Escape what would garble a terminal (keys and file names come from the input)."""
    text = _ESCAPE.sub(lambda m: repr(m.group())[1:-1], text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def short(text: str) -> str:
    return clean(text, 40)


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int  # 1-based; 0 when unknown
    message: str
    warning: bool = False

    def __str__(self) -> str:
        kind = "warning" if self.warning else "error"
        return f"{clean(self.file)}:{self.line}: {kind}: {self.message}"


def order(problem: Problem) -> tuple[str, int]:
    return problem.file, problem.line


def has_errors(problems: Iterable[Problem]) -> bool:
    return any(not p.warning for p in problems)


class ContentError(Exception):
    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = sorted(problems, key=order)
        super().__init__("\n".join(str(p) for p in self.problems))
