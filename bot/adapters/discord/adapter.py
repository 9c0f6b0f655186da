"""DiscordAdapter: starts and stops the bot for `quizbot run`, and posts for the scheduler."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import discord
import discord.http
import yarl
from discord.gateway import DiscordWebSocket

from bot.adapters.discord.client import QuizClient
from bot.adapters.discord.identity import PREFIX
from bot.adapters.discord.publish import ChannelPublisher
from bot.core.models import Chat, PostSummary, ShownQuestion
from bot.core.service import QuizService
from bot.settings import Settings

log = logging.getLogger(__name__)

UNKNOWN_CHANNEL = 10003  # Discord's JSON error code


class DiscordAdapter:
    prefix = PREFIX

    def __init__(
        self,
        service: QuizService,
        settings: Settings,
        *,
        guild_ready_timeout: float = 2.0,
        ready_timeout: float = 60.0,
        live_interval: float = 3.0,
        close_interval: float = 1.0,
        resend_interval: float = 30.0,
    ) -> None:
        """`guild_ready_timeout`: how long discord.py waits for more guilds before READY (tests
        pass a small value); `ready_timeout`: how long start() waits for the gateway;
        `live_interval`: the least time between two edits of a question's answer count;
        `close_interval`: how often questions whose time is up are closed;
        `resend_interval`: how often closing edits that failed are tried again."""
        self.service = service
        self.settings = settings
        self.guild_ready_timeout = guild_ready_timeout
        self.ready_timeout = ready_timeout
        self.close_interval = close_interval
        self.resend_interval = resend_interval
        self.publisher = ChannelPublisher(service, live_interval=live_interval)
        self.client: QuizClient | None = None
        self._gateway: asyncio.Task[None] | None = None
        self._closer: asyncio.Task[None] | None = None

    async def start(self) -> None:
        token = self.settings.discord_bot_token
        if token is None:
            raise RuntimeError("DISCORD_BOT_TOKEN is not set")
        # Discord itself, a REST or gateway proxy, or the test fakes. Route.BASE is read on
        # every request, interaction callbacks and follow-ups included.
        discord.http.Route.BASE = self.settings.discord_api_base_url.rstrip("/")
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.settings.discord_gateway_url)
        self.client = client = QuizClient(
            self.service, self.settings, self.publisher,
            guild_ready_timeout=self.guild_ready_timeout,
        )
        self.publisher.client = client
        try:
            await client.login(token.get_secret_value())
            self._gateway = asyncio.create_task(client.connect(), name="discord-gateway")
            await self._wait_ready()
            await self._sync_commands()
        except BaseException:
            await self.stop()
            raise
        self._closer = asyncio.create_task(self._close_due_loop(), name="discord-close-due")
        log.info("Discord: connected as %s (id %s)", client.user, client.user and client.user.id)

    async def _wait_ready(self) -> None:
        assert self.client is not None and self._gateway is not None
        ready = asyncio.create_task(self.client.wait_until_ready())
        done, _ = await asyncio.wait(
            {ready, self._gateway}, timeout=self.ready_timeout,
            return_when=asyncio.FIRST_COMPLETED,
        )
        if ready in done:
            return
        ready.cancel()
        if self._gateway in done:
            self._gateway.result()  # raises what stopped the connection
            raise RuntimeError("the Discord gateway connection ended before READY")
        raise TimeoutError(f"Discord gateway not ready after {self.ready_timeout:g} s")

    async def _sync_commands(self) -> None:
        assert self.client is not None
        tree = self.client.tree
        guild_id = self.settings.discord_guild_id
        if guild_id is not None:
            # one server, updated at once: for development
            guild = discord.Object(id=guild_id)
            tree.copy_global_to(guild=guild)
            synced = await tree.sync(guild=guild)
            log.info("Discord: %d slash commands synced to server %s", len(synced), guild_id)
        else:
            synced = await tree.sync()
            log.info("Discord: %d slash commands synced globally", len(synced))

    async def _close_due_loop(self) -> None:
        """Close questions whose time is up; now and then, post again the closing edits that
        Discord did not take (post_summary confirms the ones it did)."""
        resend_at = time.monotonic() + self.resend_interval
        while True:
            try:
                summaries = await self.service.close_due(self.prefix)
                if time.monotonic() >= resend_at:
                    resend_at = time.monotonic() + self.resend_interval
                    summaries += await self.service.unposted_summaries(self.prefix)
                for summary in summaries:
                    try:
                        await self.post_summary(summary)
                    except Exception:
                        log.exception("closing edit of post %s in %s failed",
                                      summary.post_id, summary.chat_key)
            except Exception:
                log.exception("closing due Discord questions failed")
            await asyncio.sleep(self.close_interval)

    async def stop(self) -> None:
        if self._closer is not None:
            self._closer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._closer
            self._closer = None
        await self.publisher.stop()
        if self.client is not None:
            await self.client.close()
        if self._gateway is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._gateway
            self._gateway = None
        self.publisher.client = None

    async def post_question(self, question: ShownQuestion) -> None:
        """A daily question from the scheduler: the same button message as /quiz."""
        try:
            await self.publisher.post_question(question)
        except discord.NotFound as exc:
            if exc.code != UNKNOWN_CHANNEL:
                raise
            # The channel was deleted and channel ids are never reused: without this the
            # scheduler would retry the question every tick, forever.
            log.warning("channel of %s is gone (%s): its daily question is removed",
                        question.chat_key, exc)
            await self.service.remove_schedule(Chat(question.chat_key))
            await self.service.close(question.post_id, quiet=True)

    async def post_summary(self, summary: PostSummary) -> None:
        """The closing edit. A Discord error is logged, not raised: the summary is offered
        again later (see _close_due_loop), and a failed edit of yesterday's daily question
        must not hold up today's."""
        try:
            await self.publisher.post_summary(summary)
        except discord.HTTPException as exc:
            log.warning("closing edit of post %s in %s failed, to be tried again: %s",
                        summary.post_id, summary.chat_key, exc)
