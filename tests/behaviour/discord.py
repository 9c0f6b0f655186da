"""The Discord side of the behaviour suite: the real discord.py and our adapter against the fake
REST API and gateway (tests/fakes/discord_api.py), with the core's Scheduler ticked by hand.

Every action is an interaction the fake sends over the gateway, exactly as Discord would
deliver it: slash commands (in a DM without a guild), button clicks on the messages the bot
created. Nothing calls the core to fake an action. An action returns once the bot answered the
interaction, bound any question it showed, and has no answer-count edit pending. What the
acting person saw is the bot's answer to their interaction (ephemeral or not); a question in it
(a message with answer buttons) is reported as its post id, with any text above it.
Places are `Place`s (a guild channel or someone's DM) and people the fake's `User`s.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import discord.http
from discord.gateway import DiscordWebSocket

from bot.adapters.discord import DiscordAdapter
from bot.content.items import Kind
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from tests.behaviour.harness import Seen
from tests.clock import FakeClock
from tests.discord_e2e.helpers import make_settings
from tests.fakes.discord_api import (
    DEFAULT_PERMISSIONS,
    EPHEMERAL,
    MANAGE_GUILD,
    MODAL,
    FakeDiscord,
    Interaction,
    Reply,
    User,
    all_buttons_of,
    all_components_of,
    buttons_of,
    flag_of,
)

NAMES = ("Alice", "Bob", "Chandra", "Dipa", "Esha", "Farid", "Gita", "Hari")
# Discord's client locales for our languages; it has no Bengali, so "bn" is sent as it is
LOCALES = {"en": "en-US", "hi": "hi"}
SETTLE_WITHIN = 10.0  # seconds; only reached when something is broken
FAST = {"guild_ready_timeout": 0.05, "ready_timeout": 10.0, "live_interval": 0.01}


@dataclass(frozen=True, slots=True)
class Place:
    channel_id: int
    dm_of: User | None = None  # whose DM this is; None for the guild channel

    @property
    def dm(self) -> bool:
        return self.dm_of is not None


class DiscordHarness:
    platform = "discord"

    def __init__(self, fake: FakeDiscord, service: QuizService, clock: FakeClock) -> None:
        self.fake = fake
        self.service = service
        self.clock = clock
        self.adapter: DiscordAdapter | None = None
        self.scheduler = Scheduler(service)
        fake.threads_allowed = False  # like the Telegram group, until allow_threads()
        self._people: dict[int, User] = {}
        self._admins: set[int] = set()
        self._clicks: dict[tuple[int, int, int], Interaction] = {}  # (user, post, option)
        self._ticked: set[int] = set()  # ids of the messages created during tick()

    # lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        self.adapter = DiscordAdapter(self.service, make_settings(self.fake), **FAST)
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
            self._people[n] = User(900_000_000_000_000_000 + n, name,
                                   LOCALES.get(language, language))
        return self._people[n]

    def person_key(self, who: User) -> str:
        return f"dc:{who.id}"

    def group(self) -> Place:
        return Place(self.fake.channel_id)

    def make_admin(self, who: User) -> None:
        self._admins.add(who.id)

    def private(self, who: User) -> Place:
        return Place(self.fake.dm_channel(who), dm_of=who)

    # actions -----------------------------------------------------------------------------
    async def quiz(self, where: Place, who: User, selector: str | None = None, *,
                   count: int | None = None) -> Seen:
        options: dict[str, Any] = {"quiz": selector} if selector else {}
        if count is not None:
            options["questions"] = count
        return await self._slash(where, who, "quiz", options)

    async def change_settings(self, where: Place, who: User, *, seconds: int | None = None,
                       mode: str | None = None, chart: bool | None = None,
                       quiz: str | None = None, peer: int | str | None = None,
                       discussion: str | None = None,
                       target: int | str | None = None) -> Seen:
        options = {k: v for k, v in (("time", seconds), ("mode", mode), ("chart", chart),
                                     ("quiz", quiz), ("peer", peer),
                                     ("discussion", discussion), ("target", target))
                   if v is not None}
        return await self._slash(where, who, "settings", options)

    async def analysis(self, where: Place, who: User, quiz: str | None = None) -> Seen:
        """The reply, then every follow-up once the handler is done (the text may take
        several messages, the chart comes last)."""
        it = await self.fake.slash("analysis", {"quiz": quiz} if quiz else {}, user=who,
                                   dm=where.dm, channel_id=where.channel_id,
                                   permissions=None if where.dm else self._permissions(who))
        reply = await self.fake.reply(it, within=SETTLE_WITHIN)
        assert self.adapter is not None
        intake = self.adapter.intake
        await self.fake.until(lambda: intake.in_flight == 0, SETTLE_WITHIN, "/analysis")
        seen = Seen()
        messages = [reply.message, *(m for m in it.followups if m["id"] != reply.message["id"])]
        for message in messages:
            assert message["flags"] & EPHEMERAL, "/analysis is shown to the admin alone"
            if text := Reply(message).text:
                seen.texts.append(text)
            seen.images += [data for _, data in self.fake.files.get(int(message["id"]), [])]
        return seen

    def summary_images(self, post_id: int) -> list[bytes]:
        return [data for m in self.fake.messages.values() if self._shows(m, post_id)
                for _, data in self.fake.files.get(int(m["id"]), [])]

    def question_shown(self, post_id: int) -> str:
        shown = [m for m in self.fake.messages.values() if self._shows(m, post_id)]
        assert shown, f"post {post_id} was never shown on Discord"
        return "\n".join(f"{e.get('title') or ''}\n{e.get('description') or ''}"
                         for e in shown[0].get("embeds") or [])

    def questions_in(self, where: Place) -> list[int]:
        posts = [
            int(b["custom_id"].split(":")[1]) for m in self.fake.messages.values()
            if int(m["channel_id"]) == where.channel_id
            for b in buttons_of(m)[:1] if b.get("custom_id", "").startswith("qz:")
        ]
        return list(dict.fromkeys(posts))

    def posted_texts(self, where: Place) -> list[str]:
        return [
            m["content"] for m in self.fake.messages.values()
            if int(m["channel_id"]) == where.channel_id and m.get("content")
            and not buttons_of(m) and not m.get("interaction")
        ]

    async def answer(self, where: Place, who: User, post_id: int, option: int) -> Seen:
        message = self._message_of(where, post_id, option)
        it = await self.fake.click(int(message["id"]), f"qz:{post_id}:{option}", user=who,
                                   permissions=self._permissions(who))
        self._clicks[(who.id, post_id, option)] = it
        return await self._seen(it)

    async def answer_again(self, where: Place, who: User, post_id: int, option: int) -> Seen:
        it = self._clicks.get((who.id, post_id, option))
        if it is None:
            return await self.answer(where, who, post_id, option)
        assert self.adapter is not None
        intake = self.adapter.intake
        tried, dropped = len(self.fake.callback_attempts(it)), intake.redelivered
        await self.fake.redeliver(it)
        # handled once this process dropped it as a copy, or (another process: a restart in
        # between) once the bot tried to answer it again, which Discord refuses (40060)
        await self.fake.until(
            lambda: intake.redelivered > dropped or len(self.fake.callback_attempts(it)) > tried,
            SETTLE_WITHIN, f"the bot's handling of interaction {it.id} again",
        )
        await self._settle()
        return Seen()  # nothing new to see: the first answer stands

    async def forged_click(self, where: Place, who: User, post_id: int, option: int) -> Seen:
        """A click carrying `qz:<post_id>:<option>` on another message of the bot's in
        `where` (another question's if there is one), as a modified client could send."""
        custom_id = f"qz:{post_id}:{option}"
        mine = [m for m in self.fake.messages.values()
                if int(m["channel_id"]) == where.channel_id
                and not any(b.get("custom_id", "").startswith(f"qz:{post_id}:")
                            for b in buttons_of(m))]
        questions = [m for m in mine if buttons_of(m)]
        message = (questions or mine or [self.fake.post_message(where.channel_id, "…")])[-1]
        components = [{"type": 1, "components": [
            {"type": 2, "style": 1, "label": "A", "custom_id": custom_id}]}]
        it = await self.fake.click(int(message["id"]), custom_id, user=who,
                                   components=components, permissions=self._permissions(who))
        return await self._seen(it)

    # the kinds of question beyond one choice (bot/adapters/discord/kinds.py) ----------------
    async def answer_picks(self, where: Place, who: User, post_id: int,
                           shown: set[int]) -> Seen:
        """The question's select menu, those options chosen and the menu closed."""
        message = self._message_of(where, post_id)
        it = await self.fake.click(int(message["id"]), f"qm:{post_id}", user=who,
                                   values=[str(i) for i in sorted(shown)],
                                   permissions=self._permissions(who))
        return await self._seen(it)

    async def answer_typed(self, where: Place, who: User, post_id: int, text: str) -> Seen:
        """Answer under the question, then the form it opens filled in and submitted."""
        message = self._message_of(where, post_id)
        click = await self.fake.click(int(message["id"]), f"qt:{post_id}", user=who,
                                      permissions=self._permissions(who))
        await self.fake.ack(click, within=SETTLE_WITHIN)
        if click.callback_type != MODAL:  # refused, with a message
            return await self._seen(click)
        submitted = await self.fake.submit_modal(click, {"answer": text}, user=who)
        return await self._seen(submitted)

    async def answer_order(self, where: Place, who: User, post_id: int,
                           shown: list[int]) -> Seen:
        """Put in order, then each item's button on the picker it opens, then Submit: what
        the person saw in the end (a refusal on the way, if there was one)."""
        message = self._message_of(where, post_id)
        opened = await self.fake.click(int(message["id"]), f"qo:{post_id}:::n", user=who,
                                       permissions=self._permissions(who))
        picker = await self.fake.reply(opened, within=SETTLE_WITHIN)
        seq = ""
        for i in shown:
            wanted = f"qo:{post_id}:{message['id']}:{seq}:{i}"
            if not any(c.get("custom_id") == wanted
                       for c in all_components_of(self.fake.messages[picker.id])):
                return Seen(texts=[picker.text])  # no such button: a refusal was shown
            step = await self.fake.click(picker.id, wanted, user=who,
                                         permissions=self._permissions(who))
            await self.fake.ack(step, within=SETTLE_WITHIN)
            if step.original_id != picker.id:  # not the picker edited: refused
                return await self._seen(step)
            seq += str(i)
        submit = await self.fake.click(picker.id, f"qo:{post_id}:{message['id']}:{seq}:s",
                                       user=who, permissions=self._permissions(who))
        return await self._seen(submit)

    async def forged_submit(self, where: Place, who: User, post_id: int) -> Seen:
        """What a modified client could send for the question's kind: a pick outside its
        options, an order that is no permutation, a form from a message not the post's, a
        button for an option it does not have."""
        q = await self.service.questions.show(post_id)
        assert q is not None
        message = self._message_of(where, post_id)
        if q.kind is Kind.MULTI:
            it = await self.fake.click(int(message["id"]), f"qm:{post_id}", user=who,
                                       values=["0", str(len(q.options) + 3)],
                                       permissions=self._permissions(who))
        elif q.kind is Kind.ORDER:
            custom_id = f"qo:{post_id}:{message['id']}:{'0' * len(q.options)}:s"
            it = await self.fake.click(int(message["id"]), custom_id, user=who,
                                       components=[{"type": 1, "components": [
                                           {"type": 2, "style": 3, "label": "✓",
                                            "custom_id": custom_id}]}],
                                       permissions=self._permissions(who))
        elif q.kind.typed:
            other = self.fake.post_message(where.channel_id, "…")
            it = await self.fake.forged_modal(f"qtm:{post_id}", {"answer": "1"}, user=who,
                                              message=other,
                                              permissions=self._permissions(who))
        else:
            return await self.forged_click(where, who, post_id, len(q.options) + 3)
        return await self._seen(it)

    # the confidence tap (bot/adapters/discord/confidence.py) ------------------------------
    async def set_confidence(self, where: Place, who: User, on: bool) -> Seen:
        return await self._slash(where, who, "settings", {"confidence": on})

    def _prompt(self, where: Place, post_id: int) -> dict[str, Any]:
        """The latest "How sure are you?" for the question in `where` (ephemeral in a
        channel, a message in a DM)."""
        prompts = [m for _, m in sorted(self.fake.messages.items())
                   if int(m["channel_id"]) == where.channel_id
                   and any(b.get("custom_id", "").startswith(f"qc:{post_id}:")
                           for b in all_buttons_of(m))]
        assert prompts, f"post {post_id} asks no confidence in {where}"
        return prompts[-1]

    async def tap_confidence(self, where: Place, who: User, post_id: int,
                             choice: str) -> Seen:
        """The prompt's button, which turns the prompt into the result."""
        prompt = self._prompt(where, post_id)
        [custom_id] = [b["custom_id"] for b in all_buttons_of(prompt)
                       if b.get("label") == choice]
        it = await self.fake.click(int(prompt["id"]), custom_id, user=who,
                                   permissions=self._permissions(who))
        await self.fake.ack(it, within=SETTLE_WITHIN)
        await self.fake.until(lambda: not any(
            b.get("custom_id", "").startswith("qc:")
            for b in all_buttons_of(self.fake.messages[int(prompt["id"])]))
            or it.followups, SETTLE_WITHIN, "the tap's result")
        seen = Seen(texts=[Reply(self.fake.messages[int(prompt["id"])]).text])
        seen.texts += [Reply(m).text for m in it.followups if shown_post(m) is None]
        await self._settle()
        return seen

    async def forged_tap(self, where: Place, who: User, post_id: int) -> Seen:
        prompt = self._prompt(where, post_id)
        real = next(b["custom_id"] for b in all_buttons_of(prompt))
        custom_id = real.rsplit(":", 1)[0] + ":7"
        it = await self.fake.click(int(prompt["id"]), custom_id, user=who,
                                   components=[{"type": 1, "components": [
                                       {"type": 2, "style": 1, "label": "?",
                                        "custom_id": custom_id}]}],
                                   permissions=self._permissions(who))
        return await self._seen(it)

    async def report_via_flag(self, where: Place, who: User, post_id: int, text: str) -> Seen:
        message = self._message_of(where, post_id, 0)
        flag = flag_of(message)
        assert flag is not None, "no ⚑ under the question"
        click = await self.fake.click(int(message["id"]), flag["custom_id"], user=who,
                                      permissions=self._permissions(who))
        await self.fake.ack(click, within=SETTLE_WITHIN)
        assert click.callback_type == MODAL, click.callback
        submitted = await self.fake.submit_modal(click, {"text": text}, user=who)
        return await self._seen(submitted)

    async def mydata(self, where: Place, who: User) -> Seen:
        it = await self.fake.slash("mydata", {}, user=who, dm=where.dm,
                                   channel_id=where.channel_id,
                                   permissions=None if where.dm else self._permissions(who))
        reply = await self.fake.reply(it, within=SETTLE_WITHIN)
        assert where.dm or reply.message["flags"] & EPHEMERAL, "/mydata is for the person alone"
        return Seen(texts=[reply.text],
                    files=[data for _, data in self.fake.files.get(reply.id, [])])

    async def mydata_delete(self, where: Place, who: User, *, pressed_by: User | None = None,
                            forged: bool = False) -> Seen:
        it = await self.fake.slash("mydata", {"delete": True}, user=who, dm=where.dm,
                                   channel_id=where.channel_id,
                                   permissions=None if where.dm else self._permissions(who))
        reply = await self.fake.reply(it, within=SETTLE_WITHIN)
        buttons = [b for b in buttons_of(reply.message)
                   if b.get("custom_id", "").startswith("pd:")]
        if not buttons:
            return Seen(texts=[reply.text])
        custom_id = buttons[0]["custom_id"]
        components = None
        if forged:  # another signature of the same length
            custom_id = custom_id[:-1] + ("0" if custom_id[-1] != "0" else "1")
            components = [{"type": 1, "components": [
                {"type": 2, "style": 4, "label": "…", "custom_id": custom_id}]}]
        presser = pressed_by or who
        click = await self.fake.click(reply.id, custom_id, user=presser, components=components,
                                      permissions=self._permissions(presser))
        return await self._seen(click)

    async def forged_flag(self, where: Place, who: User, question_id: str) -> Seen:
        custom_id = f"rp:{question_id}"[:100]
        mine = [m for m in self.fake.messages.values()
                if int(m["channel_id"]) == where.channel_id and buttons_of(m)]
        message = (mine or [self.fake.post_message(where.channel_id, "…")])[-1]
        components = [{"type": 1, "components": [
            {"type": 2, "style": 2, "label": "⚑", "custom_id": custom_id}]}]
        it = await self.fake.click(int(message["id"]), custom_id, user=who,
                                   components=components, permissions=self._permissions(who))
        return await self._seen(it)

    async def report(self, where: Place, who: User, question_id: str | None,
                     text: str) -> Seen:
        options = {"text": text} | ({"question": question_id} if question_id else {})
        return await self._slash(where, who, "report", options)

    async def reports(self, where: Place, who: User, resolve: int | None = None,
                      note: str | None = None) -> Seen:
        options = {k: v for k, v in (("resolve", resolve), ("note", note)) if v is not None}
        return await self._slash(where, who, "reports", options)

    async def dashboard(self, where: Place, who: User, *, revoke: bool = False) -> Seen:
        return await self._slash(where, who, "dashboard", {"revoke": True} if revoke else {})

    async def help(self, where: Place, who: User) -> Seen:
        return await self._slash(where, who, "help", {})

    async def chat_language(self, where: Place, who: User, code: str) -> Seen:
        return await self._slash(where, who, "lang", {"code": code, "scope": "channel"})

    async def join(self, language: str | None = None) -> Place:
        ref = await self.fake.join_guild(
            "New Server", locale=LOCALES.get(language or "en", language or "en"))
        await self.fake.until(lambda: self.posted_texts(Place(ref.channel_id)),
                              SETTLE_WITHIN, "the welcome")
        return Place(ref.channel_id)

    async def join_again(self, where: Place) -> None:
        await self.restart()

    async def daily_set(self, where: Place, who: User, at: str = "09:00",
                        zone: str = "UTC") -> Seen:
        return await self._slash(where, who, "daily set", {"time": at, "timezone": zone})

    async def daily_off(self, where: Place, who: User) -> Seen:
        return await self._slash(where, who, "daily off", {})

    async def leaderboard(self, where: Place, who: User) -> Seen:
        return await self._slash(where, who, "leaderboard", {})

    async def set_language(self, where: Place, who: User, code: str) -> Seen:
        return await self._slash(where, who, "lang", {"code": code})

    async def review(self, where: Place, who: User) -> Seen:
        return await self._slash(where, who, "review", {})

    async def remind(self, where: Place, who: User, at: str, zone: str = "UTC") -> Seen:
        return await self._slash(where, who, "remind",
                                 {"time": at, "timezone": zone} if at else {})

    def private_texts(self, who: User) -> list[str]:
        dm = self.fake.dm_channel(who)
        return [m["content"] for m in self.fake.messages.values()
                if int(m["id"]) in self._ticked and int(m["channel_id"]) == dm]

    def shown_privately(self, post_id: int) -> bool:
        shown = [m for m in self.fake.messages.values() if self._shows(m, post_id)]
        return bool(shown) and all(
            int(m.get("flags") or 0) & EPHEMERAL
            or self.fake.channels.get(int(m["channel_id"]), {}).get("type") == 1
            for m in shown
        )

    # assignments (tests/behaviour/test_assignments.py) -------------------------------------
    async def assign(self, where: Place, who: User, quiz: str | None = None,
                     date: str | None = None, time: str | None = None,
                     zone: str | None = None) -> Seen:
        options = {name: value for name, value in (
            ("quiz", quiz), ("date", date), ("time", time), ("timezone", zone)) if value}
        return await self._slash(where, who, "assign", options)

    async def unassign(self, where: Place, who: User, number: str) -> Seen:
        return await self._slash(where, who, "unassign", {"id": number})

    async def take_assignment(self, where: Place, who: User) -> Seen:
        found = [(m, b["custom_id"]) for _, m in sorted(self.fake.messages.items())
                 if int(m["channel_id"]) == where.channel_id
                 for b in all_buttons_of(m) if b.get("custom_id", "").startswith("as:")]
        assert found, "no assignment's button in the channel"
        message, custom_id = found[-1]
        it = await self.fake.click(int(message["id"]), custom_id, user=who,
                                   permissions=self._permissions(who))
        return await self._seen(it)

    def run_place(self, where: Place, who: User) -> Place:
        return where  # ephemeral in the channel, as /quiz run:True

    # live sessions and peer rounds ---------------------------------------------------------
    countdown_every = 3.0  # the per-route edit buckets discord.py keeps to, with room to spare

    async def host(self, where: Place, who: User, quiz: str | None = None,
                   questions: int | None = None, *, teams: int | None = None,
                   choose: bool = False, seconds: int | None = None) -> Seen:
        options = {k: v for k, v in (("quiz", quiz), ("questions", questions),
                                     ("teams", teams), ("seconds", seconds)) if v is not None}
        return await self._live_slash(where, who, "host", options | (
            {"choose": True} if choose else {}))

    async def peer(self, where: Place, who: User, quiz: str | None = None) -> Seen:
        return await self._live_slash(where, who, "peer", {"quiz": quiz} if quiz else {})

    async def live_step(self, where: Place, who: User, step: str) -> Seen:
        return await self._live_slash(where, who, step, {})

    async def join_live(self, where: Place, who: User, team: int | None = None) -> Seen:
        custom_id = "lv:join" if team is None else f"lv:join:{team - 1}"
        lobby = self._live_message(where, lambda c: c.startswith("lv:join"))
        return await self._live_click(where, who, lobby, custom_id)

    async def live_answer(self, where: Place, who: User, post_id: int, option: int) -> Seen:
        message = self._live_message(where, lambda c: c.startswith(f"lv:{post_id}:"))
        return await self._live_click(where, who, message, f"lv:{post_id}:{option}")

    def live_texts(self, where: Place) -> list[str]:
        return [m.get("content") or "" for key, m in sorted(self.fake.messages.items())
                if int(m["channel_id"]) == where.channel_id
                and not int(m.get("flags") or 0) & EPHEMERAL
                and live_post(self.fake.created.get(key, m)) is None]

    def lobby(self, where: Place) -> tuple[str, int]:
        message = self._live_message(where, lambda c: c.startswith("lv:join"))
        return str(message.get("content") or ""), len(self.fake.edits(int(message["id"])))

    def live_questions(self, post_id: int) -> list[str]:
        # the content as sent: a countdown edit changes the stored message
        bodies: list[dict[str, Any]] = [
            r.json["data"] if isinstance(r.json.get("data"), dict) else r.json
            for r in self.fake.requests if r.method == "POST" and isinstance(r.json, dict)]
        return [body.get("content") or "" for body in bodies
                if live_post(body, post_id) is not None]

    def question_edits(self, post_id: int) -> int:
        return sum(len(self.fake.edits(key)) for key, m in self.fake.messages.items()
                   if live_post(self.fake.created.get(key, m), post_id) is not None)

    def live_question_now(self, post_id: int) -> tuple[str, bool]:
        key = max(k for k, m in self.fake.created.items() if live_post(m, post_id) is not None)
        now = self.fake.messages[key]
        return str(now.get("content") or ""), bool(all_buttons_of(now))

    def allow_threads(self, where: Place) -> None:
        self.fake.threads_allowed = True

    def discussion(self, where: Place) -> tuple[str, list[str]] | None:
        threads = [c for c in self.fake.channels.values()
                   if c["type"] == 11 and c.get("parent_id") == where.channel_id]
        if not threads:
            return None
        thread = max(threads, key=lambda c: int(c["id"]))
        return str(thread["name"]), [
            m.get("content") or "" for _, m in sorted(self.fake.messages.items())
            if int(m["channel_id"]) == int(thread["id"])]

    async def my_place(self, where: Place, who: User) -> str:
        podium = self._live_message(where, lambda c: c.startswith("lv:place:"))
        [button] = [b for b in all_buttons_of(podium) if b["custom_id"].startswith("lv:place:")]
        it = await self.fake.click(int(podium["id"]), button["custom_id"], user=who,
                                   permissions=self._permissions(who))
        reply = await self.fake.reply(it, within=SETTLE_WITHIN)
        assert reply.ephemeral, "a place is told to its person alone"
        return reply.text

    async def _live_slash(self, where: Place, who: User, name: str,
                          options: dict[str, Any]) -> Seen:
        start = max(self.fake.messages, default=0)
        it = await self.fake.slash(name, options, user=who, dm=where.dm,
                                   channel_id=where.channel_id,
                                   permissions=None if where.dm else self._permissions(who))
        return await self._live_seen(it, start, where)

    async def _live_click(self, where: Place, who: User, message: dict[str, Any],
                          custom_id: str) -> Seen:
        start = max(self.fake.messages, default=0)
        it = await self.fake.click(int(message["id"]), custom_id, user=who,
                                   permissions=self._permissions(who))
        return await self._live_seen(it, start, where)

    async def _live_seen(self, it: Interaction, start: int, where: Place) -> Seen:
        """The bot's reply to `who` (ephemeral or not), then what it posted in the channel
        once the handler is done; a question as its post."""
        reply = await self.fake.reply(it, within=SETTLE_WITHIN)
        assert self.adapter is not None
        intake = self.adapter.intake
        await self.fake.until(lambda: intake.in_flight == 0, SETTLE_WITHIN, "the handler")
        await self._settle()
        seen = Seen()
        for key, message in sorted(self.fake.messages.items()):
            if key <= start or (key != reply.id and (
                    int(message["channel_id"]) != where.channel_id
                    or int(message.get("flags") or 0) & EPHEMERAL)):
                continue
            if (post_id := live_post(message)) is not None:
                await self._bound(Reply(message))
                seen.post_ids.append(post_id)
            else:
                seen.texts.append(Reply(message).text)
        return seen

    def _live_message(self, where: Place, wanted: Callable[[str], bool]) -> dict[str, Any]:
        """The latest message in `where` with a button whose custom_id is `wanted`."""
        for key, message in sorted(self.fake.messages.items(), reverse=True):
            if int(message["channel_id"]) == where.channel_id and any(
                    wanted(b.get("custom_id", ""))
                    for b in all_buttons_of(self.fake.created.get(key, message))):
                return message
        raise AssertionError("no such live message")

    async def tick(self) -> None:
        before = set(self.fake.messages)
        await self.scheduler.tick()  # its posts and closing edits are awaited within
        await self._settle()
        self._ticked.update(set(self.fake.messages) - before)

    def closed_on_platform(self, post_id: int) -> bool:
        """Every message showing the question has its answer buttons (or select) disabled
        (its ⚑ stays) and the summary."""
        shown = [m for m in self.fake.messages.values() if self._shows(m, post_id)]
        return bool(shown) and all(
            all(c.get("disabled") for c in all_components_of(m)
                if question_of(c.get("custom_id", "")) is not None)
            and any((e.get("title") or "").startswith("⏱") for e in m.get("embeds") or [])
            for m in shown
        )

    # plumbing ----------------------------------------------------------------------------
    def _permissions(self, who: User) -> int:
        return DEFAULT_PERMISSIONS | (MANAGE_GUILD if who.id in self._admins else 0)

    async def _slash(self, where: Place, who: User, name: str, options: dict[str, Any]) -> Seen:
        it = await self.fake.slash(name, options, user=who, dm=where.dm,
                                   channel_id=where.channel_id,
                                   permissions=None if where.dm else self._permissions(who))
        return await self._seen(it)

    async def _seen(self, it: Interaction) -> Seen:
        reply = await self.fake.reply(it, within=SETTLE_WITHIN)
        seen = Seen()
        if shown_post(reply.message) is not None:  # a question, maybe under an answer's result
            if reply.content:
                seen.texts.append(reply.content)
            seen.post_ids.append(await self._bound(reply))
        else:
            seen.texts.append(reply.text)
        await self._settle()
        return seen

    async def _bound(self, reply: Reply) -> int:
        """The post the bot bound this message to (just after showing it)."""
        ref = f"dc-msg:{reply.id}"
        deadline = asyncio.get_running_loop().time() + SETTLE_WITHIN
        while (post_id := await self.service.questions.post_id_for(ref)) is None:
            assert asyncio.get_running_loop().time() < deadline, f"{ref} never bound"
            await asyncio.sleep(0.005)
        return post_id

    async def _settle(self) -> None:
        """Until no answer count is waiting to be edited on a question message."""
        assert self.adapter is not None
        publisher = self.adapter.publisher
        await self.fake.until(lambda: publisher.idle, SETTLE_WITHIN, "the answer count edits")

    def _message_of(self, where: Place, post_id: int, option: int | None = None
                    ) -> dict[str, Any]:
        """The latest message showing the question, preferably in `where`."""
        shown = [m for m in self.fake.messages.values() if self._shows(m, post_id, option)]
        assert shown, f"post {post_id} was never shown on Discord"
        here = [m for m in shown if int(m["channel_id"]) == where.channel_id]
        return (here or shown)[-1]

    @staticmethod
    def _shows(message: dict[str, Any], post_id: int, option: int | None = None) -> bool:
        """Does the message show the question: its buttons (that option's, if given), its
        select, its Answer or Put in order button?"""
        ids = [c.get("custom_id", "") for c in all_components_of(message)]
        if option is not None and f"qz:{post_id}:{option}" in ids:
            return True
        return shown_post(message) == post_id


QUESTION = re.compile(r"qz:(\d+):\d+|qm:(\d+)|qt:(\d+)|qo:(\d+):::n")


def question_of(custom_id: str) -> int | None:
    """The post of a question message's own component (an option's button, the select,
    Answer, Put in order); None for any other (⚑, an order picker's steps)."""
    found = QUESTION.fullmatch(custom_id)
    return int(next(g for g in found.groups() if g)) if found else None


def shown_post(message: dict[str, Any]) -> int | None:
    """The post whose question the message shows, if any."""
    return next((post for c in all_components_of(message)
                 if (post := question_of(c.get("custom_id", ""))) is not None), None)


def live_post(message: dict[str, Any], post_id: int | None = None) -> int | None:
    """The post of a live question's message (`post_id`'s only, if given); None for any
    other."""
    for button in all_buttons_of(message):
        found = re.fullmatch(r"lv:(\d+):\d+", button.get("custom_id", ""))
        if found and (post_id is None or int(found[1]) == post_id):
            return int(found[1])
    return None


@contextlib.asynccontextmanager
async def discord_harness(service: QuizService, clock: FakeClock) -> AsyncIterator[DiscordHarness]:
    """The fake REST API and gateway, a started adapter and a Scheduler that only tick()
    runs; discord.py's two URL settings are put back afterwards."""
    base, gateway = discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    fake = FakeDiscord()
    await fake.start()
    harness = DiscordHarness(fake, service, clock)
    try:
        await harness.start()
        yield harness
    finally:
        await harness.stop()
        await fake.close()
        discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = base, gateway
