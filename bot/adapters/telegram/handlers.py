"""Update handlers: commands, poll answers, button presses, and the error handler.

Every handler may see the same update twice (updates are confirmed when fetched, not when
handled): answers are made final by the database, commands are remembered by message.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

import telegram
from telegram import Update
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    PollAnswerHandler,
    filters,
)

from bot.adapters.telegram import daily
from bot.adapters.telegram.admins import AdminCheck
from bot.adapters.telegram.callback_data import parse_answer
from bot.adapters.telegram.concurrency import KeyedLocks, RecentKeys
from bot.adapters.telegram.identity import (
    PREFIX,
    chat_id_of,
    chat_of,
    is_private_key,
    message_ref,
    person_of,
    poll_ref,
)
from bot.adapters.telegram.publish import Poster
from bot.adapters.telegram.text import alert_text, fit
from bot.core import render
from bot.core.models import (
    AnswerResult,
    Chat,
    NoActiveRun,
    Period,
    Person,
    PostSummary,
    ShownQuestion,
    UnknownQuiz,
)
from bot.core.schedule import ScheduleError
from bot.core.service import QuizService, UnsupportedLocale
from bot.i18n import LANGUAGE_NAMES, Translator, normalize, translator
from bot.settings import Settings

log = logging.getLogger(__name__)

Context = ContextTypes.DEFAULT_TYPE

# Commands come from messages and channel posts; never from edits, which would run them again.
COMMAND_UPDATES = filters.UpdateType.MESSAGE | filters.UpdateType.CHANNEL_POST


@dataclass(frozen=True, slots=True)
class Invocation:
    """A command as the core sees it."""

    message: telegram.Message
    tg_chat: telegram.Chat
    chat: Chat
    person: Person | None  # None for a channel post
    args: list[str]

    @property
    def is_group(self) -> bool:
        return self.tg_chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)

    async def reply(self, text: str) -> None:
        await self.message.reply_text(fit(text))


class Handlers:
    def __init__(self, service: QuizService, settings: Settings, poster: Poster) -> None:
        self.service = service
        self.settings = settings
        self.poster = poster
        self._locks = KeyedLocks()
        self._seen = RecentKeys()
        self.admins = AdminCheck()

    def register(self, app: Application) -> None:  # type: ignore[type-arg]
        commands = {
            ("start", "help"): self.help,
            ("quiz",): self.quiz,
            ("leaderboard",): self.leaderboard,
            ("stats",): self.stats,
            ("review",): self.review,
            ("lang",): self.lang,
            ("daily",): self.daily,
        }
        for names, callback in commands.items():
            app.add_handler(CommandHandler(names, callback, filters=COMMAND_UPDATES))
        app.add_handler(PollAnswerHandler(self.poll_answer))
        app.add_handler(CallbackQueryHandler(self.button))
        app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, self.migrated))
        app.add_error_handler(self.error)

    async def migrated(self, update: Update, context: Context) -> None:
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
        if await self.service.migrate_chat(f"{PREFIX}{old}", f"{PREFIX}{new}"):
            log.info("chat %s became %s; its data moved along", old, new)

    # helpers ---------------------------------------------------------------------------
    def _invocation(self, update: Update, context: Context) -> Invocation | None:
        message, tg_chat = update.effective_message, update.effective_chat
        if message is None or tg_chat is None:
            return None
        if not self._seen.add((tg_chat.id, message.message_id)):
            log.info("ignoring redelivered command %s in %s", message.message_id, tg_chat.id)
            return None
        self.poster.remember(tg_chat)
        user = message.from_user
        # In a channel the post comes from the channel itself; there is no person.
        person = person_of(user) if user is not None and tg_chat.type != ChatType.CHANNEL \
            else None
        return Invocation(message, tg_chat, chat_of(tg_chat), person, list(context.args or []))

    async def _chat_translator(self, inv: Invocation) -> Translator:
        """For what the whole chat reads; in a private chat, the person's language."""
        if inv.chat.is_private:
            return await self._personal_translator(inv)
        return translator(await self.service.chat_locale(inv.chat))

    async def _personal_translator(self, inv: Invocation) -> Translator:
        return translator(await self.service.resolve_locale(inv.person, inv.chat))

    def _is_known_selector(self, selector: str) -> bool:
        try:
            self.service.check_selector(selector)
        except UnknownQuiz:
            return False
        return True

    def _is_quiz_id(self, selector: str) -> bool:
        key = selector.strip().lower()
        return any(q.id == key for q in self.service.quizzes())

    async def _post_summaries(self, summaries: list[PostSummary]) -> None:
        for summary in summaries:
            await self.poster.try_summary(summary)

    # /start, /help ---------------------------------------------------------------------
    async def help(self, update: Update, context: Context) -> None:
        if (inv := self._invocation(update, context)) is None:
            return
        await inv.reply(render.help_text(await self._chat_translator(inv)))

    # /quiz -----------------------------------------------------------------------------
    async def quiz(self, update: Update, context: Context) -> None:
        if (inv := self._invocation(update, context)) is None:
            return
        args = inv.args
        buttons: bool | None = None
        if args and args[0].lower() == "buttons":
            buttons, args = True, args[1:]
        if inv.tg_chat.type == ChatType.CHANNEL:
            buttons = True
        selector = " ".join(args) or None
        t = await self._chat_translator(inv)
        if selector is not None and not self._is_known_selector(selector):
            # Checked before anything closes, so a typo does not end the open question.
            await inv.reply(render.unknown_quiz_text(selector, self.service.quizzes(t.locale), t))
            return
        async with self._locks(inv.chat.key):
            try:
                if inv.chat.is_private and inv.person is not None:
                    await self._private_quiz(inv, inv.person, selector, buttons, t)
                else:
                    await self._group_quiz(inv, selector, buttons, t)
            except UnknownQuiz as exc:
                await inv.reply(render.unknown_quiz_text(exc.selector, exc.available, t))

    async def _group_quiz(
        self, inv: Invocation, selector: str | None, buttons: bool | None, t: Translator
    ) -> None:
        # A new /quiz replaces the previous /quiz; the daily question stays open until the next.
        await self._post_summaries(await self.service.close_open(inv.chat, kind="quiz"))
        shown = await self.service.ask(
            inv.chat, selector, locale=t.locale,
            open_for=timedelta(seconds=self.settings.quizbot_question_seconds),
        )
        await self.poster.question(shown, buttons=buttons)

    async def _private_quiz(
        self, inv: Invocation, person: Person, selector: str | None, buttons: bool | None,
        t: Translator,
    ) -> None:
        """/quiz <quiz id> runs the whole quiz; /quiz resumes an unfinished run, else asks one
        question; /quiz <tag> asks one question on that topic."""
        shown: ShownQuestion | None = None
        if selector is None:
            try:
                shown = await self.service.start_run(person, inv.chat, None, locale=t.locale)
            except NoActiveRun:
                shown = None
        if shown is None:
            await self._post_summaries(await self.service.close_open(inv.chat, kind="quiz"))
            if selector is not None and self._is_quiz_id(selector):
                shown = await self.service.start_run(person, inv.chat, selector, locale=t.locale)
            else:
                shown = await self.service.ask(inv.chat, selector, person=person, locale=t.locale)
        await self.poster.question(shown, buttons=buttons)

    # /leaderboard, /stats, /review -----------------------------------------------------
    async def leaderboard(self, update: Update, context: Context) -> None:
        if (inv := self._invocation(update, context)) is None:
            return
        t = await self._chat_translator(inv)
        choice = inv.args[0].lower() if inv.args else Period.ALL.value
        if choice not in {p.value for p in Period}:
            await inv.reply(t.gettext("Usage: /leaderboard [day|week|all]"))
            return
        board = await self.service.leaderboard(
            None if inv.chat.is_private else inv.chat.key,
            Period(choice),
            person_key=inv.person.key if inv.person else None,
        )
        scope = t.gettext("all chats") if inv.chat.is_private else inv.chat.title
        await inv.reply(render.leaderboard_text(board, t, scope=scope))

    async def stats(self, update: Update, context: Context) -> None:
        if (inv := self._invocation(update, context)) is None or inv.person is None:
            return
        t = await self._personal_translator(inv)
        await inv.reply(render.stats_text(await self.service.stats(inv.person, t.locale), t))

    async def review(self, update: Update, context: Context) -> None:
        if (inv := self._invocation(update, context)) is None or inv.person is None:
            return
        t = await self._personal_translator(inv)
        await inv.reply(render.review_text(await self.service.review(inv.person, t.locale), t))

    # /lang -----------------------------------------------------------------------------
    async def lang(self, update: Update, context: Context) -> None:
        if (inv := self._invocation(update, context)) is None:
            return
        args = inv.args
        if args and args[0].lower() == "chat":
            await self._chat_lang(inv, args[1] if len(args) > 1 else None)
            return
        if args and inv.person is None:  # a channel post speaks for the channel
            await self._chat_lang(inv, args[0])
            return
        t = await self._personal_translator(inv)
        if not args or inv.person is None:
            await inv.reply(await self._lang_status(inv, t))
            return
        try:
            chosen = await self.service.set_person_locale(inv.person, args[0])
        except UnsupportedLocale as exc:
            await inv.reply(self._unsupported(exc, t))
            return
        t = await self._personal_translator(inv)
        if chosen is None:
            await inv.reply(t.gettext("Your language now follows Telegram: {name}.",
                                      name=LANGUAGE_NAMES[t.locale]))
        else:
            await inv.reply(t.gettext("Your language is now {name}.",
                                      name=LANGUAGE_NAMES[chosen]))

    async def _lang_status(self, inv: Invocation, t: Translator) -> str:
        choices = ", ".join(f"{code} — {name}" for code, name in LANGUAGE_NAMES.items())
        lines = [
            t.gettext("Your language: {name}.", name=LANGUAGE_NAMES[t.locale]),
            t.gettext("Languages: {choices}", choices=choices),
            t.gettext("Change it with /lang en, /lang bn or /lang hi; /lang auto follows "
                      "your Telegram language."),
        ]
        if not inv.chat.is_private:
            chat_locale = await self.service.chat_locale(inv.chat)
            lines.append(t.gettext("This chat's language (polls, summaries, leaderboards): "
                                   "{name}.", name=LANGUAGE_NAMES[chat_locale]))
        if inv.is_group:
            lines.append(t.gettext("Group admins: /lang chat <code> sets the group's "
                                   "language."))
        return "\n".join(lines)

    async def _chat_lang(self, inv: Invocation, code: str | None) -> None:
        t = await self._personal_translator(inv)
        if code is None:
            await inv.reply(t.gettext("Usage: /lang chat <en|bn|hi|auto>"))
            return
        if not await self.admins.may_manage(inv.message):
            await inv.reply(t.gettext("Only the group's admins can change its language."))
            return
        try:
            chosen = await self.service.set_chat_locale(inv.chat, code)
        except UnsupportedLocale as exc:
            await inv.reply(self._unsupported(exc, t))
            return
        t = translator(await self.service.chat_locale(inv.chat))
        if chosen is None:
            await inv.reply(t.gettext("This chat no longer has a language of its own."))
        else:
            await inv.reply(t.gettext("This chat's language is now {name}.",
                                      name=LANGUAGE_NAMES[chosen]))

    @staticmethod
    def _unsupported(exc: UnsupportedLocale, t: Translator) -> str:
        return t.gettext("I don't speak “{code}”. Choose one of: {choices}.",
                         code=exc.code, choices=", ".join(LANGUAGE_NAMES))

    # /daily ----------------------------------------------------------------------------
    async def daily(self, update: Update, context: Context) -> None:
        """/daily shows the schedule (anyone); /daily HH:MM [Time/Zone] [quiz] and /daily off
        change it (the chat's admins; in a private chat, the person)."""
        if (inv := self._invocation(update, context)) is None:
            return
        t = await self._chat_translator(inv)
        if not inv.args:
            await inv.reply(await self._daily_status(inv, t))
            return
        mine = await self._personal_translator(inv) if inv.person is not None else t
        if not await self.admins.may_manage(inv.message):
            await inv.reply(mine.gettext(
                "Only the group's admins can change its daily question."
            ) + "\n" + mine.gettext("/daily shows it."))
            return
        async with self._locks(inv.chat.key):
            if inv.args[0].lower() in daily.OFF_WORDS:
                await self._daily_off(inv, t)
                return
            parsed = daily.parse_daily(inv.args, self._is_known_selector)
            if isinstance(parsed, daily.UnknownSelector):
                await inv.reply(render.unknown_quiz_text(
                    parsed.text, self.service.quizzes(mine.locale), mine
                ))
                return
            if not isinstance(parsed, daily.DailyRequest):
                await inv.reply(daily.problem_text(parsed, mine))
                return
            # an anonymous admin writes as @GroupAnonymousBot: nobody to record
            by = inv.person if inv.message.sender_chat is None else None
            try:
                status = await self.service.set_schedule(
                    inv.chat, parsed.at, parsed.zone, parsed.selector, by=by
                )
            except UnknownQuiz as exc:
                await inv.reply(render.unknown_quiz_text(exc.selector, exc.available, mine))
                return
            except ScheduleError as exc:
                await inv.reply(mine.gettext(exc.template, **exc.values))
                return
        log.info("daily question in %s set to %s %s (%s) by %s", inv.chat.key,
                 status.schedule.at, status.schedule.tz, status.schedule.selector,
                 by.key if by else "an admin posting as the chat")
        await inv.reply(t.gettext("Done: this chat gets a daily question.") + "\n"
                        + render.schedule_status_text(status, t))

    async def _daily_status(self, inv: Invocation, t: Translator) -> str:
        status = await self.service.schedule_status(inv.chat)
        if status is None:
            text = t.gettext("This chat has no daily question.")
        else:
            text = render.schedule_status_text(status, t)
        if inv.is_group:
            text += "\n" + t.gettext("Only the group's admins can change it.")
        return text + "\n\n" + daily.usage_text(t)

    async def _daily_off(self, inv: Invocation, t: Translator) -> None:
        if not await self.service.remove_schedule(inv.chat):
            await inv.reply(t.gettext("This chat has no daily question."))
            return
        log.info("daily question in %s turned off by %s", inv.chat.key,
                 inv.person.key if inv.person else "the channel")
        await inv.reply(t.gettext("The daily question is off."))
        # Nothing else would ever close the last one: close it now, with its summary.
        await self._post_summaries(await self.service.close_open(inv.chat, kind="daily"))

    # answers ---------------------------------------------------------------------------
    async def poll_answer(self, update: Update, context: Context) -> None:
        answer = update.poll_answer
        if answer is None or answer.user is None or not answer.option_ids:
            return  # a vote retracted, or cast by a chat: nothing to record
        post_id = await self.service.post_id_for(poll_ref(answer.poll_id))
        if post_id is None:
            await self.poster.bound()
            post_id = await self.service.post_id_for(poll_ref(answer.poll_id))
        shown = await self.service.show(post_id) if post_id is not None else None
        if post_id is None or shown is None:
            log.info("poll %s is not a live question; answer ignored", answer.poll_id)
            return
        person = person_of(answer.user)
        chat = Chat(shown.chat_key, is_private=is_private_key(shown.chat_key))
        locale = await self.service.resolve_locale(person, chat)
        result = await self.service.answer(post_id, person, answer.option_ids[0], locale=locale)
        if not result.accepted:
            # A redelivered answer, or one after closing; the poll already showed the result.
            log.debug("poll answer to post %s: %s", post_id, result.status)
            return
        if chat.is_private:
            await self._after_private_answer(result, shown, buttons=False)

    async def button(self, update: Update, context: Context) -> None:
        query = update.callback_query
        if query is None:
            return
        person = person_of(query.from_user)
        message = query.message
        chat = chat_of(message.chat) if message is not None else None
        if message is not None:
            self.poster.remember(message.chat)
        t = translator(await self.service.resolve_locale(person, chat))
        parsed = parse_answer(query.data)
        bound = None
        if message is not None and parsed is not None:
            ref = message_ref(message.chat.id, message.message_id)
            if (bound := await self.service.post_id_for(ref)) is None:
                await self.poster.bound()
                bound = await self.service.post_id_for(ref)
        if parsed is None or bound is None or bound != parsed[0]:
            log.info("refused callback data %r from %s on message %s", query.data,
                        person.key, message_ref(message.chat.id, message.message_id)
                        if message is not None else None)
            await query.answer(t.gettext("This button does not belong to a live question."),
                               show_alert=True)
            return
        post_id, option = parsed
        result = await self.service.answer(post_id, person, option, locale=t.locale)
        await query.answer(alert_text(result, t), show_alert=True)  # after the commit
        if result.accepted and chat is not None and chat.is_private:
            shown = await self.service.show(post_id)
            if shown is not None:
                await self._after_private_answer(result, shown, buttons=True)

    async def _after_private_answer(
        self, result: AnswerResult, shown: ShownQuestion, *, buttons: bool
    ) -> None:
        """Private chat: the result and explanation, then the run's next question or score."""
        chat_id = chat_id_of(shown.chat_key)
        t = translator(result.locale)
        await self.poster.text(chat_id, render.result_text(result, t, details=True))
        if result.next_question is not None:
            await self.poster.question(result.next_question, buttons=buttons)
        elif result.run_summary is not None:
            await self.poster.text(chat_id, render.run_summary_text(result.run_summary, t))
        elif shown.run_id is None:
            # A single question for one person: done once answered, so no summary follows.
            await self.service.close(shown.post_id, quiet=True)

    # errors ----------------------------------------------------------------------------
    async def error(self, update: object, context: Context) -> None:
        log.error("handling %s failed", describe(update), exc_info=context.error)
        if not isinstance(update, Update):
            return
        user = update.effective_user
        t = translator(normalize(user.language_code) if user else None)
        apology = t.gettext("Sorry, something went wrong on my side. Please try again.")
        try:
            if update.callback_query is not None:
                await update.callback_query.answer(apology, show_alert=True)
            elif update.effective_message is not None:
                await update.effective_message.reply_text(apology)
            elif update.poll_answer is not None and user is not None:
                await context.bot.send_message(user.id, apology)
        except TelegramError as exc:
            log.warning("could not send the apology for update %s: %s", update.update_id, exc)


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
