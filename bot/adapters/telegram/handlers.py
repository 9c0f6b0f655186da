"""The update handlers: each turns one Telegram update into one core call and shows the result.

Small functions registered on one Application in routes.py (python-telegram-bot's examples
style); what they share is in `context.bot_data` (context.py). No quiz rule lives here: what a
/quiz replaces, who may answer, what comes next and what an error says are the core's. A refused
command (the core's UserError) reaches `on_error`, which shows it in the reader's language.

Every handler may see the same update twice (after a crash, Telegram sends again what was
not confirmed yet; see polling.py and webhook.py): answers are made final by the database; a
command or press that changes state stores its update id with its effect, so a second
delivery, in any process, finds it and stops (AlreadyHandled, in `on_error`; core/ports/
CommandKey); commands whose effect is a send claim the key first (`send_once`); this
process also remembers what it handled (redelivery.py) to skip a repeat without a write.

Through webhooks, several processes may share the updates (behind a load balancer), so what
one process keeps in memory is never needed by another:
- a vote arriving before the bind of its poll, which another process just sent, looks in the
  database again for a moment (publish.BIND_RACE);
- a poll or a pressed question message bound to nothing may be one whose send got no reply
  in another process (unconfirmed.py), which binds it when one of its updates reaches it:
  such updates ask to come again (updates.Redeliver: 503) for UNBOUND_FOR seconds instead
  of being dropped or kept in memory, so Telegram brings them back, to any process, until
  the poll or message is bound;
- a failed update is forgotten by the redelivery guard, so its next delivery runs again, and
  is apologised for once per process.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import telegram
from telegram import Update
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import filters

from bot.adapters.telegram import confidence, daily
from bot.adapters.telegram.answered import go_on
from bot.adapters.telegram.callback_data import parse_answer
from bot.adapters.telegram.context import BotData, Context
from bot.adapters.telegram.identity import (
    PREFIX,
    chat_id_of,
    chat_of,
    message_ref,
    parse_message_ref,
    person_of,
    poll_ref,
)
from bot.adapters.telegram.press_replies import alert
from bot.adapters.telegram.text import alert_text, fit
from bot.adapters.telegram.updates import Outcome, Redeliver, mark, outcome_of
from bot.content.items import DEFAULT_LOCALE, Kind
from bot.content.limits import TG_ALERT
from bot.core import commands, render
from bot.core.errors import StillOpen, UserError
from bot.core.help import Where
from bot.core.models import AnswerResult, AnswerStatus, Chat, Period, Person, Picks, Response
from bot.core.ports import AlreadyHandled
from bot.i18n import LANGUAGE_NAMES, Translator, translator

log = logging.getLogger(__name__)

Handler = Callable[[Update, Context], Coroutine[Any, Any, None]]

# Commands come from messages and channel posts; never from edits, which would run them again.
COMMAND_UPDATES = filters.UpdateType.MESSAGE | filters.UpdateType.CHANNEL_POST
# A command that works only in the private chat with the bot is not taken anywhere else.
PRIVATE_MESSAGES = filters.ChatType.PRIVATE & filters.UpdateType.MESSAGE
# `/review export`, `/review@quizbot export` (any case); nothing after it: review_export.py's
REVIEW_EXPORT = filters.Regex(re.compile(r"^/review(?:@\w+)?\s+export\s*$", re.IGNORECASE))


@dataclass(frozen=True, slots=True)
class Route:
    """The handler of a declared command (core/commands.py) and the updates it takes."""

    callback: Handler
    updates: filters.BaseFilter


ROUTES: dict[str, Route] = {}  # declared command key -> its handler; routes.py registers them


def handles(key: str, updates: filters.BaseFilter | None = None) -> Callable[[Handler], Handler]:
    """Marks the handler of the declared command `key`. `updates`: what it takes (default:
    messages and channel posts, or only private messages for a command declared private)."""
    declaration = commands.declared(key)  # KeyError: declare the command first
    if updates is None:
        updates = PRIVATE_MESSAGES if declaration.where is Where.PRIVATE else COMMAND_UPDATES

    def register(handler: Handler) -> Handler:
        if key in ROUTES:
            raise ValueError(f"/{key} has two handlers")
        ROUTES[key] = Route(handler, updates)
        return handler

    return register


# commands --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Command:
    """A command as the core sees it: where, who (None for a channel post), the words."""

    data: BotData
    message: telegram.Message
    tg_chat: telegram.Chat
    chat: Chat
    person: Person | None
    args: list[str]

    @property
    def is_group(self) -> bool:
        return self.tg_chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)

    async def reply(self, text: str) -> None:
        await self.message.reply_text(fit(text))

    async def for_chat(self) -> Translator:
        """For what the whole chat reads (in a private chat, its person)."""
        return translator(await self.data.service.locales.for_audience(self.chat, self.person))

    async def for_person(self) -> Translator:
        return translator(await self.data.service.locales.for_person(self.person, self.chat))

    async def may_manage(self) -> bool:
        return await self.data.admins.may_manage(self.message)


def command(update: Update, context: Context) -> Command | None:
    message, tg_chat = update.effective_message, update.effective_chat
    if message is None or tg_chat is None:
        return None
    data = context.bot_data
    if not data.seen.add((tg_chat.id, message.message_id)):
        log.info("ignoring redelivered command %s in %s", message.message_id, tg_chat.id)
        return None
    data.poster.remember(tg_chat)
    return Command(data, message, tg_chat, chat_of(tg_chat), sender_of(message),
                   list(context.args or []))


def send_once(handler: Handler) -> Handler:
    """For a command whose effect is a platform send (a file, a prompt, a chart): its key is
    stored before it runs, so a redelivery, in any process, sends nothing (a crash between
    the two loses that send instead of doubling it)."""

    @functools.wraps(handler)
    async def claimed_first(update: Update, context: Context) -> None:
        if not await context.bot_data.service.claim_command():
            log.info("update %s was handled before; not again", update.update_id)
            return
        await handler(update, context)

    return claimed_first


def press(update: Update, context: Context) -> telegram.CallbackQuery | None:
    """A button press, once: a redelivered update (after a restart) is dropped here."""
    query = update.callback_query
    if query is None:
        return None
    if not context.bot_data.seen.add(("press", query.id)):
        log.info("ignoring redelivered button press %s (%s)", query.id, query.data)
        return None
    return query


def sender_of(message: telegram.Message) -> Person | None:
    """In a channel the post comes from the channel itself: there is no person."""
    user = message.from_user
    return person_of(user) if user is not None and message.chat.type != ChatType.CHANNEL \
        else None


@handles("quiz")
async def quiz(update: Update, context: Context) -> None:
    """/quiz [buttons] [quiz or topic] [N]: the core decides what it replaces and who it is
    for; N asks a round of N questions in a group (the core checks it)."""
    if (cmd := command(update, context)) is None:
        return
    args = cmd.args
    mode = None  # the chat's (a poll, except in a channel)
    if args and args[0].lower() == "buttons":
        mode, args = "buttons", args[1:]
    count = None
    if args and args[-1].lstrip("+-").isdigit():
        count, args = args[-1], args[:-1]
    service = cmd.data.service
    async with service.asking.quiz(cmd.chat, cmd.person, " ".join(args) or None, count=count,
                                   mode=mode, is_admin=cmd.may_manage) as question:
        await cmd.data.poster.question(question, buttons=question.mode == "buttons" or None)


@handles("leaderboard")
async def leaderboard(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None:
        return
    t = await cmd.for_chat()
    period = cmd.args[0] if cmd.args else Period.ALL.value
    board = await cmd.data.service.leaderboard(cmd.chat, period, person=cmd.person)
    scope = t.gettext("all chats") if cmd.chat.is_private else cmd.chat.title
    await cmd.reply(render.leaderboard_text(board, t, scope=scope))


@handles("stats")
async def stats(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    t = await cmd.for_person()
    text = render.stats_text(await cmd.data.service.boards.stats(cmd.person, t.locale), t)
    review_stats = await cmd.data.service.spaced.stats(cmd.person)
    await cmd.reply(text + "\n" + render.review_stats_text(review_stats, t))


@handles("review", COMMAND_UPDATES & ~REVIEW_EXPORT)
async def review(update: Update, context: Context) -> None:
    """/review: the due cards one by one as the person's own quiz polls in their private
    chat with the bot (asked in a group, the group is told where); each answer's result
    brings the next (go_on)."""
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    t = await cmd.for_person()
    user_id = int(cmd.person.key.removeprefix(PREFIX))
    private = Chat(cmd.person.key, cmd.person.name, is_private=True)
    question = await cmd.data.service.spaced.start(cmd.person, private, t.locale)
    if question is None:
        wait = await cmd.data.service.spaced.next_due(cmd.person)
        await cmd.reply(render.nothing_due_text(t, wait))
        return
    try:
        await cmd.data.poster.question(question)
    except telegram.error.Forbidden:  # never started a private chat with the bot
        await cmd.reply(render.review_blocked_text(t))
        return
    if cmd.tg_chat.id != user_id:
        await cmd.reply(render.review_elsewhere_text(t))


@handles("remind")
async def remind(update: Update, context: Context) -> None:
    """/remind HH:MM [zone] sets a daily private reminder when reviews are due; /remind off
    removes it; /remind alone shows it."""
    if (cmd := command(update, context)) is None or cmd.person is None:
        return
    t = await cmd.for_person()
    service, args = cmd.data.service, cmd.args
    if not args:
        await cmd.reply(render.reminder_status_text(await service.spaced.reminder(cmd.person), t))
    elif args[0].lower() == "off":
        await cmd.reply(render.reminder_off_text(await service.spaced.reminder_off(cmd.person), t))
    else:
        reminder = await service.spaced.set_reminder(cmd.person, args[0],
                                                     args[1] if args[1:] else None)
        await cmd.reply(render.reminder_set_text(reminder, t))


@handles("lang")
async def lang(update: Update, context: Context) -> None:
    """/lang shows the languages; /lang <code> sets the person's, /lang chat <code> the
    chat's (its admins). In a channel the post speaks for the channel."""
    if (cmd := command(update, context)) is None:
        return
    args = cmd.args
    if args and args[0].lower() == "chat":
        if len(args) < 2:
            await cmd.reply((await cmd.for_person()).gettext(
                "Usage: /lang chat <en|bn|hi|auto>"))
            return
        await chat_language(cmd, args[1])
    elif args and cmd.person is None:
        await chat_language(cmd, args[0])
    elif args and cmd.person is not None:
        chosen = await cmd.data.service.set_language(cmd.person, args[0])
        t = await cmd.for_person()
        if chosen is None:
            await cmd.reply(t.gettext("Your language now follows Telegram: {name}.",
                                      name=LANGUAGE_NAMES[t.locale]))
        else:
            await cmd.reply(t.gettext("Your language is now {name}.",
                                      name=LANGUAGE_NAMES[chosen]))
    else:
        await cmd.reply(await language_status(cmd))


async def chat_language(cmd: Command, code: str) -> None:
    chosen = await cmd.data.service.set_language(cmd.person, code, chat=cmd.chat,
                                                 allowed=await cmd.may_manage())
    t = await cmd.for_chat()
    if chosen is None:
        await cmd.reply(t.gettext("This chat no longer has a language of its own."))
    else:
        await cmd.reply(t.gettext("This chat's language is now {name}.",
                                  name=LANGUAGE_NAMES[chosen]))


async def language_status(cmd: Command) -> str:
    t = await cmd.for_person()
    choices = ", ".join(f"{code} — {name}" for code, name in LANGUAGE_NAMES.items())
    lines = [
        t.gettext("Your language: {name}.", name=LANGUAGE_NAMES[t.locale]),
        t.gettext("Languages: {choices}", choices=choices),
        t.gettext("Change it with /lang en, /lang bn or /lang hi; /lang auto follows "
                  "your Telegram language."),
    ]
    if not cmd.chat.is_private:
        chat_locale = (await cmd.for_chat()).locale
        lines.append(t.gettext("This chat's language (polls, summaries, leaderboards): "
                               "{name}.", name=LANGUAGE_NAMES[chat_locale]))
    if cmd.is_group:
        lines.append(t.gettext("Group admins: /lang chat <code> sets the group's language."))
    return "\n".join(lines)


@handles("daily")
async def daily_command(update: Update, context: Context) -> None:
    """/daily shows the schedule (anyone); /daily HH:MM [Time/Zone] [quiz] and /daily off
    change it (the chat's admins; in a private chat, its person)."""
    if (cmd := command(update, context)) is None:
        return
    service = cmd.data.service
    if not cmd.args:
        await cmd.reply(await daily_status(cmd))
        return
    if cmd.args[0].lower() in daily.OFF_WORDS:
        removed = await service.daily_off(cmd.chat, allowed=await cmd.may_manage())
        t = await cmd.for_chat()
        await cmd.reply(t.gettext("The daily question is off.") if removed
                        else t.gettext("This chat has no daily question."))
        return
    words = daily.split_daily(cmd.args, cmd.data.service.names_quizzes)
    # an anonymous admin writes as @GroupAnonymousBot: nobody to record
    by = cmd.person if cmd.message.sender_chat is None else None
    status = await service.daily.set(
        cmd.chat, words.at, words.zone, words.selector, by=by, allowed=await cmd.may_manage()
    )
    t = await cmd.for_chat()
    await cmd.reply(t.gettext("Done: this chat gets a daily question.") + "\n"
                    + render.schedule_status_text(status, t))


@handles("settings")
async def settings_command(update: Update, context: Context) -> None:
    """/settings shows the chat's question time, mode, chart, who asks, the peer rounds'
    threshold and discussion time and the confidence tap (anyone); /settings time
    90|10m|2h|3d, mode polls|buttons, chart on|off, quiz admins|anyone, peer PERCENT,
    discussion MINUTES and confidence on|off change them (the chat's admins)."""
    if (cmd := command(update, context)) is None:
        return
    service = cmd.data.service
    if cmd.args:
        # an anonymous admin writes as @GroupAnonymousBot: nobody to record
        by = cmd.person if cmd.message.sender_chat is None else None
        before = await service.chat_settings.get(cmd.chat.key)
        settings = await service.chat_settings.change(
            cmd.chat, by=by, allowed=await cmd.may_manage(), words=cmd.args
        )
        await cmd.reply(render.settings_changed_text(before, settings, await cmd.for_chat()))
        return
    settings = await service.chat_settings.get(cmd.chat.key)
    t = await cmd.for_chat()
    await cmd.reply(render.settings_text(settings, t) + "\n" + t.gettext(
        "Admins change them with /settings time 90, 10m, 2h or 3d (10 seconds to 30 "
        "days), /settings mode "
        "polls|buttons, /settings chart on|off, /settings quiz admins|anyone, /settings peer "
        "PERCENT (1 to 100), /settings discussion MINUTES (1 to 15) or /settings confidence "
        "on|off; “default” puts one back.") + "\n" + t.gettext(
        "/settings confidence on asks “How sure are you?” before an answer is recorded: in a "
        "private chat, on questions with buttons. A quiz poll shows the result as soon as "
        "one votes, and a group's buttons are everyone's, so polls and groups answer at "
        "once.") + "\n" + render.target_help(t))


async def daily_status(cmd: Command) -> str:
    t = await cmd.for_chat()
    status = await cmd.data.service.daily.status(cmd.chat)
    if status is None:
        text = t.gettext("This chat has no daily question.")
    else:
        text = render.schedule_status_text(status, t)
    if cmd.is_group:
        text += "\n" + t.gettext("Only the group's admins can change it.")
    return text + "\n\n" + daily.usage_text(t)


# answers ---------------------------------------------------------------------------------
async def poll_answer(update: Update, context: Context) -> None:
    """A vote on a quiz poll. The poll itself shows the voter the result; one person's
    question (a private question, a quiz run) goes on in their chat."""
    answer = update.poll_answer
    if answer is None or answer.user is None or not answer.option_ids:
        return  # a vote retracted, or cast by a chat: nothing to record
    data = context.bot_data
    unconfirmed = data.poster.unconfirmed
    post_id = await data.poster.post_for(poll_ref(answer.poll_id)) \
        or unconfirmed.late_post(answer.poll_id)
    if post_id is None:
        if data.webhook:
            if data.unbound.within(("poll", answer.poll_id)):
                raise Redeliver(f"poll {answer.poll_id} is bound to no question yet")
            log.info("poll %s is not a live question; answer ignored", answer.poll_id)
        elif unconfirmed.keep_vote(answer):
            log.info("vote on poll %s kept: it may be a question sent with no reply",
                     answer.poll_id)
        else:
            log.info("poll %s is not a live question; answer ignored", answer.poll_id)
        return
    await record_vote(data, answer, post_id)


async def poll_state(update: Update, context: Context) -> None:
    """A poll's new state, which Telegram sends for every vote on the bot's polls. Only of
    use when a question was sent without a reply: this may be that poll showing up, with
    the votes that came before it (through webhooks, in whichever process sent it)."""
    poll = update.poll
    data = context.bot_data
    if poll is None:
        return
    if data.poster.unconfirmed.awaiting_polls:
        post_id, votes = await data.poster.bind_late_poll(poll)
        for vote in votes:
            await record_vote(data, vote, post_id)
        if post_id:
            return
    if data.webhook and not poll.is_closed and not await data.poster.poll_is_bound(poll.id) \
            and data.unbound.within(("poll", poll.id)):
        # the process that sent it with no reply binds it when this reaches it
        raise Redeliver(f"poll {poll.id} is bound to no question yet")


async def record_vote(data: BotData, answer: telegram.PollAnswer, post_id: int) -> None:
    assert answer.user is not None
    response: Response = answer.option_ids[0]
    if len(answer.option_ids) > 1 or await data.poster.kind_of(post_id) is Kind.MULTI:
        response = Picks(frozenset(answer.option_ids))  # a multi-answer quiz poll
    result = await data.service.answer(post_id, person_of(answer.user), response)
    if result.status is AnswerStatus.NOT_YOURS:
        # someone else's private poll, forwarded: the voter learns why it did not count
        await tell(data, answer.user.id, render.result_text(result, translator(result.locale)))
    elif result.accepted and result.personal:
        shown = await data.service.questions.show(post_id)
        if shown is not None:
            await go_on(data, result, chat_id_of(shown.chat_key), buttons=False)
    else:
        # redelivered, late, or a shared question: the poll already showed the result
        log.debug("poll answer to post %s: %s", post_id, result.status)


async def button(update: Update, context: Context) -> None:
    """A press on an answer button: the result in an alert (after the commit). The data is
    never trusted: the pressed message must be the one bound to the post it names. Where a
    private chat asks how sure, the press records nothing: confidence.py asks first."""
    if (query := press(update, context)) is None:
        return
    data = context.bot_data
    person = person_of(query.from_user)
    message = query.message
    chat = chat_of(message.chat) if message is not None else None
    if message is not None:
        data.poster.remember(message.chat)
    parsed = parse_answer(query.data)
    bound = None
    if message is not None and parsed is not None:
        bound = await data.poster.post_for(message_ref(message.chat.id, message.message_id))
        if bound is None and isinstance(message, telegram.Message):
            bound = await data.poster.bind_late_message(message, parsed[0])
    if parsed is None or bound is None or bound != parsed[0]:
        if bound is None and data.webhook and isinstance(message, telegram.Message) \
                and our_keyboard_has(message, context.bot.id, query.data) \
                and data.unbound.within(("message", message.chat.id, message.message_id)):
            # the process that sent it with no reply binds it when this reaches it
            raise Redeliver(f"message {message.message_id} in {message.chat.id} is bound to "
                            "no question yet")
        log.info("refused callback data %r from %s on message %s", query.data, person.key,
                 message_ref(message.chat.id, message.message_id) if message else None)
        refusal = AnswerResult(AnswerStatus.UNKNOWN_POST, parsed[0] if parsed else 0)
        t = translator(await data.service.locales.for_person(person, chat))
        await alert(query, render.result_text(refusal, t))
        return
    post_id, option = parsed
    # a forged option, a closed question, a second answer: answered (refused) at once
    if message is not None and await confidence.asks(data, message.chat, post_id, person,
                                                     option):
        shown = await data.service.questions.show(post_id)
        if shown is not None:
            t = translator(await data.service.locales.for_person(person, chat))
            await confidence.ask(query, message, shown, option, t)
            return
    result = await data.service.answer(post_id, person, option)
    await alert(query, alert_text(result, translator(result.locale)))
    if result.accepted and result.personal and message is not None:
        await go_on(data, result, message.chat.id, buttons=True)


def our_keyboard_has(message: telegram.Message, bot_id: int, data: str | None) -> bool:
    """The message is the bot's and has a button with this data: a question of ours."""
    markup = message.reply_markup
    if message.from_user is None or message.from_user.id != bot_id or markup is None:
        return False
    return any(b.callback_data == data for row in markup.inline_keyboard for b in row)


async def tell(data: BotData, user_id: int, text: str) -> None:
    """A private message that is nice to have: someone who never started the bot cannot
    get it."""
    try:
        await data.poster.text(user_id, text)
    except TelegramError as exc:
        log.info("could not tell tg:%s: %s", user_id, exc)


# chats -----------------------------------------------------------------------------------
async def migrated(update: Update, context: Context) -> None:
    """A group became a supergroup and got a new id: its history, board, language and
    daily schedule move with it. Both the old and the new chat announce it; either works,
    and the second finds nothing left to move."""
    message = update.effective_message
    if message is None:
        return
    if message.migrate_to_chat_id:
        old, new = message.chat.id, message.migrate_to_chat_id
    elif message.migrate_from_chat_id:
        old, new = message.migrate_from_chat_id, message.chat.id
    else:
        return
    if await context.bot_data.service.migrate_chat(f"{PREFIX}{old}", f"{PREFIX}{new}"):
        log.info("chat %s became %s; its data moved along", old, new)


# errors ----------------------------------------------------------------------------------
async def on_error(update: object, context: Context) -> None:
    """A refusal from the core (UserError) is shown to the person in their language. A
    storage that cannot be used now holds the update back (updates.outcome_of): it runs
    again when Telegram sends it again, and the person is told so once (a voter is not: the
    vote is recorded then). Any other failure is logged with the update and apologised for."""
    error = context.error
    if not isinstance(update, Update):
        log.error("handling %s failed", describe(update), exc_info=error)
        return
    data = context.bot_data
    message = update.effective_message
    user = update.effective_user
    person = person_of(user) if user is not None and (
        message is None or message.chat.type != ChatType.CHANNEL) else None
    chat = chat_of(update.effective_chat) if update.effective_chat is not None else None
    if isinstance(error, AlreadyHandled):
        log.info("%s was handled before (%s); not again", describe(update), error.key)
        return
    outcome = outcome_of(error)
    if outcome is Outcome.LATER:
        log.info("%s: %s; it is to come again", describe(update), error)
        forget(data, update)
        mark(Outcome.LATER)
        return
    if isinstance(error, UserError):
        log.info("refused %s: %s", describe(update), error)
        t = translator(await data.service.locales.for_person(person, chat))
        text = render.error_text(error, t, data.service.questions.quizzes(t.locale))
    else:
        if outcome is Outcome.UNSTORED:  # the receiver logs the outage once
            log.debug("%s not stored now (%s); it comes again", describe(update), error)
        else:
            log.error("handling %s failed", describe(update), exc_info=error)
        forget(data, update)  # sent again (or held back, polling): it must run again
        mark(outcome)
        if update.poll_answer is not None and outcome is Outcome.UNSTORED:
            return  # recorded when it comes again; a vote cannot be cast twice anyway
        if not data.apologised.add(update.update_id):
            return  # sent again and failed again: one word about it is enough
        try:
            locale = await data.service.locales.for_person(person, chat)
        except Exception:  # the failure may be the database itself
            locale = DEFAULT_LOCALE
        text = failure_text(update, outcome, translator(locale))
    try:
        if update.callback_query is not None:
            await update.callback_query.answer(fit(text, TG_ALERT), show_alert=True)
        elif message is not None:
            if link := open_question_link(error, message.chat):
                text += "\n" + link
            await message.reply_text(fit(text))
        elif update.poll_answer is not None and user is not None:
            await context.bot.send_message(user.id, fit(text))
    except TelegramError as exc:
        log.warning("could not reply to update %s: %s", update.update_id, exc)


def open_question_link(error: object, chat: telegram.Chat) -> str | None:
    """A link to the open question a refused /quiz points at, where Telegram has message
    links (a supergroup's, public or not; a basic group has none: the text names it)."""
    if not isinstance(error, StillOpen):
        return None
    internal = str(chat.id).removeprefix("-100")
    if internal == str(chat.id):
        return None
    for ref in error.refs:
        if (where := parse_message_ref(ref)) is not None and where[0] == chat.id:
            return f"https://t.me/{chat.username}/{where[1]}" if chat.username \
                else f"https://t.me/c/{internal}/{where[1]}"
    return None


def failure_text(update: Update, outcome: Outcome, t: Translator) -> str:
    """What the person is told about an update that failed. Held back (UNSTORED), it is
    handled when Telegram sends it again: sending it again themselves would do it twice. A
    quiz-poll vote cannot be cast again."""
    if outcome is Outcome.UNSTORED:
        if update.callback_query is not None:
            return t.gettext("Your answer is not saved yet: I will record it as soon as I "
                             "can. No need to press again.")
        return t.gettext("I cannot save anything right now: I will do this as soon as I "
                         "can. No need to send it again.")
    if update.poll_answer is not None:
        return t.gettext("Sorry, something went wrong on my side: your vote was not "
                         "recorded.")
    return t.gettext("Sorry, something went wrong on my side. Please try again.")


def forget(data: BotData, update: Update) -> None:
    """The update's command or press is no longer 'seen': its next delivery runs."""
    if update.callback_query is not None:
        data.seen.discard(("press", update.callback_query.id))
    elif update.effective_message is not None and update.effective_chat is not None:
        data.seen.discard((update.effective_chat.id, update.effective_message.message_id))


def describe(update: object) -> str:
    """Enough context to find the update again: id, kind, chat, sender, text or data."""
    if not isinstance(update, Update):
        return repr(update)
    parts = [f"update {update.update_id}"]
    if update.effective_chat is not None:
        parts.append(f"chat tg:{update.effective_chat.id}")
    if update.effective_user is not None:
        parts.append(f"from tg:{update.effective_user.id}")
    if update.effective_message is not None and update.effective_message.text:
        parts.append(f"text {update.effective_message.text[:80]!r}")
    if update.callback_query is not None:
        parts.append(f"callback {update.callback_query.data!r}")
    if update.poll_answer is not None:
        parts.append(f"poll {update.poll_answer.poll_id} options "
                     f"{list(update.poll_answer.option_ids)}")
    return " · ".join(parts)
