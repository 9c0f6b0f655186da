"""Peer instruction (/peer): vote alone, see how split the group is, convince your
neighbours, vote again (Mazur's loop; Smith et al., Science 2009).

A peer round is a live session (live.py) of kind "peer" with one question and these phases,
each ended by the scheduler's tick when its time is up (or by the host's /next):
- "vote": everyone votes alone; counts stay hidden until it closes. These are ordinary
  answers of the question's post, so the first vote grades each person's review card (the
  honest signal) and feeds item analysis.
- If at least the chat's threshold (/settings peer, 70 % by default) of the first votes are
  right, the round ends there: the answer and the explanation (discussing a question most
  already get right teaches little).
- "discuss": the split is shown without the answer; people talk for the chat's discussion
  time (/settings discussion, 2 minutes by default), in a Telegram forum topic or a Discord
  thread where the bot may open one (the adapters try), else in the chat.
- "revote": everyone votes again (kept apart: live_revotes, once per person).
- The result: the answer, the explanation, and the shift ("right: 35% → 80%").
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from bot.core.chat_settings import ChatSettings
from bot.core.clock import Clock
from bot.core.live import Asked, Live, LiveAnswer, Lobby, not_the_host
from bot.core.models import Chat, Person, PostSummary, ShownQuestion
from bot.core.ports import AnswerRecord, AnswerStore, LiveRecord, LiveStore, PostStore, Revote

PEER_SECONDS = 60  # each vote's time


@dataclass(frozen=True, slots=True)
class Split:
    """The first vote closed below the threshold: the split, not the answer."""

    session: LiveRecord
    question: ShownQuestion
    per_option: tuple[int, ...]  # first votes per shown option
    voted: int
    until: timedelta  # how long the discussion lasts
    refs: tuple[str, ...] = ()  # the platform's references to the question's message (a
    # Discord thread starts from it)


@dataclass(frozen=True, slots=True)
class Revoting:
    session: LiveRecord
    question: ShownQuestion  # closes_at: the revote's end


@dataclass(frozen=True, slots=True)
class PeerResult:
    session: LiveRecord
    summary: PostSummary  # the first vote's distribution, the answer, the explanation
    revote_per_option: tuple[int, ...]  # () without a discussion
    first_right: float  # share of the first votes that were right
    second_right: float | None  # after the revote; None: no discussion was needed
    revoted: int


class PeerStorage(LiveStore, PostStore, AnswerStore, Protocol):
    """What Peer reads and writes."""


class PeerSettings(Protocol):
    """A chat's peer-round settings (chat_settings.py)."""

    async def get(self, chat_key: str) -> ChatSettings: ...


class Peer:
    def __init__(
        self, live: Live, storage: PeerStorage, clock: Clock, *, settings: PeerSettings,
    ) -> None:
        self.live = live
        self.storage = storage
        self.clock = clock
        self.settings = settings
        self.questions = live.questions
        live.phases["peer"] = self.due

    async def start(
        self, chat: Chat, person: Person, selector: str | None = None, *, allowed: bool,
        locale: str, seconds: int | str = PEER_SECONDS,
    ) -> Asked | Lobby:
        """The round's question, open for the first vote (an admin's /peer while a session
        runs takes that session over instead)."""
        lobby = await self.live.host(chat, person, selector, 1, allowed=allowed,
                                     locale=locale, seconds=seconds, kind="peer")
        if lobby.took_over:
            return lobby
        return await self.live.ask(lobby.session, state="vote")

    async def vote(self, post_id: int, person: Person, shown_option: int) -> LiveAnswer:
        """A vote in the open phase: anyone in the chat votes, once per phase."""
        storage = self.storage
        post = await storage.get_post(post_id)
        question = self.questions.question_of(post)
        record = None if post is None else await storage.live_in_chat(post.chat_key)
        if (post is None or question is None or record is None or record.kind != "peer"
                or not record.steps or record.steps[-1].post_id != post_id
                or record.state not in ("vote", "revote")
                or not 0 <= shown_option < len(post.order)):
            return LiveAnswer("closed")
        canonical = post.order[shown_option]
        correct = canonical == question.answer
        if record.state == "revote":
            stored = await storage.record_revote(
                post_id, Revote(person.key, canonical, correct, self.clock.now()))
            return LiveAnswer("accepted" if stored else "duplicate", correct)
        now = self.clock.now()
        outcome, earlier = await storage.record_answer(AnswerRecord(
            post.id, person.key, canonical, correct, now,
            max(0, int((now - post.created_at).total_seconds() * 1000)), person.known_name))
        if outcome == "inserted":
            return LiveAnswer("accepted", correct)
        return LiveAnswer("closed" if earlier is None else "duplicate")

    async def next(self, chat_key: str, person: Person) -> Revoting | Split | PeerResult | None:
        """The host moves the round on now (ends the vote or the discussion)."""
        record = await self.live.session(chat_key)
        if record is None or record.kind != "peer":
            return None
        if record.host_key != person.key:
            raise not_the_host()
        return await self.due(record)

    async def due(self, record: LiveRecord) -> Split | Revoting | PeerResult | None:
        """The phase whose time is up ends; None if another call ended it."""
        storage, now = self.storage, self.clock.now()
        fresh = await storage.get_live(record.id)
        if fresh is None or fresh.finished_at is not None or not fresh.steps:
            return None
        post_id = fresh.steps[-1].post_id
        post = await storage.get_post(post_id)
        assert post is not None
        if fresh.state == "vote":
            await self.questions.close(post_id, quiet=True)
            summary = await self.questions.summary(post, fresh.locale)
            chosen = await self.settings.get(fresh.chat_key)
            # a float's share of 100, so 7 of 10 meets a 70 % threshold
            if summary.answered and summary.share_right * 100 + 1e-9 >= chosen.peer_threshold:
                return await self._result(fresh, summary, discussed=False)
            saved = await storage.save_live(dataclasses.replace(
                fresh, state="discuss", closes_at=now + chosen.discussion_time))
            if saved is None:
                return None
            return Split(saved, _numbered(summary.question), summary.per_option,
                         summary.answered, chosen.discussion_time,
                         await storage.refs(post_id))
        if fresh.state == "discuss":
            saved = await storage.save_live(dataclasses.replace(
                fresh, state="revote", closes_at=now + timedelta(seconds=fresh.seconds)))
            if saved is None:
                return None
            shown = self.questions.render(post, fresh.locale, (1, 1))
            return Revoting(saved, dataclasses.replace(shown, closes_at=saved.closes_at))
        if fresh.state == "revote":
            summary = await self.questions.summary(post, fresh.locale)
            return await self._result(fresh, summary, discussed=True)
        return None

    async def _result(
        self, record: LiveRecord, summary: PostSummary, *, discussed: bool
    ) -> PeerResult | None:
        saved = await self.storage.save_live(dataclasses.replace(
            record, state="over", closes_at=None, finished_at=self.clock.now()))
        if saved is None:
            return None
        if not discussed:
            return PeerResult(saved, summary, (), summary.share_right, None, 0)
        post = await self.storage.get_post(summary.post_id)
        assert post is not None
        votes = await self.storage.revotes(summary.post_id)
        per_option = [0] * len(post.order)
        for v in votes:
            per_option[post.order.index(v.option)] += 1
        second = sum(v.correct for v in votes) / len(votes) if votes else 0.0
        return PeerResult(saved, summary, tuple(per_option), summary.share_right, second,
                          len(votes))


def _numbered(question: ShownQuestion) -> ShownQuestion:
    return dataclasses.replace(question, number=1, total=1)



