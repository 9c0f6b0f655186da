"""/mydata on Telegram (bot/core/privacy.py decides): the person's data as a document in the
private chat, or, with `delete`, a confirmation button whose data (`pd:<expiry>.<signature>`,
under 64 bytes) is signed with the bot token, so any process accepts it after a restart and
nobody else's press (or a made-up one) deletes anything. Refusals are the core's UserErrors,
shown by handlers.on_error."""

from __future__ import annotations

import telegram
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, InputFile, Update

from bot.adapters.telegram.context import Context
from bot.adapters.telegram.handlers import command, handles, press, send_once
from bot.adapters.telegram.identity import person_of
from bot.adapters.telegram.text import fit
from bot.core import privacy
from bot.i18n import translator

CONFIRM = "pd:"
CONFIRM_PRESSES = rf"^{CONFIRM}"


@handles("mydata")
@send_once
async def mydata(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    service = context.bot_data.service
    wants_delete = service.privacy.wants_delete(" ".join(cmd.args))
    t = await cmd.for_person()
    if wants_delete:
        token = service.delete_confirmation(cmd.person, cmd.chat, context.bot.token)
        button = InlineKeyboardButton(privacy.confirm_button(t), callback_data=CONFIRM + token)
        await cmd.message.reply_text(fit(privacy.confirm_text(t)),
                                     reply_markup=InlineKeyboardMarkup([[button]]))
        return
    data = await service.my_data(cmd.person, cmd.chat)
    await cmd.message.reply_document(InputFile(data.content, filename=data.file_name),
                                     caption=privacy.export_caption(t))


async def confirm_pressed(update: Update, context: Context) -> None:
    if (query := press(update, context)) is None or query.data is None:
        return
    person = person_of(query.from_user)
    service = context.bot_data.service
    t = translator(await service.locales.for_person(person))  # before their language is deleted
    deleted = await service.delete_my_data(  # their private chat's key is theirs
        person, query.data.removeprefix(CONFIRM), context.bot.token)
    await query.answer()  # after the commit
    if isinstance(query.message, telegram.Message):
        await query.message.edit_text(fit(privacy.deleted_text(deleted, t)))
