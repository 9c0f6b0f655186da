"""Fitting text into Telegram's limits, counted in UTF-16 code units as the Bot API counts."""

from __future__ import annotations

from bot.content.limits import (
    TG_ALERT,
    TG_EXPLANATION,
    TG_EXPLANATION_NEWLINES,
    TG_MESSAGE,
    tg_len,
)
from bot.core import render
from bot.core.models import AnswerResult
from bot.i18n import Translator

ELLIPSIS = "…"


def fit(text: str, limit: int = TG_MESSAGE) -> str:
    """`text` cut to `limit` UTF-16 units, ending in … when cut."""
    if tg_len(text) <= limit:
        return text
    out = []
    used = tg_len(ELLIPSIS)
    for ch in text:
        used += tg_len(ch)
        if used > limit:
            break
        out.append(ch)
    return "".join(out).rstrip() + ELLIPSIS


def poll_explanation(text: str) -> str:
    """A quiz poll's explanation: at most 200 units and 2 line feeds (sendPoll rejects more)."""
    head, *rest = text.split("\n", TG_EXPLANATION_NEWLINES)
    lines = [head, *rest[:-1], " ".join(rest[-1].split("\n"))] if rest else [head]
    return fit("\n".join(lines), TG_EXPLANATION)


def alert_text(result: AnswerResult, t: Translator) -> str:
    """The answerCallbackQuery alert after a button press; the explanation is cut to fit."""
    return fit(render.result_text(result, t), TG_ALERT)
