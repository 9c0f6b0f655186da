"""/assign and /unassign in a group, and the announcement's link that starts an assignment in
the private chat with the bot (t.me/<bot>?start=assign-<id>-<token>, read by /start).

Telegram commands are free words: `/assign <quiz or topic> <date> [HH:MM] [zone]` is split
here; whether the quiz, the date, the time and the zone are valid, who may assign and what an
error says are the core's (core/assignments.py), rendered by the error handler.
"""

from __future__ import annotations

import re

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update

from bot.adapters.telegram.context import Context
from bot.adapters.telegram.handlers import Command, command, handles
from bot.adapters.telegram.text import fit
from bot.core import assignment_text
from bot.core.assignments import link_payload, read_payload
from bot.core.ports import AssignmentRecord
from bot.i18n import Translator

TIME = re.compile(r"^\d{1,2}[:.]\d{2}$")


@handles("assign")
async def assign_command(update: Update, context: Context) -> None:
    """/assign lists the chat's assignments (anyone); /assign <quiz> <date> [time] [zone]
    gives one (the chat's admins): the announcement with the button that starts it."""
    if (cmd := command(update, context)) is None:
        return
    service = cmd.data.service
    if not cmd.args:
        await cmd.reply(await listing(cmd))
        return
    t = await cmd.for_chat()
    if len(cmd.args) < 2:
        await cmd.reply(usage_text(t))
        return
    selector, day, rest = cmd.args[0], cmd.args[1], cmd.args[2:]
    at = rest.pop(0) if rest and TIME.match(rest[0]) else None
    by = cmd.person if cmd.message.sender_chat is None else None  # an anonymous admin
    record = await service.assignments.assign(
        cmd.chat, selector, day, at, " ".join(rest) or None, by=by,
        allowed=await cmd.may_manage())
    t = await cmd.for_chat()
    title = service.assignments.title(record, t.locale)
    await cmd.message.reply_text(fit(assignment_text.announcement(record, title, t)),
                                 reply_markup=start_button(record, cmd, t))


@handles("unassign")
async def unassign_command(update: Update, context: Context) -> None:
    """/unassign <id>: the chat's admins cancel one (no reminder, no summary)."""
    if (cmd := command(update, context)) is None:
        return
    t = await cmd.for_chat()
    if not cmd.args:
        await cmd.reply(usage_text(t))
        return
    assignments = cmd.data.service.assignments
    record = await assignments.cancel(cmd.chat, cmd.args[0], allowed=await cmd.may_manage())
    await cmd.reply(assignment_text.cancelled(record, assignments.title(record, t.locale), t))


async def started_by_link(cmd: Command) -> bool:
    """/start assign-<id>-<token> in the private chat: the member's run of it (False: the
    payload is not an assignment's)."""
    link = read_payload(cmd.args[0]) if cmd.args else None
    if link is None or cmd.person is None or not cmd.chat.is_private:
        return False
    taken = await cmd.data.service.assignments.take(link[0], cmd.person, cmd.chat,
                                                    token=link[1])
    if taken.quizzes > 1:
        t = await cmd.for_person()
        await cmd.reply(assignment_text.started(taken.quiz_number, taken.quizzes,
                                                taken.question.quiz_title, t))
    question = taken.question
    await cmd.data.poster.question(question, buttons=question.mode == "buttons" or None)
    return True


async def listing(cmd: Command) -> str:
    t = await cmd.for_chat()
    assignments = cmd.data.service.assignments
    records = await assignments.listed(cmd.chat)
    return assignment_text.listing([(r, assignments.title(r, t.locale)) for r in records], t,
                                   t.gettext("/unassign <id> cancels one (admins)."))


def start_button(record: AssignmentRecord, cmd: Command, t: Translator) -> InlineKeyboardMarkup:
    url = f"https://t.me/{cmd.message.get_bot().username}?start={link_payload(record)}"
    return InlineKeyboardMarkup([[InlineKeyboardButton(t.gettext("Take it privately"),
                                                       url=url)]])


def usage_text(t: Translator) -> str:
    return "\n".join([
        t.gettext("Usage: /assign <quiz or topic> <YYYY-MM-DD> [HH:MM] [Time/Zone], e.g. "
                  "/assign python 2026-12-24 18:00 Asia/Kolkata"),
        t.gettext("/assign shows this chat's assignments; /unassign <id> cancels one."),
    ])
