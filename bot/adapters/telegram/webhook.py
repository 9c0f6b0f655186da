"""Telegram webhooks: an endpoint that answers an update only once it is handled.

Telegram POSTs each update to QUIZBOT_TELEGRAM_WEBHOOK_URL (through a load balancer or a TLS
proxy, to QUIZBOT_TELEGRAM_WEBHOOK_LISTEN here) and sends it again, with a growing delay,
until it gets a 2xx (it waits 60 s for an answer). python-telegram-bot's own webhook server
answers before the handlers ran, so a crash then would lose the update; this one (aiohttp,
already there for discord.py) answers:

- 200 once every handler of the update finished: its writes committed, its replies sent. A
  poison update (one the library cannot read) gets 200 too, after one WARNING with its id
  and kind, so Telegram does not send it for ever.
- 500 when a handler failed unexpectedly (logged at ERROR): Telegram sends it again.
- 503 when the storage cannot be used now (a connection lost, a full disk: updates.py
  decides, for polling too), when a handler asked for it (updates.Redeliver: a poll or
  message bound to nothing, which the process that sent it may bind), or while stopping:
  Telegram sends it again, perhaps to another process.
- 400 for a body nested deeper than MAX_DEPTH (no update is): refused before it is parsed,
  with a WARNING, never a traceback.
- 401 with no secret, 403 with a wrong one (X-Telegram-Bot-Api-Secret-Token); nothing is
  read or changed, and the secret is never logged.

GET on any path is a health check for the load balancer: 200 while taking updates, 503 while
stopping. Any path takes updates: a proxy may rewrite it, and the secret is what counts.

Nothing here is shared between processes, so any number of them can sit behind one load
balancer: every update is handled where it lands, and the handlers are idempotent (answers
are final in the database). What stays in one process:
- the update ids being handled here: Telegram sending an update again while it is still
  being handled (after 60 s without an answer) joins the running handling and gets its
  outcome, instead of a 200 before the commit. Sent to another process, it runs there too:
  an answer is stored once all the same, a command may run twice (as after a crash).
- the handlers' own memory (redelivery.py, unconfirmed.py): see handlers.py for why each is
  harmless behind a load balancer.

Every process calls setWebhook at start (the same URL and secret: idempotent) and checks
every WATCH_EVERY seconds that it is still set (getWebhookInfo), setting it again if it was
deleted or replaced, and ending for good if the token was revoked. Stopping answers 503 to
new requests, lets the updates being handled finish (within STOP_WITHIN), answers them, then
closes. The webhook stays set: the other processes keep taking updates, and a process that
goes back to long polling deletes it at its start.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import json
import logging
import re
import time
from collections.abc import Sequence
from typing import Any

from aiohttp import web
from telegram import Update
from telegram.error import EndPointNotFound, InvalidToken, TelegramError

from bot.adapters.telegram import updates
from bot.adapters.telegram.context import TelegramApp
from bot.adapters.telegram.polling import STOP_WITHIN
from bot.adapters.telegram.updates import Outcome

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
# Connections Telegram may open to the URL at once (its maximum; 40 by default): updates
# handled concurrently share the database's group commits, as a polled batch does.
MAX_CONNECTIONS = 100
WATCH_EVERY = 60.0  # seconds between checks that Telegram still has our webhook
REFUSED_LOG_EVERY = 60.0  # seconds; refused requests are summed up at most this often
SHUTDOWN_TIMEOUT = 2.0  # seconds for answered requests to go out once stopping
# Levels of [ and { a body may nest. An update nests about ten (a reply's keyboard); json
# recurses once per level and fails with RecursionError near a thousand.
MAX_DEPTH = 64
# a JSON string, escapes included: its brackets are text, not nesting. Possessive, and an
# unclosed string runs to the end, so each byte is looked at once whatever the body holds.
_STRING = re.compile(rb'"(?:[^"\\]|\\.?)*+(?:"|\Z)', re.DOTALL)
_BRACKETS = re.compile(rb"[\[\]{}]")
WHY_AGAIN = {Outcome.FAILED: "failed", Outcome.LATER: "is for later",
             Outcome.UNSTORED: "could not be stored now"}

STATUS = updates.WEBHOOK_STATUS


class WebhookServer:
    """The webhook endpoint of one Application (which has no Updater)."""

    def __init__(
        self, app: TelegramApp, url: str, listen: tuple[str, int], secret: str,
        allowed_updates: Sequence[str],
    ) -> None:
        self.app = app
        self.url = url
        self.listen = listen
        self._secret = secret.encode()
        self.allowed_updates = list(allowed_updates)
        self.watch_every = WATCH_EVERY
        self._runner: web.AppRunner | None = None
        self._accepting = False
        self._running: dict[int, asyncio.Task[Outcome]] = {}  # update id -> its handling
        self._idle = asyncio.Event()
        self._idle.set()
        loop = asyncio.get_running_loop()
        self._abandoned: asyncio.Future[None] = loop.create_future()  # set: stop gave up
        self._watch: asyncio.Task[None] | None = None
        self._last_error: object = None  # the last delivery error Telegram reported
        self._refused = 0  # requests refused for their secret since the last log line
        self._refused_logged = 0.0
        self.poison = 0  # updates skipped because they could not be read
        self.port = 0  # the port listened on
        # set once the webhook can never work again (the token was rejected): why
        self.failed: asyncio.Future[BaseException] = loop.create_future()

    @property
    def running(self) -> bool:
        return self._runner is not None

    async def start(self) -> None:
        """Listen, then ask Telegram to deliver here. OSError if the address cannot be
        listened on; Telegram's errors from setWebhook as they are."""
        web_app = web.Application()
        web_app.router.add_route("POST", "/{path:.*}", self._post)
        web_app.router.add_route("GET", "/{path:.*}", self._health)
        # no access log: nothing there helps, and it would be one line per update
        runner = web.AppRunner(web_app, access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT,
                               handle_signals=False)
        await runner.setup()
        try:
            site = web.TCPSite(runner, *self.listen)
            await site.start()
            server = site._server
            sockets = getattr(server, "sockets", None) or []
            self.port = sockets[0].getsockname()[1] if sockets else self.listen[1]
            self._runner = runner
            self._accepting = True
            await self.set_webhook()
        except BaseException:
            self._accepting = False
            self._runner = None
            await runner.cleanup()
            raise
        self._watch = asyncio.create_task(self._watch_loop(), name="telegram-webhook-watch")

    async def set_webhook(self) -> None:
        await self.app.bot.set_webhook(
            self.url,
            secret_token=self._secret.decode(),
            allowed_updates=self.allowed_updates,
            max_connections=MAX_CONNECTIONS,
            drop_pending_updates=False,
        )

    async def stop(self) -> None:
        """Refuse new requests (503: Telegram sends them again, to this or another process),
        let the updates being handled finish and answer them, then close."""
        if self._runner is None:
            return
        self._accepting = False
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
            self._watch = None
        if self._running:
            _done, late = await asyncio.wait(list(self._running.values()), timeout=STOP_WITHIN)
            if late:
                log.warning("%d update(s) still being handled after %.0f s; answered 503, so "
                            "Telegram sends them again", len(late), STOP_WITHIN)
        if not self._abandoned.done():
            self._abandoned.set_result(None)  # whatever still waits is answered 503
        runner, self._runner = self._runner, None
        await runner.cleanup()

    async def idle(self) -> None:
        """Until no update is being handled (for tests)."""
        await self._idle.wait()

    # requests --------------------------------------------------------------------------
    async def _health(self, request: web.Request) -> web.Response:
        if not self._accepting:
            return web.Response(status=503, text="stopping")
        return web.Response(text="ok")

    async def _post(self, request: web.Request) -> web.Response:
        if not self._accepting:
            return web.Response(status=503, text="stopping", headers={"Connection": "close"})
        given = request.headers.get(SECRET_HEADER)
        if given is None or not hmac.compare_digest(given.encode(), self._secret):
            self._note_refused()
            return web.Response(status=401 if given is None else 403)
        body = await request.read()
        if too_deep(body, MAX_DEPTH):
            log.warning("refused a webhook body nested deeper than %d levels (%d bytes)",
                        MAX_DEPTH, len(body))
            return web.Response(status=400, text="nested too deep")
        try:
            raw: Any = json.loads(body)
        except ValueError:  # not JSON, or not UTF-8: nothing to handle, ever
            raw = None
        update = updates.read(raw, self.app.bot)
        if update is None:
            self.poison += 1
            return web.Response()  # confirmed: Telegram would send it again for a day
        outcome = await self._outcome(update)
        if outcome is not Outcome.DONE:
            log.info("update %s %s; answered %d, so Telegram sends it again", update.update_id,
                     WHY_AGAIN[outcome], STATUS[outcome])
        return web.Response(status=STATUS[outcome])

    async def _outcome(self, update: Update) -> Outcome:
        """Handle the update (or join its handling, if Telegram sent it again meanwhile) and
        wait until it finished. A request that is dropped meanwhile (Telegram gave up
        waiting) does not stop the handling."""
        update_id = update.update_id
        task = self._running.get(update_id)
        if task is None:
            task = asyncio.create_task(updates.handle(self.app, update),
                                       name=f"telegram-update-{update_id}")
            self._running[update_id] = task
            self._idle.clear()
            task.add_done_callback(functools.partial(self._done, update_id))
        else:
            log.debug("update %s sent again while being handled; waiting for it", update_id)
        waits: list[asyncio.Future[Any]] = [task, self._abandoned]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if not task.done() or task.cancelled():
            return Outcome.LATER  # stopping gave up on it
        return task.result()

    def _done(self, update_id: int, _task: asyncio.Task[Outcome]) -> None:
        self._running.pop(update_id, None)
        if not self._running:
            self._idle.set()

    def _note_refused(self) -> None:
        self._refused += 1
        now = time.monotonic()
        if now - self._refused_logged >= REFUSED_LOG_EVERY:
            log.warning("refused %d webhook request(s) with no or a wrong secret (%s); if "
                        "they are Telegram's, QUIZBOT_TELEGRAM_WEBHOOK_SECRET differs between "
                        "processes", self._refused, SECRET_HEADER)
            self._refused, self._refused_logged = 0, now

    # keeping the webhook set -----------------------------------------------------------
    async def _watch_loop(self) -> None:
        while True:
            await asyncio.sleep(self.watch_every)
            try:
                info = await self.app.bot.get_webhook_info()
                if info.url != self.url:
                    log.warning("Telegram's webhook was %s; setting QUIZBOT_TELEGRAM_WEBHOOK_URL "
                                "again", "deleted" if not info.url else "changed elsewhere")
                    await self.set_webhook()
                    continue
            except (InvalidToken, EndPointNotFound) as exc:
                log.info("Telegram rejected the bot token (revoked?); webhook stopped")
                if not self.failed.done():
                    self.failed.set_result(exc)
                return
            except TelegramError as exc:  # an outage: the next check tries again
                log.info("could not check Telegram's webhook: %s", exc)
                continue
            error = (info.last_error_date, info.last_error_message)
            if info.last_error_date is not None and error != self._last_error:
                log.info("Telegram reports a webhook delivery error: %s (%d update(s) waiting)",
                         info.last_error_message, info.pending_update_count)
            self._last_error = error


def too_deep(body: bytes, limit: int) -> bool:
    """Whether the JSON in `body` nests [ and { deeper than `limit` (its strings aside);
    linear, with no recursion, whatever the body holds."""
    depth = 0
    for bracket in _BRACKETS.findall(_STRING.sub(b"", body)):
        if bracket in b"[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False
