"""/help, /start (with a quiz id: that quiz, privately, so a quiz is shared as the link
t.me/<bot>?start=<quiz id>) and the welcome when the bot is added to a group.

The lines are those core/commands.py declares for Telegram (Telegram's syntax); which of them
a person sees is the core's rule (bot/core/help.py). The welcome comes from a
`my_chat_member` update that makes the bot a member or an administrator of a group it was not
in: once per joining (the same change delivered again is dropped by the redelivery guard), in
the chat's language.
"""

from __future__ import annotations

import logging

from telegram import Update
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import TelegramError

from bot.adapters.telegram import assign
from bot.adapters.telegram.context import Context
from bot.adapters.telegram.handlers import Command, command, handles
from bot.adapters.telegram.identity import chat_of
from bot.adapters.telegram.text import fit
from bot.core import commands
from bot.core.help import help_text, welcome_text
from bot.i18n import _, translator

log = logging.getLogger(__name__)

ENTRIES = commands.help_entries("telegram")  # core/commands.py: Telegram's /help lines
START = _("/quiz <quiz id>")
JOINED = (ChatMemberStatus.MEMBER, ChatMemberStatus.ADMINISTRATOR)
GROUPS = (ChatType.GROUP, ChatType.SUPERGROUP)


@handles("help")
async def help_command(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is not None:
        await show_help(cmd)


async def show_help(cmd: Command) -> None:
    t = await cmd.for_person()
    admin = cmd.person is None or await cmd.may_manage()  # a channel post is its admins'
    await cmd.reply(help_text(ENTRIES, cmd.data.service.questions.quizzes(t.locale), t,
                              private=cmd.chat.is_private, admin=admin, start=START))


@handles("start")
async def start_command(update: Update, context: Context) -> None:
    """/start <quiz id> in a private chat (a t.me link): that quiz for the person, one question
    after another; an unknown id is refused with the quiz list (on_error). Else /help."""
    if (cmd := command(update, context)) is None:
        return
    if not cmd.args or not cmd.chat.is_private or cmd.person is None:
        await show_help(cmd)
        return
    if await assign.started_by_link(cmd):  # an assignment's link (assign.py)
        return
    service = cmd.data.service
    async with service.asking.quiz(cmd.chat, cmd.person, cmd.args[0], run=True) as question:
        await cmd.data.poster.question(question, buttons=question.mode == "buttons" or None)


async def joined(update: Update, context: Context) -> None:
    """The bot was added to a group: a short welcome, in the chat's language if known."""
    change = update.my_chat_member
    if change is None or change.chat.type not in GROUPS:
        return
    was, now = change.old_chat_member.status, change.new_chat_member.status
    if was in JOINED or now not in JOINED:
        return  # promoted, demoted or removed: no new arrival
    data = context.bot_data
    # the same change delivered again (after a crash) has another update id, the same date
    if not data.seen.add(("joined", change.chat.id, change.date.timestamp())):
        return
    data.poster.remember(change.chat)
    service = data.service
    t = translator(await service.locales.for_audience(chat_of(change.chat)))
    text = welcome_text(service.questions.quizzes(t.locale), t, start=START)
    try:
        await context.bot.send_message(change.chat.id, fit(text))
    except TelegramError as exc:  # e.g. not allowed to write there
        log.info("could not welcome tg:%s: %s", change.chat.id, exc)
