"""Fitting text into Telegram's limits, counted in UTF-16 code units as the Bot API counts."""

from __future__ import annotations

import re

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


# where a sentence ends, in the scripts the catalogs are written in (the danda: bn, hi)
SENTENCE_END = re.compile(r"[.!?।](?=\s)")


def clip(text: str, limit: int) -> str:
    """`text` in at most `limit` UTF-16 units, cut after its last whole sentence that fits,
    else after its last whole word, ending in … when cut: never mid-word."""
    if tg_len(text) <= limit:
        return text
    head = fit(text, limit)[:-1]  # what fits with the ellipsis
    ends = [m.end() for m in SENTENCE_END.finditer(head)]
    if ends and ends[-1] >= len(head) // 2:  # a sentence end keeping most of it
        return head[: ends[-1]].rstrip() + ELLIPSIS
    if text[len(head)].isspace():
        return head.rstrip() + ELLIPSIS  # cut between two words
    word = head.rsplit(None, 1)
    return (word[0] if len(word) > 1 else head).rstrip() + ELLIPSIS


def alert_text(result: AnswerResult, t: Translator) -> str:
    """The answerCallbackQuery alert after a button press (200 units). An explanation too
    long for it is cut at a sentence or a word, and says where the whole of it is: below,
    for one person's question (answered.go_on sends it next); in the summary the chat gets
    when a shared question closes."""
    text = render.result_text(result, t)
    if tg_len(text) <= TG_ALERT:
        return text
    where = t.gettext("The whole explanation is below.") if result.personal \
        else t.gettext("The whole explanation comes when the question closes.")
    return clip(text, TG_ALERT - tg_len(where) - 1) + "\n" + where
