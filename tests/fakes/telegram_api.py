"""A fake Telegram Bot API server, for driving the real python-telegram-bot in tests.

aiohttp on 127.0.0.1 (random port). Point PTB at `fake.base_url`. What it honours, and why
(see ../../../shared/testing-notes.md):

- getUpdates keeps every update until a later `offset` confirms it, as Telegram does. PTB
  cancels its in-flight long poll on stop while this handler keeps running; a fake that popped
  updates from a queue would lose them.
- PTB sends form-encoded parameters with non-string values JSON-encoded. Free-text fields are
  never JSON-decoded here (a message "123" must stay a string).
- Bot API 10.0 payloads: PollOption.persistent_id, PollAnswer.option_persistent_ids,
  Poll.allows_revoting and Poll.members_only are always present (PTB 22.8 needs them).
- Some server-side limits are checked (message and poll lengths, callback_data bytes, stopPoll
  on a closed poll) so a bot that breaks them fails here as it would in production.
- `limits` (telegram_limits.py, off by default): Telegram's flood limits per token, group
  and chat, a message past one refused with 429 and retry_after, and counted.
- Every call is recorded; faults (429 with retry_after, 502, any status and description) can
  be injected per method, and a call can be answered late (`delay_next`: the server acts at
  once and replies after a delay, as a slow Telegram does); getChatMember and
  getChatAdministrators answer from configurable admins.
- Users send photos and files (`send_photo`, `send_document`); getFile gives a file_path and
  GET /file/bot<token>/<file_path> its bytes (`downloads` records them), as Telegram serves.
- A vote on one of the bot's polls brings a `poll_answer` and then a `poll` update with the
  poll's new state, as Telegram sends both for polls the bot sent.
- `confirmed_below` is the offset the bot last confirmed: every update below it is gone for
  good, as on Telegram. `push_raw` queues any JSON, e.g. an update PTB cannot parse.
- `one_poller`: a getUpdates arriving while another is open ends the older one with 409
  Conflict, as Telegram does; `poll_overlaps` counts such arrivals either way.
- Webhooks: setWebhook, deleteWebhook, getWebhookInfo, and getUpdates refused (409) while a
  webhook is set, as Telegram does. While one is set, every pushed update is POSTed as JSON to
  its URL with the secret in X-Telegram-Bot-Api-Secret-Token, up to max_connections at once,
  and sent again (after a short backoff) until a request is answered 2xx; a non-2xx answer, a
  broken connection or no answer within `delivery_timeout` counts as failed, as on Telegram
  (which waits 60 s). Each request is recorded in `deliveries`; `webhook_confirmed` holds the
  updates answered 2xx. `webhook_targets` makes the fake a round-robin load balancer: each
  request goes to the next of these URLs instead of the registered one (`webhook_router`, a
  function of the update, picks instead when set).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.telegram_limits import FloodLimits

TOKEN = "123456789:AAF-fake-token_for_tests-only"

# Messages from a group's anonymous admins come from this bot, with sender_chat = the group.
ANONYMOUS_ADMIN = {"id": 1087968824, "is_bot": True, "first_name": "Group",
                   "username": "GroupAnonymousBot"}

# Parameters that are free text or string ids: never JSON-decode them.
STRING_PARAMS = frozenset({
    "text", "question", "explanation", "caption", "description", "title", "callback_query_id",
    "parse_mode", "explanation_parse_mode", "question_parse_mode", "type", "url",
    "inline_message_id", "language_code", "business_connection_id", "message_effect_id",
    "emoji", "custom_title",
})


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class ApiError(Exception):
    def __init__(self, status: int, description: str, parameters: dict[str, Any] | None = None):
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters


def bad_request(description: str) -> ApiError:
    return ApiError(400, f"Bad Request: {description}")


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    status: int = 200
    result: Any = None
    at: float = field(default_factory=time.monotonic)
    delayed: float = 0.0  # seconds the reply was held back after the call took effect
    replied: bool = False  # a successful reply was sent (after any delay)

    @property
    def ok(self) -> bool:
        return self.status == 200


@dataclass
class Delivery:
    """One webhook request: which update, to where, and how it was answered."""

    update_id: int
    target: str
    started: float = field(default_factory=time.monotonic)
    status: int | None = None  # None: no answer (yet, or the connection broke or timed out)
    error: str | None = None  # why there was no answer
    finished: float | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def open(self) -> bool:
        return self.finished is None


@dataclass
class Fault:
    status: int
    description: str
    parameters: dict[str, Any] | None = None


class FakeTelegramAPI:
    def __init__(
        self, token: str = TOKEN, bot_id: int = 123456789, bot_username: str = "quizbot_test_bot"
    ) -> None:
        self.token = token
        self.bot = {
            "id": bot_id, "is_bot": True, "first_name": "Quiz Bot", "username": bot_username,
            "can_join_groups": True, "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }
        self.calls: list[Call] = []
        self.chats: dict[int, dict[str, Any]] = {}
        self.messages: dict[tuple[int, int], dict[str, Any]] = {}
        self.polls: dict[str, dict[str, Any]] = {}  # poll id -> poll
        self.photos: dict[str, bytes] = {}  # file_id -> the bytes sent (sendPhoto by file_id)
        self.explanation_photos: list[bytes] = []  # each quiz's explanation_media, as sent
        self.files: dict[str, tuple[str, bytes]] = {}  # users' files: file_id -> (path, bytes)
        self.downloads: list[str] = []  # file paths downloaded (GET /file/bot<token>/<path>)
        self.poll_messages: dict[str, tuple[int, int]] = {}  # poll id -> (chat, message)
        self.commands: dict[str, list[dict[str, Any]]] = {}  # language_code -> commands
        self.admins: dict[int, set[int]] = defaultdict(set)
        # forums where the bot is an admin with can_manage_topics (createForumTopic)
        self.topic_rights: set[int] = set()
        self.topics: dict[int, dict[int, str]] = defaultdict(dict)  # chat -> thread id -> name
        self.owners: dict[int, int] = {}
        self.users: dict[int, dict[str, Any]] = {}
        self.allowed_updates: list[str] | None = None
        self._answered_queries: set[str | None] = set()
        self.max_long_poll = 1.0  # seconds; short so shutdown never waits long
        self.one_poller = False  # a newer getUpdates ends an open one with 409, as Telegram does
        self.poll_overlaps = 0  # getUpdates that arrived while another was open
        self._polls = 0  # getUpdates seen so far; the newest is the one Telegram serves
        self._open_polls = 0
        self._updates: list[dict[str, Any]] = []  # not yet confirmed
        self._all_updates: list[dict[str, Any]] = []
        self._confirmed_below = 0  # every update_id below this has been confirmed
        self._update_ids = itertools.count(1)
        self._message_ids: dict[int, itertools.count[int]] = defaultdict(
            lambda: itertools.count(1)
        )
        self._ids = itertools.count(1000)
        self._faults: dict[str, deque[Fault]] = defaultdict(deque)
        self._delays: dict[str, deque[float]] = defaultdict(deque)
        self._answers: dict[str, deque[Any]] = defaultdict(deque)  # answer_next
        # Telegram's flood limits, enforced when set (telegram_limits.py; issue 36)
        self.limits: FloodLimits | None = None
        self.poll_state_updates = True  # a `poll` update after each vote, as Telegram sends
        self._new_update = asyncio.Event()
        self._closing = False
        self._runner: web.AppRunner | None = None
        self.port = 0
        # webhooks
        self.webhook: dict[str, Any] | None = None  # setWebhook's parameters while set
        self.webhook_targets: list[str] | None = None  # round-robin load balancer
        self.webhook_router: Callable[[dict[str, Any]], str] | None = None  # or this picks
        self.delivery_timeout = 10.0  # seconds before an unanswered request counts as failed
        self.retry_delay = 0.05  # seconds before the first retry; doubles up to the next
        self.max_retry_delay = 0.4
        self.deliveries: list[Delivery] = []
        self.webhook_confirmed: set[int] = set()  # update ids a request answered 2xx
        self.webhook_error: tuple[int, str] | None = None  # (unix time, message), the last
        self._delivering: set[int] = set()  # update ids with a request open
        self._retry_at: dict[int, tuple[int, float]] = {}  # update id -> (failures, when)
        self._last_update_id = 0
        self._round_robin = itertools.count()
        self._wake = asyncio.Event()
        self._dispatcher: asyncio.Task[None] | None = None
        self._sending: set[asyncio.Task[None]] = set()
        self._delaying: set[asyncio.Task[Any]] = set()  # requests whose reply is held back
        self._session: aiohttp.ClientSession | None = None

    # server ----------------------------------------------------------------------------
    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        # no access log: it would print the token in every request line
        self._runner = web.AppRunner(app, shutdown_timeout=0.5, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]  # the port the system chose

    async def stop(self) -> None:
        self._closing = True
        self._new_update.set()  # long polls return now
        for task in [self._dispatcher, *self._sending, *self._delaying]:
            if task is not None:
                task.cancel()
        await asyncio.gather(*[t for t in [self._dispatcher, *self._sending] if t is not None],
                             return_exceptions=True)
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.match_info["token"] != self.token:
            return self._reply(401, {"ok": False, "error_code": 401,
                                     "description": "Unauthorized"})
        try:
            params = await self._params(request)
        except ConnectionResetError:  # the bot died (kill -9) while sending its request
            return web.Response(status=499)
        call = Call(method, params)
        self.calls.append(call)
        faults = self._faults.get(method)
        try:
            if faults:
                fault = faults.popleft()
                raise ApiError(fault.status, fault.description, fault.parameters)
            if self.limits is not None and (wait := self.limits.check(method, params)):
                raise ApiError(429, f"Too Many Requests: retry after {wait}",
                               {"retry_after": wait})
            if answers := self._answers.get(method):  # answer_next
                call.result, call.replied = answers.popleft(), True
                return self._reply(200, {"ok": True, "result": call.result})
            handler = getattr(self, f"_api_{method}", None)
            if handler is None:
                raise bad_request(f"method {method} is not implemented by the fake")
            result = handler(params) if method != "getUpdates" else await handler(params)
            call.result = result
            delays = self._delays.get(method)
            if delays:
                call.delayed = delays.popleft()
                # done on the server; the reply is late (never sent if the fake stops first)
                delaying = asyncio.current_task()
                assert delaying is not None
                self._delaying.add(delaying)
                try:
                    await asyncio.sleep(call.delayed)
                finally:
                    self._delaying.discard(delaying)
        except ApiError as exc:
            call.status = exc.status
            body: dict[str, Any] = {"ok": False, "error_code": exc.status,
                                    "description": exc.description}
            if exc.parameters:
                body["parameters"] = exc.parameters
            return self._reply(exc.status, body)
        call.replied = True
        return self._reply(200, {"ok": True, "result": result})

    async def _download(self, request: web.Request) -> web.Response:
        """A file's bytes by the file_path getFile gave (as api.telegram.org/file/ serves)."""
        if request.match_info["token"] != self.token:
            return web.Response(status=401)
        path = request.match_info["path"]
        found = next((data for p, data in self.files.values() if p == path), None)
        if found is None:
            return web.Response(status=404)
        self.downloads.append(path)
        return web.Response(body=found, content_type="application/octet-stream")

    @staticmethod
    def _reply(status: int, body: dict[str, Any]) -> web.Response:
        return web.Response(status=status, text=json.dumps(body), content_type="application/json")

    @staticmethod
    async def _params(request: web.Request) -> dict[str, Any]:
        if request.content_type == "application/json":
            return dict(await request.json())
        raw: dict[str, Any] = dict(request.query)
        params: dict[str, Any] = {}
        if request.can_read_body:
            for k, v in (await request.post()).items():
                if isinstance(v, str):
                    raw[k] = v
                else:  # an uploaded file (multipart, e.g. sendPhoto's photo): its bytes
                    assert isinstance(v, web.FileField)
                    params[k] = v.file.read()
                    params[f"_{k}_filename"] = v.filename  # what the person saves it as
        for key, value in raw.items():
            if key in STRING_PARAMS:
                params[key] = value
                continue
            try:
                params[key] = json.loads(value)
            except ValueError:
                params[key] = value
        return params

    # fault injection -------------------------------------------------------------------
    def fail_next(
        self, method: str, *, retry_after: int | None = None, status: int | None = None,
        times: int = 1, migrate_to: int | None = None, description: str | None = None,
    ) -> None:
        """Make the next `times` calls of `method` fail: 429 with retry_after, 400 "group chat
        was upgraded" with migrate_to_chat_id, or `status` (with `description`)."""
        if description is not None:
            fault = Fault(status or 400, description)
        elif migrate_to is not None:
            fault = Fault(400, "Bad Request: group chat was upgraded to a supergroup chat",
                          {"migrate_to_chat_id": migrate_to})
        elif retry_after is not None:
            fault = Fault(status or 429, f"Too Many Requests: retry after {retry_after}",
                          {"retry_after": retry_after})
        else:
            code = status or 502
            fault = Fault(code, "Bad Gateway" if code == 502 else f"Error {code}")
        self._faults[method].extend([fault] * times)

    # answers given as they are (issue 36: a body the library cannot parse) ------------
    def answer_next(self, method: str, result: Any, *, times: int = 1) -> None:
        """The next `times` calls of `method` answer ok with `result` as it is, whatever it
        is (e.g. a getChat without a `type`, which python-telegram-bot cannot parse)."""
        self._answers[method].extend([result] * times)

    def delay_next(self, method: str, seconds: float, *, times: int = 1) -> None:
        """The next `times` calls of `method` take effect at once but are answered only after
        `seconds` (Telegram accepted the message and was slow to say so)."""
        self._delays[method].extend([seconds] * times)

    # chats, users, admins --------------------------------------------------------------
    def user(
        self, user_id: int, first_name: str, last_name: str | None = None,
        language_code: str | None = None,
    ) -> dict[str, Any]:
        user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
        if last_name:
            user["last_name"] = last_name
        if language_code:
            user["language_code"] = language_code
        self.users[user_id] = user
        return user

    def private_chat(self, user: dict[str, Any]) -> dict[str, Any]:
        chat = {"id": user["id"], "type": "private", "first_name": user["first_name"]}
        self.chats[chat["id"]] = chat
        return chat

    def group(self, chat_id: int, title: str, kind: str = "supergroup") -> dict[str, Any]:
        chat = {"id": chat_id, "type": kind, "title": title}
        self.chats[chat_id] = chat
        return chat

    def make_forum(self, chat: dict[str, Any], *, bot_manages_topics: bool = True) -> None:
        """The supergroup becomes a forum (its topics on); the bot may create topics there
        if `bot_manages_topics`."""
        chat["is_forum"] = True
        if bot_manages_topics:
            self.topic_rights.add(chat["id"])

    def channel(self, chat_id: int, title: str) -> dict[str, Any]:
        return self.group(chat_id, title, kind="channel")

    def set_admins(self, chat_id: int, *user_ids: int, owner: int | None = None) -> None:
        self.admins[chat_id] = set(user_ids)
        if owner is not None:
            self.owners[chat_id] = owner

    # updates ---------------------------------------------------------------------------
    def push(self, kind: str, payload: dict[str, Any]) -> int:
        """Queue an update; returns its update_id."""
        update_id = next(self._update_ids)
        update = {"update_id": update_id, kind: payload}
        self._updates.append(update)
        self._all_updates.append(update)
        self._last_update_id = update_id
        self._new_update.set()
        self._wake.set()
        return update_id

    def push_raw(self, update: dict[str, Any]) -> int:
        """Queue any JSON as an update (e.g. one with a required field missing); an
        update_id is added."""
        update_id = next(self._update_ids)
        update = {"update_id": update_id, **update}
        self._updates.append(update)
        self._all_updates.append(update)
        self._last_update_id = update_id
        self._new_update.set()
        self._wake.set()
        return update_id

    def bot_added(self, chat: dict[str, Any], by: dict[str, Any], *,
                  status: str = "member", was: str = "left") -> int:
        """A `my_chat_member` update: someone changed the bot's status in `chat` (added it to
        a group: "left" -> "member")."""
        def member(state: str) -> dict[str, Any]:
            extra = {"can_be_edited": False, "is_anonymous": False, "can_manage_chat": True,
                     "can_delete_messages": True, "can_manage_video_chats": True,
                     "can_restrict_members": True, "can_promote_members": False,
                     "can_change_info": True, "can_invite_users": True,
                     "can_post_stories": True, "can_edit_stories": True,
                     "can_delete_stories": True} if state == "administrator" else {}
            return {"status": state, "user": self.bot, **extra}
        return self.push("my_chat_member", {
            "chat": chat, "from": by, "date": int(time.time()),
            "old_chat_member": member(was), "new_chat_member": member(status),
        })

    def redeliver(self, update_id: int) -> int:
        """Send an already delivered update's payload again under a new update_id, as happens
        when a bot crashes between fetching and confirming."""
        original = next(u for u in self._all_updates if u["update_id"] == update_id)
        kind = next(k for k in original if k != "update_id")
        return self.push(kind, original[kind])

    def _new_message(self, chat: dict[str, Any], **fields: Any) -> dict[str, Any]:
        message = {"message_id": next(self._message_ids[chat["id"]]), "date": int(time.time()),
                   "chat": chat, **fields}
        self.messages[(chat["id"], message["message_id"])] = message
        return message

    def command(
        self, chat: dict[str, Any], user: dict[str, Any] | None, text: str, *,
        anonymous_admin: bool = False,
    ) -> int:
        """A user (or, with user=None in a channel, the channel) sends a command. An anonymous
        admin's command comes from @GroupAnonymousBot on behalf of the group."""
        entity = {"type": "bot_command", "offset": 0, "length": len(text.split()[0])}
        if chat["type"] == "channel":
            message = self._new_message(chat, sender_chat=chat, text=text, entities=[entity])
            return self.push("channel_post", message)
        if anonymous_admin:
            message = self._new_message(chat, sender_chat=chat, text=text, entities=[entity],
                                        **{"from": ANONYMOUS_ADMIN})
            return self.push("message", message)
        message = self._new_message(chat, text=text, entities=[entity], **{"from": user})
        return self.push("message", message)

    def say(self, chat: dict[str, Any], user: dict[str, Any], text: str) -> int:
        """A user sends a plain text message (no command, no reply) to `chat`."""
        return self.push("message", self._new_message(chat, text=text, **{"from": user}))

    def reply(self, to: dict[str, Any], user: dict[str, Any], text: str) -> int:
        """A user replies to the message `to` (e.g. answering a ForceReply) with `text`."""
        message = self._new_message(to["chat"], text=text, reply_to_message=to,
                                    **{"from": user})
        return self.push("message", message)
    def send_poll(
        self, chat: dict[str, Any], user: dict[str, Any], question: str, options: list[str],
        *, correct: list[int] | None = None, explanation: str | None = None,
        kind: str = "quiz", forwarded: bool = False,
    ) -> int:
        """A user sends a poll they made (or forward one) to `chat`, e.g. their private chat
        with the bot. A quiz sent (not forwarded) there says which options are right
        (Bot API #poll: correct_option_ids; correct_option_id when it is one)."""
        poll_id = str(6_000_000_000_000_000_000 + next(self._ids))
        poll: dict[str, Any] = {
            "id": poll_id,
            "question": question,
            "options": [{"text": t, "voter_count": 0, "persistent_id": f"{poll_id}-{i}"}
                        for i, t in enumerate(options)],
            "total_voter_count": 0,
            "is_closed": False,
            "is_anonymous": True,
            "type": kind,
            "allows_multiple_answers": False,
            "allows_revoting": kind != "quiz",
            "members_only": False,
        }
        if kind == "quiz" and correct is not None and not forwarded:
            poll["correct_option_ids"] = correct
            if len(correct) == 1:
                poll["correct_option_id"] = correct[0]
        if explanation is not None:
            poll["explanation"] = explanation
        fields: dict[str, Any] = {"from": user, "poll": poll}
        if forwarded:
            fields["forward_origin"] = {"type": "user", "sender_user": user,
                                        "date": int(time.time())}
        return self.push("message", self._new_message(chat, **fields))

    def _user_file(self, data: bytes, path: str) -> dict[str, Any]:
        """A file a user sent, kept for getFile and its download."""
        file_id = f"user-file{next(self._ids)}"
        self.files[file_id] = (f"{path}/file_{next(self._ids)}", data)
        return {"file_id": file_id, "file_unique_id": f"u{next(self._ids)}",
                "file_size": len(data)}

    def send_photo(self, chat: dict[str, Any], user: dict[str, Any], data: bytes, *,
                   width: int = 640, height: int = 480) -> int:
        """A user sends a photo: Telegram offers a small size and the full one, largest last
        (both download as `data` here)."""
        thumb = {**self._user_file(data, "photos"), "width": 90, "height": 68}
        full = {**self._user_file(data, "photos"), "width": width, "height": height}
        return self.push("message", self._new_message(chat, photo=[thumb, full],
                                                      **{"from": user}))

    def send_document(self, chat: dict[str, Any], user: dict[str, Any], data: bytes,
                      file_name: str, mime_type: str, *, file_size: int | None = None) -> int:
        """A user sends a file (`file_size`: what Telegram reports, if not len(data))."""
        document = {**self._user_file(data, "documents"), "file_name": file_name,
                    "mime_type": mime_type}
        if file_size is not None:
            document["file_size"] = file_size
        return self.push("message", self._new_message(chat, document=document,
                                                      **{"from": user}))

    def answer_poll(self, poll_id: str, user: dict[str, Any], option_ids: list[int]) -> int:
        poll = self.polls[poll_id]
        for i in option_ids:
            poll["options"][i]["voter_count"] += 1
        poll["total_voter_count"] += 1 if option_ids else 0
        update_id = self.push("poll_answer", {
            "poll_id": poll_id,
            "user": user,
            "option_ids": option_ids,
            "option_persistent_ids": [poll["options"][i]["persistent_id"] for i in option_ids],
        })
        if self.poll_state_updates:
            self.push("poll", json.loads(json.dumps(poll)))  # the state as of this vote
        return update_id

    def press(self, message: dict[str, Any], user: dict[str, Any], data: str) -> int:
        """A user presses an inline button (or sends any callback data) on `message`."""
        return self.push("callback_query", {
            "id": str(next(self._ids)),
            "from": user,
            "chat_instance": f"ci{message['chat']['id']}",
            "data": data,
            "message": message,
        })

    @property
    def confirmed_below(self) -> int:
        """Every update with a lower id was confirmed by the bot (a getUpdates offset)."""
        return self._confirmed_below

    @property
    def pending_updates(self) -> int:
        return sum(1 for u in self._updates if u["update_id"] >= self._confirmed_below)

    # inspection ------------------------------------------------------------------------
    def calls_of(self, method: str, *, ok_only: bool = True) -> list[Call]:
        return [c for c in self.calls if c.method == method and (c.ok or not ok_only)]

    def sent_texts(self, chat_id: int | None = None) -> list[str]:
        return [
            c.result["text"] for c in self.calls_of("sendMessage")
            if chat_id is None or c.result["chat"]["id"] == chat_id
        ]

    async def wait_for(
        self, method: str, count: int = 1, *, where: Any = None, within: float = 5.0,
    ) -> list[Call]:
        """Wait until `count` successful calls of `method` (matching `where`) were made."""
        deadline = time.monotonic() + within
        while True:
            found = [c for c in self.calls_of(method) if where is None or where(c)]
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"expected {count} {method} call(s), got {len(found)}; calls: "
                    f"{[c.method for c in self.calls if c.method != 'getUpdates']}"
                )
            await asyncio.sleep(0.01)

    async def wait_all_confirmed(self, within: float = 5.0) -> None:
        """Wait until the bot confirmed every update pushed so far."""
        if self._all_updates:
            await self.wait_confirmed(self._all_updates[-1]["update_id"], within)

    async def wait_confirmed(self, update_id: int, within: float = 5.0) -> None:
        """Wait until the bot confirmed (fetched and queued) the update."""
        deadline = time.monotonic() + within
        while self._confirmed_below <= update_id:
            if time.monotonic() > deadline:
                raise AssertionError(f"update {update_id} was never confirmed")
            await asyncio.sleep(0.01)

    # Bot API methods -------------------------------------------------------------------
    async def _api_getUpdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook is not None:
            raise ApiError(409, "Conflict: can't use getUpdates method while webhook is "
                                "active; use deleteWebhook to delete the webhook first")
        offset = int(params.get("offset") or 0)
        if offset > self._confirmed_below:
            self._confirmed_below = offset
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
        if "allowed_updates" in params:
            self.allowed_updates = params["allowed_updates"] or None
        limit = int(params.get("limit") or 100)
        timeout = min(float(params.get("timeout") or 0), self.max_long_poll)
        deadline = time.monotonic() + timeout
        self._polls += 1
        this = self._polls
        if self._open_polls:
            self.poll_overlaps += 1
            self._new_update.set()  # the open ones look again, and lose to this one
        self._open_polls += 1
        try:
            return await self._poll(this, offset, limit, deadline)
        finally:
            self._open_polls -= 1

    async def _poll(self, this: int, offset: int, limit: int,
                    deadline: float) -> list[dict[str, Any]]:
        while True:
            if self.one_poller and this != self._polls:
                raise ApiError(409, "Conflict: terminated by other getUpdates request; make "
                                    "sure that only one bot instance is running")
            pending = [
                u for u in self._updates
                if u["update_id"] >= max(offset, 1) and self._allowed(u)
            ]
            remaining = deadline - time.monotonic()
            if pending or remaining <= 0 or self._closing:
                return pending[:limit]
            self._new_update.clear()
            try:
                await asyncio.wait_for(self._new_update.wait(), remaining)
            except TimeoutError:
                pass

    def _allowed(self, update: dict[str, Any]) -> bool:
        if not self.allowed_updates:
            return True
        return any(kind in update for kind in self.allowed_updates)

    def _api_getMe(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.bot

    def _api_deleteWebhook(self, params: dict[str, Any]) -> bool:
        self.webhook = None
        if params.get("drop_pending_updates"):
            self._drop_pending()
        return True

    def _api_setWebhook(self, params: dict[str, Any]) -> bool:
        url = params.get("url") or ""
        if not url:  # an empty URL removes the webhook
            return self._api_deleteWebhook(params)
        if not url.startswith(("http://", "https://")):
            raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
        secret = params.get("secret_token")
        if secret is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", str(secret)):
            raise bad_request("secret token contains unallowed characters")
        connections = int(params.get("max_connections") or 40)
        if not 1 <= connections <= 100:
            raise bad_request("invalid max_connections")
        if params.get("drop_pending_updates"):
            self._drop_pending()
        self.webhook = {"url": url, "secret_token": None if secret is None else str(secret),
                        "max_connections": connections}
        if "allowed_updates" in params:
            self.allowed_updates = params["allowed_updates"] or None
        if self._dispatcher is None or self._dispatcher.done():
            self._dispatcher = asyncio.create_task(self._dispatch(), name="fake-webhook")
        self._wake.set()
        return True

    def _api_getWebhookInfo(self, params: dict[str, Any]) -> dict[str, Any]:
        info: dict[str, Any] = {
            "url": self.webhook["url"] if self.webhook else "",
            "has_custom_certificate": False,
            "pending_update_count": len(self._updates),
        }
        if self.webhook:
            info["max_connections"] = self.webhook["max_connections"]
            if self.allowed_updates:
                info["allowed_updates"] = self.allowed_updates
        if self.webhook_error is not None:
            info["last_error_date"], info["last_error_message"] = self.webhook_error
        return info

    def _drop_pending(self) -> None:
        self._updates = []
        self._confirmed_below = self._last_update_id + 1

    # webhook delivery ------------------------------------------------------------------
    def _settle(self, update_id: int) -> None:
        """The update needs no more delivery: everything below the oldest one still pending
        is confirmed."""
        self._updates = [u for u in self._updates if u["update_id"] != update_id]
        self._retry_at.pop(update_id, None)
        below = self._updates[0]["update_id"] if self._updates else self._last_update_id + 1
        self._confirmed_below = max(self._confirmed_below, below)

    async def _dispatch(self) -> None:
        """Start a request for every pending update not being delivered, due for a try, up
        to max_connections at once."""
        while not self._closing and self.webhook is not None:
            self._wake.clear()
            now = time.monotonic()
            room = self.webhook["max_connections"] - len(self._delivering)
            for update in list(self._updates):
                if room <= 0:
                    break
                update_id = update["update_id"]
                if update_id in self._delivering or self._retry_at.get(update_id, (0, 0))[1] > now:
                    continue
                if not self._allowed(update):
                    self._settle(update_id)  # Telegram never sends what was not asked for
                    continue
                room -= 1
                self._delivering.add(update_id)
                task = asyncio.create_task(self._deliver(update, self.webhook))
                self._sending.add(task)
                task.add_done_callback(self._sending.discard)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.02)

    async def _deliver(self, update: dict[str, Any], webhook: dict[str, Any]) -> None:
        update_id = update["update_id"]
        targets = self.webhook_targets
        if self.webhook_router is not None:
            target = self.webhook_router(update)
        elif targets:
            target = targets[next(self._round_robin) % len(targets)]
        else:
            target = webhook["url"]
        delivery = Delivery(update_id, target)
        self.deliveries.append(delivery)
        headers = {"Content-Type": "application/json"}
        if webhook["secret_token"] is not None:
            headers["X-Telegram-Bot-Api-Secret-Token"] = webhook["secret_token"]
        if self._session is None:
            self._session = aiohttp.ClientSession()
        try:
            async with self._session.post(
                target, data=json.dumps(update), headers=headers,
                timeout=aiohttp.ClientTimeout(total=self.delivery_timeout),
            ) as response:
                await response.read()
                delivery.status = response.status
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            delivery.error = type(exc).__name__
        finally:
            delivery.finished = time.monotonic()
            self._delivering.discard(update_id)
        if delivery.ok:
            self.webhook_confirmed.add(update_id)
            self._settle(update_id)
        else:
            failures = self._retry_at.get(update_id, (0, 0.0))[0] + 1
            delay = min(self.max_retry_delay, self.retry_delay * 2 ** (failures - 1))
            self._retry_at[update_id] = (failures, time.monotonic() + delay)
            why = f"Wrong response from the webhook: {delivery.status}" \
                if delivery.status is not None else f"Connection failed ({delivery.error})"
            self.webhook_error = (int(time.time()), why)
        self._wake.set()

    def deliveries_of(self, update_id: int) -> list[Delivery]:
        return [d for d in self.deliveries if d.update_id == update_id]

    def _api_setMyCommands(self, params: dict[str, Any]) -> bool:
        commands = params["commands"]
        for c in commands:
            if not 1 <= len(c["command"]) <= 32 or not 1 <= len(c["description"]) <= 256:
                raise bad_request("BOT_COMMAND_INVALID")
        self.commands[params.get("language_code") or ""] = commands
        return True

    def _api_getMyCommands(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        return self.commands.get(params.get("language_code") or "", [])

    def _chat(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = params.get("chat_id")
        chat = None if chat_id is None else self.chats.get(chat_id)
        if chat is None:
            raise bad_request("chat not found")
        return chat

    def _message(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        message_id = params.get("message_id")
        message = None if message_id is None else self.messages.get((chat["id"], message_id))
        if message is None:
            raise bad_request("message to edit not found")
        return message

    @staticmethod
    def _check_entities(text: str, entities: Any) -> None:
        """Entities inside their text, counted in UTF-16 units as the server counts."""
        for entity in entities or []:
            offset, length = int(entity["offset"]), int(entity["length"])
            if offset < 0 or length <= 0 or offset + length > utf16_len(text):
                raise bad_request("can't parse entities: entity beyond the end of the text")

    @staticmethod
    def _check_markup(markup: Any) -> None:
        if not markup:
            return
        for row in markup.get("inline_keyboard", []):
            for button in row:
                data = button.get("callback_data")
                if data is not None and not 1 <= len(data.encode()) <= 64:
                    raise bad_request("BUTTON_DATA_INVALID")
                if not button.get("text"):
                    raise bad_request("BUTTON_TEXT_EMPTY")

    def _check_reply(self, chat: dict[str, Any], reply: dict[str, Any] | None) -> None:
        if not reply or (chat["id"], reply.get("message_id")) in self.messages:
            return
        if not reply.get("allow_sending_without_reply"):
            raise bad_request("message to be replied not found")

    def _api_sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        text = params.get("text") or ""
        if not text.strip():
            raise bad_request("message text is empty")
        if utf16_len(text) > 4096:
            raise bad_request("message is too long")
        self._check_entities(text, params.get("entities"))
        self._check_markup(params.get("reply_markup"))
        self._check_reply(chat, params.get("reply_parameters"))
        fields: dict[str, Any] = {"from": self.bot, "text": text}
        if params.get("entities"):  # kept with the message, as a reply quotes it
            fields["entities"] = params["entities"]
        if (thread := params.get("message_thread_id")) is not None:
            if int(thread) not in self.topics[chat["id"]]:
                raise bad_request("message thread not found")
            fields |= {"message_thread_id": int(thread), "is_topic_message": True}
        if (params.get("reply_markup") or {}).get("inline_keyboard"):
            # a message shows only an inline keyboard; a ForceReply is not kept with it
            fields["reply_markup"] = params["reply_markup"]
        return self._new_message(chat, **fields)

    def _api_createForumTopic(self, params: dict[str, Any]) -> dict[str, Any]:
        """As Telegram: a forum supergroup only, the bot an admin with can_manage_topics; the
        topic's id is that of the service message that opens it."""
        chat = self._chat(params)
        name = params.get("name") or ""
        if not chat.get("is_forum"):
            raise bad_request("the chat is not a forum")
        if chat["id"] not in self.topic_rights:
            raise bad_request("not enough rights to create a topic")
        if not 1 <= len(name) <= 128:
            raise bad_request("TOPIC_NAME_INVALID")
        opened = self._new_message(chat, **{"from": self.bot, "forum_topic_created": {
            "name": name, "icon_color": 7322096}})
        self.topics[chat["id"]][opened["message_id"]] = name
        return {"message_thread_id": opened["message_id"], "name": name,
                "icon_color": 7322096}

    def _api_sendPoll(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        question = params.get("question") or ""
        options = params.get("options") or []
        if not 1 <= utf16_len(question) <= 300:
            raise bad_request("POLL_QUESTION_INVALID")
        if not 1 <= len(options) <= 12:
            raise bad_request("POLL_ANSWERS_INVALID")
        texts = [o["text"] if isinstance(o, dict) else o for o in options]
        if any(not 1 <= utf16_len(t) <= 100 for t in texts):
            raise bad_request("POLL_ANSWER_INVALID")
        kind = params.get("type") or "regular"
        anonymous = params.get("is_anonymous", True)
        correct = params.get("correct_option_ids")
        if correct is None and params.get("correct_option_id") is not None:
            correct = [params["correct_option_id"]]
        if kind == "quiz" and (not correct or any(not 0 <= i < len(texts) for i in correct)):
            raise bad_request("wrong correct option ids specified")
        # Bot API 9.6: "monotonically increasing" ids; several only in a multiple-answer quiz
        # (the server's wording for these two is not in the sources: ours)
        if correct and any(a >= b for a, b in itertools.pairwise(correct)):
            raise bad_request("correct option ids must be unique and increasing")
        multiple = bool(params.get("allows_multiple_answers", False))
        if correct and len(correct) > 1 and not multiple:
            raise bad_request("several correct options need allows_multiple_answers")
        description = params.get("description")
        if description is not None and utf16_len(description) > 1024:
            raise bad_request("poll description is too long")
        self._check_entities(description or "", params.get("description_entities"))
        explanation = params.get("explanation")
        if explanation is not None and (
            utf16_len(explanation) > 200 or explanation.count("\n") > 2
        ):
            raise bad_request("explanation is too long or has too many line feeds")
        open_period = params.get("open_period")
        if open_period is not None and not 5 <= int(open_period) <= 2_628_000:
            raise bad_request("invalid open_period")
        if chat["type"] == "channel" and not anonymous:
            raise bad_request("non-anonymous polls can't be sent to channel chats")
        poll_id = str(5_000_000_000_000_000_000 + next(self._ids))
        poll: dict[str, Any] = {
            "id": poll_id,
            "question": question,
            "options": [
                {"text": t, "voter_count": 0, "persistent_id": f"{poll_id}-{i}"}
                for i, t in enumerate(texts)
            ],
            "total_voter_count": 0,
            "is_closed": False,
            "is_anonymous": anonymous,
            "type": kind,
            "allows_multiple_answers": multiple,
            "allows_revoting": bool(params.get("allows_revoting", kind != "quiz")),
            "members_only": bool(params.get("members_only", False)),
        }
        if kind == "quiz":
            assert correct  # a quiz without them was refused above
            poll["correct_option_ids"] = correct
            if len(correct) == 1:
                poll["correct_option_id"] = correct[0]
        if explanation is not None:
            poll["explanation"] = explanation
        if (media := params.get("explanation_media")) is not None:
            poll["explanation_media"] = self._poll_photo(params, media, kind)
        if description:
            poll["description"] = description
            if params.get("description_entities"):
                poll["description_entities"] = params["description_entities"]
        if open_period is not None:
            poll["open_period"] = int(open_period)
        self._check_markup(params.get("reply_markup"))
        fields: dict[str, Any] = {"from": self.bot, "poll": poll}
        if params.get("reply_markup"):
            fields["reply_markup"] = params["reply_markup"]
        message = self._new_message(chat, **fields)
        self.polls[poll_id] = poll
        self.poll_messages[poll_id] = (chat["id"], message["message_id"])
        return message

    def _poll_photo(self, params: dict[str, Any], media: Any, kind: str) -> dict[str, Any]:
        """A quiz's explanation_media (Bot API 10.0) as a PollMedia: a photo uploaded with
        the call (attach://<part>) or a file_id of one sent before; its bytes are kept."""
        if kind != "quiz":
            raise bad_request("explanation media can be specified only for quizzes")
        if not isinstance(media, dict) or media.get("type") != "photo":
            raise bad_request("unsupported explanation media")
        ref = media.get("media")
        if isinstance(ref, str) and ref.startswith("attach://"):
            photo = params.get(ref.removeprefix("attach://"))
        else:
            photo = self.photos.get(ref) if isinstance(ref, str) else None
            if photo is None:
                raise bad_request("wrong file identifier/HTTP URL specified")
        if not isinstance(photo, bytes) or not photo:
            raise bad_request("there is no photo in the request")
        width, height = png_size(photo)
        size = {"file_id": f"photo{next(self._ids)}", "file_unique_id": f"u{next(self._ids)}",
                "width": width, "height": height, "file_size": len(photo)}
        self.photos[str(size["file_id"])] = photo
        self.explanation_photos.append(photo)
        return {"photo": [size]}

    def _api_sendPhoto(self, params: dict[str, Any]) -> dict[str, Any]:
        """A photo uploaded as multipart (its bytes stay in the call's params["photo"])."""
        chat = self._chat(params)
        photo = params.get("photo")
        if isinstance(photo, str):  # a file_id of a photo sent before
            if photo not in self.photos:
                raise bad_request("wrong file identifier/HTTP URL specified")
            photo = self.photos[photo]
        if not isinstance(photo, bytes) or not photo:
            raise bad_request("there is no photo in the request")
        width, height = png_size(photo)
        caption = params.get("caption")
        if caption is not None and utf16_len(caption) > 1024:
            raise bad_request("message caption is too long")
        entities = params.get("caption_entities")
        self._check_entities(caption or "", entities)
        self._check_reply(chat, params.get("reply_parameters"))
        size = {"file_id": f"photo{next(self._ids)}", "file_unique_id": f"u{next(self._ids)}",
                "width": width, "height": height, "file_size": len(photo)}
        self.photos[str(size["file_id"])] = photo
        return self._new_message(chat, **{"from": self.bot, "photo": [size]},
                                 **({"caption": caption} if caption else {}),
                                 **({"caption_entities": entities} if entities else {}))

    def _api_sendDocument(self, params: dict[str, Any]) -> dict[str, Any]:
        """A file uploaded as multipart (its bytes stay in the call's params["document"])."""
        chat = self._chat(params)
        document = params.get("document")
        if not isinstance(document, bytes) or not document:
            raise bad_request("there is no document in the request")
        if len(document) > 50 * 1024 * 1024:
            raise bad_request("file is too big")
        caption = params.get("caption")
        if caption is not None and utf16_len(caption) > 1024:
            raise bad_request("message caption is too long")
        self._check_reply(chat, params.get("reply_parameters"))
        self._check_markup(params.get("reply_markup"))
        sent = {"file_id": f"doc{next(self._ids)}", "file_unique_id": f"u{next(self._ids)}",
                "file_size": len(document)}
        return self._new_message(chat, **{"from": self.bot, "document": sent},
                                 **({"caption": caption} if caption else {}))

    def _api_stopPoll(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._message(params)
        poll: dict[str, Any] | None = message.get("poll")
        if poll is None:
            raise bad_request("message with poll to stop not found")
        if poll["is_closed"]:
            raise bad_request("poll has already been closed")
        poll["is_closed"] = True
        return poll

    def _api_editMessageReplyMarkup(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._message(params)
        markup = params.get("reply_markup") or None
        self._check_markup(markup)
        if markup == message.get("reply_markup"):
            raise bad_request("message is not modified: specified new message content and "
                              "reply markup are exactly the same as a current content and "
                              "reply markup of the message")
        if markup:
            message["reply_markup"] = markup
        else:
            message.pop("reply_markup", None)
        return message

    def _api_editMessageText(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._message(params)
        text = params.get("text") or ""
        if not text.strip() or utf16_len(text) > 4096:
            raise bad_request("MESSAGE_TEXT_INVALID")
        message["text"] = text
        if "reply_markup" in params:
            if (params["reply_markup"] or {}).get("inline_keyboard"):
                message["reply_markup"] = params["reply_markup"]
            else:  # an empty keyboard removes it, and the message comes back without one
                message.pop("reply_markup", None)
        return message

    def _api_answerCallbackQuery(self, params: dict[str, Any]) -> bool:
        query_id = params.get("callback_query_id")
        if query_id in self._answered_queries:  # a query can be answered once
            raise bad_request("query is too old and response timeout expired or query ID is "
                              "invalid")
        self._answered_queries.add(query_id)
        text = params.get("text")
        if text is not None and utf16_len(text) > 200:
            raise bad_request("MESSAGE_TOO_LONG")
        return True

    def _api_getFile(self, params: dict[str, Any]) -> dict[str, Any]:
        """A user's file by its file_id; over 20 MB Telegram lets no bot download it."""
        found = self.files.get(str(params.get("file_id")))
        if found is None:
            raise bad_request("invalid file_id")
        path, data = found
        if len(data) > 20 * 1024 * 1024:
            raise bad_request("file is too big")
        return {"file_id": params["file_id"], "file_unique_id": f"u{params['file_id']}",
                "file_size": len(data), "file_path": path}

    def _api_deleteMessage(self, params: dict[str, Any]) -> bool:
        chat = self._chat(params)
        if self.messages.pop((chat["id"], int(params.get("message_id") or 0)), None) is None:
            raise bad_request("message to delete not found")
        return True

    def _member(self, chat_id: int, user_id: int) -> dict[str, Any]:
        user = self.users.get(user_id) or {"id": user_id, "is_bot": False, "first_name": "?"}
        if self.owners.get(chat_id) == user_id:
            return {"status": "creator", "user": user, "is_anonymous": False}
        if user_id in self.admins[chat_id]:
            return {
                "status": "administrator", "user": user, "can_be_edited": False,
                "is_anonymous": False, "can_manage_chat": True, "can_delete_messages": True,
                "can_manage_video_chats": True, "can_restrict_members": True,
                "can_promote_members": False, "can_change_info": True,
                "can_invite_users": True, "can_post_stories": False, "can_edit_stories": False,
                "can_delete_stories": False,
            }
        return {"status": "member", "user": user}

    def _api_getChatMember(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        return self._member(chat["id"], int(params["user_id"]))

    def _api_getChatAdministrators(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        chat = self._chat(params)
        people = ([self.owners[chat["id"]]] if chat["id"] in self.owners else []) + sorted(
            self.admins[chat["id"]]
        )
        return [self._member(chat["id"], user_id) for user_id in people]

    def _api_getChat(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        return {
            **chat, "accent_color_id": 0, "max_reaction_count": 11,
            "accepted_gift_types": {
                "unlimited_gifts": False, "limited_gifts": False, "unique_gifts": False,
                "premium_subscription": False, "gifts_from_channels": False,
            },
        }


def png_size(data: bytes) -> tuple[int, int]:
    """A PNG's (width, height) from its IHDR chunk; Bad Request if it is no PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise bad_request("IMAGE_PROCESS_FAILED")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
