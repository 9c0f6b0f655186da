"""/quiz in any chat: which question comes, what it replaces, and who it is for.

The one rule set every platform follows:
- In a shared chat, a new question replaces the chat's previous /quiz question (closed with
  its summary); the daily question stays open until the next day's, so day streaks hold.
  Concurrent /quiz commands in one chat are serialised: one question stays open.
- Only the chat's admins replace an open question or end a running round before its time:
  a member's /quiz then points at the open question and changes nothing. With /settings
  quiz admins, only admins start questions and rounds at all. The platform says who is an
  admin (`is_admin`), asked only when it matters.
- In a private chat (or when a run is asked for): a quiz id runs that whole quiz (resuming it
  if it is the unfinished one), a topic gives one question chosen for the person, and nothing
  resumes the unfinished run, else gives one question from any quiz. Only the person answers.
- In a shared chat, a count N (1..20) asks N questions in a row: a round (rounds.py). An
  admin's /quiz replaces a running round, which ends with its summary. A question stays open for the
  chat's question time (/settings), else the bot's default. In a private chat N is ignored.
- While a live session runs in the chat (live.py), a member's /quiz is refused with a
  pointer to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from datetime import timedelta
from typing import Protocol

from bot.core.delivery import Delivery
from bot.core.errors import StillOpen, UnknownQuiz, may_not_ask
from bot.core.live import refuse_quiz
from bot.core.locales import Locales
from bot.core.locks import KeyedLocks
from bot.core.models import Chat, Person, ShownQuestion
from bot.core.ports import LeaseStore, LiveStore, PostStore, RoundStore
from bot.core.questions import Questions, is_open
from bot.core.quiz_runs import Runs
from bot.core.rounds import Rounds, check_count

log = logging.getLogger(__name__)

# How long one /quiz may hold its chat across processes (it closes the last question and shows
# the new one: a few platform calls).
CHAT_LEASE = timedelta(seconds=15)


class AskingStorage(LeaseStore, PostStore, RoundStore, LiveStore, Protocol):
    """What Asking reads and writes: the chat's lease, its open questions and rounds."""


class Asking:
    def __init__(
        self, questions: Questions, runs: Runs, locales: Locales, delivery: Delivery,
        storage: AskingStorage, question_time: timedelta, rounds: Rounds | None = None,
    ) -> None:
        self.storage = storage
        self.questions = questions
        self.runs = runs
        self.locales = locales
        self.delivery = delivery
        self.question_time = question_time
        self.rounds = rounds
        self._locks = KeyedLocks()
        # catches up with packs other processes published (Authoring.refresh): whether the
        # catalog changed
        self.reload_packs: Callable[[], Awaitable[bool]] | None = None

    @contextlib.asynccontextmanager
    async def quiz(
        self,
        chat: Chat,
        person: Person | None,
        selector: str | None = None,
        *,
        run: bool | None = None,
        count: int | str | None = None,
        mode: str | None = None,
        is_admin: Callable[[], Awaitable[bool]] | None = None,
    ) -> AsyncIterator[ShownQuestion]:
        """The question to show for /quiz; the chat stays locked until the adapter has shown
        it, so a second /quiz replaces a question that is really there.

        `person` is None for a channel post (nobody in particular asked). `run=True` asks
        for a whole quiz run even in a shared chat (shown only to the person). `count`: a
        round of that many questions in a shared chat; `mode` ("polls", "buttons") is how
        the adapter shows them, kept for the round's next questions. The question carries
        the mode decided (that, else the chat's round or /settings). `is_admin` asks the
        platform whether the person is one of the chat's admins; None: the caller speaks
        with an admin's right (the console, the operator)."""
        size = check_count(count) if count is not None else 1
        if selector:  # an unknown name raises before anything closes
            try:
                self.questions.select(selector)
            except UnknownQuiz:
                # perhaps a pack published in another process a moment ago
                if self.reload_packs is None or not await self.reload_packs():
                    raise
                self.questions.select(selector)
        async with self._locks(chat.key), self._chat_lease(chat.key):
            if person is not None and (chat.is_private or run):
                question = await self._for_one(chat, person, selector, whole=bool(run))
            else:
                await refuse_quiz(self.storage, chat, is_admin)
                await self._may_ask(chat, person, is_admin)
                question = await self._for_chat(chat, person, selector, size, mode)
            if mode is None and self.rounds is not None:
                mode = await self.rounds.mode(chat.key)
            yield replace(question, mode=mode)

    @contextlib.asynccontextmanager
    async def _chat_lease(self, chat_key: str) -> AsyncIterator[None]:
        """The chat across processes (webhooks behind a load balancer, Discord shards): the
        database lease that one /quiz at a time holds while it replaces and shows. A holder
        that died frees it after CHAT_LEASE; waiting longer than that is pointless."""
        storage, holder, clock = self.storage, self.delivery.holder, self.delivery.clock
        name = f"chat:{chat_key}"
        loop = asyncio.get_running_loop()
        give_up = loop.time() + CHAT_LEASE.total_seconds()
        while not await storage.take_lease(name, holder, clock.now() + CHAT_LEASE, clock.now()):
            if loop.time() >= give_up:
                log.warning("chat %s stayed claimed for %s; asking anyway", chat_key, CHAT_LEASE)
                break
            await asyncio.sleep(0.05)
        try:
            yield
        finally:
            await storage.release_lease(name, holder)

    async def _may_ask(
        self, chat: Chat, person: Person | None, is_admin: Callable[[], Awaitable[bool]] | None
    ) -> None:
        """Refuse a member's /quiz that would cut the chat's open question or round short
        (pointing at it), or any /quiz of a member where only admins ask."""
        if person is None or is_admin is None:
            return  # a channel post speaks for the channel; the operator may do anything
        if self.rounds is not None and (await self.rounds.settings.get(chat.key)).admins_only:
            if not await is_admin():
                raise may_not_ask()
            return
        storage, now = self.storage, self.delivery.clock.now()
        shown = next(((post, question) for post in await storage.open_posts(chat.key, kind="quiz")
                      if post.run_id is None and post.owner_key is None and is_open(post, now)
                      and (question := self.questions.question_of(post)) is not None), None)
        running = bool(self.rounds and await storage.active_rounds(chat.key))
        if (shown is None and not running) or await is_admin():
            return
        if shown is None:
            raise StillOpen(None)  # a round between two questions
        post, question = shown
        locale = await self.locales.for_person(person, chat)
        raise StillOpen(question.prompt.get(locale), post.id, await storage.refs(post.id))

    async def _for_chat(
        self, chat: Chat, person: Person | None, selector: str | None, size: int = 1,
        mode: str | None = None,
    ) -> ShownQuestion:
        await self.delivery.summaries(await self.questions.close_open(chat.key, kind="quiz"))
        locale = await self.locales.for_audience(chat, person)
        if self.rounds is None:
            return await self.questions.ask(chat, selector, locale, open_for=self.question_time)
        await self.delivery.round_summaries(await self.rounds.end(chat.key))
        if size > 1:
            return await self.rounds.start(chat, selector, size, locale, mode)
        open_for = await self.rounds.settings.question_time(chat.key)
        return await self.questions.ask(chat, selector, locale, open_for=open_for)

    async def _for_one(
        self, chat: Chat, person: Person, selector: str | None, *, whole: bool
    ) -> ShownQuestion:
        locale = await self.locales.for_person(person, chat)
        quiz = self.questions.quiz_named(selector)
        if quiz is not None or whole or (
            selector is None and await self.runs.active(person, chat) is not None
        ):
            if whole and selector and quiz is None:  # a topic is not a quiz to run
                raise UnknownQuiz(selector, self.questions.quizzes(locale))
            return await self.runs.start(person, chat, quiz, locale)
        # one question for this person; their previous single question is replaced quietly
        for post in await self.storage.open_posts(chat.key, kind="quiz"):
            if post.owner_key == person.key and post.run_id is None:
                await self.questions.close(post.id, quiet=True)
        return await self.questions.ask(chat, selector, locale, person=person, owner=person)
