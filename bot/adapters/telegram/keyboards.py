"""Inline keyboards for button mode."""

from __future__ import annotations

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.adapters.telegram.callback_data import answer_data, flag_data
from bot.adapters.telegram.identity import chat_id_of
from bot.adapters.telegram.start_links import details_payload, link
from bot.content.items import Kind
from bot.content.limits import TG_CALLBACK_DATA_BYTES
from bot.core.models import ShownQuestion
from bot.core.render import letter
from bot.i18n import Translator

PER_ROW = 5
TYPED = {Kind.NUMERIC, Kind.TEXT}
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


def details_keyboard(username: str, post_id: int, t: Translator) -> InlineKeyboardMarkup:
    """Under a close summary: the question in full, opened in the reader's private chat
    (a link, so a group is sent nothing more when someone wants the details)."""
    return InlineKeyboardMarkup([[InlineKeyboardButton(
        t.gettext("📖 Full explanation"), url=link(username, details_payload(post_id)))]])


# the kinds beyond one choice (kinds.py answers their presses) ---------------------------
def _data(text: str) -> str:
    assert len(text.encode()) <= TG_CALLBACK_DATA_BYTES
    return text


def uses_keyboard_order(chat_id: int) -> bool:
    """An order is pressed in sequence where one person sees the keyboard: their private
    chat. In a group the letters are typed."""
    return chat_id > 0


def kind_keyboard(q: ShownQuestion, t: Translator) -> InlineKeyboardMarkup:
    """The buttons a question of a kind other than a choice is sent with."""
    chat_id = chat_id_of(q.chat_key)
    rows: list[list[InlineKeyboardButton]] = []
    if q.kind is Kind.MULTI:
        rows = multi_rows(q, frozenset(), t)
    elif q.kind is Kind.ORDER and uses_keyboard_order(chat_id):
        rows = order_rows(q, "", t)
    elif q.kind in TYPED or q.kind is Kind.ORDER:
        rows = [[InlineKeyboardButton(t.gettext("Answer ✍"),
                                      callback_data=_data(f"w:{q.post_id}"))]]
    return InlineKeyboardMarkup([*rows, [flag_button(q.question_id)]])


def multi_rows(q: ShownQuestion, picks: frozenset[int],
               t: Translator) -> list[list[InlineKeyboardButton]]:
    """A toggle per option (✓ on the picked ones, in a private chat) and Submit."""
    rows = _rows([InlineKeyboardButton(("✓ " if i in picks else "") + letter(i),
                                       callback_data=_data(f"t:{q.post_id}:{i}"))
                  for i in range(len(q.options))])
    rows.append([InlineKeyboardButton("✓ " + t.gettext("Submit"),
                                      callback_data=_data(f"s:{q.post_id}"))])
    return rows


def order_rows(q: ShownQuestion, sequence: str, t: Translator) -> list[list[InlineKeyboardButton]]:
    """The options not yet placed, each adding itself to the sequence; and a restart."""
    rows = _rows([
        InlineKeyboardButton(letter(i), callback_data=_data(
            f"o:{q.post_id}:{sequence}{i}"))
        for i in range(len(q.options)) if str(i) not in sequence
    ])
    if sequence:
        rows.append([InlineKeyboardButton("↺ " + t.gettext("Start over"),
                                          callback_data=_data(f"o:{q.post_id}:"))])
    return rows


def _rows(buttons: list[InlineKeyboardButton]) -> list[list[InlineKeyboardButton]]:
    return [buttons[i: i + PER_ROW] for i in range(0, len(buttons), PER_ROW)]
