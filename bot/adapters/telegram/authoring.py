"""Writing a quiz by sending quiz polls to the bot in a private chat (@QuizBot's way).

Each handler turns one update into one core call (bot/core/authoring.py decides who may
write, what a poll or a form becomes and whether a draft publishes) and shows the result in
the author's language. A refusal is the core's UserError, shown by handlers.on_error.
A question of any kind is also written as a form: `/question <kind>` shows the kind's form,
and the form sent back, `/question <kind>` with one field a line, adds the question.
"""

from __future__ import annotations

import logging

import telegram
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import filters

from bot.adapters.telegram.context import Context
from bot.adapters.telegram.handlers import Command, command, handles, press
from bot.adapters.telegram.identity import message_ref, person_of
from bot.adapters.telegram.text import fit
from bot.core import authoring
from bot.core.authoring import PollQuestion
from bot.core.authoring_form import WrittenQuestion, form_text
from bot.core.models import Person
from bot.i18n import Translator, translator

log = logging.getLogger(__name__)

DISCARD, KEEP = "draft:discard", "draft:keep"


# The confirmation's buttons (discard a draft, or keep it).
DRAFT_BUTTONS = f"^({DISCARD}|{KEEP})$"


async def _author(update: Update, context: Context) -> tuple[Command, Person, Translator] | None:
    """The command or poll as handlers.command sees it (a repeat in this process is dropped
    there; one in another process finds its update id stored with the effect), its sender
    and their language."""
    if (cmd := command(update, context)) is None or cmd.person is None:
        return None
    return cmd, cmd.person, await cmd.for_person()


async def poll_sent(update: Update, context: Context) -> None:
    """A poll in the private chat: the next question of the sender's draft, acknowledged
    once it is stored."""
    if (found := await _author(update, context)) is None:
        return
    cmd, person, t = found
    message = cmd.message
    poll = message.poll
    if poll is None:
        return
    question = PollQuestion(
        prompt=poll.question,
        options=tuple(o.text for o in poll.options),
        # only a quiz sent (not forwarded) to the bot says which option is right
        correct=tuple(poll.correct_option_ids or ()),
        explanation=poll.explanation,
        quiz=poll.type == telegram.Poll.QUIZ,
    )
    added = await context.bot_data.service.authoring.add(
        person, t.locale, question, message_ref(message.chat.id, message.message_id))
    await cmd.reply(authoring.added_text(added, t))


async def picture_sent(update: Update, context: Context) -> None:
    """A photo (or a file, which should be a PNG or JPEG) in the private chat: the picture of
    the sender's next quiz poll. The core refuses a non-author before anything is
    downloaded, and a file too big (by the size Telegram gives) before it is."""
    if (found := await _author(update, context)) is None:
        return
    cmd, person, t = found
    message = cmd.message
    item: telegram.PhotoSize | telegram.Document | None = (
        message.photo[-1] if message.photo else message.document)  # the largest photo size
    if item is None:
        return

    async def fetch() -> bytes:
        file = await item.get_file()
        return bytes(await file.download_as_bytearray())

    await context.bot_data.service.authoring.photo(person, t.locale, item.file_size, fetch)
    await cmd.reply(authoring.photo_kept_text(t))


@handles("question")
async def question(update: Update, context: Context) -> None:
    """`/question`: the kinds; `/question <kind>`: its form; the form filled in: the next
    question of the draft, or every problem of the form, nothing stored."""
    if (found := await _author(update, context)) is None:
        return
    cmd, person, t = found
    message = cmd.message
    # the lines after the command (context.args would join them into one)
    words = (message.text or "").split(maxsplit=2)[1:]
    if len(words) < 2:
        await cmd.reply(form_text(words[0] if words else None, t))
        return
    written = WrittenQuestion(*words)
    added = await context.bot_data.service.authoring.add(
        person, t.locale, written, message_ref(message.chat.id, message.message_id))
    await cmd.reply(authoring.added_text(added, t))


@handles("newpack")
async def new_pack(update: Update, context: Context) -> None:
    if (found := await _author(update, context)) is None:
        return
    cmd, person, t = found
    started, questions = await context.bot_data.service.authoring.start(person, t.locale)
    first = (t.gettext("A new draft is open.") if started else t.gettext(
        "You already have a draft (questions: {count}); /discard drops it.",
        count=t.number(questions)))
    await cmd.reply(first + "\n" + authoring.help_text(t))


@handles("draft")
async def show_draft(update: Update, context: Context) -> None:
    if (found := await _author(update, context)) is None:
        return
    cmd, person, t = found
    view = await context.bot_data.service.authoring.view(person)
    await cmd.reply(authoring.draft_text(view, t))


@handles("undo")
async def undo(update: Update, context: Context) -> None:
    if (found := await _author(update, context)) is None:
        return
    cmd, person, t = found
    removed, left = await context.bot_data.service.authoring.undo(person)
    if removed is None:
        text = t.gettext("Your draft has no questions yet: send me quiz polls.")
    else:
        text = t.gettext("Question {number} removed; questions left: {count}.",
                         number=t.number(removed), count=t.number(left))
    await cmd.reply(text)


@handles("name")
async def name(update: Update, context: Context) -> None:
    if (found := await _author(update, context)) is None:
        return
    cmd, person, t = found
    title = await context.bot_data.service.authoring.name(person, " ".join(cmd.args))
    await cmd.reply(t.gettext(
        "Your draft is now called “{title}”. /publish publishes it.", title=title))


@handles("publish")
async def publish(update: Update, context: Context) -> None:
    if (found := await _author(update, context)) is None:
        return
    cmd, person, t = found
    result = await context.bot_data.service.authoring.publish(person, " ".join(cmd.args) or None)
    await cmd.reply(authoring.published_text(result, t))


@handles("unpublish")
async def unpublish(update: Update, context: Context) -> None:
    if (found := await _author(update, context)) is None:
        return
    cmd, person, t = found
    quiz_id = " ".join(cmd.args)
    title = await context.bot_data.service.authoring.unpublish(person, quiz_id)
    await cmd.reply(authoring.unpublished_text(quiz_id.strip().lower(), title, t))


@handles("whoami", filters.UpdateType.MESSAGE)  # anywhere: the operator asks people for it
async def whoami(update: Update, context: Context) -> None:
    if (found := await _author(update, context)) is None:
        return
    cmd, person, t = found
    author = context.bot_data.service.authoring.may_author(person)
    await cmd.reply(authoring.whoami_text(person, author, t))


@handles("discard")
async def discard(update: Update, context: Context) -> None:
    """Asks first: a draft discarded is gone."""
    if (found := await _author(update, context)) is None:
        return
    cmd, person, t = found
    view = await context.bot_data.service.authoring.view(person)  # none: the core says so
    keyboard = InlineKeyboardMarkup([[
        InlineKeyboardButton(t.gettext("Discard it"), callback_data=DISCARD),
        InlineKeyboardButton(t.gettext("Keep it"), callback_data=KEEP),
    ]])
    await cmd.message.reply_text(fit(t.ngettext(
        "Discard your draft with {n} question? This cannot be undone.",
        "Discard your draft with {n} questions? This cannot be undone.",
        len(view.prompts))), reply_markup=keyboard)


async def discard_pressed(update: Update, context: Context) -> None:
    if (query := press(update, context)) is None:
        return
    person = person_of(query.from_user)
    service = context.bot_data.service
    t = translator(await service.locales.for_person(person))
    if query.data == DISCARD:
        gone = await service.authoring.discard(person)
        text = t.gettext("Your draft is discarded.") if gone else t.gettext(
            "You have no draft. Send me a quiz poll, or /newpack to start one.")
    else:
        text = t.gettext("Your draft is kept.")
    await query.answer()  # after the commit
    if isinstance(query.message, telegram.Message):
        await query.message.edit_text(fit(text))
