"""/dashboard on Telegram (bot/core/dashboard.py decides): a chat's admins get a signed link to
its web dashboard in their private chat with the bot, never in the group; `/dashboard revoke`
ends every link and session of the chat. Refusals are the core's UserErrors, shown by
handlers.on_error."""

from __future__ import annotations

from telegram import Update
from telegram.constants import ChatType
from telegram.error import BadRequest, Forbidden

from bot.adapters.telegram.context import Context
from bot.adapters.telegram.handlers import command
from bot.adapters.telegram.text import fit
from bot.core.dashboard import (
    link_text,
    revoked_text,
    sent_privately_text,
    start_private_first_text,
)


async def dashboard_command(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    service = cmd.data.service
    allowed = await cmd.may_manage()
    t = await cmd.for_person()
    if cmd.args and cmd.args[0].lower() == "revoke":
        await service.revoke_dashboard(cmd.chat, allowed=allowed)
        await cmd.reply(revoked_text(t))
        return
    link = await service.dashboard_link(cmd.chat, allowed=allowed, locale=t.locale)
    if cmd.tg_chat.type == ChatType.PRIVATE:
        await cmd.reply(link_text(link, t))
        return
    assert cmd.message.from_user is not None  # a person sent it (cmd.person)
    try:
        await context.bot.send_message(cmd.message.from_user.id, fit(link_text(link, t)),
                                       disable_web_page_preview=True)
    except (Forbidden, BadRequest):  # never started a private chat with the bot
        await cmd.reply(start_private_first_text(t))
        return
    await cmd.reply(sent_privately_text(t))
