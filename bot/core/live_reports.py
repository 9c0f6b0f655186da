"""A chat's live sessions and peer rounds as the dashboard shows them: the list, newest
first, a page at a time; one session's podium, teams and questions (a peer round's shift from
the first vote to the revote); its standings as an export's rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.core.live import Live, Podium
from bot.core.ports import AnswerStore, LiveRecord, LiveStore, PostStore

PAGE = 50  # sessions on one page of the list


class LiveReportStorage(LiveStore, PostStore, AnswerStore, Protocol):
    """What LiveReports reads."""


@dataclass(frozen=True, slots=True)
class SessionLine:
    session: LiveRecord
    players: int
    asked: int  # questions asked and not skipped


@dataclass(frozen=True, slots=True)
class SessionPage:
    lines: tuple[SessionLine, ...]
    next: int | None  # the cursor of the next (older) page


@dataclass(frozen=True, slots=True)
class StepLine:
    number: int  # 1-based
    question_id: str
    prompt: str  # in the reader's language; the id if the question left the catalog
    answered: int  # a peer round: the first votes
    right: int
    skipped: bool
    revoted: int = 0  # a peer round that went to a revote
    revote_right: int = 0

    @property
    def share_right(self) -> float:
        return self.right / self.answered if self.answered else 0.0

    @property
    def revote_share(self) -> float | None:
        """Right at the revote; None without one."""
        return self.revote_right / self.revoted if self.revoted else None


@dataclass(frozen=True, slots=True)
class SessionReport:
    podium: Podium
    steps: tuple[StepLine, ...]


class LiveReports:
    def __init__(self, live: Live, storage: LiveReportStorage) -> None:
        self.live = live
        self.storage = storage

    async def sessions(self, chat_key: str, before: int | None = None,
                       limit: int = PAGE) -> SessionPage:
        records = await self.storage.chat_lives(chat_key, before, limit + 1)
        lines = tuple([
            SessionLine(r, await self.storage.live_player_count(r.id),
                        sum(not s.skipped for s in r.steps))
            for r in records[:limit]])
        return SessionPage(lines, records[limit - 1].id if len(records) > limit else None)

    async def report(self, chat_key: str, session_id: int, locale: str) -> SessionReport | None:
        """One session of this chat (None: none, or another chat's)."""
        record = await self.storage.get_live(session_id)
        if record is None or record.chat_key != chat_key:
            return None
        steps = []
        questions = self.live.questions
        for step in record.steps:
            post = await self.storage.get_post(step.post_id)
            if post is None:
                continue
            answers = await self.storage.answers_for_post(post.id)
            revotes = await self.storage.revotes(post.id) if record.kind == "peer" else []
            prompt = post.question_id if questions.question_of(post) is None else \
                questions.render(post, locale, (step.step + 1, record.total)).prompt
            steps.append(StepLine(
                step.step + 1, post.question_id, prompt, len(answers),
                sum(a.correct for a in answers), step.skipped, len(revotes),
                sum(v.correct for v in revotes)))
        return SessionReport(await self.live.podium(record), tuple(steps))
