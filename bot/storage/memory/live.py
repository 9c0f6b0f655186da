"""Live sessions in memory: the LiveStore port of MemoryStorage, held to the same contract
(tests/storage_contract/test_live.py) as the databases."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol

from bot.core.ports import (
    LivePlayer,
    LiveRecord,
    LiveStep,
    NewLive,
    NewPost,
    PeerVotes,
    PostRecord,
    Revote,
)


@dataclasses.dataclass
class LiveTables:
    sessions: dict[int, LiveRecord] = dataclasses.field(default_factory=dict)
    players: dict[int, list[LivePlayer]] = dataclasses.field(default_factory=dict)
    revotes: dict[int, list[Revote]] = dataclasses.field(default_factory=dict)

    def forget(self, person_key: str) -> int:
        """A person deleted (/mydata delete): their joins and revotes, and their name as a
        session's host; how many rows went."""
        removed = 0
        for players in self.players.values():
            kept = [p for p in players if p.person_key != person_key]
            removed += len(players) - len(kept)
            players[:] = kept
        for votes in self.revotes.values():
            left = [v for v in votes if v.person_key != person_key]
            removed += len(votes) - len(left)
            votes[:] = left
        for session_id, record in list(self.sessions.items()):
            if record.host_key == person_key:
                self.sessions[session_id] = dataclasses.replace(record, host_key="")
                removed += 1
        return removed


class _Answer(Protocol):
    @property
    def post_id(self) -> int: ...
    @property
    def correct(self) -> bool: ...


class _Database(Protocol):
    live: LiveTables
    posts: dict[int, PostRecord]

    @property
    def answer_rows(self) -> Sequence[_Answer]: ...

    def next_id(self) -> int: ...


class MemoryLive(ABC):
    @property
    @abstractmethod
    def _db(self) -> _Database: ...
    @abstractmethod
    def _insert_post(self, new: NewPost) -> PostRecord: ...

    async def create_live(self, new: NewLive) -> LiveRecord | None:
        tables = self._db.live
        if await self.live_in_chat(new.chat_key) is not None:
            return None
        record = LiveRecord(
            self._db.next_id(), new.chat_key, new.kind, new.host_key, new.selector, new.total,
            new.seconds, new.speed, new.teams, new.locale, "lobby", None, None, 0,
            new.started_at.astimezone(UTC), None, choose=new.choose,
        )
        tables.sessions[record.id] = record
        return record

    async def get_live(self, session_id: int) -> LiveRecord | None:
        return self._db.live.sessions.get(session_id)

    async def live_in_chat(self, chat_key: str) -> LiveRecord | None:
        return next((r for r in self._db.live.sessions.values()
                     if r.chat_key == chat_key and r.finished_at is None), None)

    async def active_lives(self) -> list[LiveRecord]:
        return [r for _, r in sorted(self._db.live.sessions.items()) if r.finished_at is None]

    async def chat_lives(
        self, chat_key: str, before: int | None = None, limit: int = 50
    ) -> list[LiveRecord]:
        return [r for _, r in sorted(self._db.live.sessions.items(), reverse=True)
                if r.chat_key == chat_key and (before is None or r.id < before)][:limit]

    async def save_live(self, record: LiveRecord) -> LiveRecord | None:
        sessions = self._db.live.sessions
        stored = sessions.get(record.id)
        if stored is None or stored.version != record.version:
            return None
        sessions[record.id] = saved = dataclasses.replace(
            stored, host_key=record.host_key, state=record.state,
            closes_at=_utc(record.closes_at), paused_ms=record.paused_ms,
            finished_at=_utc(record.finished_at), version=stored.version + 1,
        )
        return saved

    async def add_live_step(self, session_id: int, step: int, post: NewPost) -> PostRecord | None:
        sessions = self._db.live.sessions
        stored = sessions.get(session_id)
        if stored is None or stored.finished_at is not None or len(stored.steps) != step:
            return None
        created = self._insert_post(post)
        sessions[session_id] = dataclasses.replace(
            stored, steps=(*stored.steps, LiveStep(step, created.id, False)))
        return created

    async def skip_live_step(self, session_id: int, step: int) -> None:
        sessions = self._db.live.sessions
        if (stored := sessions.get(session_id)) is not None:
            sessions[session_id] = dataclasses.replace(stored, steps=tuple(
                dataclasses.replace(s, skipped=True) if s.step == step else s
                for s in stored.steps))

    async def join_live(
        self, session_id: int, person_key: str, name: str, teams: int, when: datetime,
        team: int | None = None, gap: int = 0,
    ) -> bool:
        players = self._db.live.players.setdefault(session_id, [])
        if any(p.person_key == person_key for p in players):
            return False
        if team is None:
            team = len(players) % teams if teams > 0 else None
        else:
            sizes = [sum(p.team == k for p in players) for k in range(teams)]
            if sizes[team] >= min(sizes) + gap:
                return False
        players.append(LivePlayer(person_key, name, team, when.astimezone(UTC)))
        return True

    async def live_players(self, session_id: int) -> list[LivePlayer]:
        return sorted(self._db.live.players.get(session_id, []),
                      key=lambda p: (p.joined_at, p.person_key))

    async def live_player_count(self, session_id: int) -> int:
        return len(self._db.live.players.get(session_id, []))

    async def is_live_player(self, session_id: int, person_key: str) -> bool:
        return any(p.person_key == person_key
                   for p in self._db.live.players.get(session_id, []))

    async def record_revote(self, post_id: int, vote: Revote) -> bool:
        votes = self._db.live.revotes.setdefault(post_id, [])
        if any(v.person_key == vote.person_key for v in votes):
            return False
        votes.append(dataclasses.replace(vote, answered_at=vote.answered_at.astimezone(UTC)))
        return True

    async def peer_votes(self, chat_key: str, quiz_id: str | None = None) -> list[PeerVotes]:
        db = self._db
        found = []
        for record in db.live.sessions.values():
            for step in record.steps if record.kind == "peer" else ():
                post = db.posts.get(step.post_id)
                votes = db.live.revotes.get(step.post_id, [])
                if post is None or not votes or post.chat_key != chat_key or (
                        quiz_id is not None and post.quiz_id != quiz_id):
                    continue
                first = [a for a in db.answer_rows if a.post_id == post.id]
                found.append((post.id, PeerVotes(
                    post.quiz_id, post.question_id, len(first), sum(a.correct for a in first),
                    len(votes), sum(v.correct for v in votes))))
        return [v for _, v in sorted(found, key=lambda f: f[0])]

    async def revotes(self, post_id: int) -> list[Revote]:
        return sorted(self._db.live.revotes.get(post_id, []),
                      key=lambda v: (v.answered_at, v.person_key))


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.astimezone(UTC)
