"""Core results as Discord embeds and message text.

Quiz content is plain text, but Discord reads Markdown (`context_fn ... create_` would turn
italic), so content and rendered text are escaped; only the letters are bold on purpose.
Lengths are clipped to Discord's limits (platform-limits.md B2, B3) rather than failing.
"""

from __future__ import annotations

import discord
from discord.utils import escape_markdown

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


def question_embed(
    q: ShownQuestion, t: Translator, *, answered: int | None = None
) -> discord.Embed:
    """Title, question and every option in full (button labels are only letters, because an
    option can be longer than a button's 80 characters). `answered` is the live count shown on
    public questions; a private run passes None."""
    options = "\n".join(f"**{letter(i)})** {plain(text)}" for i, text in enumerate(q.options))
    embed = discord.Embed(
        title=clip(heading(q, t), DC_EMBED_TITLE),
        description=clip(f"{plain(q.prompt)}\n\n{options}", DC_EMBED_DESCRIPTION),
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


def closed_embed(summary: PostSummary, t: Translator) -> discord.Embed:
    """The same data as render.summary_text, laid out on the question message itself: every
    option with its share of answers, the correct one marked, the fastest correct answerers."""
    q = summary.question
    lines = []
    for i, text in enumerate(q.options):
        count = summary.per_option[i] if i < len(summary.per_option) else 0
        share = count / summary.answered if summary.answered else 0.0
        mark = "✅" if i == q.correct else "▫️"
        lines.append(
            f"{mark} **{letter(i)})** {plain(text)} — {t.number(count)} ({t.percent(share)})"
        )
    tally = t.ngettext("{n} person answered", "{n} people answered", summary.answered)
    if summary.answered:
        tally += " · " + t.gettext("{share} right", share=t.percent(summary.share_right))
    parts = [plain(q.prompt), "\n".join(lines), tally]
    if summary.fastest:
        names = ", ".join(
            f"{plain(render.person_name(a.name, i, t))} ({render.seconds(t, a.elapsed_ms)})"
            for i, a in enumerate(summary.fastest, 1)
        )
        parts.append(t.gettext("Fastest: {names}", names=names))
    embed = discord.Embed(
        title=clip("⏱ " + heading(q, t), DC_EMBED_TITLE),
        description=clip("\n\n".join(parts), DC_EMBED_DESCRIPTION),
        colour=CLOSED,
    )
    embed.add_field(
        name=clip(plain(t.gettext(
            "Answer: {answer}", answer=f"{letter(q.correct)}) {q.options[q.correct]}"
        )), DC_EMBED_TITLE),
        value=clip(plain(q.details or q.explanation), DC_EMBED_FIELD_VALUE),
        inline=False,
    )
    return embed


def run_summary_embed(summary: RunSummary, t: Translator) -> discord.Embed:
    return info_embed(render.run_summary_text(summary, t))


def info_embed(text: str) -> discord.Embed:
    return discord.Embed(description=clip(plain(text), DC_EMBED_DESCRIPTION), colour=INFO)


def message_text(text: str) -> str:
    return clip(plain(text), DC_MESSAGE)
