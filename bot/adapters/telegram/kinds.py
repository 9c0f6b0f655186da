"""Answering the kinds of question beyond one choice on Telegram: several options (toggle
buttons and Submit; a multi-answer quiz poll in polls mode is handlers.poll_answer's), an
order (pressed in sequence in a private chat; typed as letters in a group), a number or a
short text typed (a plain message in the private chat; a reply to the question or to the
"Answer ✍" prompt in a group).

State: an order's sequence so far is in the callback_data of the keyboard the bot edits
(only its one person sees it, in their private chat), so a restart loses nothing. A multi's
toggles are per person in this process's memory (a shared keyboard cannot show one person's
picks): a restart forgets toggles not yet submitted, and Submit then says to pick again.
Nothing is trusted: the pressed message must be the post's, a pick must be one of its
options, a sequence a partial permutation of them. Where a private chat asks how sure
(/settings confidence on), Submit and an order's last press record nothing: confidence.py asks,
the picks or the order in its buttons' data, and its tap records the answer.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict

import telegram
from telegram import (
    ForceReply,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    ReplyParameters,
    Update,
)
from telegram.ext import filters

from bot.adapters.telegram import confidence
from bot.adapters.telegram.context import BotData, Context
from bot.adapters.telegram.identity import chat_of, message_ref, person_of, prompt_ref
from bot.adapters.telegram.keyboards import (
    TYPED,
    flag_button,
    multi_rows,
    order_rows,
    uses_keyboard_order,
)
from bot.adapters.telegram.press_replies import alert, edit_keyboard, toast
from bot.adapters.telegram.text import alert_text, fit
from bot.content.items import Kind
from bot.core import render
from bot.core.models import (
    AnswerResult,
    AnswerStatus,
    Ordered,
    Person,
    Picks,
    Response,
    ShownQuestion,
    Typed,
)
from bot.core.ports import command_key
from bot.i18n import Translator, translator

log = logging.getLogger(__name__)

TOGGLES_KEPT = 4096  # (post, person) toggle sets remembered, oldest forgotten first
# t: a toggle, s: Submit, o: an order's sequence so far, w: the "Answer ✍" prompt
PRESSES = r"^[tsow]:"
_TOGGLE = re.compile(r"t:(\d{1,18}):(\d{1,2})")
_SUBMIT = re.compile(r"s:(\d{1,18})")
_ORDER = re.compile(r"o:(\d{1,18}):(\d{0,12})")
_WRITE = re.compile(r"w:(\d{1,18})")
# a plain text message in a private chat, or a reply in a group; never a command
TEXTS = filters.TEXT & ~filters.COMMAND


class Toggles:
    """Each person's picks on a multi's toggle buttons, in memory (bounded)."""

    def __init__(self) -> None:
        self._picks: OrderedDict[tuple[int, str], frozenset[int]] = OrderedDict()

    def toggle(self, post_id: int, person_key: str, shown: int) -> frozenset[int]:
        key = (post_id, person_key)
        picks = self._picks.pop(key, frozenset()) ^ {shown}
        self._picks[key] = picks
        while len(self._picks) > TOGGLES_KEPT:
            self._picks.popitem(last=False)
        return picks

    def take(self, post_id: int, person_key: str) -> frozenset[int]:
        return self._picks.pop((post_id, person_key), frozenset())


TOGGLES = Toggles()


async def pressed(update: Update, context: Context) -> None:
    """A toggle, Submit, an order's press or "Answer ✍"."""
    query = update.callback_query
    if query is None or query.data is None:
        return
    data = context.bot_data
    person = person_of(query.from_user)
    message = query.message
    chat = chat_of(message.chat) if message is not None else None
    post_id = _post_named(query.data)
    bound = None
    if message is not None and post_id is not None:
        bound = await data.poster.post_for(message_ref(message.chat.id, message.message_id))
        if bound is None and isinstance(message, telegram.Message):  # sent with no reply
            bound = await data.poster.bind_late_message(message, post_id)
    shown = await data.service.questions.show(post_id) if bound == post_id and post_id else None
    t = translator(await data.service.locales.for_person(person, chat))
    if shown is None or message is None or not await _handle(
            data, query, shown, person, t, message):
        log.info("refused callback data %r from %s", query.data, person.key)
        refusal = AnswerResult(AnswerStatus.UNKNOWN_POST, post_id or 0)
        await alert(query, render.result_text(refusal, t))


def _post_named(data: str) -> int | None:
    for pattern in (_TOGGLE, _SUBMIT, _ORDER, _WRITE):
        if (found := pattern.fullmatch(data)) is not None:
            return int(found[1])
    return None


async def _handle(data: BotData, query: telegram.CallbackQuery, q: ShownQuestion,
                  person: Person, t: Translator, message: telegram.MaybeInaccessibleMessage,
                  ) -> bool:
    """False: the press is not one this question offers."""
    text = query.data or ""
    n = len(q.options)
    if (found := _TOGGLE.fullmatch(text)) is not None and q.kind is Kind.MULTI:
        option = int(found[2])
        if option >= n:
            return False
        picks = TOGGLES.toggle(q.post_id, person.key, option)
        if uses_keyboard_order(message.chat.id):  # their private chat: the keyboard shows it
            await edit_keyboard(query, message, _markup(q, multi_rows(q, picks, t)))
        await toast(query, t.gettext("Your picks so far: {picks}", picks=_letters(picks, t)))
        return True
    if _SUBMIT.fullmatch(text) is not None and q.kind is Kind.MULTI:
        picks = TOGGLES.take(q.post_id, person.key)
        if not picks:
            await alert(query, t.gettext("Pick one or more options first, then Submit."))
            return True
        if await confidence.asks(data, message.chat, q.post_id, person, Picks(picks)):
            await confidence.ask(query, message, q, Picks(picks), t)
            return True
        await _answer(data, query, q, person, Picks(picks), message)
        if uses_keyboard_order(message.chat.id):
            await edit_keyboard(query, message, _markup(q, multi_rows(q, frozenset(), t)))
        return True
    if (found := _ORDER.fullmatch(text)) is not None and q.kind is Kind.ORDER \
            and uses_keyboard_order(message.chat.id):
        sequence = found[2]
        steps = [int(c) for c in sequence]
        if len(set(steps)) != len(steps) or any(s >= n for s in steps):
            return False
        if len(steps) < n:
            await edit_keyboard(query, message, _markup(q, order_rows(q, sequence, t)))
            await toast(query, t.gettext("Your order so far: {order}", order=" → ".join(
                render.letter(s) for s in steps)) if steps else None)
            return True
        if await confidence.asks(data, message.chat, q.post_id, person,
                                 Ordered(tuple(steps))):
            await confidence.ask(query, message, q, Ordered(tuple(steps)), t)
            return True
        await _answer(data, query, q, person, Ordered(tuple(steps)), message)
        await edit_keyboard(query, message, _markup(q, order_rows(q, "", t)))
        return True
    if _WRITE.fullmatch(text) is not None and (q.kind in TYPED or q.kind is Kind.ORDER):
        await toast(query, None)
        prompt = await data.poster.bot.send_message(
            message.chat.id, fit(t.gettext("✍ {name}, reply to this message with your answer.",
                                          name=person.name)),
            reply_parameters=ReplyParameters(message.message_id,
                                             allow_sending_without_reply=True),
            reply_markup=ForceReply(selective=True,
                                    input_field_placeholder=t.gettext("Your answer")[:64]),
        )
        await data.service.questions.bind(q.post_id,
                                          prompt_ref(message.chat.id, prompt.message_id))
        return True
    return False


async def _answer(data: BotData, query: telegram.CallbackQuery, q: ShownQuestion,
                  person: Person, response: Response,
                  message: telegram.MaybeInaccessibleMessage) -> None:
    result = await data.service.answer(q.post_id, person, response)
    await alert(query, alert_text(result, translator(result.locale)))
    if result.accepted and result.personal:
        t = translator(result.locale)
        await data.poster.text(message.chat.id, render.result_text(result, t, details=True))
        await _go_on(data, result, message.chat.id)


async def _go_on(data: BotData, result: AnswerResult, chat_id: int) -> None:
    """One person's run goes on: its next question, asked the way the run asks (a poll
    unless its mode is buttons; a typed or ordered one is a message anyway), or its score."""
    if result.next_question is not None:
        await data.poster.question(result.next_question,
                                   buttons=result.next_question.mode == "buttons" or None)
    elif result.run_summary is not None:
        await data.poster.text(chat_id, render.run_summary_text(result.run_summary,
                                                                translator(result.locale)))


def _letters(picks: frozenset[int], t: Translator) -> str:
    return ", ".join(render.letter(i) for i in sorted(picks)) or "—"


def _markup(q: ShownQuestion, rows: list[list[InlineKeyboardButton]]) -> InlineKeyboardMarkup:
    """An edited keyboard keeps the question's ⚑."""
    return InlineKeyboardMarkup([*rows, [flag_button(q.question_id)]])


# typed answers -------------------------------------------------------------------------
async def typed(update: Update, context: Context) -> None:
    """A text message: in a group, a reply to a question of a typed kind (or to its
    prompt); in a private chat, the answer to the newest open question there that is typed.
    Anything else is left alone (a message not meant for the bot)."""
    message = update.message
    if message is None or message.text is None or message.from_user is None:
        return
    data = context.bot_data
    post_id = await _typed_post(data, message)
    if post_id is None:
        return
    shown = await data.service.questions.show(post_id)
    if shown is None or not (shown.kind in TYPED or shown.kind is Kind.ORDER):
        return
    # the same message again (its update redelivered, or carried by another update): in
    # this process, dropped before it reaches the core (forgotten if its handling fails,
    # handlers.forget, so Telegram's next delivery runs)
    if not data.seen.add((message.chat.id, message.message_id)):
        log.info("ignoring typed answer %s in %s delivered again", message.message_id,
                 message.chat.id)
        return
    person = person_of(message.from_user)
    result = await data.service.answer(post_id, person, Typed(message.text))
    # ...and in every process, after a restart too, by the message's key (typed_key) stored
    # once it was replied to. The answer is final already, so a repeat is refused by the
    # core; its "already answered" is sent only if the message's key was not stored: the
    # first reply never went out (its send failed), and the person still learns the verdict.
    # A refusal's key is stored before its reply (a failed send loses it: nothing was
    # recorded, and the person can type again); an accepted answer's after it, so the
    # reply waits for no second write.
    if not result.accepted and not await _claim(data, message):
        log.info("typed answer %s in %s was answered before; no second reply",
                 message.message_id, message.chat.id)
        return
    t = translator(result.locale)
    details = result.accepted and result.personal
    await data.poster.bot.send_message(
        message.chat.id, fit(render.result_text(result, t, details=details)),
        reply_parameters=ReplyParameters(message.message_id, allow_sending_without_reply=True))
    if result.accepted:
        await _claim(data, message)
    if details:
        await _go_on(data, result, message.chat.id)


def typed_key(data: BotData, message: telegram.Message) -> str:
    """A typed answer's idempotency key: its message, whichever update brings it (message
    ids are per chat, and chats per bot)."""
    return f"tg:{data.poster.bot.id}:typed:{message.chat.id}:{message.message_id}"


async def _claim(data: BotData, message: telegram.Message) -> bool:
    """Store the typed answer's key (core/ports/ CommandKey); False if it was stored before,
    by this process or another."""
    with command_key(typed_key(data, message), data.service.clock.now()):
        return await data.service.claim_command()


async def _typed_post(data: BotData, message: telegram.Message) -> int | None:
    chat_id = message.chat.id
    reply = message.reply_to_message
    if reply is not None and reply.from_user is not None \
            and reply.from_user.id == data.poster.bot.id:
        return (await data.poster.post_for(message_ref(chat_id, reply.message_id))
                or await data.poster.post_for(prompt_ref(chat_id, reply.message_id)))
    if message.chat.type != telegram.Chat.PRIVATE:
        return None
    return await data.service.questions.open_typed(chat_of(message.chat).key, {*TYPED, Kind.ORDER})
