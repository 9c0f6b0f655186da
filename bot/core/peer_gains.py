"""A chat's finished peer rounds as the dashboard's Peer rounds page shows them, newest first,
a page at a time: each round's first vote, revote and transfer question with their shares
right, Hake's normalised gain and the weighted learning gain (peer.py's `gains`, so the same
figures its result gave the chat), and the means over the page's rounds.

A read of the rounds' answers as kept (the first vote and the transfer question are the
posts' answers, the revote live_revotes), through the ports peer rounds already use: no
figure is stored twice, so nothing can drift from what the chat was told."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from bot.content import Question
from bot.core.peer import Gains, gains
from bot.core.ports import AnswerStore, LiveRecord, LiveStore, PostRecord, PostStore

PAGE = 20  # rounds on one page
BATCH = 50  # sessions read at a time while looking for peer rounds among live sessions


class PeerGainsStorage(LiveStore, PostStore, AnswerStore, Protocol):
    """What PeerGains reads."""


class PostQuestions(Protocol):
    """A post's question (questions.py); None once the content changed under it."""

    def question_of(self, post: PostRecord | None) -> Question | None: ...


@dataclass(frozen=True, slots=True)
class RoundGains:
    session: LiveRecord
    question_id: str
    prompt: str  # in the reader's language; the id if the question left the catalog
    transfer_id: str | None  # the question asked alone after the revote; None: none was
    transfer_prompt: str | None
    gains: Gains


@dataclass(frozen=True, slots=True)
class Mean:
    """One figure's mean over the rounds that have it."""

    value: float | None
    rounds: int


@dataclass(frozen=True, slots=True)
class PeerGainsPage:
    rounds: tuple[RoundGains, ...]
    next: int | None  # the cursor of the next (older) page
    first_right: Mean
    second_right: Mean
    transfer_right: Mean
    normalised_gain: Mean
    learning_gain: Mean


def mean(values: Iterable[float | None]) -> Mean:
    found = [v for v in values if v is not None]
    return Mean(sum(found) / len(found) if found else None, len(found))


class PeerGains:
    def __init__(self, questions: PostQuestions, storage: PeerGainsStorage) -> None:
        self.questions = questions
        self.storage = storage

    async def page(self, chat_key: str, locale: str, before: int | None = None,
                   limit: int = PAGE) -> PeerGainsPage:
        records = await self._finished_rounds(chat_key, before, limit + 1)
        rounds = [r for r in [await self._round(s, locale) for s in records[:limit]]
                  if r is not None]
        return PeerGainsPage(
            tuple(rounds), records[limit - 1].id if len(records) > limit else None,
            mean(r.gains.first_right for r in rounds),
            mean(r.gains.second_right for r in rounds),
            mean(r.gains.transfer_right for r in rounds),
            mean(r.gains.normalised_gain for r in rounds),
            mean(r.gains.learning_gain for r in rounds))

    async def _finished_rounds(self, chat_key: str, before: int | None, wanted: int
                               ) -> list[LiveRecord]:
        """Up to `wanted` finished peer rounds of the chat with an id below `before`; live
        sessions share the table, so it reads on past them."""
        found: list[LiveRecord] = []
        while len(found) < wanted:
            batch = await self.storage.chat_lives(chat_key, before, BATCH)
            found += [s for s in batch
                      if s.kind == "peer" and s.finished_at is not None and s.steps]
            if len(batch) < BATCH:
                break
            before = batch[-1].id
        return found[:wanted]

    async def _round(self, session: LiveRecord, locale: str) -> RoundGains | None:
        first = await self.storage.get_post(session.steps[0].post_id)
        if first is None:
            return None
        firsts = {a.person_key: a.correct
                  for a in await self.storage.answers_for_post(first.id)}
        revotes = {v.person_key: v.correct for v in await self.storage.revotes(first.id)}
        transfer = None if len(session.steps) < 2 else \
            await self.storage.get_post(session.steps[1].post_id)
        transfers = None if transfer is None else {
            a.person_key: a.correct for a in await self.storage.answers_for_post(transfer.id)}
        return RoundGains(
            session, first.question_id, self._prompt(first, locale),
            None if transfer is None else transfer.question_id,
            None if transfer is None else self._prompt(transfer, locale),
            gains(firsts, revotes or None, transfers))

    def _prompt(self, post: PostRecord, locale: str) -> str:
        question = self.questions.question_of(post)
        return post.question_id if question is None else question.prompt.get(locale)
