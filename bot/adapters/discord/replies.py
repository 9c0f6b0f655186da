"""Answering an interaction in time, and the short replies for errors.

Discord drops an interaction that is not answered within 3 seconds ("This interaction
failed"). `respond` starts the work, and if it has not finished after DEADLINE_BUDGET it defers
(the user sees "thinking...") and sends the result as a follow-up.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

import discord

from bot.adapters.discord.embeds import info_embed, message_text
from bot.adapters.discord.identity import personal_locale
from bot.core import render
from bot.core.models import NoActiveRun, QuizError, UnknownQuiz
from bot.core.schedule import ScheduleError
from bot.core.service import QuizService, UnsupportedLocale
from bot.i18n import LANGUAGE_NAMES, Translator, normalize, translator

log = logging.getLogger(__name__)

DEADLINE_BUDGET = 2.0  # seconds of work before deferring; Discord's hard limit is 3


@dataclass
class Reply:
    content: str | None = None
    embed: discord.Embed | None = None
    view: discord.ui.View | None = None
    post_id: int | None = None  # the question this message shows: bind it once sent

    @classmethod
    def text(cls, text: str) -> Reply:
        """Plain text; long text goes into an embed (4096 characters rather than 2000)."""
        if len(text) <= 2000:
            return cls(content=message_text(text))
        return cls(embed=info_embed(text))

    def kwargs(self) -> dict[str, Any]:
        # discord.py treats a passed None differently from an omitted argument
        return {k: v for k, v in (("content", self.content), ("embed", self.embed),
                                  ("view", self.view)) if v is not None}


async def respond(
    interaction: discord.Interaction,
    work: Awaitable[Reply],
    *,
    ephemeral: bool,
    budget: float | None = None,
) -> tuple[int | None, Reply]:
    """Send what `work` produces as the answer to `interaction`; returns the message id and
    the reply."""
    task = asyncio.ensure_future(work)
    try:
        done, _ = await asyncio.wait(
            {task}, timeout=DEADLINE_BUDGET if budget is None else budget
        )
        if not done:
            await interaction.response.defer(ephemeral=ephemeral, thinking=True)
        reply = await task
    except BaseException:
        task.cancel()
        raise
    return await send(interaction, reply, ephemeral=ephemeral), reply


async def send(interaction: discord.Interaction, reply: Reply, *, ephemeral: bool) -> int | None:
    """The response if none was sent yet, else a follow-up; returns the message id."""
    if not interaction.response.is_done():
        response = await interaction.response.send_message(ephemeral=ephemeral, **reply.kwargs())
        return response.message_id
    message = await interaction.followup.send(ephemeral=ephemeral, wait=True, **reply.kwargs())
    return message.id


def explain(error: QuizError, t: Translator, service: QuizService) -> str:
    """The user's mistake in words: what was wrong and what to do instead."""
    if isinstance(error, UnknownQuiz):  # titles in the reader's language
        return render.unknown_quiz_text(error.selector, service.quizzes(t.locale), t)
    if isinstance(error, NoActiveRun):
        return t.gettext(
            "You have no unfinished quiz. Start one with /quiz and pick a quiz."
        ) + "\n" + render.quiz_list_text(service.quizzes(t.locale), t)
    if isinstance(error, UnsupportedLocale):
        return t.gettext(
            "Unsupported language “{code}”. Choose one of: {choices}.",
            code=error.code, choices=", ".join(LANGUAGE_NAMES.values()),
        )
    if isinstance(error, ScheduleError):
        return t.gettext(error.template, **error.values)
    return str(error)


async def reply_error(
    interaction: discord.Interaction, service: QuizService, error: QuizError
) -> None:
    t = translator(await personal_locale(service, interaction))
    await send(interaction, Reply.text(explain(error, t, service)), ephemeral=True)


async def apologize(interaction: discord.Interaction, service: QuizService) -> None:
    """After an unexpected error: a short ephemeral apology, never "This interaction failed"."""
    try:
        locale = await asyncio.wait_for(personal_locale(service, interaction), 1.0)
    except Exception:  # the database may be what failed: fall back to the client's language
        locale = normalize(str(interaction.locale)) or "en"
    t = translator(locale)
    text = t.gettext("Sorry, something went wrong on our side. Please try again in a moment.")
    try:
        await send(interaction, Reply(content=text), ephemeral=True)
    except discord.HTTPException as exc:  # e.g. the 3 s or 15 min window has passed
        log.warning("could not apologise for interaction %s: %s", interaction.id, exc)
