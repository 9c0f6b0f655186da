"""The Telegram side of the behaviour suite: the real python-telegram-bot and our adapter against
the fake Bot API (tests/fakes/telegram_api.py), with the core's Scheduler ticked by hand.

Every action is an update pushed to the fake, exactly as Telegram would deliver it; nothing
calls the core to fake an action. An action returns once the bot confirmed and fully handled
its update. What the acting person saw is read back from the Bot API calls the bot made:
- a reply to their command (sendMessage quoting it),
- the alert answering their button press (answerCallbackQuery),
- any other message in their private chat,
- the questions that appeared (a quiz poll, or a message with answer buttons), as post ids.
Places are the fake's chat dicts and people its user dicts.

`telegram_harness(..., webhook=True)` takes the updates through the adapter's webhook (the
fake POSTs each one and retries until a 2xx) instead of long polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr

from bot.adapters.telegram import TelegramAdapter
from bot.adapters.telegram.callback_data import answer_data, flag_data
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from bot.settings import Settings
from tests.behaviour.harness import Seen
from tests.clock import FakeClock
from tests.fakes.telegram_api import FakeTelegramAPI

NAMES = ("Alice", "Bob", "Chandra", "Dipa", "Esha", "Farid", "Gita", "Hari")
GROUP_ID = -1001234567890
SETTLE_WITHIN = 10.0  # seconds; only reached when something is broken

Chat = dict[str, Any]
User = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Sent:
    """One message that showed a question: which post, where, and as what."""

    call: int  # index into fake.calls
    post_id: int
    chat_id: int
    message: dict[str, Any]  # as the bot sent it (a stale client still shows this)
    poll_id: str | None


class TelegramHarness:
    platform = "telegram"

    def __init__(
        self, fake: FakeTelegramAPI, service: QuizService, clock: FakeClock, *,
        webhook: bool = False,
    ) -> None:
        self.fake = fake
        self.service = service
        self.clock = clock
        self.settings = Settings(
            _env_file=None,
            telegram_bot_token=SecretStr(fake.token),
            telegram_api_base_url=fake.base_url,
            **(webhook_settings() if webhook else {}),
        )
        self.adapter: TelegramAdapter | None = None
        self.scheduler = Scheduler(service)
        self._people: dict[int, User] = {}
        self._private: dict[int, Chat] = {}
        self._group: Chat | None = None
        self._sent: list[Sent] = []
        self._scanned = 0  # fake.calls up to here were looked at for questions
        self._scan_lock = asyncio.Lock()
        self._claimed: set[int] = set()  # calls already reported to some action
        self._answers: dict[tuple[int, int, int], int] = {}  # (user, post, option) -> update
        self._ticked: set[int] = set()  # fake.calls made during tick()
        self._joined = 0  # groups the bot was added to by join()
        self._joins: dict[int, int] = {}  # chat id -> the update that added the bot

    # lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        self.adapter = TelegramAdapter(self.service, self.settings)
        await self.adapter.start()
        self.scheduler = Scheduler(self.service)

    async def stop(self) -> None:
        if self.adapter is not None:
            await self.adapter.stop()
            self.adapter = None

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    # who and where -----------------------------------------------------------------------
    def person(self, n: int, *, language: str = "en") -> User:
        if n not in self._people:
            name = NAMES[n - 1] if n <= len(NAMES) else f"Person {n}"
            user = self.fake.user(1000 + n, name, language_code=language)
            self._people[n] = user
            self._private[user["id"]] = self.fake.private_chat(user)  # they started the bot
        return self._people[n]

    def person_key(self, who: User) -> str:
        return f"tg:{who['id']}"

    def group(self) -> Chat:
        if self._group is None:
            self._group = self.fake.group(GROUP_ID, "Study Group")
        return self._group

    def make_admin(self, who: User) -> None:
        self.fake.admins[self.group()["id"]].add(who["id"])

    def private(self, who: User) -> Chat:
        return self._private[who["id"]]

    # actions -----------------------------------------------------------------------------
    async def quiz(self, where: Chat, who: User, selector: str | None = None, *,
                   count: int | None = None) -> Seen:
        words = ["/quiz", *([selector] if selector else []), *([str(count)] if count else [])]
        return await self._command(where, who, " ".join(words), questions=1)

    async def change_settings(self, where: Chat, who: User, *, seconds: int | None = None,
                       mode: str | None = None, chart: bool | None = None,
                       quiz: str | None = None, peer: int | str | None = None,
                       discussion: str | None = None,
                       target: int | str | None = None) -> Seen:
        words = ["/settings", *(["time", str(seconds)] if seconds is not None else []),
                 *(["mode", mode] if mode is not None else []),
                 *(["chart", "on" if chart else "off"] if chart is not None else []),
                 *(["quiz", quiz] if quiz is not None else []),
                 *(["peer", str(peer)] if peer is not None else []),
                 *(["discussion", discussion] if discussion is not None else []),
                 *(["target", str(target)] if target is not None else [])]
        return await self._command(where, who, " ".join(words))

    async def analysis(self, where: Chat, who: User, quiz: str | None = None) -> Seen:
        return await self._command(where, who, f"/analysis {quiz}" if quiz else "/analysis")

    def summary_images(self, post_id: int) -> list[bytes]:
        anchors = self._anchors(post_id)
        return [c.params["photo"] for c in self.fake.calls_of("sendPhoto")
                if (c.params.get("chat_id"),
                    (c.params.get("reply_parameters") or {}).get("message_id")) in anchors]

    def _anchors(self, post_id: int) -> set[tuple[int, int]]:
        return {(s.chat_id, s.message["message_id"]) for s in self._sent if s.post_id == post_id}

    def question_shown(self, post_id: int) -> str:
        sent = [s for s in self._sent if s.post_id == post_id]
        assert sent, f"post {post_id} was never shown on Telegram"
        message = sent[0].message
        return str((message.get("poll") or {}).get("question") or message.get("text") or "")

    def questions_in(self, where: Chat) -> list[int]:
        return list(dict.fromkeys(s.post_id for s in self._sent if s.chat_id == where["id"]))

    def posted_texts(self, where: Chat) -> list[str]:
        return [
            with_buttons(c.params) for c in self.fake.calls
            if c.ok and c.method == "sendMessage" and c.params.get("chat_id") == where["id"]
            and ("reply_markup" not in c.params or starts_quizzes(c.params["reply_markup"]))
            and not c.params.get("reply_parameters")
        ]

    async def answer(self, where: Chat, who: User, post_id: int, option: int) -> Seen:
        sent = self._latest(post_id)
        start = len(self.fake.calls)
        if sent.poll_id is not None:  # a vote on the quiz poll (a forwarded one, if not theirs)
            update_id = self.fake.answer_poll(sent.poll_id, who, [option])
        else:  # a press on its button, as the person's client shows it
            update_id = self.fake.press(sent.message, who, answer_data(post_id, option))
        self._answers[(who["id"], post_id, option)] = update_id
        return await self._seen(start, update_id, where, who, questions=1)

    async def answer_again(self, where: Chat, who: User, post_id: int, option: int) -> Seen:
        earlier = self._answers.get((who["id"], post_id, option))
        if earlier is None:
            return await self.answer(where, who, post_id, option)
        start = len(self.fake.calls)
        return await self._seen(start, self.fake.redeliver(earlier), where, who, questions=1)

    async def forged_click(self, where: Chat, who: User, post_id: int, option: int) -> Seen:
        """Callback data naming `post_id`, sent from another message of the bot's in `where`
        (another question's if there is one)."""
        others = [s for s in self._sent if s.chat_id == where["id"] and s.post_id != post_id]
        if others:
            message = others[-1].message
        else:
            mine = [m for (chat_id, _), m in self.fake.messages.items()
                    if chat_id == where["id"] and m.get("from") == self.fake.bot]
            message = mine[-1] if mine else self.fake._new_message(
                where, text="…", **{"from": self.fake.bot}
            )
        start = len(self.fake.calls)
        update_id = self.fake.press(message, who, answer_data(post_id, option))
        return await self._seen(start, update_id, where, who)

    # kinds of question -----------------------------------------------------------------------
    async def answer_picks(self, where: Chat, who: User, post_id: int, shown: set[int]) -> Seen:
        """A vote for every option in `shown` on the multi-answer poll, or a toggle on each
        then Submit (what Submit's alert said)."""
        sent = self._latest(post_id)
        start = len(self.fake.calls)
        if sent.poll_id is not None:
            update_id = self.fake.answer_poll(sent.poll_id, who, sorted(shown))
            return await self._seen(start, update_id, where, who, questions=1)
        for option in sorted(shown):
            await self._settle(self.fake.press(sent.message, who, f"t:{post_id}:{option}"))
        start = len(self.fake.calls)
        update_id = self.fake.press(sent.message, who, f"s:{post_id}")
        return await self._seen(start, update_id, where, who, questions=1)

    async def answer_typed(self, where: Chat, who: User, post_id: int, text: str) -> Seen:
        """Private: a plain message. Group: "Answer ✍", then a reply to the prompt it sent."""
        sent = self._latest(post_id)
        if where["type"] == "private":
            start = len(self.fake.calls)
            return await self._seen(start, self.fake.say(where, who, text), where, who,
                                    questions=1)
        start = len(self.fake.calls)
        await self._settle(self.fake.press(sent.message, who, f"w:{post_id}"))
        prompts = [c.result for c in self.fake.calls[start:] if c.ok
                   and c.method == "sendMessage" and c.params["chat_id"] == where["id"]
                   and "force_reply" in (c.params.get("reply_markup") or {})]
        assert prompts, "Answer ✍ asked nothing"
        start = len(self.fake.calls)
        return await self._seen(start, self.fake.reply(prompts[-1], who, text), where, who,
                                questions=1)

    async def answer_order(self, where: Chat, who: User, post_id: int, shown: list[int]) -> Seen:
        """Private: each option pressed in turn on the keyboard as the bot edits it (what
        the last press showed). Group: the letters typed as a reply to the question."""
        sent = self._latest(post_id)
        if where["type"] != "private":
            letters = " ".join("ABCDEFGHIJKL"[i] for i in shown)
            start = len(self.fake.calls)
            return await self._seen(start, self.fake.reply(sent.message, who, letters), where,
                                    who, questions=1)
        sequence = ""
        for i, option in enumerate(shown):
            message = self.fake.messages[(sent.chat_id, sent.message["message_id"])]
            sequence += str(option)
            data = f"o:{post_id}:{sequence}"
            offered = [b["callback_data"] for row in message["reply_markup"]["inline_keyboard"]
                       for b in row]
            assert data in offered, f"{data} is not on the keyboard: {offered}"
            start = len(self.fake.calls)
            update_id = self.fake.press(message, who, data)
            if i < len(shown) - 1:
                await self._settle(update_id)
        return await self._seen(start, update_id, where, who, questions=1)

    async def forged_submit(self, where: Chat, who: User, post_id: int) -> Seen:
        """On the question's own message: a toggle of an option it does not have and an
        order naming one option twice (what the last one showed)."""
        sent = self._latest(post_id)
        start = len(self.fake.calls)
        await self._settle(self.fake.press(sent.message, who, f"t:{post_id}:11"))
        first = await self._seen(start, self.fake.press(sent.message, who, f"o:{post_id}:00"),
                                 where, who)
        return first

    # the confidence tap (bot/adapters/telegram/confidence.py) -----------------------------
    async def set_confidence(self, where: Chat, who: User, on: bool) -> Seen:
        return await self._command(where, who, f"/settings confidence {'on' if on else 'off'}")

    async def tap_confidence(self, where: Chat, who: User, post_id: int,
                             choice: str) -> Seen:
        """The question's keyboard, as the press edited it into the four buttons."""
        sent = self._latest(post_id)
        message = self.fake.messages[(sent.chat_id, sent.message["message_id"])]
        taps = [b["callback_data"] for row in message.get("reply_markup", {})
                .get("inline_keyboard", []) for b in row
                if b["callback_data"].startswith("c:") and b["text"].endswith(choice)]
        assert taps, f"post {post_id} asks no confidence: {message.get('reply_markup')}"
        start = len(self.fake.calls)
        return await self._seen(start, self.fake.press(message, who, taps[0]), where, who,
                                questions=1)

    async def forged_tap(self, where: Chat, who: User, post_id: int) -> Seen:
        sent = self._latest(post_id)
        message = self.fake.messages[(sent.chat_id, sent.message["message_id"])]
        start = len(self.fake.calls)
        return await self._seen(start, self.fake.press(message, who, f"c:{post_id}:a0:7"),
                                where, who)

    async def report_via_flag(self, where: Chat, who: User, post_id: int, text: str) -> Seen:
        sent = self._latest(post_id)
        message = self.fake.messages.get((sent.chat_id, sent.message["message_id"]),
                                         sent.message)  # as it is now
        [data] = [b["callback_data"] for row in message["reply_markup"]["inline_keyboard"]
                  for b in row if b["callback_data"].startswith("r:")]
        start = len(self.fake.calls)
        update_id = self.fake.press(message, who, data)
        await self._settle(update_id)
        prompts = [c.result for c in self.fake.calls[start:] if c.ok
                   and c.method == "sendMessage" and c.params["chat_id"] == who["id"]
                   and "force_reply" in (c.params.get("reply_markup") or {})]
        assert prompts, "the ⚑ press asked nothing"
        start = len(self.fake.calls)
        update_id = self.fake.reply(prompts[-1], who, text)
        return await self._seen(start, update_id, self.private(who), who)

    async def mydata(self, where: Chat, who: User) -> Seen:
        return await self._command(where, who, "/mydata")

    async def mydata_delete(self, where: Chat, who: User, *, pressed_by: User | None = None,
                            forged: bool = False) -> Seen:
        start = len(self.fake.calls)
        update_id = self.fake.command(where, who, "/mydata delete")
        await self._settle(update_id)
        asked = [c.result for c in self.fake.calls[start:] if c.ok and c.method == "sendMessage"
                 and is_confirmation(c.params.get("reply_markup"))]
        if not asked:
            return await self._seen(start, update_id, where, who)
        message = asked[-1]
        [data] = [b["callback_data"] for row in message["reply_markup"]["inline_keyboard"]
                  for b in row]
        if forged:  # another signature of the same length
            data = data[:-1] + ("0" if data[-1] != "0" else "1")
        presser = pressed_by or who
        start = len(self.fake.calls)
        update_id = self.fake.press(message, presser, data)
        seen = await self._seen(start, update_id, where, presser)
        seen.texts += [c.params["text"] for c in self.fake.calls[start:]
                       if c.ok and c.method == "editMessageText"
                       and c.params.get("message_id") == message["message_id"]]
        seen.texts = [text for text in seen.texts if text]  # a press answered silently
        return seen

    async def forged_flag(self, where: Chat, who: User, question_id: str) -> Seen:
        message = (
            [s.message for s in self._sent if s.chat_id == where["id"]]
            or [self.fake._new_message(where, text="…", **{"from": self.fake.bot})]
        )[-1]
        data = flag_data(question_id) if len(question_id.encode()) <= 62 \
            else f"r:{question_id}"[:64]
        start = len(self.fake.calls)
        update_id = self.fake.press(message, who, data)
        return await self._seen(start, update_id, where, who)

    async def report(self, where: Chat, who: User, question_id: str | None,
                     text: str) -> Seen:
        return await self._command(where, who, " ".join(
            ["/report", *([question_id] if question_id else []), text]))

    async def reports(self, where: Chat, who: User, resolve: int | None = None,
                      note: str | None = None) -> Seen:
        words = ["/reports", *(["resolve", str(resolve)] if resolve is not None else []),
                 *([note] if note else [])]
        return await self._command(where, who, " ".join(words))

    async def dashboard(self, where: Chat, who: User, *, revoke: bool = False) -> Seen:
        return await self._command(where, who, "/dashboard revoke" if revoke else "/dashboard")

    async def help(self, where: Chat, who: User) -> Seen:
        return await self._command(where, who, "/help")

    async def chat_language(self, where: Chat, who: User, code: str) -> Seen:
        return await self._command(where, who, f"/lang chat {code}")

    async def join(self, language: str | None = None) -> Chat:
        self._joined += 1
        chat = self.fake.group(GROUP_ID - self._joined, f"New Group {self._joined}")
        adder = self.fake.user(3000 + self._joined, "Owner", language_code=language)
        self._joins[chat["id"]] = update_id = self.fake.bot_added(chat, adder)
        await self._settle(update_id)
        return chat

    async def join_again(self, where: Chat) -> None:
        await self._settle(self.fake.redeliver(self._joins[where["id"]]))

    async def start_link(self, who: User, payload: str) -> Seen:
        """/start <payload> in their private chat, as a t.me/<bot>?start=<payload> link sends
        it (Telegram only)."""
        return await self._command(self.private(who), who, f"/start {payload}", questions=1)

    async def daily_set(self, where: Chat, who: User, at: str = "09:00",
                        zone: str = "UTC") -> Seen:
        return await self._command(where, who, f"/daily {at} {zone}")

    async def daily_off(self, where: Chat, who: User) -> Seen:
        return await self._command(where, who, "/daily off")

    async def leaderboard(self, where: Chat, who: User) -> Seen:
        return await self._command(where, who, "/leaderboard")

    async def set_language(self, where: Chat, who: User, code: str) -> Seen:
        return await self._command(where, who, f"/lang {code}")

    async def review(self, where: Chat, who: User) -> Seen:
        start = len(self.fake.calls)
        seen = await self._command(where, who, "/review", questions=1)
        # from a group: the group is told where it went (a reply, which _seen takes for a
        # refusal), the question goes to the private chat
        for sent in self._sent:
            if not seen.post_ids and sent.call >= start and sent.chat_id == who["id"] \
                    and sent.call not in self._claimed:
                self._claimed.add(sent.call)
                seen.post_ids.append(sent.post_id)
        return seen

    async def remind(self, where: Chat, who: User, at: str, zone: str = "UTC") -> Seen:
        return await self._command(where, who, f"/remind {at} {zone}" if at not in ("off", "")
                                   else f"/remind {at}".strip())

    def private_texts(self, who: User) -> list[str]:
        return [c.params["text"] for i, c in enumerate(self.fake.calls)
                if i in self._ticked and c.ok and c.method == "sendMessage"
                and c.params["chat_id"] == who["id"] and "reply_markup" not in c.params]

    def shown_privately(self, post_id: int) -> bool:
        sent = [s for s in self._sent if s.post_id == post_id]
        return bool(sent) and all(s.chat_id in self._private for s in sent)

    # assignments (tests/behaviour/test_assignments.py) -------------------------------------
    async def assign(self, where: Chat, who: User, quiz: str | None = None,
                     date: str | None = None, time: str | None = None,
                     zone: str | None = None) -> Seen:
        words = ["/assign", *(w for w in (quiz, date, time, zone) if w)]
        return await self._command(where, who, " ".join(words))

    async def unassign(self, where: Chat, who: User, number: str) -> Seen:
        return await self._command(where, who, f"/unassign {number}")

    async def take_assignment(self, where: Chat, who: User) -> Seen:
        urls = [b["url"] for c in self.fake.calls
                if c.ok and c.method == "sendMessage" and c.params.get("chat_id") == where["id"]
                for row in (c.params.get("reply_markup") or {}).get("inline_keyboard") or []
                for b in row if "?start=" in b.get("url", "")]
        assert urls, "no assignment's link in the chat"
        return await self.start_link(who, urls[-1].split("?start=", 1)[1])

    def run_place(self, where: Chat, who: User) -> Chat:
        return self.private(who)

    # live sessions and peer rounds ---------------------------------------------------------
    countdown_every = 5.0  # about 20 messages a minute in a group, edits included

    async def host(self, where: Chat, who: User, quiz: str | None = None,
                   questions: int | None = None, *, teams: int | None = None,
                   choose: bool = False, seconds: int | None = None) -> Seen:
        words = ["/host", *([quiz] if quiz else []), *([str(questions)] if questions else []),
                 *(["teams", str(teams)] if teams is not None else []),
                 *(["choose"] if choose else []), *([f"{seconds}s"] if seconds else [])]
        return await self._live_command(where, who, " ".join(words))

    async def peer(self, where: Chat, who: User, quiz: str | None = None) -> Seen:
        return await self._live_command(where, who, f"/peer {quiz}" if quiz else "/peer")

    async def live_step(self, where: Chat, who: User, step: str) -> Seen:
        return await self._live_command(where, who, f"/{step}")

    async def join_live(self, where: Chat, who: User, team: int | None = None) -> Seen:
        lobby = self._live_message(where, lambda data: data.startswith("lj"))
        data = "lj" if team is None else f"lj:{team - 1}"
        return await self._live_press(where, who, lobby, data)

    async def live_answer(self, where: Chat, who: User, post_id: int, option: int) -> Seen:
        message = self._live_message(where, lambda data: data.startswith(f"la:{post_id}:"))
        return await self._live_press(where, who, message, f"la:{post_id}:{option}")

    def live_texts(self, where: Chat) -> list[str]:
        return [c.params["text"] for c in self.fake.calls
                if c.ok and c.method == "sendMessage" and c.params["chat_id"] == where["id"]
                and not c.params.get("message_thread_id")
                and not live_question(c.params.get("reply_markup"))]

    def lobby(self, where: Chat) -> tuple[str, int]:
        message = self._live_message(where, lambda data: data.startswith("lj"))
        key = (where["id"], message["message_id"])
        edits = [c for c in self.fake.calls_of("editMessageText")
                 if (c.params["chat_id"], c.params["message_id"]) == key]
        return str(self.fake.messages[key]["text"]), len(edits)

    def live_questions(self, post_id: int) -> list[str]:
        return [c.params["text"] for c in self.fake.calls_of("sendMessage")
                if live_question(c.params.get("reply_markup"), post_id) is not None]

    def question_edits(self, post_id: int) -> int:
        shown = {(c.result["chat"]["id"], c.result["message_id"])
                 for c in self.fake.calls_of("sendMessage")
                 if live_question(c.params.get("reply_markup"), post_id) is not None}
        return sum((c.params["chat_id"], c.params["message_id"]) in shown
                   for c in self.fake.calls_of("editMessageText"))

    def live_question_now(self, post_id: int) -> tuple[str, bool]:
        call = [c for c in self.fake.calls_of("sendMessage")
                if live_question(c.params.get("reply_markup"), post_id) is not None][-1]
        now = self.fake.messages[(call.result["chat"]["id"], call.result["message_id"])]
        rows = (now.get("reply_markup") or {}).get("inline_keyboard") or []
        return str(now["text"]), any(rows)

    def allow_threads(self, where: Chat) -> None:
        self.fake.make_forum(where)

    def discussion(self, where: Chat) -> tuple[str, list[str]] | None:
        topics = self.fake.topics[where["id"]]
        if not topics:
            return None
        thread = max(topics)
        return topics[thread], [
            c.params["text"] for c in self.fake.calls_of("sendMessage")
            if c.params["chat_id"] == where["id"] and c.params.get("message_thread_id") == thread]

    async def my_place(self, where: Chat, who: User) -> str:
        told = [c.params["text"] for c in self.fake.calls_of("sendMessage")
                if c.params["chat_id"] == who["id"]]
        return told[-1] if told else ""

    async def _live_command(self, where: Chat, who: User, text: str) -> Seen:
        start = len(self.fake.calls)
        update_id = self.fake.command(where, who, text)
        await self._settle(update_id)
        return self._live_seen(start, where, who)

    async def _live_press(self, where: Chat, who: User, message: dict[str, Any],
                          data: str) -> Seen:
        start = len(self.fake.calls)
        update_id = self.fake.press(message, who, data)
        await self._settle(update_id)
        press = self._update(update_id)["callback_query"]
        seen = self._live_seen(start, where, who)
        seen.texts[:0] = [c.params.get("text") or "" for c in self.fake.calls[start:]
                          if c.ok and c.method == "answerCallbackQuery"
                          and c.params["callback_query_id"] == press["id"]]
        return seen

    def _live_seen(self, start: int, where: Chat, who: User) -> Seen:
        """The messages the action brought in the chat and to `who` privately; a question
        as its post."""
        seen = Seen()
        for call in self.fake.calls[start:]:
            if not call.ok or call.method != "sendMessage" \
                    or call.params["chat_id"] not in (where["id"], who["id"]):
                continue
            if (post_id := live_question(call.params.get("reply_markup"))) is not None:
                seen.post_ids.append(post_id)
            else:
                seen.texts.append(call.params["text"])
        return seen

    def _live_message(self, where: Chat, wanted: Callable[[str], bool]) -> dict[str, Any]:
        """The latest message in `where` with a button whose data is `wanted`, as it is now."""
        for call in reversed(self.fake.calls):
            rows = (call.params.get("reply_markup") or {}).get("inline_keyboard") or []
            if call.ok and call.method == "sendMessage" \
                    and call.params["chat_id"] == where["id"] \
                    and any(wanted(str(b.get("callback_data", ""))) for r in rows for b in r):
                return dict(self.fake.messages[(where["id"], call.result["message_id"])])
        raise AssertionError("no such live message")

    async def tick(self) -> None:
        start = len(self.fake.calls)
        await self.scheduler.tick()
        await self._settle()
        await self._scan()
        self._ticked.update(range(start, len(self.fake.calls)))

    def closed_on_platform(self, post_id: int) -> bool:
        sent = [s for s in self._sent if s.post_id == post_id]
        if not sent:
            return False
        for s in sent:
            current = self.fake.messages.get((s.chat_id, s.message["message_id"]), {})
            if s.poll_id is not None and not self.fake.polls[s.poll_id]["is_closed"]:
                return False
            if s.poll_id is None and "reply_markup" in current:
                return False
        anchors = self._anchors(post_id)
        return any(
            (c.params.get("chat_id"), (c.params.get("reply_parameters") or {}).get("message_id"))
            in anchors
            for c in self.fake.calls if c.ok and c.method in ("sendMessage", "sendPhoto")
        )

    # plumbing ----------------------------------------------------------------------------
    async def _command(self, where: Chat, who: User, text: str, *, questions: int = 0) -> Seen:
        start = len(self.fake.calls)
        update_id = self.fake.command(where, who, text)
        return await self._seen(start, update_id, where, who, questions=questions)

    async def _settle(self, update_id: int | None = None, within: float = SETTLE_WITHIN) -> None:
        """Until the bot fetched every update so far and handled all it fetched (`within`:
        longer for a burst of hundreds of updates on a loaded machine)."""
        assert self.adapter is not None
        if update_id is not None:
            await self.fake.wait_confirmed(update_id, within)
        await self.fake.wait_all_confirmed(within)
        await asyncio.wait_for(self.adapter.idle(), within)

    async def _scan(self) -> None:
        """Note every question the bot sent since the last scan, with its post."""
        async with self._scan_lock:
            calls = self.fake.calls
            while self._scanned < len(calls):
                index, call = self._scanned, calls[self._scanned]
                self._scanned += 1
                if not call.ok or call.method not in ("sendPoll", "sendMessage"):
                    continue
                message = call.result
                poll_id = message["poll"]["id"] if "poll" in message else None
                markup = call.params.get("reply_markup") or {}
                if poll_id is None and ("inline_keyboard" not in markup or is_live(markup)
                                        or is_confirmation(markup) or opens_web_app(markup)
                                        or starts_quizzes(markup)):
                    continue  # a plain message, a ForceReply prompt, /mydata's, a Mini App's
                    # or a live session's (read by the live methods)
                ref = (f"tg-poll:{poll_id}" if poll_id is not None
                       else f"tg-msg:{message['chat']['id']}:{message['message_id']}")
                post_id = await self.service.questions.post_id_for(ref)
                assert post_id is not None, f"{call.method} sent a question bound to no post"
                self._sent.append(Sent(index, post_id, message["chat"]["id"], message, poll_id))

    async def _seen(
        self, start: int, update_id: int, where: Chat, who: User, *, questions: int = 0
    ) -> Seen:
        await self._settle(update_id)
        await self._scan()
        update = self._update(update_id)
        command = update.get("message") or update.get("channel_post")
        press = update.get("callback_query")
        private_id = who["id"] if who is not None else None
        seen = Seen()
        refused = False
        for index in range(start, len(self.fake.calls)):
            call = self.fake.calls[index]
            if not call.ok or index in self._claimed:
                continue
            params = call.params
            quoted = (params.get("reply_parameters") or {}).get("message_id")
            if call.method == "answerCallbackQuery":
                if press is not None and params["callback_query_id"] == press["id"]:
                    seen.texts.append(params.get("text") or "")
                    self._claimed.add(index)
            elif call.method == "sendDocument" and command is not None and (
                    (params["chat_id"] == where["id"] and quoted == command["message_id"])
                    or (params["chat_id"] == private_id and quoted is None)):
                seen.files.append(params["document"])
                seen.texts += [params["caption"]] if params.get("caption") else []
                self._claimed.add(index)
            elif call.method == "sendPhoto" and command is not None and (
                    (params["chat_id"] == where["id"] and quoted == command["message_id"])
                    or (params["chat_id"] == private_id and quoted is None)):
                seen.images.append(params["photo"])
                self._claimed.add(index)
            elif call.method == "sendMessage" and (
                    "reply_markup" not in params or opens_web_app(params["reply_markup"])
                    or starts_quizzes(params["reply_markup"])):
                to_command = command is not None and params["chat_id"] == where["id"] \
                    and quoted == command["message_id"]
                if to_command or (params["chat_id"] == private_id and quoted is None):
                    seen.texts.append(with_buttons(params))
                    self._claimed.add(index)
                    refused = refused or to_command
        # the questions this action brought (a /quiz that was refused brought none)
        chats = {where["id"], private_id}
        for sent in self._sent:
            if questions <= len(seen.post_ids) or refused:
                break
            if sent.call >= start and sent.chat_id in chats and sent.call not in self._claimed:
                self._claimed.add(sent.call)
                seen.post_ids.append(sent.post_id)
        return seen

    def _update(self, update_id: int) -> dict[str, Any]:
        return next(u for u in self.fake._all_updates if u["update_id"] == update_id)

    def _latest(self, post_id: int) -> Sent:
        sent = [s for s in self._sent if s.post_id == post_id]
        assert sent, f"post {post_id} was never shown on Telegram"
        return sent[-1]


def opens_web_app(markup: Any) -> bool:
    """A keyboard of Mini App or link buttons only (/dashboard's, /progress's, an assignment's
    announcement): a reply, not a question."""
    rows = (markup or {}).get("inline_keyboard") or []
    return bool(rows) and all("web_app" in b or "url" in b for row in rows for b in row)


def starts_quizzes(markup: Any) -> bool:
    """The quizzes' buttons under /help, /start and the welcome (a t.me link or go:<id>)."""
    rows = (markup or {}).get("inline_keyboard") or []
    return bool(rows) and all("?start=" in b.get("url", "") or str(
        b.get("callback_data", "")).startswith("go:") for row in rows for b in row)


def with_buttons(params: dict[str, Any]) -> str:
    """A message's text, and each of its quiz buttons as a line a person reads: its label and
    what it starts."""
    markup = params.get("reply_markup") or {}
    if not starts_quizzes(markup):
        return str(params["text"])
    return "\n".join([params["text"], *(
        f"[{b['text']}] {b.get('url') or b.get('callback_data')}"
        for row in markup["inline_keyboard"] for b in row)])


def is_live(markup: Any) -> bool:
    """A live session's keyboard: its lobby's Join, or a live question's answers."""
    rows = (markup or {}).get("inline_keyboard") or []
    return any(str(b.get("callback_data", "")).startswith(("lj", "la:"))
               for row in rows for b in row)


def live_question(markup: Any, post_id: int | None = None) -> int | None:
    """The post of a live question's keyboard (`post_id`'s only, if given); None for any
    other."""
    rows = (markup or {}).get("inline_keyboard") or []
    for row in rows:
        for button in row:
            data = str(button.get("callback_data", ""))
            if data.startswith("la:") and (post_id is None
                                           or data.startswith(f"la:{post_id}:")):
                return int(data.split(":")[1])
    return None


def is_confirmation(markup: Any) -> bool:
    """The keyboard of /mydata delete's confirmation."""
    rows = (markup or {}).get("inline_keyboard") or []
    return any(str(b.get("callback_data", "")).startswith("pd:") for row in rows for b in row)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def webhook_settings(port: int | None = None) -> dict[str, Any]:
    """Settings for webhook mode on 127.0.0.1 (a free port unless given), with a new secret."""
    port = port or free_port()
    return {
        "quizbot_telegram_webhook_url": f"http://127.0.0.1:{port}/telegram",
        "quizbot_telegram_webhook_listen": f"127.0.0.1:{port}",
        "quizbot_telegram_webhook_secret": SecretStr(secrets.token_urlsafe(24)),
    }


@contextlib.asynccontextmanager
async def telegram_harness(
    service: QuizService, clock: FakeClock, *, webhook: bool = False
) -> AsyncIterator[TelegramHarness]:
    """The fake Bot API, a started adapter and a Scheduler that only tick() runs."""
    fake = FakeTelegramAPI()
    await fake.start()
    harness = TelegramHarness(fake, service, clock, webhook=webhook)
    try:
        await harness.start()
        yield harness
    finally:
        await harness.stop()
        await fake.stop()

