"""Core results as Discord embeds and message text.

Quiz content is plain text, but Discord reads Markdown (`context_fn ... create_` would turn
italic), so content and rendered text are escaped; only the letters are bold on purpose.
Lengths are clipped to Discord's limits (platform-limits.md B2, B3) rather than failing.

A question's card is a picture; what it shows is also text: its code as a code block and its
formula in the embed (`card_text`, read by screen readers and copyable), and the attachment's
alt text (`card_alt`, Discord's attachment description) says the picture, code and formula.
"""

from __future__ import annotations

import discord
from discord.utils import escape_markdown

from bot.content.items import Kind
from bot.content.limits import (
    DC_EMBED_DESCRIPTION,
    DC_EMBED_FIELD_VALUE,
    DC_EMBED_TITLE,
    DC_MESSAGE,
)
from bot.core import render
from bot.core.models import PostSummary, RunSummary, ShownQuestion
from bot.core.render import heading, letter
from bot.i18n import Translator

OPEN = discord.Colour.blurple()
CLOSED = discord.Colour.dark_grey()
INFO = discord.Colour.gold()


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plain(text: str) -> str:
    """Text shown literally, whatever Markdown characters it contains."""
    return escape_markdown(text)


DC_ATTACHMENT_DESCRIPTION = 1024  # an attachment's alt text (message.mdx, attachment object)
FENCE = "```"
CARD_SHARE = 0.6  # of what the prompt and the options leave, at most, for the card's text


def code_block(code: str, language: str, limit: int) -> str:
    """`code` in a fenced block of at most `limit` characters, whole lines kept, "…" when cut.
    A fence inside the code is broken with a zero-width space so it cannot end the block."""
    tag = "".join(c for c in language.lower() if c.isalnum() or c in "+#-")
    body = code.rstrip("\n").replace(FENCE, "`\u200b``")
    head, tail = f"{FENCE}{tag}\n", f"\n{FENCE}"
    room = limit - len(head) - len(tail)
    if room <= 1:
        return ""
    if len(body) > room:
        lines, kept = body.split("\n"), ""
        for line in lines:
            if len(kept) + len(line) + 3 > room:  # a newline and "…" after it
                break
            kept += line + "\n"
        body = (kept or body[: room - 2] + "\n") + "…"
    return head + body + tail


def card_text(q: ShownQuestion, t: Translator, limit: int) -> str:
    """What the question's card shows, as Markdown of at most `limit` characters: the code as
    a code block, the formula, the picture's description. "" when it has no card."""
    if not q.has_card or limit <= 0:
        return ""
    parts = []
    if q.formula:
        inline = "`" + q.formula.replace("`", "'") + "`"
        parts.append(t.gettext("Formula: {formula}", formula=inline))
    if q.image is not None and q.image_alt:
        parts.append(t.gettext("Picture: {text}", text=plain(q.image_alt)))
    rest = "\n".join(parts)
    if q.code:
        room = limit - len(rest) - (1 if rest else 0)
        block = code_block(q.code, q.code_language, room)
        rest = "\n".join(p for p in (block, rest) if p)
    return clip(rest, limit) if len(rest) > limit else rest


def card_alt(q: ShownQuestion, t: Translator) -> str:
    """The card's alt text (an attachment's description, at most 1,024 characters): the
    picture's description, the formula and the code, plain."""
    parts = []
    if q.image is not None:
        parts.append(t.gettext("Picture: {text}", text=q.image_alt) if q.image_alt
                     else t.gettext("The question's card"))
    if q.formula:
        parts.append(t.gettext("Formula: {formula}", formula=q.formula))
    if q.code:
        parts.append(t.gettext("Code ({language}):", language=q.code_language) + "\n" + q.code)
    return clip("\n".join(parts) or t.gettext("The question's card"), DC_ATTACHMENT_DESCRIPTION)


def with_card(q: ShownQuestion, t: Translator, before: str, after: str) -> str:
    """An embed's description: `before` (the prompt), the card's text, `after` (the options),
    within Discord's 4,096 characters; the card's text gives way first."""
    room = DC_EMBED_DESCRIPTION - len(before) - len(after) - 4
    card = card_text(q, t, min(room, int(DC_EMBED_DESCRIPTION * CARD_SHARE)))
    return clip("\n\n".join(p for p in (before, card, after) if p), DC_EMBED_DESCRIPTION)


def question_embed(
    q: ShownQuestion, t: Translator, *, answered: int | None = None
) -> discord.Embed:
    """Title, question and every option in full (button labels are only letters, because an
    option can be longer than a button's 80 characters). `answered` is the live count shown on
    public questions; a private run passes None."""
    options = "\n".join(f"**{letter(i)})** {plain(text)}" for i, text in enumerate(q.options))
    if hint := how_to_answer(q, t):
        options = f"{options}\n\n*{hint}*" if options else f"*{hint}*"
    embed = discord.Embed(
        title=clip(heading(q, t), DC_EMBED_TITLE),
        description=with_card(q, t, plain(q.prompt), options),
        colour=OPEN,
    )
    if answered is not None:
        footer = t.ngettext("{n} answer so far", "{n} answers so far", answered)
        if q.closes_at is not None:
            # Discord appends the timestamp, shown in each reader's own time zone
            footer += " · " + t.gettext("closes")
            embed.timestamp = q.closes_at
        embed.set_footer(text=footer)
    return embed


def how_to_answer(q: ShownQuestion, t: Translator) -> str | None:
    """The line under a question of a kind other than one choice: how it is answered here."""
    if q.kind is Kind.MULTI:
        return t.gettext("Choose every right answer in the menu below.")
    if q.kind is Kind.NUMERIC:
        return t.gettext("Answer with a number in {unit}: press Answer.", unit=q.unit) \
            if q.unit else t.gettext("Answer with a number: press Answer.")
    if q.kind is Kind.TEXT:
        return t.gettext("Type your answer: press Answer.")
    if q.kind is Kind.ORDER:
        return t.gettext("Put the items in order: press Put in order.")
    return None


def right_answer(q: ShownQuestion) -> str | None:
    """The right answer as the chat saw the options: "B) text"; "A) …, C) …" for several
    right answers; "B) … → A) … → C) …" for an order; None for a typed answer (the
    explanation says it)."""
    if q.kind is Kind.MULTI:
        return ", ".join(f"{letter(i)}) {q.options[i]}" for i in q.correct_set)
    if q.kind is Kind.ORDER:
        return " → ".join(f"{letter(i)}) {q.options[i]}" for i in q.correct_set)
    if 0 <= q.correct < len(q.options):
        return f"{letter(q.correct)}) {q.options[q.correct]}"
    return None


def closed_embed(summary: PostSummary, t: Translator) -> discord.Embed:
    """The same data as render.summary_text, laid out on the question message itself: every
    option with its share of answers, the correct one marked, the fastest correct answerers.
    An order's and a typed answer's options have no shares: the right answer says it."""
    q = summary.question
    lines = []
    right = set(q.correct_set) if q.kind is Kind.MULTI else {q.correct}
    for i, text in enumerate(q.options if q.kind is not Kind.ORDER else ()):
        count = summary.per_option[i] if i < len(summary.per_option) else 0
        share = count / summary.answered if summary.answered else 0.0
        mark = "✅" if i in right else "▫️"
        lines.append(
            f"{mark} **{letter(i)})** {plain(text)} — {t.number(count)} ({t.percent(share)})"
        )
    for typed, count in summary.typed:  # a typed kind's most common answers
        lines.append(f"▫️ {plain(clip(typed, 100))} — {t.number(count)}")
    tally = t.ngettext("{n} person answered", "{n} people answered", summary.answered)
    if summary.answered:
        tally += " · " + t.gettext("{share} right", share=t.percent(summary.share_right))
    parts = [p for p in ("\n".join(lines), tally) if p]
    if summary.fastest:
        names = ", ".join(
            f"{plain(render.person_name(a.name, i, t))} ({render.seconds(t, a.elapsed_ms)})"
            for i, a in enumerate(summary.fastest, 1)
        )
        parts.append(t.gettext("Fastest: {names}", names=names))
    embed = discord.Embed(
        title=clip("⏱ " + heading(q, t), DC_EMBED_TITLE),
        description=with_card(q, t, plain(q.prompt), "\n\n".join(parts)),
        colour=CLOSED,
    )
    answer = right_answer(q) if q.kind in (Kind.CHOICE, Kind.TRUEFALSE) or \
        not summary.correct_text else summary.correct_text
    embed.add_field(
        name=clip(plain(t.gettext("Answer: {answer}", answer=answer) if answer is not None
                        else t.gettext("The answer")), DC_EMBED_TITLE),
        value=clip(plain(q.details or q.explanation), DC_EMBED_FIELD_VALUE),
        inline=False,
    )
    return embed


def explanation_embed(file_name: str) -> discord.Embed:
    """The explanation's picture under the closed question's embed (its alt text is on the
    attachment, `file_name`); the explanation's words are the closed embed's Answer field."""
    embed = discord.Embed(colour=CLOSED)
    embed.set_image(url=f"attachment://{file_name}")
    return embed


def run_summary_embed(summary: RunSummary, t: Translator) -> discord.Embed:
    return info_embed(render.run_summary_text(summary, t))


def info_embed(text: str) -> discord.Embed:
    return discord.Embed(description=clip(plain(text), DC_EMBED_DESCRIPTION), colour=INFO)


def message_text(text: str) -> str:
    return clip(plain(text), DC_MESSAGE)
