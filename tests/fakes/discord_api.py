"""A fake Discord REST API and gateway, for driving the real discord.py in tests.

aiohttp on 127.0.0.1 (random port). Point discord.py at `fake.api_base` (`Route.BASE`) and
`fake.gateway_url` (`DiscordWebSocket.DEFAULT_GATEWAY`). What it honours, and why (see
../../../shared/testing-notes.md):

- JSON responses carry `Content-Type: application/json` exactly: discord.py compares with `==`.
- The gateway sends HELLO, answers heartbeats, and after IDENTIFY sends READY (with
  `resume_gateway_url`, which discord.py requires) and one GUILD_CREATE per guild. Frames are
  plain-text JSON, which discord.py accepts although it asks for zlib-stream.
- Sharding as Discord does it: `GET /gateway/bot` recommends `recommended_shards` and gives
  the session start limit (what `AutoShardedClient` asks for when it is not told the count);
  an IDENTIFY may carry `shard: [id, count]` (an id not below the count is closed with 4010);
  a guild belongs to shard `(guild_id >> 22) % count`, and a session's READY and GUILD_CREATEs
  hold only its shard's guilds. Each event for a guild (an interaction) goes to the session of
  the shard that owns it, the newest one if several; DMs go to shard 0. An unsharded IDENTIFY
  is shard [0, 1]: everything. `add_guild(shard=...)` makes a guild on a given shard.
- Interaction callbacks come with `?with_response=1` and are answered 200 with an
  `interaction` object (and a `resource` holding the created message), as Discord does.
- Messages the bot creates are stored with their components, and a button click carries the
  stored message back: discord.py drops a DynamicItem click whose custom_id is not among the
  clicked message's components.
- Discord's limits on messages and modals are checked (tests/fakes/discord_limits.py:
  content and embeds, rows, buttons, selects and their min/max values, attachment alt
  text, Components V2's 40 components and 4,000 characters, modals), answered 400 with code
  50035 and the field's nested `errors` as Discord does, so a bot that breaks them fails
  here as it would in production.
- A select is used with `click(..., values=[...])` (the component's type is read from the
  message); a modal is submitted in the shape it was opened with (a label around its text
  input, or the older action row), carrying the message whose component opened it.
- The gateway can be closed with any close code (`close_gateway`, every session or one
  shard's), refuse connections for a while (`refuse_gateway`), and answers a RESUME (op 6) of
  a session it knows with RESUMED, as Discord does after a resumable close (an unknown one
  with INVALID_SESSION); `identify_tokens`, `identified_shards` and `resumes` record what the
  client sent.
- A request can be held at the server until the test releases it (`hold`), to stop the bot
  in the middle of a reply.
- Every request is recorded; faults can be injected per route; member permissions (for
  `interaction.permissions`) are configurable per interaction.
- Interactions and messages get snowflakes made of the time they were created, as Discord's
  are (milliseconds since the Discord epoch above bit 22), so `interaction.created_at` in
  discord.py is when the person clicked; an interaction can be backdated (or dated in the
  future: a skewed clock) with `age=`. Guilds, channels, users and commands keep ids from a
  counter, so the shard of a guild does not depend on the time it was made.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any, NamedTuple

from aiohttp import WSMsgType, web

from tests.fakes import discord_limits as limits

TOKEN = "fake.discord-bot-token.for-tests-only"
EPHEMERAL = 1 << 6
LOADING = 1 << 7
ALL_PERMISSIONS = (1 << 53) - 1
MANAGE_GUILD = 1 << 5
SEND_MESSAGES = 1 << 11
VIEW_CHANNEL = 1 << 10
DEFAULT_PERMISSIONS = VIEW_CHANNEL | SEND_MESSAGES  # an ordinary member
DISCORD_EPOCH_MS = 1_420_070_400_000  # 2015-01-01, the zero of a snowflake's timestamp
WORKER = 1 << 17  # worker 1, process 0 in a snowflake's low 22 bits

# interaction and callback types (discord-api-docs interactions/receiving-and-responding)
APPLICATION_COMMAND, MESSAGE_COMPONENT, AUTOCOMPLETE, MODAL_SUBMIT = 2, 3, 4, 5
CHANNEL_MESSAGE, DEFERRED_MESSAGE, DEFERRED_UPDATE, UPDATE_MESSAGE, AUTOCOMPLETE_RESULT = (
    4, 5, 6, 7, 8
)
MODAL = 9  # a callback that opens a form
TEXT_INPUT = 4  # the component type of a form's text field
OPTION_TYPES = {str: 3, int: 4, bool: 5, float: 10}
SUB_COMMAND, SUB_COMMAND_GROUP = 1, 2

# The locales Discord accepts as keys of name_localizations / description_localizations
# (discord-api-docs reference.mdx "Locales"). There is no Bengali.
DISCORD_LOCALES = frozenset({
    "id", "da", "de", "en-GB", "en-US", "es-ES", "es-419", "fr", "hr", "it", "lt", "hu", "nl",
    "no", "pl", "pt-BR", "ro", "fi", "sv-SE", "vi", "tr", "cs", "el", "bg", "ru", "uk", "hi",
    "th", "zh-CN", "ja", "zh-TW", "ko",
})


def valid_name(name: Any) -> bool:
    """Discord's ^[-_'\\p{L}\\p{N}\\p{sc=Deva}\\p{sc=Thai}]{1,32}$, lowercase where a lowercase
    form exists (application-commands.mdx), approximated without the `regex` module."""
    return isinstance(name, str) and 1 <= len(name) <= 32 and name == name.lower() and all(
        ch in "-_'" or ch.isalnum() or "\u0900" <= ch <= "\u097f" or "\u0e00" <= ch <= "\u0e7f"
        for ch in name
    )


class ApiError(Exception):
    def __init__(self, status: int, message: str, code: int = 0,
                 errors: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.errors = errors  # Discord's nested field errors (discord_limits.FormError)

    def body(self) -> dict[str, Any]:
        return {"message": self.message, "code": self.code} | (
            {"errors": self.errors} if self.errors is not None else {})


def invalid_form(message: str) -> ApiError:
    """`message` is "path: why", e.g. "name: must be 1-100 characters"."""
    path, _, why = message.partition(": ")
    return form_refused(limits.FormError(path, why or message))


def form_refused(error: limits.FormError) -> ApiError:
    """400, 50035 "Invalid Form Body" with the field's errors, as Discord answers."""
    return ApiError(400, "Invalid Form Body", 50035, error.errors())


def multipart_body(content_type: str, raw: bytes, path: str) -> dict[str, Any]:
    """A multipart request as discord.py sends files: the JSON of `payload_json` with the
    files as `_files` [(filename, bytes)] (in an interaction callback, inside its `data`)."""
    form = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    body: dict[str, Any] = {}
    files = []
    for part in form.iter_parts():
        data = part.get_payload(decode=True)
        assert isinstance(data, bytes)  # a leaf part, decoded
        if part.get_param("name", header="content-disposition") == "payload_json":
            body = json.loads(data)
        else:
            files.append((part.get_filename() or "", data))
    (body.setdefault("data", {}) if path.endswith("/callback") else body)["_files"] = files
    return body


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def json_response(data: Any, status: int = 200) -> web.Response:
    # Exactly "application/json": aiohttp's json_response adds "; charset=utf-8", which
    # discord.py does not recognise as JSON.
    headers = {"Content-Type": "application/json"}
    if status == 429:
        # discord.py takes a 429 without `Via` for a Cloudflare ban and gives up
        headers |= {"Via": "1.1 google", "X-RateLimit-Limit": "5",
                    "X-RateLimit-Remaining": "0", "X-RateLimit-Reset-After": "0.05",
                    "X-RateLimit-Bucket": "fake-bucket", "X-RateLimit-Scope": "user"}
    return web.Response(body=json.dumps(data).encode(), status=status, headers=headers)


@dataclass
class Request:
    method: str
    path: str  # after the /api/v10 prefix
    query: dict[str, str]
    json: Any
    headers: dict[str, str]
    at: float  # time.monotonic() on arrival
    connection: int = 0  # which REST connection it came on (FakeDiscord.rest_connections)


@dataclass(frozen=True)
class User:
    id: int
    name: str
    locale: str = "en-US"

    def payload(self, bot: bool = False) -> dict[str, Any]:
        return {
            "id": str(self.id), "username": self.name, "global_name": self.name,
            "discriminator": "0", "avatar": None, "bot": bot, "public_flags": 0,
        }


@dataclass
class Interaction:
    """One injected interaction and everything the bot answered to it."""

    id: int
    token: str
    payload: dict[str, Any]
    shard: int | None = None  # the shard whose session it was sent on; None: nobody's
    callback: dict[str, Any] | None = None  # the body of POST .../callback
    followups: list[dict[str, Any]] = field(default_factory=list)  # messages created
    original_id: int | None = None  # the message of the response, if one was created

    @property
    def created_at(self) -> float:
        """When it was made (time.time()), from its snowflake, as discord.py reads it."""
        return ((self.id >> 22) + DISCORD_EPOCH_MS) / 1000

    @property
    def callback_type(self) -> int | None:
        return self.callback["type"] if self.callback else None


@dataclass
class Reply:
    """What the person sees: the message a response created (or the deferred one, edited)."""

    message: dict[str, Any]

    @property
    def id(self) -> int:
        return int(self.message["id"])

    @property
    def content(self) -> str:
        return self.message.get("content") or ""

    @property
    def embeds(self) -> list[dict[str, Any]]:
        return self.message.get("embeds") or []

    @property
    def components(self) -> list[dict[str, Any]]:
        return self.message.get("components") or []

    @property
    def flags(self) -> int:
        return int(self.message.get("flags") or 0)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    @property
    def buttons(self) -> list[dict[str, Any]]:
        return buttons_of(self.message)

    @property
    def text(self) -> str:
        """Content and embed text together, for assertions about what is said."""
        return text_of(self.message)


def buttons_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer buttons of a message (a question's ⚑, on a row of its own: `flag_of`)."""
    return [c for c in all_buttons_of(message) if not c.get("custom_id", "").startswith("rp:")]


def flag_of(message: dict[str, Any]) -> dict[str, Any] | None:
    """The ⚑ under a question (report a problem), if the message has one."""
    return next((c for c in all_buttons_of(message)
                 if c.get("custom_id", "").startswith("rp:")), None)


def all_buttons_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in all_components_of(message) if c.get("type") == 2]


def all_components_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Every component of a message, nested ones (Components V2) included, in order."""
    found: list[dict[str, Any]] = []

    def walk(components: list[dict[str, Any]]) -> None:
        for c in components:
            found.append(c)
            walk(c.get("components") or [])
            if isinstance(c.get("accessory"), dict):
                walk([c["accessory"]])

    walk(message.get("components") or [])
    return found


def text_displays_of(message: dict[str, Any]) -> list[str]:
    """The text of a Components V2 message's text displays, in order."""
    return [c["content"] for c in all_components_of(message) if c.get("type") == 10]


def text_of(message: dict[str, Any]) -> str:
    parts = [message.get("content") or "", *text_displays_of(message)]
    for embed in message.get("embeds") or []:
        parts += [embed.get("title") or "", embed.get("description") or ""]
        parts += [f"{f.get('name')}\n{f.get('value')}" for f in embed.get("fields") or []]
        parts.append((embed.get("footer") or {}).get("text") or "")
    return "\n".join(p for p in parts if p)


class GuildRef(NamedTuple):
    id: int
    channel_id: int  # its first text channel


@dataclass
class Session:
    """One gateway session: a connection that sent IDENTIFY (and any that RESUMEd it)."""

    id: str
    ws: web.WebSocketResponse
    shard: int
    count: int
    seq: int = 0

    @property
    def open(self) -> bool:
        return not self.ws.closed

    def owns(self, guild_id: int | None) -> bool:
        """Does this session receive the events of that guild (None: a DM)?"""
        return self.shard == (0 if guild_id is None else shard_of(guild_id, self.count))


def shard_of(guild_id: int, count: int) -> int:
    """The shard a guild belongs to (discord-api-docs topics/gateway.md "Sharding")."""
    return (guild_id >> 22) % count


@dataclass
class Hold:
    """Requests matching `method` and `pattern` wait at the server until `release()`."""

    method: str
    pattern: re.Pattern[str]
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    released: asyncio.Event = field(default_factory=asyncio.Event)
    held: list[Request] = field(default_factory=list)

    def release(self) -> None:
        self.released.set()


class FakeDiscord:
    """Fake REST API + gateway. `await start()`, then point discord.py at it."""

    def __init__(self, *, token: str = TOKEN) -> None:
        self.token = token
        self._ids = itertools.count(1_200_000_000_000_000_000)
        self.app_id = self.new_id()
        self.bot = User(self.new_id(), "QuizBot")
        self.owner = User(self.new_id(), "Owner")
        self.guild_id = self.new_id()
        self.guilds: dict[int, str] = {self.guild_id: "Quiz Guild"}  # id -> name
        self.guild_locales: dict[int, str] = {}  # id -> preferred_locale (en-US if absent)
        self._guild_ids = itertools.count(1)  # for guilds on a chosen shard
        self._increments = itertools.count()  # the low bits of time-based snowflakes
        self.channel_id = self.new_id()
        self.channels: dict[int, dict[str, Any]] = {
            self.channel_id: {"id": self.channel_id, "name": "general", "type": 0,
                              "guild_id": self.guild_id}
        }
        self.threads_allowed = True  # the bot may start public threads (Create Public Threads)
        self.requests: list[Request] = []
        self.messages: dict[int, dict[str, Any]] = {}
        self.created: dict[int, dict[str, Any]] = {}  # each message as first sent
        self.files: dict[int, list[tuple[str, bytes]]] = {}  # message id -> its uploads
        self.commands: dict[int | None, list[dict[str, Any]]] = {}  # guild id (None: global)
        self.interactions: dict[int, Interaction] = {}
        self.identify_tokens: list[str] = []
        self.identified_shards: list[tuple[int, int] | None] = []  # each IDENTIFY's `shard`
        self.identified_at: list[float] = []  # and when it came (time.monotonic())
        self.hold_ready = False  # never send READY (tests of the start-up timeout)
        self.resumes: list[str] = []  # the session id of each RESUME
        self.connections = 0  # gateway connections accepted
        # REST connections accepted, numbered in order: the client's address -> its number (a
        # client port is not reused while its closed connection is in TIME_WAIT)
        self.rest_peers: dict[Any, int] = {}
        self.sessions: dict[str, Session] = {}  # every session identified, by id
        self.recommended_shards = 1  # GET /gateway/bot's `shards`
        self.max_concurrency = 1  # IDENTIFYs per 5 s (session_start_limit)
        self._refuse_gateway = 0  # gateway connections still to answer 503
        self._holds: list[Hold] = []
        self._faults: list[tuple[str, re.Pattern[str], int, dict[str, Any], int]] = []
        self._sockets: list[web.WebSocketResponse] = []  # every gateway connection accepted
        self._runner: web.AppRunner | None = None
        self.port = 0

    # lifecycle -------------------------------------------------------------------------
    def new_id(self) -> int:
        return next(self._ids)

    def snowflake(self, age: float = 0.0) -> int:
        """A new id made of the time now minus `age` seconds (negative: in the future), as
        Discord makes them: discord.utils.snowflake_time gives that time back (to the ms).
        The low 22 bits count, so two ids made in the same millisecond differ."""
        ms = int((time.time() - age) * 1000) - DISCORD_EPOCH_MS
        return (ms << 22) | WORKER | (next(self._increments) & 0x1FFFF)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]  # the port the system chose

    async def close(self) -> None:
        for hold in self._holds:
            hold.release()
        for ws in self._sockets:
            if not ws.closed:
                await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    @property
    def connected(self) -> bool:
        """Is any gateway connection open?"""
        return any(not ws.closed for ws in self._sockets)

    def open_sessions(self, shard: int | None = None) -> list[Session]:
        """The sessions connected now (of one shard), oldest first."""
        return [s for s in self.sessions.values()
                if s.open and (shard is None or s.shard == shard)]

    def fail(self, method: str, path: str, status: int, *, code: int = 0, times: int = 1,
             message: str = "injected failure") -> None:
        """Answer the next `times` requests matching `method` and the `path` regex with an
        error (429 gets a retry_after of 0.05 s)."""
        body: dict[str, Any] = {"message": message, "code": code}
        if status == 429:
            body |= {"retry_after": 0.05, "global": False}
        self._faults.append((method.upper(), re.compile(path), status, body, times))

    def hold(self, method: str, path: str) -> Hold:
        """Hold the requests matching `method` and the `path` regex (recorded on arrival)
        until the returned Hold is released."""
        hold = Hold(method.upper(), re.compile(path))
        self._holds.append(hold)
        return hold

    async def close_gateway(self, code: int, message: str = "", *,
                            shard: int | None = None) -> None:
        """Close the bot's gateway connections (only `shard`'s, if given) with a close code,
        as Discord does: 4000-4009 are resumable (discord.py reconnects and RESUMEs), 4004
        means the token is no longer valid, 4010-4014 are fatal."""
        if shard is None:
            sockets = [ws for ws in self._sockets if not ws.closed]
        else:
            sockets = [s.ws for s in self.open_sessions(shard)]
        assert sockets, "no gateway connection to close"
        for ws in sockets:
            await ws.close(code=code, message=message.encode())

    def refuse_gateway(self, times: int = 1) -> None:
        """Answer the next `times` gateway connection attempts with 503 (an outage)."""
        self._refuse_gateway += times

    async def send_raw(self, text: str, *, shard: int | None = None) -> None:
        """A raw frame on the newest gateway session (of `shard`, if given), e.g. one
        discord.py cannot parse."""
        sessions = self.open_sessions(shard)
        assert sessions, "no gateway connection"
        await sessions[-1].ws.send_str(text)

    def add_channel(self, name: str, guild_id: int | None = None) -> int:
        """Another text channel in a guild (the first one by default), before the bot
        starts, so GUILD_CREATE has it."""
        cid = self.new_id()
        self.channels[cid] = {"id": cid, "name": name, "type": 0,
                              "guild_id": guild_id or self.guild_id}
        return cid

    def add_guild(self, name: str, *, shard: tuple[int, int] | None = None) -> GuildRef:
        """Another guild with a text channel, "general", before the bot starts; with `shard`
        (id, count), one that belongs to that shard."""
        if shard is None:
            gid = self.new_id()
        else:
            number, count = shard
            assert 0 <= number < count
            # snowflakes 2**22 apart, below the other ids: the shard is the high bits' residue
            gid = 0
            while gid == 0 or shard_of(gid, count) != number:
                gid = ((1_100_000_000_000_000_000 >> 22) + next(self._guild_ids)) << 22
        self.guilds[gid] = name
        return GuildRef(gid, self.add_channel("general", gid))

    async def join_guild(self, name: str, *, locale: str = "en-US") -> GuildRef:
        """The bot is added to a new guild while connected: its GUILD_CREATE, which has no
        `unavailable` key for a join (discord.py's `on_guild_join`; with the key it is a guild
        coming back, `on_guild_available`)."""
        ref = self.add_guild(name)
        self.guild_locales[ref.id] = locale
        data = self._guild(ref.id)
        del data["unavailable"]
        await self.dispatch("GUILD_CREATE", data, guild_id=ref.id)
        return ref

    def guild_of(self, channel_id: int) -> int | None:
        """The guild a channel is in; None for a DM."""
        return self.channels[channel_id].get("guild_id")

    # waiting -----------------------------------------------------------------------------
    @staticmethod
    async def until(predicate: Callable[[], Any], within: float = 5.0, what: str = "") -> Any:
        """Poll `predicate` until it returns something truthy; fail after `within` seconds."""
        deadline = time.monotonic() + within
        while True:
            if value := predicate():
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what or predicate}")
            await asyncio.sleep(0.005)

    def find(self, method: str, pattern: str) -> list[Request]:
        regex = re.compile(pattern)
        return [r for r in self.requests if r.method == method and regex.fullmatch(r.path)]

    async def wait_request(self, method: str, pattern: str, count: int = 1,
                           within: float = 5.0) -> list[Request]:
        found: list[Request] = await self.until(
            lambda: (found := self.find(method, pattern)) and len(found) >= count and found,
            within, f"{count} x {method} {pattern}",
        )
        return found

    @property
    def rest_connections(self) -> int:
        """How many TCP connections the REST API has accepted."""
        return len(self.rest_peers)

    def edits(self, message_id: int) -> list[Request]:
        """Edits of one message, through the channel or through an interaction webhook."""
        return [r for r in self.requests if r.method == "PATCH"
                and r.path.endswith(f"/messages/{message_id}")]

    async def reply(self, interaction: Interaction, within: float = 5.0) -> Reply:
        """The first message the bot showed in answer to `interaction`."""
        message = await self.until(lambda: self._reply_message(interaction), within,
                                   f"a reply to interaction {interaction.id}")
        return Reply(message)

    def _reply_message(self, it: Interaction) -> dict[str, Any] | None:
        if it.callback is None:
            return None
        kind = it.callback["type"]
        if kind in (CHANNEL_MESSAGE, UPDATE_MESSAGE) and it.original_id is not None:
            return self.messages[it.original_id]
        if kind in (DEFERRED_MESSAGE, DEFERRED_UPDATE):
            original = self.messages.get(it.original_id or 0)
            if original is not None and not original["flags"] & LOADING:
                return original  # edited after the defer
            if it.followups:
                return it.followups[0]
        return None

    async def ack(self, interaction: Interaction, within: float = 5.0) -> dict[str, Any]:
        """The callback body, whatever its type (autocomplete results, defers...)."""
        body: dict[str, Any] = await self.until(lambda: interaction.callback, within,
                                                f"a callback for interaction {interaction.id}")
        return body

    # injecting interactions ------------------------------------------------------------
    def _base_interaction(
        self, kind: int, user: User, *, dm: bool, channel_id: int | None,
        permissions: int | None, locale: str | None, guild_locale: str, age: float = 0.0,
    ) -> dict[str, Any]:
        iid = self.snowflake(age)
        payload: dict[str, Any] = {
            "id": str(iid), "application_id": str(self.app_id), "type": kind,
            "token": f"itoken-{iid}", "version": 1, "attachment_size_limit": 8 * 1024 * 1024,
            "locale": locale or user.locale, "entitlements": [],
            "app_permissions": str(ALL_PERMISSIONS),
        }
        if dm:
            dm_id = channel_id or self.dm_channel(user)
            payload |= {
                "channel_id": str(dm_id), "user": user.payload(), "context": 1,
                "channel": {"id": str(dm_id), "type": 1, "recipients": [user.payload()],
                            "last_message_id": None, "flags": 0},
                "authorizing_integration_owners": {"1": str(user.id)},
            }
        else:
            cid = channel_id or self.channel_id
            channel = self.channels[cid]
            gid = str(channel["guild_id"])
            perms = DEFAULT_PERMISSIONS if permissions is None else permissions
            payload |= {
                "guild_id": gid, "guild_locale": guild_locale, "context": 0,
                "channel_id": str(cid),
                "channel": {"id": str(cid), "type": channel["type"], "name": channel["name"],
                            "guild_id": gid, "position": 0,
                            "permission_overwrites": [], "nsfw": False, "parent_id": None,
                            "flags": 0, "permissions": str(perms)},
                "member": self.member(user, perms),
                "authorizing_integration_owners": {"0": gid},
            }
        return payload

    def dm_channel(self, user: User) -> int:
        for cid, channel in self.channels.items():
            if channel["type"] == 1 and channel.get("recipient") == user.id:
                return cid
        cid = self.new_id()
        self.channels[cid] = {"id": cid, "name": "", "type": 1, "recipient": user.id}
        return cid

    def member(self, user: User, permissions: int = DEFAULT_PERMISSIONS) -> dict[str, Any]:
        return {
            "user": user.payload(), "roles": [], "joined_at": now_iso(), "flags": 0,
            "deaf": False, "mute": False, "nick": None, "avatar": None, "pending": False,
            "premium_since": None, "communication_disabled_until": None,
            "permissions": str(permissions),
        }

    def _command_data(self, name: str, options: dict[str, Any], focused: str | None,
                      guild: int | None) -> dict[str, Any]:
        """`name` is a command, or a group and its subcommand ("daily set"): Discord nests a
        subcommand's options inside a SUB_COMMAND option. `guild`: where it is run (None: a
        DM)."""
        top, _, sub = name.partition(" ")
        registered = (self.commands.get(guild, []) if guild else []) + \
            self.commands.get(None, [])
        command = next((c for c in registered if c["name"] == top), None)
        values = [
            {"name": key, "type": OPTION_TYPES[type(value)], "value": value}
            | ({"focused": True} if key == focused else {})
            for key, value in options.items()
        ]
        data: dict[str, Any] = {
            "id": command["id"] if command else str(self.new_id()), "name": top, "type": 1,
            "options": [{"name": sub, "type": SUB_COMMAND, "options": values}] if sub
            else values,
        }
        if command and command.get("guild_id"):
            data["guild_id"] = command["guild_id"]
        return data

    async def slash(
        self, name: str, options: dict[str, Any] | None = None, *, user: User,
        dm: bool = False, channel_id: int | None = None, permissions: int | None = None,
        locale: str | None = None, guild_locale: str = "en-US", within: float = 5.0,
        age: float = 0.0,
    ) -> Interaction:
        """Someone runs a slash command. `within`: how long to wait for a session of the
        shard it belongs to (see `dispatch_interaction`); `age`: how many seconds ago it was
        run (its snowflake's time; negative: a time in the future)."""
        payload = self._base_interaction(
            APPLICATION_COMMAND, user, dm=dm, channel_id=channel_id, permissions=permissions,
            locale=locale, guild_locale=guild_locale, age=age,
        )
        payload["data"] = self._command_data(name, options or {}, None, self._guild_in(payload))
        return await self.dispatch_interaction(payload, within)

    async def autocomplete(
        self, name: str, options: dict[str, Any], focused: str, *, user: User,
        dm: bool = False, locale: str | None = None,
    ) -> Interaction:
        """Someone types into an option with autocomplete."""
        payload = self._base_interaction(
            AUTOCOMPLETE, user, dm=dm, channel_id=None, permissions=None, locale=locale,
            guild_locale="en-US",
        )
        payload["data"] = self._command_data(name, options, focused, self._guild_in(payload))
        return await self.dispatch_interaction(payload)

    async def click(
        self, message_id: int, custom_id: str, *, user: User,
        components: list[dict[str, Any]] | None = None, locale: str | None = None,
        guild_locale: str = "en-US", permissions: int | None = None, within: float = 5.0,
        age: float = 0.0, values: list[str] | None = None,
    ) -> Interaction:
        """Someone clicks a button on a stored message, or with `values` chooses them in a
        select. `components` replaces what the message carries (a forged or stale client);
        by default the stored components are echoed. `within` and `age`: as for `slash`."""
        message = dict(self.messages[message_id])
        if components is not None:
            message["components"] = components
        channel = self.channels[int(message["channel_id"])]
        dm = channel["type"] == 1
        # the message's channel, even for someone who is not its DM's recipient (a forged
        # click, or a message shown to someone else)
        payload = self._base_interaction(
            MESSAGE_COMPONENT, user, dm=dm, channel_id=channel["id"], permissions=permissions,
            locale=locale, guild_locale=guild_locale, age=age,
        )
        payload["message"] = message
        found = next((c for c in all_components_of(message) if c.get("custom_id") == custom_id),
                     {})
        payload["data"] = {"custom_id": custom_id, "component_type": found.get("type", 2)}
        if values is not None:
            payload["data"]["values"] = values
        return await self.dispatch_interaction(payload, within)

    async def submit_modal(
        self, opened_by: Interaction, values: dict[str, str | list[str]], *, user: User,
        custom_id: str | None = None, within: float = 5.0,
    ) -> Interaction:
        """Someone fills in the form the bot opened in answer to `opened_by` (or, with
        `custom_id`, a form of that id, as a forged client could send) and submits it:
        `values` maps each text input's custom_id to what was typed (a select's, in a
        label, to the list of values chosen)."""
        modal = (opened_by.callback or {}).get("data") or {}
        source = opened_by.payload
        payload = self._base_interaction(
            MODAL_SUBMIT, user, dm="guild_id" not in source,
            channel_id=int(source["channel_id"]),
            permissions=int(source["member"]["permissions"]) if "member" in source else None,
            locale=None, guild_locale="en-US",
        )
        labelled = any(c.get("type") == limits.LABEL for c in modal.get("components") or [])
        payload["data"] = {
            "custom_id": custom_id or modal.get("custom_id", ""),
            "components": [
                {"type": limits.LABEL, "component": {"type": limits.STRING_SELECT,
                                                     "custom_id": key, "values": value}}
                if isinstance(value, list) else
                {"type": limits.LABEL, "component": {"type": TEXT_INPUT, "custom_id": key,
                                                     "value": value}} if labelled
                else {"type": 1, "components": [
                    {"type": TEXT_INPUT, "custom_id": key, "value": value}]}
                for key, value in values.items()],
        }
        if "message" in source:  # opened from a component: Discord sends its message along
            payload["message"] = self.messages.get(int(source["message"]["id"]),
                                                   source["message"])
        return await self.dispatch_interaction(payload, within)

    async def forged_modal(
        self, custom_id: str, values: dict[str, str], *, user: User,
        message: dict[str, Any], permissions: int | None = None, within: float = 5.0,
    ) -> Interaction:
        """A form submission no form of the bot's was opened for, as a modified client could
        send it: `custom_id`, the text inputs' `values` (in labels), from `message`."""
        channel = self.channels[int(message["channel_id"])]
        payload = self._base_interaction(
            MODAL_SUBMIT, user, dm=channel["type"] == 1, channel_id=channel["id"],
            permissions=permissions, locale=None, guild_locale="en-US",
        )
        payload["message"] = message
        payload["data"] = {"custom_id": custom_id, "components": [
            {"type": limits.LABEL, "component": {"type": TEXT_INPUT, "custom_id": key,
                                                 "value": value}}
            for key, value in values.items()]}
        return await self.dispatch_interaction(payload, within)

    async def redeliver(self, interaction: Interaction) -> None:
        """The same interaction again, same id and token (a gateway resume replaying it):
        Discord refuses a second response to it with 40060, as this fake does."""
        await self.dispatch("INTERACTION_CREATE", interaction.payload,
                            guild_id=self._guild_in(interaction.payload))

    def callback_attempts(self, interaction: Interaction) -> list[Request]:
        """Every response the bot tried for `interaction`, refused ones included."""
        return self.find("POST", rf"/interactions/{interaction.id}/[^/]+/callback")

    @staticmethod
    def _guild_in(payload: dict[str, Any]) -> int | None:
        return int(payload["guild_id"]) if "guild_id" in payload else None

    async def dispatch_interaction(self, payload: dict[str, Any],
                                   within: float = 5.0) -> Interaction:
        """Send an interaction on the session of the shard its guild belongs to (a DM's:
        shard 0), waiting up to `within` seconds for one; after that it fails with an
        AssertionError, except with `within=0`: then, as on Discord, an interaction nobody is
        connected for is lost (it is recorded with `shard` None and never answered)."""
        interaction = Interaction(int(payload["id"]), payload["token"], payload)
        self.interactions[interaction.id] = interaction
        try:
            interaction.shard = await self.dispatch(
                "INTERACTION_CREATE", payload, guild_id=self._guild_in(payload), within=within
            )
        except ConnectionResetError:
            # the bot closed its connection while this was sent (it is stopping): like any
            # interaction it never took, it goes unanswered
            pass
        return interaction

    def session_for(self, guild_id: int | None) -> Session | None:
        """The session that receives the events of a guild (None: a DM): the newest open one
        of the shard that owns it."""
        owners = [s for s in self.open_sessions() if s.owns(guild_id)]
        return owners[-1] if owners else None

    async def dispatch(self, event: str, data: dict[str, Any], *, guild_id: int | None = None,
                       within: float = 5.0) -> int | None:
        """An event on the session that owns `guild_id` (None: shard 0's); the shard it was
        sent to, or None when `within` is 0 and no such session is connected."""
        session: Session | None = self.session_for(guild_id)
        if session is None and within > 0:
            session = await self.until(lambda: self.session_for(guild_id), within,
                                       f"a gateway session for guild {guild_id}")
        if session is None:
            return None
        await self._send_event(session, event, data)
        return session.shard

    @staticmethod
    async def _send_event(session: Session, event: str, data: dict[str, Any]) -> None:
        session.seq += 1
        await session.ws.send_str(json.dumps({"op": 0, "t": event, "s": session.seq, "d": data}))

    # gateway ---------------------------------------------------------------------------
    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        if self._refuse_gateway > 0:
            self._refuse_gateway -= 1
            return web.Response(status=503, text="gateway unavailable (injected)")
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        self.connections += 1
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 41250}}))
        async for frame in ws:
            if frame.type != WSMsgType.TEXT:
                break
            msg = json.loads(frame.data)
            if msg["op"] == 1:  # heartbeat
                await ws.send_str(json.dumps({"op": 11}))
            elif msg["op"] == 2:  # identify
                await self._identify(ws, msg["d"])
            elif msg["op"] == 6:  # resume: the session goes on (nothing was missed here)
                self.resumes.append(msg["d"]["session_id"])
                session = self.sessions.get(msg["d"]["session_id"])
                if session is None:  # not a session of ours: identify anew
                    await ws.send_str(json.dumps({"op": 9, "d": False}))
                    continue
                session.ws = ws
                await self._send_event(session, "RESUMED", {})
        return ws

    async def _identify(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> None:
        self.identify_tokens.append(data["token"])
        shard = data.get("shard")
        number, count = (int(shard[0]), int(shard[1])) if shard else (0, 1)
        self.identified_shards.append((number, count) if shard else None)
        self.identified_at.append(time.monotonic())
        if not 0 <= number < count:
            await ws.close(code=4010, message=b"Invalid shard.")
            return
        session = Session(f"fake-session-{len(self.identify_tokens)}", ws, number, count)
        if self.hold_ready:
            return
        self.sessions[session.id] = session
        guilds = [gid for gid in self.guilds if session.owns(gid)]
        await self._send_event(session, "READY", {
            "v": 10, "user": self.bot.payload(bot=True) | {"verified": True, "mfa_enabled": False},
            "guilds": [{"id": str(gid), "unavailable": True} for gid in guilds],
            "session_id": session.id, "resume_gateway_url": self.gateway_url,
            "application": {"id": str(self.app_id), "flags": 0}, "shard": [number, count],
        })
        for gid in guilds:
            await self._send_event(session, "GUILD_CREATE", self._guild(gid))

    def _guild(self, guild_id: int) -> dict[str, Any]:
        gid = str(guild_id)
        return {
            "id": gid, "name": self.guilds[guild_id], "icon": None, "owner_id": str(self.owner.id),
            "afk_timeout": 300, "verification_level": 0, "default_message_notifications": 0,
            "explicit_content_filter": 0, "mfa_level": 0, "system_channel_flags": 0,
            "premium_tier": 0, "nsfw_level": 0, "features": [],
            "preferred_locale": self.guild_locales.get(guild_id, "en-US"),
            "roles": [{"id": gid, "name": "@everyone", "permissions": str(DEFAULT_PERMISSIONS),
                       "position": 0, "color": 0, "hoist": False, "managed": False,
                       "mentionable": False, "flags": 0}],
            "emojis": [], "stickers": [], "member_count": 2, "large": False,
            "unavailable": False, "joined_at": now_iso(),
            "members": [self.member(self.bot, ALL_PERMISSIONS) | {"user": self.bot.payload(True)}],
            "channels": [
                {"id": str(c["id"]), "type": c["type"], "name": c["name"], "position": i,
                 "permission_overwrites": [], "guild_id": gid, "nsfw": False,
                 "parent_id": None, "topic": None, "rate_limit_per_user": 0, "flags": 0}
                for i, c in enumerate(self.channels.values()) if c.get("guild_id") == guild_id
            ],
            "threads": [], "voice_states": [], "presences": [], "stage_instances": [],
            "guild_scheduled_events": [], "soundboard_sounds": [],
        }

    # REST ------------------------------------------------------------------------------
    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["path"]
        body: Any = None
        if request.can_read_body:
            raw = await request.read()
            if request.content_type == "application/json" and raw:
                body = json.loads(raw)
            elif request.content_type.startswith("multipart/"):  # files: payload_json + files[n]
                body = multipart_body(request.headers["Content-Type"], raw, path)
        record = Request(request.method, path, dict(request.query), body,
                         dict(request.headers), time.monotonic())
        peer = request.transport.get_extra_info("peername") if request.transport else None
        record.connection = self.rest_peers.setdefault(peer, len(self.rest_peers))
        self.requests.append(record)
        for hold in self._holds:
            if hold.method == request.method and hold.pattern.fullmatch(path):
                hold.held.append(record)
                hold.arrived.set()
                await hold.released.wait()
        for i, (method, pattern, status, error, times) in enumerate(self._faults):
            if method == request.method and pattern.fullmatch(path):
                if times <= 1:
                    del self._faults[i]
                else:
                    self._faults[i] = (method, pattern, status, error, times - 1)
                return json_response(error, status)
        try:
            return json_response(self._route(record))
        except ApiError as exc:
            return json_response(exc.body(), exc.status)

    def _route(self, r: Request) -> Any:
        m, p = r.method, r.path
        app = str(self.app_id)
        if not p.startswith(("/interactions/", "/webhooks/")):
            # webhook-token routes carry no Authorization header; everything else needs it
            if r.headers.get("Authorization") != f"Bot {self.token}":
                raise ApiError(401, "401: Unauthorized", 0)
        if m == "GET" and p == "/users/@me":
            return self.bot.payload(bot=True) | {"verified": True, "mfa_enabled": False}
        if m == "GET" and p == "/oauth2/applications/@me":
            return {
                "id": app, "name": "QuizBot", "description": "", "icon": None,
                "bot_public": True, "bot_require_code_grant": False, "flags": 0,
                "owner": self.owner.payload(), "verify_key": "0" * 64, "team": None,
                "interactions_endpoint_url": None, "summary": "",
            }
        if m == "GET" and p == "/gateway":
            return {"url": self.gateway_url}
        if m == "GET" and p == "/gateway/bot":
            return {"url": self.gateway_url, "shards": self.recommended_shards,
                    "session_start_limit": {
                        "total": 1000, "remaining": max(0, 1000 - len(self.identify_tokens)),
                        "reset_after": 86_400_000, "max_concurrency": self.max_concurrency,
                    }}
        if match := re.fullmatch(rf"/applications/{app}(?:/guilds/(\d+))?/commands", p):
            guild = int(match[1]) if match[1] else None
            if m == "PUT":
                self.commands[guild] = [self._command(c, guild) for c in r.json]
            return self.commands.get(guild, [])
        if match := re.fullmatch(r"/users/(\d+)", p):  # fetch_user
            return User(int(match[1]), f"User {match[1]}").payload()
        if m == "POST" and p == "/users/@me/channels":  # a DM channel (create_dm)
            recipient = User(int(r.json["recipient_id"]), "")
            return {"id": str(self.dm_channel(recipient)), "type": 1, "last_message_id": None,
                    "recipients": [recipient.payload()]}
        if match := re.fullmatch(r"/channels/(\d+)/messages", p):
            if m == "POST":
                return self._create_message(int(match[1]), r.json)
        if m == "POST" and (match := re.fullmatch(r"/channels/(\d+)/messages/(\d+)/threads", p)):
            return self._start_thread(int(match[1]), int(match[2]), r.json)
        if match := re.fullmatch(r"/channels/(\d+)/messages/(\d+)", p):
            message = self._message(int(match[2]), int(match[1]))
            if message["flags"] & EPHEMERAL:
                # only the interaction token reaches an ephemeral message
                raise ApiError(404, "Unknown Message", 10008)
            if m == "PATCH":
                return self._edit_message(message, r.json)
            if m == "GET":
                return message
            if m == "DELETE":
                del self.messages[int(message["id"])]
                return {}
        if match := re.fullmatch(r"/channels/(\d+)", p):
            channel = self.channels.get(int(match[1]))
            if channel is None:
                raise ApiError(404, "Unknown Channel", 10003)
            found = {"id": str(channel["id"]), "type": channel["type"], "name": channel["name"],
                     "position": 0, "permission_overwrites": []}
            if (guild_id := channel.get("guild_id")) is not None:
                found["guild_id"] = str(guild_id)
            return found
        if match := re.fullmatch(r"/interactions/(\d+)/([^/]+)/callback", p):
            return self._callback(int(match[1]), match[2], r)
        if match := re.fullmatch(rf"/webhooks/{app}/([^/]+)(?:/messages/([^/]+))?", p):
            return self._webhook(match[1], match[2], r)
        raise ApiError(404, f"404: Not Found ({m} {p} is not faked)", 0)

    def _command(self, data: dict[str, Any], guild: int | None) -> dict[str, Any]:
        self._validate_command(data, data.get("name", "?"))
        return data | {
            "id": str(self.new_id()), "application_id": str(self.app_id), "version": "1",
            "guild_id": str(guild) if guild else None, "type": data.get("type", 1),
        }

    def _validate_command(self, item: dict[str, Any], where: str) -> None:
        """A command or option as Discord checks it: names, descriptions, choices and their
        localisations (application-commands.mdx), answered 400 like an invalid form."""
        if not valid_name(item.get("name")):
            raise invalid_form(f"{where}: invalid name {item.get('name')!r}")
        if not 1 <= len(item.get("description") or "") <= 100:
            raise invalid_form(f"{where}: description must be 1-100 characters")
        self._validate_localizations(item, where, name_rule=True)
        options = item.get("options") or []
        if len(options) > 25:
            raise invalid_form(f"{where}: at most 25 options")
        for option in options:
            self._validate_command(option, f"{where}.{option.get('name')}")
        choices = item.get("choices") or []
        if len(choices) > 25:
            raise invalid_form(f"{where}: at most 25 choices")
        for choice in choices:
            if not 1 <= len(choice.get("name") or "") <= 100:
                raise invalid_form(f"{where}: choice names must be 1-100 characters")
            self._validate_localizations(choice, f"{where} choice", name_rule=False)

    @staticmethod
    def _validate_localizations(item: dict[str, Any], where: str, *, name_rule: bool) -> None:
        for key in ("name_localizations", "description_localizations"):
            for locale, text in (item.get(key) or {}).items():
                if locale not in DISCORD_LOCALES:
                    raise invalid_form(f"{where}.{key}: {locale!r} is not a valid locale")
                if key == "name_localizations" and name_rule and not valid_name(text):
                    raise invalid_form(f"{where}.{key}.{locale}: invalid name {text!r}")
                if not 1 <= len(text or "") <= (32 if key == "name_localizations" and name_rule
                                                else 100):
                    raise invalid_form(f"{where}.{key}.{locale}: bad length")

    def _message(self, message_id: int, channel_id: int | None = None) -> dict[str, Any]:
        message = self.messages.get(message_id)
        if message is None or (channel_id is not None and int(message["channel_id"]) != channel_id):
            raise ApiError(404, "Unknown Message", 10008)
        return message

    def _start_thread(self, channel_id: int, message_id: int,
                      body: dict[str, Any]) -> dict[str, Any]:
        """A public thread from a message (Start Thread from Message): a new channel of type
        11 whose id is the message's, in a guild text channel, with the permission."""
        message = self._message(message_id, channel_id)
        parent = self.channels[channel_id]
        if parent["type"] != 0 or parent.get("guild_id") is None:
            raise ApiError(400, "Cannot execute action on this channel type", 50024)
        if not self.threads_allowed:
            raise ApiError(403, "Missing Permissions", 50013)
        if message.get("thread"):
            raise ApiError(400, "A thread has already been created for this message", 160004)
        name = body.get("name") or ""
        if not 1 <= len(name) <= 100:
            raise invalid_form("name: must be between 1 and 100 in length")
        if body.get("auto_archive_duration") not in (60, 1440, 4320, 10080):
            raise invalid_form("auto_archive_duration: not a valid duration")
        self.channels[message_id] = {"id": message_id, "name": name, "type": 11,
                                     "guild_id": parent["guild_id"], "parent_id": channel_id}
        thread = {"id": str(message_id), "type": 11, "name": name,
                  "guild_id": str(parent["guild_id"]), "parent_id": str(channel_id),
                  "owner_id": str(self.bot.id), "message_count": 0, "member_count": 1,
                  "rate_limit_per_user": 0, "flags": 0,
                  "thread_metadata": {"archived": False, "auto_archive_duration":
                                      body["auto_archive_duration"], "locked": False,
                                      "archive_timestamp": now_iso()}}
        message["thread"] = thread
        return thread

    def _create_message(self, channel_id: int, body: dict[str, Any], *, flags: int = 0,
                        interaction: Interaction | None = None) -> dict[str, Any]:
        if channel_id not in self.channels:
            raise ApiError(404, "Unknown Channel", 10003)
        self._validate(body)
        mid = self.snowflake()
        message = {
            "id": str(mid), "channel_id": str(channel_id), "type": 0 if interaction is None
            else 20, "author": self.bot.payload(bot=True), "content": body.get("content") or "",
            "embeds": body.get("embeds") or [], "components": body.get("components") or [],
            "attachments": [], "mentions": [], "mention_roles": [], "mention_everyone": False,
            "pinned": False, "tts": False, "timestamp": now_iso(), "edited_timestamp": None,
            "flags": (body.get("flags") or 0) | flags,
        }
        self._attach(message, body)
        if interaction is not None:
            message["application_id"] = str(self.app_id)
            message["webhook_id"] = str(self.app_id)
        if (guild_id := self.channels[channel_id].get("guild_id")) is not None:
            message["guild_id"] = str(guild_id)
        self.messages[mid] = message
        self.created[mid] = dict(message)  # as it was sent, whatever edits do to it
        return message

    def _edit_message(self, message: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        self._validate(body, flags=int(message.get("flags") or 0))
        # a message can become Components V2 by an edit, and never stops being one
        message["flags"] |= int(body.get("flags") or 0) & limits.IS_COMPONENTS_V2
        for key in ("content", "embeds", "components"):
            if key in body:
                message[key] = body[key] if body[key] is not None else ([] if key != "content"
                                                                        else "")
        message["flags"] &= ~LOADING
        message["edited_timestamp"] = now_iso()
        self._attach(message, body)
        return message

    def _attach(self, message: dict[str, Any], body: dict[str, Any]) -> None:
        """The files uploaded with a message (they replace its attachments)."""
        if "_files" not in body:
            return
        self.files[int(message["id"])] = body["_files"]
        # the metadata of files[n] is the `attachments` entry whose id is n (its alt text)
        meta = {str(a.get("id")): a for a in body.get("attachments") or []}
        message["attachments"] = [
            {"id": str(self.new_id()), "filename": name, "size": len(data),
             "url": f"https://cdn.discordapp.com/attachments/{message['id']}/{name}",
             "proxy_url": f"https://media.discordapp.net/attachments/{message['id']}/{name}"}
            | ({"description": meta[str(n)]["description"]}
               if meta.get(str(n), {}).get("description") is not None else {})
            for n, (name, data) in enumerate(body["_files"])
        ]

    @staticmethod
    def _validate(body: dict[str, Any], *, flags: int = 0) -> None:
        """What Discord refuses in a message (tests/fakes/discord_limits.py); `flags`: the
        edited message's own."""
        try:
            limits.message(body, flags=flags)
        except limits.FormError as exc:
            raise form_refused(exc) from None

    @staticmethod
    def _validate_modal(data: dict[str, Any]) -> None:
        try:
            limits.modal(data)
        except limits.FormError as exc:
            raise form_refused(exc) from None

    def post_message(self, channel_id: int, content: str) -> dict[str, Any]:
        """A plain message of the bot's in a channel, as if it had been sent earlier."""
        return self._create_message(channel_id, {"content": content})

    def _interaction_for(self, iid: int | None, token: str) -> Interaction:
        for it in self.interactions.values():
            if it.token == token and (iid is None or it.id == iid):
                return it
        raise ApiError(404, "Unknown interaction", 10062)

    def _callback(self, iid: int, token: str, r: Request) -> dict[str, Any]:
        it = self._interaction_for(iid, token)
        if it.callback is not None:
            raise ApiError(400, "Interaction has already been acknowledged.", 40060)
        kind, data = r.json["type"], r.json.get("data") or {}
        if r.query.get("with_response") not in ("1", "true", "True"):
            raise ApiError(400, "the fake expects ?with_response=1, as discord.py sends", 0)
        if kind == MODAL:
            self._validate_modal(data)
        it.callback = r.json
        channel_id = int(it.payload["channel_id"])
        message = None
        if kind == CHANNEL_MESSAGE:
            message = self._create_message(channel_id, data, interaction=it)
        elif kind == DEFERRED_MESSAGE:
            message = self._create_message(channel_id, {"flags": data.get("flags", 0)},
                                           flags=LOADING, interaction=it)
        elif kind == UPDATE_MESSAGE:
            message = self._edit_message(self._message(int(it.payload["message"]["id"])), data)
        if message is not None:
            it.original_id = int(message["id"])
        elif kind == DEFERRED_UPDATE and "message" in it.payload:
            # after a deferred update, @original is the message the component is on
            it.original_id = int(it.payload["message"]["id"])
        return {
            "interaction": {
                "id": str(iid), "type": it.payload["type"],
                "response_message_id": message["id"] if message else None,
                "response_message_loading": kind == DEFERRED_MESSAGE,
                "response_message_ephemeral": bool(message and message["flags"] & EPHEMERAL),
            },
            "resource": {"type": kind} | ({"message": message} if message else {}),
        }

    def _webhook(self, token: str, target: str | None, r: Request) -> dict[str, Any]:
        it = self._interaction_for(None, token)
        if target is None:
            if r.method != "POST":
                raise ApiError(405, "405: Method Not Allowed", 0)
            if it.callback is None:
                raise ApiError(404, "Unknown Webhook", 10015)
            message = self._create_message(int(it.payload["channel_id"]), r.json, interaction=it)
            it.followups.append(message)
            return message
        mid = it.original_id if target == "@original" else int(target)
        message = self._message(mid or 0)
        if r.method == "PATCH":
            return self._edit_message(message, r.json)
        if r.method == "DELETE":
            del self.messages[int(message["id"])]
            return {}
        return message
