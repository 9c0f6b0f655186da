"""Rounds: /quiz <quiz or tag> N in a shared chat asks N questions in a row.

Each question is an ordinary /quiz question of the chat (open for the chat's question time,
closed with its summary when its time is up). The next one follows when the previous one has
closed: the scheduler's tick asks it, driven by the clock, so a round goes on across restarts
and is asked once whichever process ticks (the database decides, `add_round_post`). An
admin's /quiz in the chat replaces a running round (asking.py). A round's end shows a short
summary: who got how many right, due from when the round finished until its platform
confirmed it (delivery.py delivers it, once, and retries it).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from datetime import timedelta
from typing import Protocol

from bot.core.chat_settings import ChatSettingsRules
from bot.core.clock import Clock
from bot.core.delivery import question_name
from bot.core.errors import MAX_ROUND, BadCount, UnknownQuiz
from bot.core.models import Chat, ShownQuestion
from bot.core.ports import (
    AnswerStore,
    ChatStore,
    DeliveryStore,
    NewPost,
    PostStore,
    RoundRecord,
    RoundScore,
    RoundStore,
    RoundSummary,
)
from bot.core.questions import Questions, option_order

SENT_KEPT = 4096  # round questions remembered as sent (bounded, oldest out)


class RoundsStorage(RoundStore, PostStore, AnswerStore, ChatStore, DeliveryStore, Protocol):
    """What Rounds reads and writes."""


def check_count(count: int | str) -> int:
    """A round's size from a number or what a person typed; BadCount outside 1..MAX_ROUND."""
    if isinstance(count, str):
        try:
            count = int(count.strip())
        except ValueError:
            raise BadCount(count) from None
    if not 1 <= count <= MAX_ROUND:
        raise BadCount(count)
    return count


class Rounds:
    def __init__(
        self, questions: Questions, storage: RoundsStorage, clock: Clock,
        settings: ChatSettingsRules,
    ) -> None:
        self.questions = questions
        self.storage = storage
        self.clock = clock
        self.settings = settings
        self._sent: OrderedDict[int, None] = OrderedDict()  # round questions known sent

    async def start(
        self, chat: Chat, selector: str | None, count: int, locale: str, mode: str | None
    ) -> ShownQuestion:
        """A new round in `chat` (any running one was ended first) and its first question."""
        await self.storage.upsert_chat(chat.key, chat.title, chat.platform_locale)
        record = await self.storage.create_round(
            chat.key, selector, count, mode, locale, self.clock.now()
        )
        shown = await self._ask(record)
        assert shown is not None, "a new round's first question is this call's"
        return shown

    async def _ask(self, record: RoundRecord) -> ShownQuestion | None:
        """Post the round's next question; None if another call or process just did."""
        chat = Chat(record.chat_key)
        quiz_id, question_id = await self.questions.choose(chat, record.selector, None)
        question = self.questions.catalog.question(quiz_id, question_id)
        now = self.clock.now()
        post = await self.storage.add_round_post(record.id, len(record.posts), NewPost(
            record.chat_key, quiz_id, question_id, option_order(question, self.questions.rng),
            record.locale, now,
            closes_at=now + await self.settings.question_time(record.chat_key),
        ))
        if post is None:
            return None
        return self.questions.render(post, record.locale, (len(record.posts) + 1, record.total))

    async def mode(self, chat_key: str) -> str | None:
        """How the chat's running round asks ("polls", "buttons"), else the chat's setting."""
        for record in await self.storage.active_rounds(chat_key):
            if record.mode:
                return record.mode
        return (await self.settings.get(chat_key)).mode

    async def end(self, chat_key: str) -> list[RoundSummary]:
        """End the chat's running round (an admin's /quiz replaces it); its summary is due."""
        return [s for r in await self.storage.active_rounds(chat_key)
                if (s := await self.finish(r)) is not None]

    async def finish(self, record: RoundRecord) -> RoundSummary | None:
        """Only the call that finished it gets the summary."""
        if not await self.storage.finish_round(record.id, self.clock.now()):
            return None
        return await self.summary(record)

    async def advance(
        self, serves: Callable[[str], bool] = lambda chat_key: True
    ) -> tuple[list[ShownQuestion], list[RoundSummary]]:
        """For the scheduler, after it closed the due questions: each round (in a chat this
        process `serves`) whose question has closed gets its next one, or ends with its
        summary after its last."""
        asked: list[ShownQuestion] = []
        ended: list[RoundSummary] = []
        for record in await self.storage.active_rounds():
            if not serves(record.chat_key):
                continue
            if record.posts:
                last = await self.storage.get_post(record.posts[-1])
                if last is not None and last.closed_at is None:
                    continue  # its question is still open
            if len(record.posts) < record.total:
                try:
                    if (shown := await self._ask(record)) is not None:
                        asked.append(shown)
                    continue
                except UnknownQuiz:  # its quiz was withdrawn (/unpublish) or removed
                    pass  # it ends here, with what it asked
            if (summary := await self.finish(record)) is not None:
                ended.append(summary)
        return asked, ended

    async def unsent(
        self, grace: timedelta, serves: Callable[[str], bool] = lambda chat_key: True
    ) -> list[ShownQuestion]:
        """Round questions asked over `grace` ago that never reached their chat: the process
        that asked one died before its send started (no poll or message bound to it, and no
        send stored as started: delivery.py). Offered again while they are open."""
        now, found = self.clock.now(), []
        for record in await self.storage.active_rounds():
            if not serves(record.chat_key) or not record.posts or record.posts[-1] in self._sent:
                continue
            post = await self.storage.get_post(record.posts[-1])
            if post is None or post.closed_at is not None or post.created_at > now - grace:
                continue
            if await self.storage.refs(post.id) or \
                    await self.storage.delivery_steps(question_name(post.id)):
                self._sent[post.id] = None  # sent, or being sent: never asked again
                if len(self._sent) > SENT_KEPT:
                    self._sent.popitem(last=False)
                continue
            found.append(self.questions.render(post, record.locale,
                                               (len(record.posts), record.total)))
        return found

    async def unposted(self, window: timedelta, grace: timedelta) -> list[RoundSummary]:
        """Summaries of rounds finished between `window` and `grace` ago that no platform
        confirmed (a failure, a restart, a process that died while delivering)."""
        now = self.clock.now()
        return [await self.summary(record) for record in
                await self.storage.unposted_round_summaries(now - window, now - grace)]

    async def summary(self, record: RoundRecord) -> RoundSummary:
        """Who got how many right, most first (then most answered, then by name)."""
        fresh = await self.storage.get_round(record.id) or record
        scores: dict[str, tuple[str, int, int]] = {}  # person -> (name, right, answered)
        for post_id in fresh.posts:
            for a in await self.storage.answers_for_post(post_id):
                _, right, answered = scores.get(a.person_key, ("", 0, 0))
                scores[a.person_key] = (a.name, right + a.correct, answered + 1)
        rows = sorted(
            (RoundScore(key, name, right, answered)
             for key, (name, right, answered) in scores.items()),
            key=lambda s: (-s.right, -s.answered, s.name, s.person_key),
        )
        return RoundSummary(fresh.id, fresh.chat_key, fresh.locale, len(fresh.posts),
                            fresh.total, tuple(rows))
