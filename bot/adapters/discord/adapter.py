"""DiscordAdapter: the bot's lifecycle for `quizbot run` (bot/adapters/__init__.py: start,
stop, wait_failed), and the core's ChatPort for Discord channels (the scheduler posts daily
questions and closes due ones through it).

Failures, as the lifecycle names them:
- a token Discord refuses at login (401) is `CredentialsRejected`, one line naming
  DISCORD_BOT_TOKEN, never the token; Discord unreachable, or the gateway not READY in time,
  is `ConnectionLost` naming the setting and its URL. Nothing is left running either way.
- while running, discord.py reconnects and resumes by itself after a network failure or a
  resumable close code, and that is not a failure. The gateway closing with a code it will
  not recover from ends the connection for good: 4004 (authentication failed: the token was
  reset or revoked) is `CredentialsRejected`, the others (4010-4014: sharding, API version,
  intents) and a gateway task that died for any other reason are `ConnectionLost`.
  `wait_failed()` returns it.

Sharding (QUIZBOT_DISCORD_SHARD_COUNT, QUIZBOT_DISCORD_SHARDS): the bot is discord.py's
AutoShardedClient on this process's shards, and all of the above holds per process across
them: start() returns once every shard is READY, a shard closed with 4004 is
`CredentialsRejected`, a shard whose connection ends for good ends them all and is
`ConnectionLost` naming the shard, a shard that reconnects or resumes is not a failure.
Other processes run the other shards on the same database; Discord sends each guild's
interactions only to its shard's connection, and the core's scheduler is exactly-once through
the database, so nothing here coordinates the processes. At start a sharded bot asks Discord
(GET /gateway/bot) how many IDENTIFYs it may send at once and warns when Discord recommends
more shards than configured.

Stopping drains: `Intake` takes no more interactions, the handlers in flight get up to
`drain_timeout` seconds to commit and answer, then the connection closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Sequence

import aiohttp
import discord
import discord.http
import yarl
from discord.gateway import DiscordWebSocket

from bot.adapters import ConnectionLost, CredentialsRejected
from bot.adapters.discord import live
from bot.adapters.discord.client import IDENTIFY_WINDOW, QuizBot, build_bot
from bot.adapters.discord.identity import PREFIX, channel_id_of
from bot.adapters.discord.intake import Intake
from bot.adapters.discord.invite import invite_url
from bot.adapters.discord.noise import describe, quiet_library_noise
from bot.adapters.discord.publish import ChannelPublisher, as_port_errors
from bot.adapters.discord.rate import budget_for, pace
from bot.core.live import Countdown
from bot.core.models import PostSummary, ShownQuestion
from bot.core.ports import RoundSummary, TryLater
from bot.core.service import QuizService
from bot.settings import Settings

log = logging.getLogger(__name__)

REJECTED = "DISCORD_BOT_TOKEN was rejected by Discord: check the token"
AUTHENTICATION_FAILED = 4004  # gateway close codes (discord-api-docs opcodes-and-status-codes)
FATAL_CLOSE = {
    4010: "invalid shard",
    4011: "sharding required",
    4012: "invalid API version",
    4013: "invalid intents",
    4014: "disallowed intents (privileged intents not enabled for this bot)",
}
# what may go wrong between here and Discord: not the bot's fault, nor the token's
NETWORK = (aiohttp.ClientError, OSError, TimeoutError, discord.DiscordServerError,
           discord.GatewayNotFound)
GATEWAY_CLOSE = 1.0  # seconds for the gateway task to end after the client closed
GATEWAY_REACH = 10.0  # seconds for a TCP connection to the gateway's host at start
DEFAULT_PORTS = {"wss": 443, "https": 443, "ws": 80, "http": 80}


def _never_connected(error: BaseException) -> bool:
    """discord.py's own error when its first gateway connection failed for a network reason
    (it reads the resume state of a socket it never had): the network error is the cause."""
    return isinstance(error, AttributeError) and isinstance(error.__context__, NETWORK)


def shard_list(ids: Sequence[int]) -> str:
    """Shard ids as QUIZBOT_DISCORD_SHARDS writes them: runs as ranges ("0-3,6")."""
    runs: list[list[int]] = []
    for i in sorted(ids):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def describe_shards(ids: Sequence[int], count: int) -> str:
    """ "shards 0-1 of 4", "shard 2 of 4" """
    return f"shard{'s' if len(ids) > 1 else ''} {shard_list(ids)} of {count}"


class DiscordAdapter:
    name = "Discord"  # with the shards it runs, if sharded: "Discord (shards 0-1 of 4)"
    prefix = PREFIX

    def __init__(
        self,
        service: QuizService,
        settings: Settings,
        *,
        guild_ready_timeout: float = 2.0,
        ready_timeout: float = 60.0,
        live_interval: float = 3.0,
        drain_timeout: float = 5.0,
        identify_interval: float = IDENTIFY_WINDOW,
    ) -> None:
        """`guild_ready_timeout`: how long discord.py waits for more guilds before READY (tests
        pass a small value); `ready_timeout`: how long start() waits for the gateway (plus
        the IDENTIFY spacing of its shards); `live_interval`: the least time between two
        edits of a question's answer count; `drain_timeout`: how long stop() lets the
        interactions in flight finish; `identify_interval`: Discord's window for IDENTIFYs
        (5 s; tests pass 0)."""
        self.service = service
        self.settings = settings
        self.shards = settings.discord_shards  # (ids, count); None: unsharded
        if self.shards is not None:
            self.name = f"Discord ({describe_shards(*self.shards)})"
        self.identify_interval = identify_interval
        self.guild_ready_timeout = guild_ready_timeout
        self.ready_timeout = ready_timeout
        self.drain_timeout = drain_timeout
        self.publisher = ChannelPublisher(service, live_interval=live_interval)
        self.client: QuizBot | None = None
        self.intake = Intake()
        self._gateway: asyncio.Task[None] | None = None
        self._failed: asyncio.Future[BaseException] | None = None
        self._stopping = False

    async def start(self) -> None:
        token = self.settings.discord_bot_token
        if token is None:
            raise RuntimeError("DISCORD_BOT_TOKEN is not set")
        quiet_library_noise()
        # Discord itself, a REST or gateway proxy, or the test fakes. Route.BASE is read on
        # every request, interaction callbacks and follow-ups included.
        discord.http.Route.BASE = self.settings.discord_api_base_url.rstrip("/")
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.settings.discord_gateway_url)
        self._stopping = False
        if self._failed is None or self._failed.done():  # kept if someone already waits
            self._failed = asyncio.get_running_loop().create_future()
        self.intake = Intake()
        self.client = client = build_bot(
            self.service, self.publisher, intake=self.intake,
            guild_ready_timeout=self.guild_ready_timeout,
            identify_interval=self.identify_interval, shards=self.shards,
        )
        # the token's 50 requests a second, paced ahead and shared by its processes (rate.py)
        pace(client.http, budget_for(self.service, self.settings, token.get_secret_value()))
        try:
            await self._login(client, token.get_secret_value())
            await self._reach_gateway()
            if self.shards is not None:
                await self._check_sharding(client, *self.shards)
            self._gateway = asyncio.create_task(client.connect(), name="discord-gateway")
            self._gateway.add_done_callback(self._gateway_ended)
            await self._wait_ready()
            try:
                await self._sync_commands()
            except NETWORK as exc:
                raise ConnectionLost(self._redact(
                    f"Discord did not take the slash commands: {describe(exc)}"
                )) from None
        except BaseException:
            await self.stop()
            raise
        self.service.delivery.connect(self)
        log.info("Discord: connected as %s (id %s)%s", client.user,
                 client.user and client.user.id,
                 f", {describe_shards(*self.shards)}" if self.shards else "")
        # the link an owner needs to add the bot to a server, with exactly the permissions
        # it uses (invite.py), so nobody has to build it in the Developer Portal
        app_id = client.application_id or (client.user and client.user.id)
        if app_id:
            log.info("Discord: invite the bot to a server with %s", invite_url(app_id))

    async def _check_sharding(self, client: QuizBot, ids: Sequence[int], count: int) -> None:
        """What Discord says about this bot's sharding (GET /gateway/bot): how many IDENTIFYs
        it takes at once, and a warning if it recommends more shards than configured or has
        fewer session starts left than this process needs. Only advice: if Discord does not
        answer, the shards start with one IDENTIFY at a time."""
        try:
            recommended, _, limits = await client.http.get_bot_gateway()
        except (discord.HTTPException, *NETWORK) as exc:
            log.warning("Discord: could not ask how to shard (%s); IDENTIFYs one at a time",
                        describe(exc))
            return
        client.max_concurrency = max(1, int(limits.get("max_concurrency", 1)))
        if recommended > count:
            log.warning("Discord recommends %d shards for this bot; QUIZBOT_DISCORD_SHARD_COUNT "
                        "is %d (Discord refuses a shard with too many servers: close code "
                        "4011)", recommended, count)
        if limits.get("remaining", len(ids)) < len(ids):
            log.warning("Discord allows %d more session starts for now (resets in %d s); this "
                        "process starts %d shards", limits["remaining"],
                        limits.get("reset_after", 0) // 1000, len(ids))

    async def _login(self, client: QuizBot, token: str) -> None:
        api = self.settings.discord_api_base_url
        try:
            await client.login(token)
        except discord.LoginFailure:
            # raised from the 401's HTTPException, whose response still holds the request
            # headers: the chain is dropped, the line names the setting
            raise CredentialsRejected(REJECTED) from None
        except discord.HTTPException as exc:
            raise ConnectionLost(self._redact(
                f"Discord's API at {api} refused the login ({describe(exc)}): "
                "check DISCORD_API_BASE_URL"
            )) from None
        except NETWORK as exc:
            raise ConnectionLost(self._redact(
                f"could not reach Discord's API at {api} ({describe(exc)}): check the network "
                "and DISCORD_API_BASE_URL"
            )) from None

    async def _reach_gateway(self) -> None:
        """ConnectionLost naming DISCORD_GATEWAY_URL if its host cannot be reached. discord.py
        cannot say it: a first connection that fails dies on its own resume bookkeeping
        (`self.ws.sequence` of a socket it never had), after a reconnect warning."""
        url = yarl.URL(self.settings.discord_gateway_url)
        port = url.explicit_port or DEFAULT_PORTS.get(url.scheme, 443)
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection(url.host, port), GATEWAY_REACH)
        except (OSError, TimeoutError) as exc:
            raise ConnectionLost(self._gateway_unreachable(exc)) from None
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()

    def _gateway_unreachable(self, error: BaseException) -> str:
        return (f"could not reach Discord's gateway at DISCORD_GATEWAY_URL="
                f"{self.settings.discord_gateway_url} ({describe(error)}): "
                "check the network and DISCORD_GATEWAY_URL")

    async def _wait_ready(self) -> None:
        assert self.client is not None and self._gateway is not None
        ready = asyncio.create_task(self.client.wait_until_ready())
        done, _ = await asyncio.wait(
            {ready, self._gateway}, timeout=self._ready_within(self.client),
            return_when=asyncio.FIRST_COMPLETED,
        )
        if ready in done:
            return
        ready.cancel()
        if self._gateway in done:
            # what stopped the connection before READY: a rejected token (4004), a fatal code
            raise self._failure_of(self._gateway)
        raise ConnectionLost(
            f"Discord's gateway at {self.settings.discord_gateway_url} was not ready after "
            f"{self._ready_within(self.client):g} s: check the network and DISCORD_GATEWAY_URL"
        )

    def _ready_within(self, client: QuizBot) -> float:
        """`ready_timeout`, plus the wait between the IDENTIFYs of this process's shards."""
        if self.shards is None:
            return self.ready_timeout
        rounds = math.ceil(len(self.shards[0]) / client.max_concurrency)
        return self.ready_timeout + self.identify_interval * (rounds - 1)

    # the connection ending for good -----------------------------------------------------
    def _gateway_ended(self, task: asyncio.Task[None]) -> None:
        reason = self._failure_of(task)  # also retrieves the task's exception
        if self._stopping or self._failed is None or self._failed.done():
            return
        error = None if task.cancelled() else task.exception()
        if error is not None and not isinstance(
            error, discord.ConnectionClosed | discord.PrivilegedIntentsRequired
        ) and not _never_connected(error):
            # not a close code: a bug or something unforeseen, worth its traceback
            log.error("Discord: the gateway task died", exc_info=error)
        else:
            log.info("Discord: the gateway connection ended: %s", reason)
        self._failed.set_result(reason)

    def _failure_of(self, task: asyncio.Task[None]) -> BaseException:
        """Why the gateway task ended, as the lifecycle's exceptions."""
        if task.cancelled():
            return ConnectionLost("the Discord gateway connection was cancelled")
        error = task.exception()
        if error is None:
            return ConnectionLost("the Discord gateway connection was closed")
        if isinstance(error, discord.ConnectionClosed):
            if error.code == AUTHENTICATION_FAILED:
                return CredentialsRejected(REJECTED)
            meaning = FATAL_CLOSE.get(error.code or 0, "not resumable")
            return ConnectionLost(
                f"Discord closed the gateway connection{self._of_shard(error.shard_id)} with "
                f"code {error.code} ({meaning})"
            )
        if isinstance(error, discord.PrivilegedIntentsRequired):
            return ConnectionLost(
                f"Discord closed the gateway connection{self._of_shard(error.shard_id)} with "
                f"code 4014 ({FATAL_CLOSE[4014]})"
            )
        if _never_connected(error):
            return ConnectionLost(self._gateway_unreachable(error.__context__ or error))
        return ConnectionLost(self._redact(
            f"the Discord gateway connection stopped: {describe(error)}"
        ))

    def _of_shard(self, shard_id: int | None) -> str:
        return f" of shard {shard_id}" if self.shards is not None and shard_id is not None \
            else ""

    async def wait_failed(self) -> BaseException:
        """Wait until the connection has ended for good and return why. A transient outage
        never ends it (discord.py reconnects), and neither does stop(): after a stop this
        waits forever, so the caller cancels it."""
        if self._failed is None:
            self._failed = asyncio.get_running_loop().create_future()
        return await asyncio.shield(self._failed)

    def _redact(self, text: str) -> str:
        token = self.settings.discord_bot_token
        secret = token.get_secret_value() if token is not None else ""
        return text.replace(secret, "<token>") if secret else text

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
        """Take no more interactions, let the ones in flight commit and answer (at most
        `drain_timeout` seconds), then close the connection."""
        self._stopping = True
        late = await self.intake.drain(self.drain_timeout)
        if late:
            log.warning("Discord: %d interaction(s) unfinished after %g s were cancelled",
                        late, self.drain_timeout)
        self.service.delivery.disconnect(self)
        await self.publisher.stop()
        if self.client is not None:
            await self.client.close()
        if self._gateway is not None:
            # a sharded client still launching its shards keeps retrying: it is cancelled
            _, stuck = await asyncio.wait({self._gateway}, timeout=GATEWAY_CLOSE)
            for task in stuck:
                task.cancel()
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

    async def round_over(self, summary: RoundSummary) -> None:
        await self.publisher.round_over(summary)

    # LivePort: what the scheduler's tick decided for a live session (live.py)
    countdown_every = live.COUNTDOWN_EVERY

    def _live(self) -> live.LiveCog:
        cog = None if self.client is None else self.client.get_cog("LiveCog")
        if not isinstance(cog, live.LiveCog):
            raise TryLater("the Discord adapter is not running")
        return cog

    async def live_event(self, event: object) -> None:
        chat_key = getattr(getattr(event, "session", None), "chat_key", "")
        with as_port_errors(chat_key):
            await self._live().show(event)

    async def live_countdown(self, countdown: Countdown) -> None:
        with as_port_errors(countdown.session.chat_key):
            await self._live().edit_countdown(countdown)

    # NoticePort: an assignment's summary at its deadline (core/assignments.py)
    async def send_notice(self, chat_key: str, text: str) -> None:
        client = self.publisher.client
        if client is None:
            raise TryLater("Discord is not connected")
        with as_port_errors(chat_key):
            await client.get_partial_messageable(channel_id_of(chat_key)).send(text)

    async def send_private(self, person_key: str, text: str) -> None:
        """A review reminder as a DM (ChatGone when the person does not take DMs from the
        bot)."""
        client = self.publisher.client
        if client is None:
            raise TryLater("Discord is not connected")
        user_id = int(person_key.removeprefix(PREFIX))
        with as_port_errors(person_key):
            user = client.get_user(user_id) or await client.fetch_user(user_id)
            await user.send(text)

