"""Live sessions on every backend: one unfinished session per chat (two processes racing to
open one: one wins); state saved only over the version read (compare and set); each question
asked once; a person joins once, teams filled in turn; a revote kept once per person."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta

from bot.core.ports import AnswerRecord, NewLive, NewPost, Revote
from tests.storage_contract.backends import Backend, Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
CHAT = "tg:-1"


def new_live(chat: str = CHAT, teams: int = 0) -> NewLive:
    return NewLive(chat, "host", "tg:1", "sample", 3, 20, True, teams, "bn", NOW)


def new_post(question: str = "s-one") -> NewPost:
    return NewPost(CHAT, "sample", question, (2, 0, 1), "bn", NOW - timedelta(minutes=1),
                   kind="live")


async def test_a_session_is_created_in_the_lobby_and_found_by_its_chat(store: Store) -> None:
    record = await store.create_live(new_live())
    assert record is not None
    assert (record.chat_key, record.kind, record.host_key, record.selector, record.total,
            record.seconds, record.speed, record.teams, record.locale, record.state,
            record.closes_at, record.paused_ms, record.started_at, record.finished_at,
            record.steps) == (CHAT, "host", "tg:1", "sample", 3, 20, True, 0, "bn", "lobby",
                              None, None, NOW, None, ())
    assert await store.live_in_chat(CHAT) == record
    assert await store.get_live(record.id) == record
    assert await store.live_in_chat("tg:-2") is None
    assert await store.active_lives() == [record]


async def test_one_unfinished_session_per_chat(backend: Backend) -> None:
    async with backend.opened() as one, backend.opened() as two:
        made = await asyncio.gather(*(s.create_live(new_live()) for s in (one, two, one, two)))
        assert sum(r is not None for r in made) == 1
        record = next(r for r in made if r is not None)
        assert await one.create_live(new_live("tg:-2")) is not None  # another chat: fine
        done = await two.save_live(dataclasses.replace(record, state="over", finished_at=NOW))
        assert done is not None and done.finished_at == NOW
        assert await one.live_in_chat(CHAT) is None
        assert await one.create_live(new_live()) is not None  # the chat is free again


async def test_state_is_saved_only_over_the_version_read(backend: Backend) -> None:
    async with backend.opened() as one, backend.opened() as two:
        record = await one.create_live(new_live())
        assert record is not None
        closes = NOW + timedelta(seconds=20)
        changed = [dataclasses.replace(record, state="open", closes_at=closes),
                   dataclasses.replace(record, state="over", finished_at=NOW)]
        saved = await asyncio.gather(one.save_live(changed[0]), two.save_live(changed[1]))
        assert sum(s is not None for s in saved) == 1
        winner = next(s for s in saved if s is not None)
        assert winner.version == record.version + 1
        assert await one.get_live(record.id) == winner
        paused = await two.save_live(dataclasses.replace(
            winner, state="paused", closes_at=None, paused_ms=12_345, host_key="tg:2"))
        assert paused is not None
        assert (paused.state, paused.closes_at, paused.paused_ms, paused.host_key) == (
            "paused", None, 12_345, "tg:2")
        assert await one.save_live(winner) is None  # stale


async def test_each_question_is_asked_once_and_can_be_skipped(backend: Backend) -> None:
    async with backend.opened() as one, backend.opened() as two:
        record = await one.create_live(new_live())
        assert record is not None
        for step in range(2):
            asked = await asyncio.gather(
                *(s.add_live_step(record.id, step, new_post()) for s in (one, two, one, two)))
            assert sum(p is not None for p in asked) == 1
        post = next(p for p in asked if p is not None)
        assert post.kind == "live" and post.closes_at is None
        await two.skip_live_step(record.id, 1)
        fetched = await one.get_live(record.id)
        assert fetched is not None
        assert [(s.step, s.skipped) for s in fetched.steps] == [(0, False), (1, True)]
        assert fetched.steps[1].post_id == post.id
        await one.save_live(dataclasses.replace(fetched, state="over", finished_at=NOW))
        assert await one.add_live_step(record.id, 2, new_post()) is None  # finished


async def test_people_join_once_and_teams_fill_in_turn(store: Store) -> None:
    record = await store.create_live(new_live(teams=2))
    assert record is not None
    for i, key in enumerate(["tg:1", "tg:2", "tg:3", "tg:1"]):
        joined = await store.join_live(record.id, key, f"P{key}", 2, NOW + timedelta(seconds=i))
        assert joined is (i < 3)
    players = await store.live_players(record.id)
    assert [(p.person_key, p.name, p.team, p.joined_at) for p in players] == [
        ("tg:1", "Ptg:1", 0, NOW), ("tg:2", "Ptg:2", 1, NOW + timedelta(seconds=1)),
        ("tg:3", "Ptg:3", 0, NOW + timedelta(seconds=2))]
    assert await store.live_player_count(record.id) == 3
    assert await store.is_live_player(record.id, "tg:2")
    assert not await store.is_live_player(record.id, "tg:4")
    solo = await store.create_live(new_live("tg:-2"))
    assert solo is not None
    assert await store.join_live(solo.id, "tg:1", "A", 0, NOW)
    assert [p.team for p in await store.live_players(solo.id)] == [None]
    assert not await store.is_live_player(solo.id, "tg:2")
    assert await store.live_player_count(solo.id) == 1


async def test_a_chosen_team_is_joined_while_it_is_within_the_gap(backend: Backend) -> None:
    async with backend.opened() as one, backend.opened() as two:
        made = await one.create_live(dataclasses.replace(new_live(teams=3), choose=True))
        assert made is not None and made.choose
        assert (await two.get_live(made.id) or made).choose
        # everyone wants team 0; with a gap of 2 it takes 2 while the others are empty
        keys = [f"tg:{i}" for i in range(10, 16)]
        joined = await asyncio.gather(*(
            (one, two)[i % 2].join_live(made.id, key, "P", 3, NOW, 0, 2)
            for i, key in enumerate(keys)))
        assert sum(joined) == 2
        assert await one.join_live(made.id, "tg:20", "P", 3, NOW, 1, 2)
        assert await one.join_live(made.id, "tg:21", "P", 3, NOW, 2, 2)
        assert await two.join_live(made.id, "tg:22", "P", 3, NOW, 0, 2)  # sizes 2, 1, 1
        assert not await two.join_live(made.id, "tg:23", "P", 3, NOW, 0, 2)
        assert not await two.join_live(made.id, "tg:20", "P", 3, NOW, 2, 2)  # joined already
        teams = [p.team or 0 for p in await one.live_players(made.id)]
        assert sorted(teams) == [0, 0, 0, 1, 2]
    plain = new_live("tg:-9")
    assert not plain.choose


async def test_a_deleted_person_leaves_no_join_revote_or_host_behind(store: Store) -> None:
    record = await store.create_live(new_live())
    assert record is not None
    post = await store.add_live_step(record.id, 0, new_post())
    assert post is not None
    for key in ("tg:1", "tg:2"):
        await store.join_live(record.id, key, "P", 0, NOW)
        await store.record_revote(post.id, Revote(key, 0, False, NOW))
    assert await store.delete_person("tg:1")
    assert [p.person_key for p in await store.live_players(record.id)] == ["tg:2"]
    assert [v.person_key for v in await store.revotes(post.id)] == ["tg:2"]
    kept = await store.get_live(record.id)
    assert kept is not None and kept.host_key == ""


async def test_peer_votes_count_both_votes_of_rounds_that_revoted(store: Store) -> None:
    rounds = []
    for question in ("s-one", "s-two", "s-one"):
        record = await store.create_live(dataclasses.replace(new_live(), kind="peer", total=1))
        assert record is not None
        post = await store.add_live_step(record.id, 0, new_post(question))
        assert post is not None
        rounds.append(post)
        await store.save_live(dataclasses.replace(record, state="over", finished_at=NOW))
    for i, post in enumerate(rounds):
        for n in range(4):  # first votes: 1 of 4 right
            await store.record_answer(AnswerRecord(post.id, f"tg:{n}", 2, n == 0, NOW, 100))
        if i != 1:  # the second round had no revote (above the threshold)
            for n in range(4):  # revotes: 3 of 4 right
                await store.record_revote(post.id, Revote(f"tg:{n}", 2, n != 0, NOW))
    found = await store.peer_votes(CHAT)
    assert [(v.quiz_id, v.question_id, v.first, v.first_right, v.second, v.second_right)
            for v in found] == [("sample", "s-one", 4, 1, 4, 3)] * 2
    assert await store.peer_votes(CHAT, "sample") == found
    assert await store.peer_votes(CHAT, "other") == []
    assert await store.peer_votes("tg:-2") == []


async def test_a_revote_is_kept_once_per_person(store: Store) -> None:
    record = await store.create_live(new_live())
    assert record is not None
    post = await store.add_live_step(record.id, 0, new_post())
    assert post is not None
    first = Revote("tg:1", 2, True, NOW)
    assert await store.record_revote(post.id, first)
    assert not await store.record_revote(post.id, Revote("tg:1", 0, False, NOW))
    assert await store.record_revote(post.id, Revote("tg:2", 0, False, NOW))
    assert await store.revotes(post.id) == [first, Revote("tg:2", 0, False, NOW)]
    assert await store.revotes(post.id + 1000) == []


async def test_a_chats_sessions_are_listed_newest_first_a_page_at_a_time(store: Store) -> None:
    made = []
    assert await store.create_live(new_live("tg:-2")) is not None  # another chat's
    for _ in range(5):
        record = await store.create_live(new_live())
        assert record is not None
        made.append(record.id)
        await store.save_live(dataclasses.replace(record, state="over", finished_at=NOW))
    first = await store.chat_lives(CHAT, limit=3)
    assert [r.id for r in first] == made[::-1][:3]
    assert [r.id for r in await store.chat_lives(CHAT, first[-1].id, 3)] == made[1::-1]
    assert all(r.chat_key == CHAT for r in first)
    assert await store.chat_lives("tg:-3") == []
