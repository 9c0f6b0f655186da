"""Compact callback_data for answer buttons: "a:<post id>:<shown option>".

Telegram allows 64 bytes; this stays under 30. The data is never trusted: the handler checks
that the post is bound to the pressed message before anything is recorded.
"""

from __future__ import annotations

import re

from bot.content.limits import TG_CALLBACK_DATA_BYTES

_ANSWER = re.compile(r"a:(\d{1,18}):(\d{1,2})")


def answer_data(post_id: int, shown: int) -> str:
    data = f"a:{post_id}:{shown}"
    assert len(data.encode()) <= TG_CALLBACK_DATA_BYTES
    return data


def parse_answer(data: str | None) -> tuple[int, int] | None:
    """(post_id, shown option) from callback data, or None if it is not ours."""
    match = _ANSWER.fullmatch(data or "")
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2))


# The ⚑ under a question (reports.py): "r:<question id>", at most 50 bytes (ids are slugs of
# up to 48). Never trusted either: the core refuses an id the catalog does not have.
_FLAG = re.compile(r"r:(.{1,62})", re.DOTALL)  # wide: a forged id gets a polite refusal


def flag_data(question_id: str) -> str:
    data = f"r:{question_id}"
    assert len(data.encode()) <= TG_CALLBACK_DATA_BYTES
    return data


def parse_flag(data: str | None) -> str | None:
    """The question id in ⚑ callback data, or None if it is not a flag's."""
    match = _FLAG.fullmatch(data or "")
    return match.group(1) if match else None
