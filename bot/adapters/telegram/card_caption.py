"""The text of a question's card: its photo's caption says what the picture shows (the
image's description, the formula, the code in a `pre` entity), for screen readers and to
copy. Within Telegram's 1,024 caption units; code that does not fit is cut at a line with a
pointer to the picture, which shows all of it (bot/reports/card.py draws every line).

Entities rather than HTML: the adapter sends plain text everywhere else, and an entity needs
no escaping of the code's own < and &.
"""

from __future__ import annotations

from telegram import MessageEntity

from bot.adapters.telegram.text import fit
from bot.content.limits import TG_CAPTION, tg_len
from bot.core.models import ShownQuestion
from bot.i18n import Translator


def card_caption(q: ShownQuestion, t: Translator) -> tuple[str, list[MessageEntity]]:
    """The caption and its entities; ("", []) for a question with no card text."""
    parts = []
    if q.image is not None and q.image_alt:
        parts.append(t.gettext("Picture: {text}", text=q.image_alt))
    if q.formula:
        parts.append(t.gettext("Formula: {formula}", formula=q.formula))
    head = fit("\n".join(parts), TG_CAPTION)
    if not q.code:
        return head, []
    label = t.gettext("Code ({language}):", language=q.code_language)
    before = "\n".join(p for p in (head, label) if p) + "\n"
    code, pointer = q.code.rstrip("\n"), ""
    room = TG_CAPTION - tg_len(before)
    if tg_len(code) > room:
        # i18n: after code cut to fit a photo's caption; the photo is the question's card
        pointer = "\n" + t.gettext("… (the picture shows all of the code)")
        code = _whole_lines(code, room - tg_len(pointer))
    if not code.strip():
        return head, []
    entity = MessageEntity(MessageEntity.PRE, tg_len(before), tg_len(code),
                           language=_language(q.code_language))
    return before + code + pointer, [entity]


def _whole_lines(code: str, room: int) -> str:
    """The first lines of `code` within `room` UTF-16 units (a first line longer than that
    is cut)."""
    kept: list[str] = []
    used = 0
    for line in code.split("\n"):
        cost = tg_len(line) + (1 if kept else 0)
        if used + cost > room:
            break
        kept.append(line)
        used += cost
    if not kept and room > 1:
        return fit(code.split("\n")[0], room)
    return "\n".join(kept)


def _language(name: str) -> str | None:
    """A Pygments name as a pre entity's language (highlighting in clients); None for text."""
    tag = "".join(c for c in name.lower() if c.isalnum() or c in "+#-")
    return None if tag in ("", "text") else tag
