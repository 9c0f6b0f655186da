"""Admin output asked for in a group goes to the admin's private chat (issue 37): /analysis
marks every right answer (it would spoil the questions still to come) and /reports names the
reporters and quotes them. The group gets one line saying where it went.

Telegram lets a bot write to a person only once they have started a private chat with it
(403 Forbidden before that): then the group is told so, with a t.me button that opens that
chat (`/start hi_<command>`, answered by help.py), and nothing else is sent. A channel's post
has no person to write to: its output stays where it was asked, as before.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest, Forbidden

from bot.adapters.telegram import start_links
from bot.adapters.telegram.handlers import Command
from bot.adapters.telegram.identity import PREFIX
from bot.adapters.telegram.text import fit
from bot.i18n import Translator

log = logging.getLogger(__name__)

# the commands whose output goes to private, each the `what` of its hello link
COMMANDS = frozenset({"analysis", "reports"})

Send = Callable[[int, bool], Awaitable[None]]  # (chat id, first message in private?)


async def send_to_admin(cmd: Command, command: str, send: Send, t: Translator) -> None:
    """`send(chat_id, elsewhere)` shows the output in `chat_id`; in a group, that is the
    person's private chat (`elsewhere` True: it should say which chat it is about)."""
    if cmd.chat.is_private or cmd.person is None:
        await send(cmd.tg_chat.id, False)
        return
    user_id = int(cmd.person.key.removeprefix(PREFIX))
    try:
        await send(user_id, True)
    except (Forbidden, BadRequest) as exc:  # never started the bot, or blocked it
        log.info("could not send /%s of tg:%s to tg:%s privately: %s", command,
                 cmd.tg_chat.id, user_id, exc)
        await cmd.message.reply_text(fit(blocked_text(command, t)),
                                     reply_markup=open_chat_button(cmd, command, t))
        return
    await cmd.reply(t.gettext("Sent to you in our private chat."))


def about(cmd: Command, t: Translator) -> str:
    """The first line of what is sent privately: the group it is about."""
    # i18n: {chat} is a group's name
    return t.gettext("For {chat}:", chat=cmd.chat.title or cmd.tg_chat.id)


def blocked_text(command: str, t: Translator) -> str:
    return t.gettext("I can only send this to you privately, and I cannot write to you yet: "
                     "open our private chat with the button, press Start, then send "
                     "{command} here again.", command=f"/{command}")


def open_chat_button(cmd: Command, command: str, t: Translator) -> InlineKeyboardMarkup:
    url = start_links.link(cmd.message.get_bot().username, start_links.hello_payload(command))
    return InlineKeyboardMarkup([[InlineKeyboardButton(t.gettext("Open our private chat"),
                                                       url=url)]])


def opened_text(what: str, t: Translator) -> str | None:
    """What `/start hi_<what>` says once the person opened the chat (None: not ours)."""
    if what not in COMMANDS:
        return None
    return t.gettext("Thank you: I can write to you here now. Send {command} in the group "
                     "again and its answer comes here.", command=f"/{what}")
