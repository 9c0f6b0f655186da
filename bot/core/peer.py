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
- "transfer", when the question has an isomorphic one (its `pair:` in the pack, else the
  first other question of its quiz sharing one of its concepts, voted by tapping): that
  question, answered alone (no discussion), as Smith et al. measured learning rather than
  copying; ordinary answers of the round's second step.
- The result: the answer, the explanation, and the shift ("right: 35% → 80%"); after a
  transfer question also its share right, the normalised gain and the weighted learning gain
  (`Gains`, the same figures the dashboard's Peer rounds page shows).

The figures, and what was checked of them (December 2026, against the stored copies the
search tool reaches):
- Hake's normalised gain, <g> = (<post> − <pre>) / (100 − <pre>) over class averages
  (Hake, Am. J. Phys. 66, 64, 1998; PhysPort's "Normalized gain" page quotes the formula as
  written here): the first vote is the pre-test and the revote the post-test, shares instead
  of percentages, so (second − first) / (1 − first). Checked.
- The weighted learning gain of Porter, Bailey Lee, Simon and Zingaro ("Peer instruction: do
  students really learn from peer discussion in computing?", ICER 2011). Their abstract and
  introduction (the stored copies hold no more) confirm the metric's purpose: it is over the
  "potential learners", those wrong at the first vote, judged by the isomorphic question
  answered alone, and it corrects raw percentages because an instructor's second question is
  usually harder than the first (85-89 % of potential learners benefit, in genetics and in
  computing). The formula itself, the potential learners' share right on the isomorphic
  question divided by that share among those right at the first vote (the question's own
  difficulty for people who knew the idea), could not be read in the paper's text here: it is
  our reading of that purpose, not a checked quotation.
- Only people who voted first count in the transfer question's share and in the weighted
  learning gain: someone who arrived after the first vote says nothing about what the
  discussion taught. Their answer is still an ordinary answer (their review card sees it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from bot.content import Question, Quiz
from bot.core.chat_settings import ChatSettings
from bot.core.clock import Clock
from bot.core.live import LIVE_KINDS, Asked, Live, LiveAnswer, Lobby, not_the_host
from bot.core.models import Chat, Person, PostSummary, ShownQuestion
from bot.core.ports import (
    AnswerRecord,
    AnswerStore,
    LiveRecord,
    LiveStore,
    NewPost,
    PostStore,
    Revote,
)
from bot.core.questions import option_order

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
    # the isomorphic question after the revote, answered alone (the same question otherwise)
    transfer: bool = False


@dataclass(frozen=True, slots=True)
class Gains:
    """A peer round's figures (see above), from each person's right or wrong: the first vote,
    the revote (None: no discussion), the transfer question (None: none was asked)."""

    first_right: float  # share of the first votes that were right
    voted: int  # first votes
    second_right: float | None = None  # at the revote
    revoted: int = 0
    transfer_right: float | None = None  # on the isomorphic question, among the first voters
    transferred: int = 0  # first voters who answered it
    # Porter et al.'s weighted learning gain; None: none of those wrong at the first vote
    # answered the transfer question, or none of those right at it was right on it
    learning_gain: float | None = None

    @property
    def normalised_gain(self) -> float | None:
        """Hake's: (revote − first) / (1 − first); None without a revote or with nothing
        left to gain."""
        if self.second_right is None or self.first_right >= 1:
            return None
        return (self.second_right - self.first_right) / (1 - self.first_right)


def gains(firsts: Mapping[str, bool], revotes: Mapping[str, bool] | None = None,
          transfers: Mapping[str, bool] | None = None) -> Gains:
    """The figures of a round whose people (keys) were right or wrong at each step."""
    found = Gains(_share(firsts.values()), len(firsts))
    if revotes is not None:
        found = dataclasses.replace(found, second_right=_share(revotes.values()),
                                    revoted=len(revotes))
    if transfers is not None:
        counted = [right for person, right in transfers.items() if person in firsts]
        found = dataclasses.replace(
            found, transfer_right=_share(counted), transferred=len(counted),
            learning_gain=weighted_learning_gain(firsts, transfers))
    return found


def _share(rights: Iterable[bool]) -> float:
    listed = list(rights)
    return sum(listed) / len(listed) if listed else 0.0


@dataclass(frozen=True, slots=True)
class PeerResult:
    session: LiveRecord
    summary: PostSummary  # the first vote's distribution, the answer, the explanation
    revote_per_option: tuple[int, ...]  # () without a discussion
    first_right: float  # share of the first votes that were right
    second_right: float | None  # after the revote; None: no discussion was needed
    revoted: int
    transfer_right: float | None = None  # on the isomorphic question; None: none was asked
    transferred: int = 0  # its answers by people who voted first
    learning_gain: float | None = None  # Gains.learning_gain
    transfer_summary: PostSummary | None = None  # the isomorphic question's answers

    @property
    def normalised_gain(self) -> float | None:
        return Gains(self.first_right, 0, self.second_right).normalised_gain


def isomorphic(quiz: Quiz, question: Question) -> Question | None:
    """The question to ask alone after the revote: the pack's `pair:` of `question`, else
    the first other question of its quiz sharing a concept with it; one voted by tapping."""
    if question.pair is not None:
        paired = next((q for q in quiz.questions if q.id == question.pair), None)
        return paired if paired is not None and paired.kind in LIVE_KINDS else None
    concepts = set(question.meta.concepts) if question.meta is not None else set()
    return next((q for q in quiz.questions if q.id != question.id and q.kind in LIVE_KINDS
                 and q.meta is not None and concepts & set(q.meta.concepts)), None)


def weighted_learning_gain(firsts: Mapping[str, bool], transfers: Mapping[str, bool]
                           ) -> float | None:
    """Of the people who voted first and answered the transfer question: the share right on
    it among those wrong at first, over that share among those right at first."""
    both = [(firsts[p], right) for p, right in transfers.items() if p in firsts]
    wrong = [right for first, right in both if not first]
    knew = [right for first, right in both if first]
    if not wrong or not knew or not any(knew):
        return None
    return (sum(wrong) / len(wrong)) / (sum(knew) / len(knew))


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
                or record.state not in ("vote", "revote", "transfer")
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
            if (transfer := await self._transfer(fresh, post.quiz_id, post.question_id)):
                return transfer
            summary = await self.questions.summary(post, fresh.locale)
            return await self._result(fresh, summary, discussed=True)
        if fresh.state == "transfer":
            await self.questions.close(post_id, quiet=True)
            first = await storage.get_post(fresh.steps[0].post_id)
            assert first is not None
            summary = await self.questions.summary(first, fresh.locale)
            return await self._result(fresh, summary, discussed=True, transfer=post_id)
        return None

    async def _transfer(self, record: LiveRecord, quiz_id: str, question_id: str
                        ) -> Revoting | None:
        """The isomorphic question as the round's second step, open for its vote; None when
        the question has none (or another call asked it)."""
        quiz = self.questions.catalog.quizzes.get(quiz_id)
        pair = None if quiz is None else isomorphic(quiz, quiz.question(question_id))
        if quiz is None or pair is None:
            return None
        now = self.clock.now()
        post = await self.storage.add_live_step(record.id, len(record.steps), NewPost(
            record.chat_key, quiz.id, pair.id, option_order(pair, self.questions.rng),
            record.locale, now, kind="live"))
        if post is None:
            return None
        fresh = await self.storage.get_live(record.id)
        assert fresh is not None
        saved = await self.storage.save_live(dataclasses.replace(
            fresh, state="transfer", closes_at=now + timedelta(seconds=fresh.seconds)))
        if saved is None:
            return None
        shown = self.questions.render(post, saved.locale, None)
        return Revoting(saved, dataclasses.replace(shown, closes_at=saved.closes_at),
                        transfer=True)

    async def _result(
        self, record: LiveRecord, summary: PostSummary, *, discussed: bool,
        transfer: int | None = None,
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
        firsts = {a.person_key: a.correct
                  for a in await self.storage.answers_for_post(summary.post_id)}
        transfers = None if transfer is None else {
            a.person_key: a.correct for a in await self.storage.answers_for_post(transfer)}
        found = gains(firsts, {v.person_key: v.correct for v in votes}, transfers)
        result = PeerResult(saved, summary, tuple(per_option), summary.share_right,
                            found.second_right, found.revoted)
        if transfer is None:
            return result
        post = await self.storage.get_post(transfer)
        assert post is not None
        return dataclasses.replace(
            result, transferred=found.transferred, transfer_right=found.transfer_right,
            transfer_summary=await self.questions.summary(post, record.locale),
            learning_gain=found.learning_gain)


def _numbered(question: ShownQuestion) -> ShownQuestion:
    return dataclasses.replace(question, number=1, total=1)



