"""TelegramAdapter: the lifecycle `quizbot run` drives, and the core's Publisher methods."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import replace

from telegram import Update
from telegram.error import ChatMigrated, TelegramError
from telegram.ext import Application

from bot.adapters.telegram.app import build_application, register_commands
from bot.adapters.telegram.handlers import Handlers
from bot.adapters.telegram.identity import PREFIX
from bot.adapters.telegram.logs import protect_token
from bot.adapters.telegram.publish import Poster, chat_is_gone
from bot.core.models import Chat, PostSummary, ShownQuestion
from bot.core.service import QuizService
from bot.settings import Settings

log = logging.getLogger(__name__)


class TelegramAdapter:
    prefix = PREFIX

    def __init__(
        self, service: QuizService, settings: Settings, *, close_interval: float = 1.0,
        summary_retry_interval: float = 30.0,
    ) -> None:
        if settings.telegram_bot_token is None:
            raise ValueError("TELEGRAM_BOT_TOKEN is not set")
        self.service = service
        self.settings = settings
        self.close_interval = close_interval
        self.summary_retry_interval = summary_retry_interval
        self._token = settings.telegram_bot_token.get_secret_value()
        self._app: Application | None = None  # type: ignore[type-arg]
        self._poster: Poster | None = None
        self._closer: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    @property
    def application(self) -> Application:  # type: ignore[type-arg]
        if self._app is None:
            raise RuntimeError("the Telegram adapter is not running")
        return self._app

    @property
    def poster(self) -> Poster:
        if self._poster is None:
            raise RuntimeError("the Telegram adapter is not running")
        return self._poster

    async def start(self) -> None:
        protect_token(self._token)
        app = build_application(self.settings, self._token)
        poster = Poster(app.bot, self.service)
        Handlers(self.service, self.settings, poster).register(app)
        await app.initialize()
        try:
            await register_commands(app.bot)
            # run_polling() would own the event loop; `quizbot run` shares it with Discord.
            await app.updater.start_polling(  # type: ignore[union-attr]
                allowed_updates=Update.ALL_TYPES, error_callback=_polling_error
            )
            await app.start()
        except BaseException:
            await _shutdown(app)
            raise
        self._app, self._poster = app, poster
        self._stopping.clear()
        self._closer = asyncio.create_task(self._close_due_loop(), name="telegram-close-due")
        log.info("Telegram bot @%s is running", app.bot.username)

    async def stop(self) -> None:
        if self._closer is not None:
            # Let a round that already closed questions post their summaries.
            self._stopping.set()
            try:
                await asyncio.wait_for(self._closer, timeout=10)
            except TimeoutError:
                log.warning("posting summaries took too long; stopping anyway")
            self._closer = None
        if self._app is not None:
            await _shutdown(self._app)
            self._app = self._poster = None

    async def post_question(self, question: ShownQuestion) -> None:
        """Post a question the core created on its own (the daily question): a quiz poll in a
        group or private chat, a button message in a channel, as /quiz would.

        If the chat is gone for good (the bot was removed or blocked, the chat deleted), the
        chat's schedule is removed and the question closed: retrying every few minutes for
        ever would only fill the log. Other errors propagate, and the scheduler retries."""
        try:
            await self.poster.question(question)
        except ChatMigrated as exc:
            # the group became a supergroup: move its data to the new id and post there
            new_key = f"{PREFIX}{exc.new_chat_id}"
            await self.service.migrate_chat(question.chat_key, new_key)
            await self.poster.question(replace(question, chat_key=new_key))
        except TelegramError as exc:
            if not chat_is_gone(exc):
                raise
            removed = await self.service.remove_schedule(Chat(question.chat_key))
            await self.service.close(question.post_id, quiet=True)
            log.warning("cannot post in %s any more (%s); %s", question.chat_key, exc.message,
                        "its daily question is turned off" if removed else "question dropped")

    async def post_summary(self, summary: PostSummary) -> None:
        """Post a summary. A platform error is logged, not raised: the close loop offers the
        summary again, and a failed summary must not hold up the next daily question."""
        await self.poster.try_summary(summary)

    async def _close_due_loop(self) -> None:
        retried_at = time.monotonic()
        while not self._stopping.is_set():
            try:
                summaries = await self.service.close_due(self.prefix)
                if time.monotonic() - retried_at >= self.summary_retry_interval:
                    # summaries the platform refused earlier (a network failure, a flood wait
                    # that ran out of retries): the core offers them again for a few hours
                    retried_at = time.monotonic()
                    summaries += await self.service.unposted_summaries(self.prefix)
                # Different chats in parallel: one chat's flood wait must not delay the rest.
                await asyncio.gather(*(self.post_summary(s) for s in summaries))
            except Exception:
                log.exception("closing due Telegram questions failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.close_interval)


def _polling_error(exc: TelegramError) -> None:
    # PTB keeps polling and retries by itself; a traceback per network blip is noise.
    log.warning("polling Telegram for updates failed: %s", exc)


async def _shutdown(app: Application) -> None:  # type: ignore[type-arg]
    if app.updater is not None and app.updater.running:
        await app.updater.stop()
    if app.running:
        await app.stop()
    await app.shutdown()
