"""The confidence tap on Telegram (/settings confidence on): "How sure are you?" between an
answer's press and its record, so the answer is stored with how sure the person said they were
in one write (QuizService.answer(..., confidence=...)), before they see the result.

Where it is asked: only in a private chat, on a question sent with buttons. A quiz poll shows
its result the moment one votes, so a poll cannot ask first (a private chat that asks is sent
buttons instead, publish.Poster, unless its /settings mode is polls). In a group the question's
keyboard is everyone's and an alert carries no buttons: a group's buttons are answered at
once, with no confidence. A typed number or text is answered at once too (the text does not
fit in callback_data). Whether a press asks is the core's to say (bot/core/confidence_ask.py,
the same rule as Discord's): not on a closed question, not to someone who answered it (the
first answer is final: the press gets "already answered" at once), not for an option the
question has not.

The step: the pressed option (or a multi's picks as a bitmask, or an order's sequence) goes
into the callback_data of the four buttons the question's keyboard is edited to,
"c:<post>:<a|m|o><value>:<0|1|2|s>" (s: Skip, no confidence), so nothing is kept in memory and
a restart between the press and the tap loses nothing. The tap is never trusted: the message
must be the post's, in a private chat, the value one the question offers, the confidence 0-2
or Skip; anything else is refused and records nothing.
"""

from __future__ import annotations

import logging
import re

import telegram
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update

from bot.adapters.telegram.answered import go_on
from bot.adapters.telegram.context import BotData, Context
from bot.adapters.telegram.identity import chat_of, message_ref, person_of
from bot.adapters.telegram.keyboards import (
    answer_keyboard,
    flag_button,
    kind_keyboard,
    uses_keyboard_order,
)
from bot.adapters.telegram.press_replies import alert, edit_keyboard, toast
from bot.adapters.telegram.text import alert_text
from bot.content.items import Kind
from bot.content.limits import TG_CALLBACK_DATA_BYTES
from bot.core import render
from bot.core.models import (
    AnswerResult,
    AnswerStatus,
    Confidence,
    Ordered,
    Person,
    Picks,
    Response,
    ShownQuestion,
)
from bot.i18n import Translator, _, translator

log = logging.getLogger(__name__)

TAPS = r"^c:"
_TAP = re.compile(r"c:(\d{1,18}):([amo])(\d{1,12}):([0-9]|s)")
SKIP = "s"
# the buttons, most sure first; the stored value (models.Confidence) or Skip
CHOICES = (
    (str(int(Confidence.SURE)), "🎯 ", _("Sure")),
    (str(int(Confidence.THINK_SO)), "🤔 ", _("Think so")),
    (str(int(Confidence.GUESSING)), "🎲 ", _("Guessing")),
    (SKIP, "", _("Skip")),
)
CHOICE_KINDS = (Kind.CHOICE, Kind.TRUEFALSE)  # answered with one option


def step_of(response: Response) -> str:
    """The first step as it travels in callback_data: a shown option, the picks as a
    bitmask, the sequence."""
    if isinstance(response, int):
        return f"a{response}"
    if isinstance(response, Picks):
        return f"m{sum(1 << i for i in response.shown)}"
    if isinstance(response, Ordered):
        return "o" + "".join(str(i) for i in response.shown)
    raise TypeError(f"a typed answer asks no confidence: {response!r}")


def tap_data(post_id: int, step: str, choice: str) -> str:
    data = f"c:{post_id}:{step}:{choice}"
    assert len(data.encode()) <= TG_CALLBACK_DATA_BYTES
    return data


def response_of(q: ShownQuestion, step: str, value: str) -> Response | None:
    """The response a tap's step names, or None when the question offers no such answer."""
    n = len(q.options)
    if step == "a" and q.kind in CHOICE_KINDS:
        option = int(value)
        return option if option < n else None
    if step == "m" and q.kind is Kind.MULTI:
        mask = int(value)
        if not 0 < mask < 1 << n:
            return None
        return Picks(frozenset(i for i in range(n) if mask >> i & 1))
    if step == "o" and q.kind is Kind.ORDER:
        sequence = tuple(int(c) for c in value)
        return Ordered(sequence) if sorted(sequence) == list(range(n)) else None
    return None


async def asks(data: BotData, chat: telegram.Chat, post_id: int, person: Person,
               response: Response) -> bool:
    """Whether this press asks how sure first: in a private chat, where the core says so
    (the chat's setting, an open post not yet answered, an answer a tap carries:
    bot/core/confidence_ask.py)."""
    if not uses_keyboard_order(chat.id):  # a group's or a channel's keyboard: everyone's
        return False
    return await data.service.confidence.asks(post_id, person, response,
                                              chat_key=chat_of(chat).key)


async def ask(query: telegram.CallbackQuery, message: telegram.MaybeInaccessibleMessage,
              q: ShownQuestion, response: Response, t: Translator) -> None:
    """The question's keyboard becomes the four buttons, each carrying the answer given."""
    step = step_of(response)
    buttons = [InlineKeyboardButton(mark + t.gettext(label),
                                    callback_data=tap_data(q.post_id, step, c))
               for c, mark, label in CHOICES]
    rows = [buttons[:3], buttons[3:], [flag_button(q.question_id)]]  # Skip on a row of its own
    await edit_keyboard(query, message, InlineKeyboardMarkup(rows))
    # a toast, not an alert: the buttons are the question, nothing to dismiss first
    prompt = t.gettext("How sure are you?")
    await toast(query, f"{_said(response)} · {prompt}")


def _said(response: Response) -> str:
    if isinstance(response, int):
        return render.letter(response)
    if isinstance(response, Picks):
        return ", ".join(render.letter(i) for i in sorted(response.shown))
    assert isinstance(response, Ordered)
    return " → ".join(render.letter(i) for i in response.shown)


async def tapped(update: Update, context: Context) -> None:
    """Sure, Think so, Guessing or Skip: the answer recorded with it, then shown as a press
    without the tap is (the result in an alert, then in the chat with the explanation)."""
    query = update.callback_query
    if query is None or query.data is None:
        return
    data = context.bot_data
    if not data.seen.add(("press", query.id)):  # redelivered after a restart
        log.info("ignoring redelivered confidence tap %s (%s)", query.id, query.data)
        return
    person = person_of(query.from_user)
    message = query.message
    found = _TAP.fullmatch(query.data)
    shown = None
    if found is not None and message is not None and uses_keyboard_order(message.chat.id):
        post_id = int(found[1])
        bound = await data.poster.post_for(message_ref(message.chat.id, message.message_id))
        if bound == post_id:
            shown = await data.service.questions.show(post_id)
    response = None if shown is None or found is None else response_of(shown, found[2], found[3])
    said = None if found is None or found[4] == SKIP else int(found[4])
    if shown is None or response is None or message is None or (
            said is not None and said not in {int(c) for c in Confidence}):
        log.info("refused confidence tap %r from %s", query.data, person.key)
        chat = chat_of(message.chat) if message is not None else None
        t = translator(await data.service.locales.for_person(person, chat))
        refusal = AnswerResult(AnswerStatus.UNKNOWN_POST, shown.post_id if shown else 0)
        await alert(query, render.result_text(refusal, t))
        return
    confidence = None if said is None else Confidence(said)
    result = await data.service.answer(shown.post_id, person, response, confidence=confidence)
    t = translator(result.locale)
    await alert(query, alert_text(result, t))
    # the keyboard as a press without the tap leaves it (a second press: "already answered")
    await edit_keyboard(query, message, answer_keyboard(shown) if shown.kind in CHOICE_KINDS
                else kind_keyboard(shown, translator(shown.locale)))
    if result.accepted and result.personal:
        await go_on(data, result, message.chat.id, buttons=True)  # as after a press
