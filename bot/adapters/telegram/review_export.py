"""/review export: the person's due and missed cards as an Anki deck, sent as a document to
their private chat with the bot (asked in a group, the group is told where it went).

Telegram's `/review` with the word `export` after it (handlers.REVIEW_EXPORT): /review's own
handler takes every other /review.
"""

from __future__ import annotations

import telegram
from telegram import InputFile, Update

from bot.adapters.telegram.context import Context
from bot.adapters.telegram.handlers import COMMAND_UPDATES, REVIEW_EXPORT, command, handles
from bot.adapters.telegram.identity import PREFIX
from bot.core import render
from bot.core.review_export import FILE_NAME, deck_caption, nothing_to_export_text


@handles("review-export", COMMAND_UPDATES & REVIEW_EXPORT)
async def review_export(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    t = await cmd.for_person()
    deck = await cmd.data.service.review_deck.apkg(cmd.person, t.locale)
    if deck is None:
        await cmd.reply(nothing_to_export_text(t))
        return
    user_id = int(cmd.person.key.removeprefix(PREFIX))
    try:
        await context.bot.send_document(user_id, InputFile(deck.content, filename=FILE_NAME),
                                        caption=deck_caption(t, deck.cards))
    except telegram.error.Forbidden:  # never started a private chat with the bot
        await cmd.reply(render.review_blocked_text(t))
        return
    if cmd.tg_chat.id != user_id:
        await cmd.reply(render.review_elsewhere_text(t))
