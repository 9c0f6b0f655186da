"""Answering a button press: an alert (to dismiss), a toast (a moment at the top), or the
pressed message's keyboard edited. Each may fail for a press delivered again after a restart
(Telegram no longer takes an answer to it) or pressed twice at once ("message is not
modified"): that is logged, not raised, as the press was handled."""

from __future__ import annotations

import logging

import telegram
from telegram import InlineKeyboardMarkup
from telegram.error import TelegramError

from bot.adapters.telegram.text import fit
from bot.content.limits import TG_ALERT

log = logging.getLogger(__name__)


async def alert(query: telegram.CallbackQuery, text: str) -> None:
    try:
        await query.answer(fit(text, TG_ALERT), show_alert=True)
    except TelegramError as exc:
        log.info("could not answer button press %s: %s", query.id, exc)


async def toast(query: telegram.CallbackQuery, text: str | None) -> None:
    try:
        await query.answer(fit(text, TG_ALERT) if text else None)
    except TelegramError as exc:
        log.info("could not answer button press %s: %s", query.id, exc)


async def edit_keyboard(query: telegram.CallbackQuery,
                        message: telegram.MaybeInaccessibleMessage,
                        markup: InlineKeyboardMarkup) -> None:
    try:
        await query.get_bot().edit_message_reply_markup(
            message.chat.id, message.message_id, reply_markup=markup)
    except TelegramError as exc:
        log.debug("editing the keyboard of %s: %s", message.message_id, exc)
