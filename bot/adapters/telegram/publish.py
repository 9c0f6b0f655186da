"""Sending questions (quiz polls or button messages) and summaries, and binding references."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import telegram
from telegram import Bot, Message, ReplyParameters
from telegram.constants import ChatType
from telegram.error import BadRequest, Forbidden, TelegramError

from bot.adapters.telegram.identity import (
    chat_id_of,
    message_ref,
    parse_message_ref,
    poll_ref,
)
from bot.adapters.telegram.keyboards import answer_keyboard
from bot.adapters.telegram.text import fit, poll_explanation
from bot.content.limits import TG_OPTION, TG_QUESTION
from bot.core import render
from bot.core.models import PostSummary, ShownQuestion
from bot.core.service import QuizService
from bot.i18n import translator

log = logging.getLogger(__name__)

# sendPoll open_period bounds (Bot API 10.0)
MIN_OPEN_PERIOD = 5
MAX_OPEN_PERIOD = 2_628_000


def chat_is_gone(exc: TelegramError) -> bool:
    """The bot can never post in that chat again: removed or blocked, or the chat deleted."""
    return isinstance(exc, Forbidden) or (
        isinstance(exc, BadRequest) and "chat not found" in exc.message.lower()
    )


class Poster:
    """Sends what the core produced into Telegram chats."""

    def __init__(self, bot: Bot, service: QuizService) -> None:
        self.bot = bot
        self.service = service
        self._chat_types: dict[int, str] = {}
        # Questions sent but maybe not yet bound: an answer racing its own binding waits.
        self._in_flight = 0
        self._all_bound = asyncio.Event()
        self._all_bound.set()

    def remember(self, chat: telegram.Chat) -> None:
        self._chat_types[chat.id] = chat.type

    async def uses_buttons(self, chat_id: int) -> bool:
        """Channels get buttons: a quiz poll there could not report who answered."""
        if chat_id > 0:
            return False
        kind = self._chat_types.get(chat_id)
        if kind is None:
            try:
                kind = (await self.bot.get_chat(chat_id)).type
            except TelegramError as exc:
                log.warning("could not look up chat %s (%s); sending a poll", chat_id, exc)
                return False
            self._chat_types[chat_id] = kind
        return kind == ChatType.CHANNEL

    async def question(self, question: ShownQuestion, *, buttons: bool | None = None) -> Message:
        """Send a question created by the service and bind its references to the post."""
        self._in_flight += 1
        self._all_bound.clear()
        try:
            return await self._send_question(question, buttons)
        finally:
            self._in_flight -= 1
            if not self._in_flight:
                self._all_bound.set()

    async def bound(self, within: float = 2.0) -> None:
        """Wait (a little) until the questions being sent right now are bound to their posts.
        A quick answer can arrive between sendPoll's reply and the bind."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._all_bound.wait(), within)

    async def _send_question(self, question: ShownQuestion, buttons: bool | None) -> Message:
        chat_id = chat_id_of(question.chat_key)
        if buttons is None:
            buttons = await self.uses_buttons(chat_id)
        t = translator(question.locale)
        if buttons:
            message = await self.bot.send_message(
                chat_id, fit(render.question_text(question, t)),
                reply_markup=answer_keyboard(question),
            )
        else:
            message = await self.bot.send_poll(
                chat_id,
                fit(self._poll_question(question), TG_QUESTION),
                [fit(option, TG_OPTION) for option in question.options],
                type=telegram.Poll.QUIZ,
                is_anonymous=False,  # otherwise no poll_answer says who answered
                correct_option_ids=[question.correct],
                explanation=poll_explanation(question.explanation),
                open_period=self._open_period(question),
            )
            assert message.poll is not None
            await self.service.bind(question.post_id, poll_ref(message.poll.id))
        await self.service.bind(question.post_id, message_ref(chat_id, message.message_id))
        return message

    @staticmethod
    def _poll_question(question: ShownQuestion) -> str:
        if question.run_id is None:
            return question.prompt
        t = translator(question.locale)
        return f"{t.number(question.number)}/{t.number(question.total)} · {question.prompt}"

    def _open_period(self, question: ShownQuestion) -> int | None:
        if question.closes_at is None:
            return None
        seconds = round((question.closes_at - self.service.clock.now()).total_seconds())
        return min(max(seconds, MIN_OPEN_PERIOD), MAX_OPEN_PERIOD)

    async def summary(self, summary: PostSummary) -> Message:
        """Close the question's poll or keyboard, then post the summary under it."""
        chat_id = chat_id_of(summary.chat_key)
        is_poll = any(ref.startswith("tg-poll:") for ref in summary.refs)
        anchor = None
        for ref in summary.refs:
            parsed = parse_message_ref(ref)
            if parsed is None or parsed[0] != chat_id:
                continue
            anchor = max(anchor or 0, parsed[1])
            await self._retire(chat_id, parsed[1], is_poll)
        t = translator(summary.question.locale)
        message = await self.bot.send_message(
            chat_id,
            fit(render.summary_text(summary, t)),
            reply_parameters=ReplyParameters(anchor, allow_sending_without_reply=True)
            if anchor else None,
        )
        await self.service.summary_posted(summary.post_id)
        return message

    async def try_summary(self, summary: PostSummary) -> bool:
        """summary(), with a platform error logged instead of raised. The core offers an
        unconfirmed summary again (unposted_summaries), so it is retried later; in a chat the
        bot can no longer post in, it is given up."""
        try:
            await self.summary(summary)
            return True
        except TelegramError as exc:
            if chat_is_gone(exc):
                await self.service.summary_posted(summary.post_id)
                log.warning("gave up the summary of post %s: %s is gone (%s)",
                            summary.post_id, summary.chat_key, exc.message)
            else:
                log.warning("could not post the summary of post %s in %s (%s); will retry",
                            summary.post_id, summary.chat_key, exc.message)
            return False

    async def _retire(self, chat_id: int, message_id: int, is_poll: bool) -> None:
        try:
            if is_poll:
                await self.bot.stop_poll(chat_id, message_id)
            else:
                await self.bot.edit_message_reply_markup(chat_id, message_id, reply_markup=None)
        except BadRequest as exc:
            # Already closed by its open_period, not modified, or deleted: nothing to retire.
            log.debug("retiring message %s in %s: %s", message_id, chat_id, exc)

    async def text(self, chat_id: int, text: str) -> Message:
        return await self.bot.send_message(chat_id, fit(text))
