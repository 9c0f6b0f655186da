"""What follows an accepted answer to one person's question (a private question, a quiz run, a
review card) in their chat: the result with its explanation, then the run's next question or
its score. Shared by a poll's vote and a button's press (handlers.py) and the confidence tap
(confidence.py)."""

from __future__ import annotations

from bot.adapters.telegram.context import BotData
from bot.core import render
from bot.core.models import AnswerResult
from bot.i18n import translator


async def go_on(data: BotData, result: AnswerResult, chat_id: int, *, buttons: bool) -> None:
    """One person's question, answered: the result and explanation, then the run's next
    question (`buttons`: as a message with buttons, else the chat's way) or its score."""
    t = translator(result.locale)
    await data.poster.text(chat_id, render.result_text(result, t, details=True))
    if result.next_question is not None:
        await data.poster.question(result.next_question, buttons=buttons)
    elif result.run_summary is not None:
        await data.poster.text(chat_id, render.run_summary_text(result.run_summary, t))
