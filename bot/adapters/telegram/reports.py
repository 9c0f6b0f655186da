"""Reporting a problem with a question on Telegram: the ⚑ button and /report.

- A ⚑ button under every question (quiz poll or button message) carries `r:<question id>`
  (under 64 bytes). Pressed, it asks the person privately "what is wrong?" with a ForceReply;
  their reply to that prompt becomes the report. The prompt's first line names the question
  as a person knows it ("⚑ <quiz title> · question 3 of 10"); its ⚑ is a link whose end
  carries the question id, and the group's id when pressed in a group, which is how the reply
  finds its question and the chat it was asked in (in any process, after a restart). The
  data is never trusted: the core refuses an id the catalog does not have, and stores
  nothing.
- `/report <question id> <text>`, or `/report <text>` for the last question the person
  answered in this chat (the core tells the two apart, and refuses an id that is none).
- `/reports` (the chat's admins): the open reports made in this chat, sent to the admin's
  private chat when asked in a group (in_private.py); `/reports resolve <id> [note]` resolves
  one.

The person is thanked, in their language, only after the report is stored. Refusals are the
core's UserErrors, shown by handlers.on_error.
"""

from __future__ import annotations

import logging
import re

import telegram
from telegram import ForceReply, Update
from telegram.constants import ChatType
from telegram.error import BadRequest, Forbidden, TelegramError
from telegram.ext import filters

from bot.adapters.telegram import in_private, start_links
from bot.adapters.telegram.callback_data import parse_flag
from bot.adapters.telegram.context import Context
from bot.adapters.telegram.handlers import Command, command, handles, press
from bot.adapters.telegram.identity import PREFIX, chat_of, person_of
from bot.adapters.telegram.keyboards import FLAG
from bot.adapters.telegram.press_replies import alert
from bot.adapters.telegram.text import fit
from bot.core.models import Chat
from bot.core.problem_reports import (
    ReportReceipt,
    report_heading_text,
    report_list_text,
    report_prompt_text,
    report_thanks_text,
    resolved_text,
)
from bot.i18n import _, translator

log = logging.getLogger(__name__)

# The ⚑ of the prompt links to the private chat and carries, after its URL's #, the question
# and the group it was pressed in; a prompt sent before had them as its first line.
_ROUTE = re.compile(r"#([a-z0-9][a-z0-9-]{0,47})(?::(-\d{1,20}))?")
_PROMPT = re.compile(rf"{FLAG} ([a-z0-9][a-z0-9-]{{0,47}})(?: · (-\d{{1,20}}))?\n")
RESOLVE_WORDS = frozenset({"resolve", "done", "close"})
RESOLVE_HINT = _("Resolve one with /reports resolve <id> [note].")


def prompted_question(
    message: telegram.Message | None, bot_id: int
) -> tuple[str, int | None] | None:
    """The question id of the bot's ⚑ prompt that `message` replies to, and the group the ⚑
    was pressed in (None: a private chat), else None."""
    prompt = message.reply_to_message if message is not None else None
    if prompt is None or prompt.from_user is None or prompt.from_user.id != bot_id:
        return None
    match = prompt_route(prompt)
    if match is None:
        return None
    return match.group(1), int(match.group(2)) if match.group(2) else None


def prompt_route(prompt: telegram.Message) -> re.Match[str] | None:
    """The question and group a ⚑ prompt is about, from its ⚑'s link (or, in a prompt sent
    by an older version, its first line)."""
    text = prompt.text or ""
    if text.startswith(FLAG):
        for entity in prompt.entities:
            if entity.type == telegram.MessageEntity.TEXT_LINK and entity.offset == 0 \
                    and entity.url and (found := _ROUTE.search(entity.url)) is not None:
                return found
    return _PROMPT.match(text)


def route_url(username: str, question_id: str, group: int | None) -> str:
    """The ⚑'s link: it opens the private chat; after # the route, which Telegram keeps with
    the prompt a reply quotes, so the reply finds its question in any process."""
    return start_links.link(username, start_links.hello_payload("report")) \
        + f"#{question_id}" + ("" if group is None else f":{group}")


class _RepliesToPrompt(filters.MessageFilter):
    """A text message replying to one of the bot's ⚑ prompts (only those: other private
    texts are left to other handlers)."""

    def filter(self, message: telegram.Message) -> bool:
        prompt = message.reply_to_message
        return bool(message.text) and prompt is not None and prompt.from_user is not None \
            and prompt.from_user.is_bot and prompt_route(prompt) is not None


# A private text (not a command) that replies to one of our "what is wrong?" prompts.
PROMPT_REPLIES = (filters.ChatType.PRIVATE & filters.UpdateType.MESSAGE & ~filters.COMMAND
                  & _RepliesToPrompt())


async def flag_pressed(update: Update, context: Context) -> None:
    """⚑: the question is checked, then the person is asked privately what is wrong."""
    if (query := press(update, context)) is None:
        return
    data = context.bot_data
    person = person_of(query.from_user)
    chat = chat_of(query.message.chat) if query.message is not None else None
    locale = await data.service.locales.for_person(person, chat)
    t = translator(locale)
    question_id = parse_flag(query.data) or ""
    title = data.service.problem_reports.title(question_id, locale)  # UnknownQuestion: refused
    group = query.message is not None and query.message.chat.type in (
        ChatType.GROUP, ChatType.SUPERGROUP)
    heading = report_heading_text(data.service.problem_reports.place(question_id, locale), t)
    prompt = f"{FLAG} {heading}\n" + report_prompt_text(title, t)
    url = route_url(data.poster.bot.username, question_id,
                    query.message.chat.id if group and query.message is not None else None)
    try:
        await data.poster.bot.send_message(
            query.from_user.id, fit(prompt),
            entities=[telegram.MessageEntity(telegram.MessageEntity.TEXT_LINK, 0, len(FLAG),
                                             url=url)],
            reply_markup=ForceReply(input_field_placeholder=t.gettext("What is wrong?")),
        )
    except (Forbidden, BadRequest):  # never started a private chat with the bot (or blocked it)
        await alert(query, t.gettext(
            "Start a private chat with me first, or write here: /report {id} <what is wrong>",
            id=question_id))
        return
    private = query.message is None or query.message.chat.type == ChatType.PRIVATE
    try:
        await query.answer(None if private else fit(
            t.gettext("I asked you in our private chat what is wrong."), 200))
    except TelegramError as exc:
        log.info("could not answer flag press %s: %s", query.id, exc)


async def prompt_answered(update: Update, context: Context) -> None:
    """A reply to the ⚑ prompt: the report, stored, then thanked for."""
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    prompted = prompted_question(cmd.message, context.bot.id)
    if prompted is None:
        return
    question_id, group_id = prompted
    # a ⚑ pressed in a group is that group's report, though written here
    chat = cmd.chat if group_id is None else Chat(f"{PREFIX}{group_id}", "")
    service = cmd.data.service
    receipt = await service.problem_reports.report(cmd.person, chat, question_id,
                                                   cmd.message.text or "")
    await thank(cmd, receipt)


@handles("report")
async def report_command(update: Update, context: Context) -> None:
    """/report <question id> <text>, or /report <text> about the last question answered
    in this chat."""
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    words = (cmd.message.text or "").split(None, 1)[1:]  # the text as typed, lines kept
    receipt = await cmd.data.service.problem_reports.report_words(cmd.person, cmd.chat,
                                                                  words[0] if words else "")
    await thank(cmd, receipt)


@handles("reports")
async def reports_command(update: Update, context: Context) -> None:
    """/reports: the open reports made in this chat; /reports resolve <id> [note]. For the
    chat's admins, in the reader's language."""
    if (cmd := command(update, context)) is None:
        return
    service = cmd.data.service
    allowed = await cmd.may_manage()
    t = await cmd.for_person()
    if cmd.args and cmd.args[0].lower() in RESOLVE_WORDS:
        if len(cmd.args) < 2:
            await cmd.reply(t.gettext(RESOLVE_HINT))
            return
        rest = (cmd.message.text or "").split(None, 3)[3:]
        resolved = await service.problem_reports.resolve_in_chat(cmd.chat, cmd.args[1],
                                                                 rest[0] if rest else None,
                                                                 allowed=allowed)
        await cmd.reply(resolved_text(resolved, t))
        return
    reports = await service.problem_reports.for_chat(cmd.chat, allowed=allowed)
    text = report_list_text(reports, t, service.problem_reports.titles(reports, t.locale),
                            RESOLVE_HINT)
    bot = cmd.message.get_bot()

    async def send(chat_id: int, elsewhere: bool) -> None:
        await bot.send_message(chat_id, fit(in_private.about(cmd, t) + "\n" + text
                                            if elsewhere else text))

    # reporters' names and words are for the admin, not the group (in_private.py)
    await in_private.send_to_admin(cmd, "reports", send, t)


async def thank(cmd: Command, receipt: ReportReceipt) -> None:
    t = await cmd.for_person()
    title = cmd.data.service.problem_reports.title(receipt.report.question_id, t.locale)
    await cmd.reply(report_thanks_text(receipt, title, t))
