"""/dashboard and /progress on Telegram (bot/core/dashboard.py decides).

- `/dashboard`: a chat's admins get a signed link to its web dashboard in their private chat
  with the bot, never in the group; with an https dashboard, a button opens it inside
  Telegram (a Mini App's `web_app` button, which Telegram allows in private chats).
  `/dashboard revoke` ends every link and session of the chat.
- `/progress`: anyone gets a button, in their private chat, that opens their own progress
  page as a Mini App (bot/web/miniapp.py checks Telegram's signed launch data).

Refusals are the core's UserErrors, shown by handlers.on_error.
"""

from __future__ import annotations

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update, WebAppInfo
from telegram.constants import ChatType
from telegram.error import BadRequest, Forbidden

from bot.adapters.telegram.context import Context
from bot.adapters.telegram.handlers import Command, command, handles
from bot.adapters.telegram.text import fit
from bot.core.dashboard import (
    link_text,
    open_button_text,
    progress_button_text,
    progress_here_text,
    revoked_text,
    sent_privately_text,
    start_private_first_text,
)


def web_app_button(label: str, url: str) -> InlineKeyboardMarkup | None:
    """A button that opens `url` inside Telegram; None where Telegram would refuse it."""
    if not url.startswith("https://"):
        return None
    return InlineKeyboardMarkup([[InlineKeyboardButton(label, web_app=WebAppInfo(url))]])


async def privately(cmd: Command, context: Context, text: str,
                    markup: InlineKeyboardMarkup | None) -> None:
    """`text` in the person's private chat with the bot; a group hears only that it was sent."""
    if cmd.tg_chat.type == ChatType.PRIVATE:
        await cmd.message.reply_text(fit(text), reply_markup=markup,
                                     disable_web_page_preview=True)
        return
    t = await cmd.for_person()
    assert cmd.message.from_user is not None  # a person sent it (cmd.person)
    try:
        await context.bot.send_message(cmd.message.from_user.id, fit(text),
                                       reply_markup=markup, disable_web_page_preview=True)
    except (Forbidden, BadRequest):  # never started a private chat with the bot
        await cmd.reply(start_private_first_text(t))
        return
    await cmd.reply(sent_privately_text(t))


@handles("dashboard")
async def dashboard_command(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    service = cmd.data.service
    allowed = await cmd.may_manage()
    t = await cmd.for_person()
    if cmd.args and cmd.args[0].lower() == "revoke":
        await service.dashboard.revoke(cmd.chat, allowed=allowed)
        await cmd.reply(revoked_text(t))
        return
    link = await service.dashboard.link(cmd.chat, allowed=allowed, locale=t.locale)
    await privately(cmd, context, link_text(link, t),
                    web_app_button(open_button_text(t), link))


@handles("progress")
async def progress_command(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    t = await cmd.for_person()
    url = cmd.data.service.progress_app()  # DashboardOff unless an https dashboard is on
    await privately(cmd, context, progress_here_text(t),
                    web_app_button(progress_button_text(t), url))
