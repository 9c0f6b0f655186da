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

from bot.adapters.telegram import assign, in_private, keyboards, press_replies, start_links
from bot.adapters.telegram.context import Context
from bot.adapters.telegram.handlers import Command, command, handles, press
from bot.adapters.telegram.identity import chat_of, person_of
from bot.adapters.telegram.text import fit
from bot.core import commands, render
from bot.core.help import help_text, start_text, welcome_text
from bot.i18n import Translator, _, translator

log = logging.getLogger(__name__)

ENTRIES = commands.help_entries("telegram")  # core/commands.py: Telegram's /help lines
START = _("/quiz <quiz id>")
ADMIN_WORD = "admin"  # /help admin: the admins' commands in the private chat too
MORE = _("/help admin lists what admins use in a group.")
JOINED = (ChatMemberStatus.MEMBER, ChatMemberStatus.ADMINISTRATOR)
GROUPS = (ChatType.GROUP, ChatType.SUPERGROUP)


@handles("help")
async def help_command(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is not None:
        await show_help(cmd)


async def show_help(cmd: Command) -> None:
    """The commands one may use here, the quizzes as buttons under them. The admins'
    commands go to a group's admins (a channel post is its admins'); in the private chat,
    where everyone manages their own, only on `/help admin`."""
    t = await cmd.for_person()
    asked = bool(cmd.args) and cmd.args[0].lower() == ADMIN_WORD
    admin = cmd.person is None or ((asked or not cmd.chat.is_private) and await cmd.may_manage())
    quizzes = cmd.data.service.questions.quizzes(t.locale)
    await reply_with_quizzes(cmd, help_text(ENTRIES, quizzes, t, private=cmd.chat.is_private,
                                            admin=admin, start=START, tap=True, more=MORE), t)


async def reply_with_quizzes(cmd: Command, text: str, t: Translator) -> None:
    markup = keyboards.quiz_keyboard(cmd.data.service.questions.quizzes(t.locale), t,
                                     private=cmd.chat.is_private,
                                     username=cmd.message.get_bot().username)
    await cmd.message.reply_text(fit(text), reply_markup=markup)


async def start_pressed(update: Update, context: Context) -> None:
    """A quiz's button in the private chat (keyboards.quiz_keyboard): that quiz, run there,
    as `/start <quiz id>` would. Pressed anywhere else (a forged press), it is refused; an
    unknown quiz is refused by the core (handlers.on_error)."""
    if (query := press(update, context)) is None:
        return
    data = context.bot_data
    message = query.message
    person = person_of(query.from_user)
    quiz_id = keyboards.parse_start(query.data) or ""
    if message is None or message.chat.type != ChatType.PRIVATE \
            or message.chat.id != query.from_user.id:
        t = translator(await data.service.locales.for_person(person, None))
        await press_replies.alert(query, t.gettext("This button works in our private chat."))
        return
    data.poster.remember(message.chat)
    chat = chat_of(message.chat)
    async with data.service.asking.quiz(chat, person, quiz_id, run=True) as question:
        await press_replies.toast(query, None)
        await data.poster.question(question, buttons=question.mode == "buttons" or None)


@handles("start")
async def start_command(update: Update, context: Context) -> None:
    """/start <quiz id> in a private chat (a t.me link): that quiz for the person, one question
    after another; an unknown id is refused with the quiz list (on_error). Else /help."""
    if (cmd := command(update, context)) is None:
        return
    if not cmd.args and cmd.chat.is_private and cmd.person is not None:
        t = await cmd.for_person()
        await reply_with_quizzes(cmd, start_text(t), t)  # short: the quizzes are buttons
        return
    if not cmd.args or not cmd.chat.is_private or cmd.person is None:
        await show_help(cmd)
        return
    if await assign.started_by_link(cmd):  # an assignment's link (assign.py)
        return
    if start_links.is_hello(cmd.args[0]):  # opened to let the bot write (in_private.py)
        t = await cmd.for_person()
        opened = in_private.opened_text(cmd.args[0].removeprefix(start_links.HELLO), t)
        if opened is not None:
            await cmd.reply(opened)
        else:
            await reply_with_quizzes(cmd, start_text(t), t)
        return
    if (post_id := start_links.read_details(cmd.args[0])) is not None:
        await show_details(cmd, post_id)
        return
    service = cmd.data.service
    async with service.asking.quiz(cmd.chat, cmd.person, cmd.args[0], run=True) as question:
        await cmd.data.poster.question(question, buttons=question.mode == "buttons" or None)


async def show_details(cmd: Command, post_id: int) -> None:
    """A close summary's "full explanation" link: the question in full, in the reader's
    language, once it is closed (an open one's answer stays hidden), and one person's own
    question only to them."""
    t = await cmd.for_person()
    service = cmd.data.service
    shown = await service.questions.show(post_id, t.locale)
    if shown is None or (shown.personal and cmd.person is not None
                         and shown.owner_key != cmd.person.key):
        await cmd.reply(t.gettext("This question is no longer available."))
    elif await service.questions.live_count(post_id) is not None:
        await cmd.reply(t.gettext("This question is still open: its explanation comes when "
                                  "it closes."))
    else:
        await cmd.reply(render.details_text(shown, t))


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
    quizzes = service.questions.quizzes(t.locale)
    text = welcome_text(quizzes, t, start=START, tap=True)
    markup = keyboards.quiz_keyboard(quizzes, t, private=False, username=context.bot.username)
    try:
        await context.bot.send_message(change.chat.id, fit(text), reply_markup=markup)
    except TelegramError as exc:  # e.g. not allowed to write there
        log.info("could not welcome tg:%s: %s", change.chat.id, exc)
