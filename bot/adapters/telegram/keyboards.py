"""Inline keyboards for button mode."""

from __future__ import annotations

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.adapters.telegram.callback_data import answer_data, flag_data
from bot.core.models import ShownQuestion
from bot.core.render import letter

PER_ROW = 5
FLAG = "⚑"  # report a problem with the question (reports.py)


def answer_keyboard(question: ShownQuestion) -> InlineKeyboardMarkup:
    """One lettered button per option; the message text lists the options in full
    (button labels are cut short by the clients). The ⚑ on a row of its own."""
    buttons = [
        InlineKeyboardButton(letter(i), callback_data=answer_data(question.post_id, i))
        for i in range(len(question.options))
    ]
    return InlineKeyboardMarkup(
        [buttons[i : i + PER_ROW] for i in range(0, len(buttons), PER_ROW)]
        + [[flag_button(question.question_id)]]
    )


def flag_button(question_id: str) -> InlineKeyboardButton:
    return InlineKeyboardButton(FLAG, callback_data=flag_data(question_id))


def flag_keyboard(question_id: str) -> InlineKeyboardMarkup:
    """The ⚑ alone, under a quiz poll."""
    return InlineKeyboardMarkup([[flag_button(question_id)]])
