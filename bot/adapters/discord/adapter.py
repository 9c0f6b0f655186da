"""DiscordAdapter: starts and stops the bot for `quizbot run`, and is the core's ChatPort for
Discord channels (the scheduler posts daily questions and closes due ones through it)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import discord
import discord.http
import yarl
from discord.gateway import DiscordWebSocket

from bot.adapters.discord.client import QuizBot, build_bot
from bot.adapters.discord.identity import PREFIX
from bot.adapters.discord.publish import ChannelPublisher
from bot.core.models import PostSummary, ShownQuestion
from bot.core.service import QuizService
from bot.settings import Settings

log = logging.getLogger(__name__)


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
    ) -> None:
        """`guild_ready_timeout`: how long discord.py waits for more guilds before READY (tests
        pass a small value); `ready_timeout`: how long start() waits for the gateway;
        `live_interval`: the least time between two edits of a question's answer count."""
        self.service = service
        self.settings = settings
        self.guild_ready_timeout = guild_ready_timeout
        self.ready_timeout = ready_timeout
        self.publisher = ChannelPublisher(service, live_interval=live_interval)
        self.client: QuizBot | None = None
        self._gateway: asyncio.Task[None] | None = None

    async def start(self) -> None:
        token = self.settings.discord_bot_token
        if token is None:
            raise RuntimeError("DISCORD_BOT_TOKEN is not set")
        # Discord itself, a REST or gateway proxy, or the test fakes. Route.BASE is read on
        # every request, interaction callbacks and follow-ups included.
        discord.http.Route.BASE = self.settings.discord_api_base_url.rstrip("/")
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.settings.discord_gateway_url)
        self.client = client = build_bot(self.service, self.publisher,
                                         guild_ready_timeout=self.guild_ready_timeout)
        try:
            await client.login(token.get_secret_value())
            self._gateway = asyncio.create_task(client.connect(), name="discord-gateway")
            await self._wait_ready()
            await self._sync_commands()
        except BaseException:
            await self.stop()
            raise
        self.service.connect(self)
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

    async def stop(self) -> None:
        self.service.disconnect(self)
        await self.publisher.stop()
        if self.client is not None:
            await self.client.close()
        if self._gateway is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._gateway
            self._gateway = None
        self.publisher.client = None

    # ChatPort ------------------------------------------------------------------------------
    async def send_question(self, question: ShownQuestion) -> None:
        """A daily question: the same button message as /quiz, bound to its post."""
        await self.publisher.send_question(question)

    async def close_question(self, summary: PostSummary) -> None:
        """The closing edit; ChatGone or TryLater when Discord refuses it."""
        await self.publisher.close_question(summary)
