"""Inline keyboards for button mode."""

from __future__ import annotations

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.adapters.telegram.callback_data import answer_data, flag_data
from bot.adapters.telegram.identity import chat_id_of
from bot.adapters.telegram.start_links import details_payload, link, quiz_payload
from bot.content.items import Kind
from bot.content.limits import TG_CALLBACK_DATA_BYTES
from bot.core.models import QuizInfo, ShownQuestion
from bot.core.render import letter, short
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


# quizzes started by a tap (help.py) ------------------------------------------------------
START_PREFIX = "go:"  # go:<quiz id>, pressed in the private chat: that quiz, run there
START_PATTERN = rf"^{START_PREFIX}"
QUIZ_BUTTONS = 48  # Telegram takes 100 buttons a message; a catalog longer than this is typed
LABEL_CHARS = 40  # what a phone shows of a button's label


def start_data(quiz_id: str) -> str | None:
    """A quiz's start button's data, None for an id too long for it (it is typed then)."""
    data = START_PREFIX + quiz_id
    return data if len(data.encode()) <= TG_CALLBACK_DATA_BYTES else None


def parse_start(data: str | None) -> str | None:
    """The quiz id a start button names (never trusted: the core refuses an unknown one)."""
    if data is None or not data.startswith(START_PREFIX):
        return None
    return data.removeprefix(START_PREFIX) or None


def quiz_keyboard(quizzes: list[QuizInfo], t: Translator, *, private: bool,
                  username: str) -> InlineKeyboardMarkup | None:
    """A button per quiz, its title and size: in the private chat it starts the quiz there;
    elsewhere it is a t.me link that starts it in the reader's private chat, so a tap in a
    group sends the group nothing. None: no quiz to offer."""
    buttons = []
    for quiz in quizzes[:QUIZ_BUTTONS]:
        label = t.ngettext("{title} · {n} question", "{title} · {n} questions", quiz.questions,
                           title=short(quiz.title, LABEL_CHARS))
        if private and (data := start_data(quiz.id)) is not None:
            buttons.append(InlineKeyboardButton(label, callback_data=data))
        elif not private and (payload := quiz_payload(quiz.id)) is not None:
            buttons.append(InlineKeyboardButton(label, url=link(username, payload)))
    return InlineKeyboardMarkup([[b] for b in buttons]) if buttons else None


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
