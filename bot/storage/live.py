"""Live sessions (/host, /peer), written once for every database (like rounds.py), and
`LiveSql`, the Store's methods that run them through its `_read` / `_write`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

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
from bot.storage.declared import effect, read, write
from bot.storage.ops import ensure_chat, insert_post
from bot.storage.sql import Row, Sql, at_or_none

LIVE_COLUMNS = ("id, chat_key, kind, host_key, selector, total, seconds, speed, teams, locale,"
                " state, closes_at, paused_ms, version, started_at, finished_at, team_choice,"
                " lobby_ref")


# writes -------------------------------------------------------------------------------------
async def create_live(db: Sql, new: NewLive) -> int | None:
    await ensure_chat(db, new.chat_key)
    found = await db.value(  # the unique index on unfinished sessions decides between processes
        "INSERT INTO live_sessions(chat_key, kind, host_key, selector, total, seconds, speed,"
        " teams, locale, state, started_at, team_choice) VALUES ($1, $2, $3, $4, $5, $6, $7,"
        " $8, $9, 'lobby', $10, $11) ON CONFLICT DO NOTHING RETURNING id",
        new.chat_key, new.kind, new.host_key, new.selector, new.total, new.seconds, new.speed,
        new.teams, new.locale, db.when(new.started_at), new.choose,
    )
    return None if found is None else int(found)


async def save_live(db: Sql, record: LiveRecord) -> bool:
    return await db.run(
        "UPDATE live_sessions SET host_key = $1, state = $2, closes_at = $3, paused_ms = $4,"
        " finished_at = $5, version = version + 1 WHERE id = $6 AND version = $7",
        record.host_key, record.state, _when(db, record.closes_at), record.paused_ms,
        _when(db, record.finished_at), record.id, record.version,
    ) == 1


async def add_live_step(
    db: Sql, session_id: int, step: int, post: NewPost, then: LiveRecord | None = None
) -> int | None:
    """The session's row lock orders racing processes: the second one sees the first's step.
    `then`: the session as the step leaves it (its state and countdown), saved in the same
    transaction over its version, so a crash never leaves a step without its state."""
    found = await db.row(
        f"SELECT finished_at, version FROM live_sessions WHERE id = $1{db.for_update}",
        session_id,
    )
    if found is None or found[0] is not None:
        return None
    if then is not None and int(found[1]) != then.version:
        return None  # changed since it was read
    if await db.value(
        "SELECT count(*) FROM live_steps WHERE session_id = $1", session_id
    ) != step:
        return None
    post_id = await insert_post(db, post)
    await db.run("INSERT INTO live_steps(session_id, step, post_id) VALUES ($1, $2, $3)",
                 session_id, step, post_id)
    if then is not None:
        await save_live(db, then)
    return post_id


async def skip_live_step(db: Sql, session_id: int, step: int) -> None:
    await db.run("UPDATE live_steps SET skipped = $1 WHERE session_id = $2 AND step = $3",
                 True, session_id, step)


async def join_live(
    db: Sql, session_id: int, person_key: str, name: str, teams: int, when: datetime,
    team: int | None = None, gap: int = 0, locale: str | None = None,
) -> bool:
    if team is not None:
        return await _join_team(db, session_id, person_key, name, teams, when, team, gap,
                                locale)
    return await db.run(
        "INSERT INTO live_players(session_id, person_key, name, team, joined_at, locale)"
        " SELECT $1, $2, $3, CASE WHEN $4 > 0 THEN (SELECT count(*) FROM live_players"
        " WHERE session_id = $1) % $4 END, $5, $6 ON CONFLICT DO NOTHING",
        session_id, person_key, name, teams, db.when(when), locale,
    ) == 1


async def _join_team(
    db: Sql, session_id: int, person_key: str, name: str, teams: int, when: datetime,
    team: int, gap: int, locale: str | None,
) -> bool:
    """The session's row lock orders racing joins: each sees the sizes the last one left."""
    await db.row(f"SELECT id FROM live_sessions WHERE id = $1{db.for_update}", session_id)
    return await db.run(
        "INSERT INTO live_players(session_id, person_key, name, team, joined_at, locale)"
        " SELECT $1, $2, $3, $4, $5, $8 WHERE (SELECT count(*) FROM live_players"
        " WHERE session_id = $1 AND team = $4) < $6 + (CASE WHEN (SELECT count(DISTINCT team)"
        " FROM live_players WHERE session_id = $1) < $7 THEN 0 ELSE (SELECT min(n) FROM"
        " (SELECT count(*) AS n FROM live_players WHERE session_id = $1 GROUP BY team) AS"
        " sizes) END) ON CONFLICT DO NOTHING",
        session_id, person_key, name, team, db.when(when), gap, teams, locale,
    ) == 1


async def set_live_lobby(db: Sql, session_id: int, ref: str) -> None:
    await db.run("UPDATE live_sessions SET lobby_ref = $1 WHERE id = $2", ref, session_id)


async def record_revote(db: Sql, post_id: int, vote: Revote) -> bool:
    return await db.run(
        "INSERT INTO live_revotes(post_id, person_key, option, correct, answered_at)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        post_id, vote.person_key, vote.option, vote.correct, db.when(vote.answered_at),
    ) == 1


# reads --------------------------------------------------------------------------------------
def _when(db: Sql, moment: datetime | None) -> Any:
    return None if moment is None else db.when(moment)


async def _sessions(db: Sql, rows: Sequence[Row]) -> list[LiveRecord]:
    steps: dict[int, list[LiveStep]] = {int(r[0]): [] for r in rows}
    if steps:
        ids = ", ".join(f"${i}" for i in range(1, len(steps) + 1))
        for session_id, step, post_id, skipped in await db.rows(
            f"SELECT session_id, step, post_id, skipped FROM live_steps"
            f" WHERE session_id IN ({ids}) ORDER BY session_id, step", *steps,
        ):
            steps[int(session_id)].append(LiveStep(int(step), int(post_id), bool(skipped)))
    return [
        LiveRecord(
            id=int(r[0]), chat_key=r[1], kind=r[2], host_key=r[3], selector=r[4],
            total=int(r[5]), seconds=int(r[6]), speed=bool(r[7]), teams=int(r[8]),
            locale=r[9], state=r[10], closes_at=at_or_none(db, r[11]),
            paused_ms=None if r[12] is None else int(r[12]), version=int(r[13]),
            started_at=db.at(r[14]), finished_at=at_or_none(db, r[15]),
            steps=tuple(steps[int(r[0])]), choose=bool(r[16]), lobby_ref=r[17],
        )
        for r in rows
    ]


async def get_live(db: Sql, session_id: int) -> LiveRecord | None:
    rows = await db.rows(f"SELECT {LIVE_COLUMNS} FROM live_sessions WHERE id = $1", session_id)
    return next(iter(await _sessions(db, rows)), None)


async def live_in_chat(db: Sql, chat_key: str) -> LiveRecord | None:
    rows = await db.rows(
        f"SELECT {LIVE_COLUMNS} FROM live_sessions WHERE chat_key = $1 AND finished_at IS NULL",
        chat_key,
    )
    return next(iter(await _sessions(db, rows)), None)


async def active_lives(db: Sql) -> list[LiveRecord]:
    rows = await db.rows(
        f"SELECT {LIVE_COLUMNS} FROM live_sessions WHERE finished_at IS NULL ORDER BY id")
    return await _sessions(db, rows)


async def chat_lives(db: Sql, chat_key: str, before: int | None = None, limit: int = 50
                     ) -> list[LiveRecord]:
    rows = await db.rows(
        f"SELECT {LIVE_COLUMNS} FROM live_sessions WHERE chat_key = $1 AND id < $2"
        " ORDER BY id DESC LIMIT $3", chat_key, 2**62 if before is None else before, limit)
    return await _sessions(db, rows)


async def live_players(db: Sql, session_id: int) -> list[LivePlayer]:
    return [
        LivePlayer(r[0], r[1], None if r[2] is None else int(r[2]), db.at(r[3]), r[4])
        for r in await db.rows(
            "SELECT person_key, name, team, joined_at, locale FROM live_players"
            " WHERE session_id = $1"
            " ORDER BY joined_at, person_key", session_id,
        )
    ]


async def live_player_count(db: Sql, session_id: int) -> int:
    return int(await db.value(
        "SELECT count(*) FROM live_players WHERE session_id = $1", session_id))


async def is_live_player(db: Sql, session_id: int, person_key: str) -> bool:
    return await db.value(
        "SELECT 1 FROM live_players WHERE session_id = $1 AND person_key = $2",
        session_id, person_key) is not None


async def peer_votes(db: Sql, chat_key: str, quiz_id: str | None = None) -> list[PeerVotes]:
    args: list[Any] = [chat_key]
    sql = (
        "SELECT p.quiz_id, p.question_id,"
        " (SELECT count(*) FROM answers a WHERE a.post_id = p.id),"
        " (SELECT count(*) FROM answers a WHERE a.post_id = p.id AND a.correct),"
        " (SELECT count(*) FROM live_revotes v WHERE v.post_id = p.id),"
        " (SELECT count(*) FROM live_revotes v WHERE v.post_id = p.id AND v.correct)"
        " FROM live_steps s JOIN live_sessions l ON l.id = s.session_id"
        " JOIN posts p ON p.id = s.post_id"
        " WHERE l.kind = 'peer' AND p.chat_key = $1"
        " AND EXISTS (SELECT 1 FROM live_revotes v WHERE v.post_id = p.id)"
    )
    if quiz_id is not None:
        args.append(quiz_id)
        sql += " AND p.quiz_id = $2"
    return [PeerVotes(r[0], r[1], int(r[2]), int(r[3]), int(r[4]), int(r[5]))
            for r in await db.rows(sql + " ORDER BY p.id", *args)]


async def revotes(db: Sql, post_id: int) -> list[Revote]:
    return [
        Revote(r[0], int(r[1]), bool(r[2]), db.at(r[3]))
        for r in await db.rows(
            "SELECT person_key, option, correct, answered_at FROM live_revotes"
            " WHERE post_id = $1 ORDER BY answered_at, person_key", post_id,
        )
    ]


class LiveSql(ABC):
    """The LiveStore port of a Store (store.py): each call one read or one write."""

    @abstractmethod
    def _read(self, fn: Callable[..., Any], *args: Any) -> Awaitable[Any]: ...
    @abstractmethod
    def _write(self, fn: Callable[..., Any], *args: Any) -> Awaitable[Any]: ...
    @abstractmethod
    async def get_post(self, post_id: int) -> PostRecord | None: ...

    @abstractmethod
    def _effect(self, fn: Callable[..., Any], *args: Any) -> Awaitable[Any]: ...

    # a session's changes are a command's effect (/host, /next, /pause, /skip, /end: the
    # command's key is stored with them, so a redelivered /next moves it on once); the
    # scheduler's tick has no key and writes them plainly
    async def create_live(self, new: NewLive) -> LiveRecord | None:
        session_id = await self._effect(create_live, new)
        return None if session_id is None else await self.get_live(session_id)

    get_live = read(get_live)
    live_in_chat = read(live_in_chat)
    active_lives = read(active_lives)
    chat_lives = read(chat_lives)

    async def save_live(self, record: LiveRecord) -> LiveRecord | None:
        if not await self._effect(save_live, record):
            return None
        return await self.get_live(record.id)

    async def add_live_step(self, session_id: int, step: int, post: NewPost,
                            then: LiveRecord | None = None) -> PostRecord | None:
        post_id = await self._effect(add_live_step, session_id, step, post, then)
        return None if post_id is None else await self.get_post(post_id)

    skip_live_step = effect(skip_live_step)
    join_live = write(join_live)
    set_live_lobby = write(set_live_lobby)
    live_players = read(live_players)
    live_player_count = read(live_player_count)
    is_live_player = read(is_live_player)
    record_revote = write(record_revote)
    revotes = read(revotes)
    peer_votes = read(peer_votes)
