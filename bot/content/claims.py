"""The bank's version-sensitive claims, library by library (`quizbot content claims`).

A claim holds for the releases its sources name (a question's `claims:` in its pack); CI
prints the list so that a reviewer rechecks each claim about a library when that library
changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.content.items import Quiz
from bot.content.schema import CLAIM_LIBRARIES


@dataclass(frozen=True, slots=True)
class Claim:
    library: str
    claim: str
    quiz: str
    question: str
    sources: tuple[str, ...]


def claims(quizzes: Iterable[Quiz]) -> list[Claim]:
    """Every claim, in the order of CLAIM_LIBRARIES, then pack and question order."""
    found = [Claim(library, claim, quiz.id, q.id, q.meta.sources)
             for quiz in quizzes for q in quiz.questions if q.meta is not None
             for library, claim in q.meta.claims]
    rank = {library: i for i, library in enumerate(CLAIM_LIBRARIES)}
    return sorted(found, key=lambda c: rank.get(c.library, len(rank)))


def report(quizzes: Iterable[Quiz]) -> str:
    """The claims grouped by library: each with its pack, question and sources."""
    found = claims(quizzes)
    if not found:
        return "no version-sensitive claims"
    lines: list[str] = []
    libraries = list(dict.fromkeys(c.library for c in found))
    for library in libraries:
        mine = [c for c in found if c.library == library]
        if lines:
            lines.append("")
        lines.append(f"{library} ({_count(len(mine), 'claim')})")
        for c in mine:
            lines.append(f"  {c.quiz}/{c.question}: {c.claim}")
            lines += [f"    source: {source}" for source in c.sources]
    lines.append("")
    lines.append(f"{_count(len(found), 'claim')} about {_count(len(libraries), 'library')}: "
                 "recheck a library's claims against their sources when it releases")
    return "\n".join(lines)


def _count(n: int, what: str) -> str:
    plural = what[:-1] + "ies" if what.endswith("y") else what + "s"
    return f"{n} {what if n == 1 else plural}"
