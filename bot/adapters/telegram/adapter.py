"""TelegramAdapter: the lifecycle `quizbot run` drives, and the core's ChatPort for "tg:" chats.

The core's scheduler posts daily questions and closes questions through send_question and
close_question; Telegram's failures reach it as ChatGone (the bot was removed or blocked) or
TryLater (a flood wait, the network), and the core decides what follows.

Updates come through our own polling loop (polling.py), or, with QUIZBOT_TELEGRAM_WEBHOOK_URL
set, through our webhook endpoint (webhook.py, for many processes behind a load balancer);
either confirms an update to Telegram only after its handlers have finished. The lifecycle is
bot/adapters' Adapter: a token Telegram rejects (at start, or revoked later) is
CredentialsRejected; Telegram unreachable at start, a webhook address that cannot be listened
on or a webhook URL Telegram refuses is ConnectionLost; later outages are retried for ever.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from telegram import Update
from telegram.error import BadRequest, EndPointNotFound, InvalidToken, NetworkError

from bot.adapters import ConnectionLost, CredentialsRejected
from bot.adapters.telegram import live, routes
from bot.adapters.telegram.app import build_application, register_commands
from bot.adapters.telegram.context import TelegramApp
from bot.adapters.telegram.identity import PREFIX, chat_id_of
from bot.adapters.telegram.logs import protect_token
from bot.adapters.telegram.polling import LEASE_NAME, Poller
from bot.adapters.telegram.publish import Poster, platform_errors
from bot.core import render
from bot.core.leadership import default_holder
from bot.core.live import Countdown
from bot.core.models import PostSummary, ShownQuestion
from bot.core.ports import RoundSummary
from bot.core.service import QuizService
from bot.i18n import translator
from bot.settings import Settings

if TYPE_CHECKING:  # aiohttp (about 9 MB) is imported only in webhook mode
    from bot.adapters.telegram.webhook import WebhookServer

log = logging.getLogger(__name__)


REJECTED = "Telegram rejected TELEGRAM_BOT_TOKEN (revoked or mistyped): set the bot's token"
STORED_WITHIN = 5.0  # seconds a stop waits for the chats' kinds to be stored


def _not_found(error: BaseException) -> bool:
    """A 404 (PTB raises InvalidToken for it as for a 401, and quotes the token): the address
    is wrong more often than the token, which Telegram answers with 401 Unauthorized."""
    cause = error.__cause__ or error
    return isinstance(cause, InvalidToken) and cause.message.strip().lower() == "not found"


class TelegramAdapter:
    prefix = PREFIX
    name = "Telegram"

    def __init__(self, service: QuizService, settings: Settings) -> None:
        if settings.telegram_bot_token is None:
            raise ValueError("TELEGRAM_BOT_TOKEN is not set")
        self.service = service
        self.settings = settings
        self._token = settings.telegram_bot_token.get_secret_value()
        self._app: TelegramApp | None = None
        self._poller: Poller | None = None
        self._webhook: WebhookServer | None = None

    @property
    def application(self) -> TelegramApp:
        if self._app is None:
            raise RuntimeError("the Telegram adapter is not running")
        return self._app

    @property
    def poster(self) -> Poster:
        return self.application.bot_data.poster

    @property
    def poller(self) -> Poller:
        if self._poller is None:
            raise RuntimeError("the Telegram adapter is not polling")
        return self._poller

    @property
    def webhook(self) -> WebhookServer:
        if self._webhook is None:
            raise RuntimeError("the Telegram adapter is not taking webhooks")
        return self._webhook

    async def idle(self) -> None:
        """Until no update is being handled (for tests)."""
        await (self.poller if self._poller is not None else self.webhook).idle()

    async def start(self) -> None:
        protect_token(self._token)
        webhook = self.settings.telegram_webhook
        app = build_application(self.settings, self._token)
        app.bot_data.service = self.service
        app.bot_data.poster = Poster(app.bot, self.service, shared=webhook is not None)
        app.bot_data.webhook = webhook is not None
        routes.register(app)
        receiver: Poller | WebhookServer
        if webhook is None:
            # one process at a time polls among those on the database
            leader = self.service.leadership(
                LEASE_NAME, self.settings.quizbot_instance or default_holder())
            receiver = Poller(app, Update.ALL_TYPES, leader=leader)
        else:
            url, listen, secret = webhook
            protect_token(secret)  # PTB logs setWebhook's parameters at DEBUG
            from bot.adapters.telegram.webhook import WebhookServer

            receiver = WebhookServer(app, url, listen, secret, Update.ALL_TYPES)
        try:
            await app.initialize()
            await register_commands(app.bot)
            if webhook is None:
                await app.bot.delete_webhook()  # getUpdates is refused while a webhook is set
            await app.start()
            await self._receive(receiver)
        except (InvalidToken, EndPointNotFound) as exc:
            await _shutdown(app, receiver)
            if _not_found(exc):
                raise ConnectionLost(
                    f"TELEGRAM_API_BASE_URL={self.settings.telegram_api_base_url} answered "
                    "404 Not Found: it is not a Bot API address (it ends where the token "
                    "follows, e.g. https://api.telegram.org/bot), or TELEGRAM_BOT_TOKEN is "
                    "malformed") from None
            raise CredentialsRejected(REJECTED) from exc
        except NetworkError as exc:
            await _shutdown(app, receiver)
            if isinstance(exc, BadRequest):
                raise
            raise ConnectionLost(
                f"Telegram cannot be reached at TELEGRAM_API_BASE_URL="
                f"{self.settings.telegram_api_base_url} ({exc}): check the network and "
                "TELEGRAM_API_BASE_URL") from exc
        except BaseException:
            await _shutdown(app, receiver)
            raise
        self._app = app
        if isinstance(receiver, Poller):
            self._poller = receiver
        else:
            self._webhook = receiver
        self.service.delivery.connect(self)
        how = "long polling" if webhook is None else \
            f"webhook, listening on {_address(webhook[1])}"
        log.info("Telegram bot @%s is running (%s)", app.bot.username, how)

    async def _receive(self, receiver: Poller | WebhookServer) -> None:
        if isinstance(receiver, Poller):
            await receiver.start()
            return
        try:
            await receiver.start()
        except BadRequest as exc:  # setWebhook: e.g. a URL Telegram does not call
            raise ConnectionLost(f"Telegram refused QUIZBOT_TELEGRAM_WEBHOOK_URL: "
                                 f"{exc.message}") from exc
        except OSError as exc:
            raise ConnectionLost(
                f"cannot listen on QUIZBOT_TELEGRAM_WEBHOOK_LISTEN={_address(receiver.listen)} "
                f"for Telegram's webhook: {exc.strerror or exc}") from exc

    async def stop(self) -> None:
        """Stop taking updates, finish the ones being handled (their summaries may still
        go out through this adapter), then disconnect."""
        receiver = self._poller or self._webhook
        if self._app is not None and receiver is not None:
            await receiver.stop()
        self.service.delivery.disconnect(self)
        if self._app is not None:
            await self._kinds_stored(self._app.bot_data.poster)
            await _shutdown(self._app, receiver)
            self._app = self._poller = self._webhook = None

    @staticmethod
    async def _kinds_stored(poster: Poster) -> None:
        """The chats' kinds learned from the last updates, stored before the database closes
        (else the next process looks them up, spending requests); a database that hangs
        holds the stop only so long."""
        try:
            await asyncio.wait_for(poster.stored(), STORED_WITHIN)
        except TimeoutError:
            log.warning("the kinds of some chats were not stored within %g s; they are "
                        "learned again from their next update", STORED_WITHIN)

    async def wait_failed(self) -> BaseException:
        """Until updates can never come again: CredentialsRejected for a revoked token.
        Outages and flood waits are retried for ever and never end it."""
        receiver = self._poller or self._webhook
        if receiver is None:
            raise RuntimeError("the Telegram adapter is not running")
        error = await receiver.failed
        return CredentialsRejected(REJECTED) if isinstance(
            error, (InvalidToken, EndPointNotFound)) else ConnectionLost(str(error))

    # ChatPort ----------------------------------------------------------------------------
    async def send_question(self, question: ShownQuestion) -> None:
        """A question the core posts by itself (the daily question, a round's next one): a
        quiz poll, or buttons in a channel or where the chat (or its round) asks for them."""
        with platform_errors():
            await self.poster.question(question, buttons=question.mode == "buttons" or None)

    async def close_question(self, summary: PostSummary) -> None:
        with platform_errors():
            await self.poster.summary(summary)

    async def round_over(self, summary: RoundSummary) -> None:
        text = render.round_summary_text(summary, translator(summary.locale))
        with platform_errors():
            await self.poster.text_once(chat_id_of(summary.chat_key), text,
                                        what=f"the summary of round {summary.round_id}")

    # LivePort: what the scheduler's tick decided for a live session (live.py)
    countdown_every = live.COUNTDOWN_EVERY

    async def live_event(self, event: object) -> None:
        with platform_errors():
            await live.show(self.application.bot_data, event)

    async def live_countdown(self, countdown: Countdown) -> None:
        with platform_errors():
            await live.edit_countdown(self.application.bot_data, countdown)

    # NoticePort: an assignment's summary at its deadline (core/assignments.py)
    async def send_notice(self, chat_key: str, text: str) -> None:
        with platform_errors():
            await self.poster.text_once(chat_id_of(chat_key), text,
                                        what="an assignment's summary")

    async def send_private(self, person_key: str, text: str) -> None:
        """A review reminder: a message in the person's private chat with the bot (its id
        is the user's)."""
        with platform_errors():
            await self.poster.text_once(int(person_key.removeprefix(PREFIX)), text,
                                        what="a review reminder")


def _address(listen: tuple[str, int]) -> str:
    host, port = listen
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def _shutdown(app: TelegramApp, receiver: Poller | WebhookServer | None) -> None:
    if receiver is not None and receiver.running:
        await receiver.stop()
    if app.running:
        await app.stop()
    await app.shutdown()  # returns at once if it was never initialized
