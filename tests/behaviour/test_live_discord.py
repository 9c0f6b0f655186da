"""Live sessions and peer rounds through the real discord.py against the fake REST API and
gateway: slash commands and button clicks in, messages, ephemeral replies and edits out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.core.service import QuizService
from tests.behaviour.discord import DiscordHarness, Place, discord_harness
from tests.behaviour.harness import stored_refs
from tests.clock import FakeClock
from tests.errorlog import failing_on_errors
from tests.fakes.discord_api import Reply, User, all_buttons_of

pytestmark = pytest.mark.memory_store


@pytest.fixture
async def h(service: QuizService, clock: FakeClock) -> AsyncIterator[DiscordHarness]:
    with failing_on_errors("discord", "bot", "aiohttp"):
        async with discord_harness(service, clock) as harness:
            yield harness


class Room:
    def __init__(self, h: DiscordHarness, players: int) -> None:
        self.h, self.fake = h, h.fake
        self.group: Place = h.group()
        self.host = h.person(1)
        h.make_admin(self.host)
        self.players = [h.person(n) for n in range(2, 2 + players)]
        self.lobby: Reply | None = None

    async def slash(self, who: User, name: str, **options: Any) -> Reply:
        it = await self.fake.slash(name, options, user=who, channel_id=self.group.channel_id,
                                   permissions=self.h._permissions(who))
        return await self.fake.reply(it, within=10)

    async def click(self, who: User, message_id: int, custom_id: str) -> Reply:
        it = await self.fake.click(message_id, custom_id, user=who,
                                   permissions=self.h._permissions(who))
        return await self.fake.reply(it, within=10)

    def channel_texts(self, after: int) -> list[str]:
        """Messages the bot posted in the channel by itself, since message id `after`."""
        return [m.get("content") or "" for key, m in sorted(self.fake.messages.items())
                if key > after and int(m["channel_id"]) == self.group.channel_id
                and not m.get("interaction")]

    def last_id(self) -> int:
        return max(self.fake.messages, default=0)

    async def question(self) -> tuple[int, int, int, int]:
        """/next by the host: the message, its post, the right and a wrong option."""
        reply = await self.slash(self.host, "next")
        post_id = int(all_buttons_of(reply.message)[0]["custom_id"].split(":")[1])
        shown = await self.h.service.show(post_id)
        assert shown is not None
        return reply.id, post_id, shown.correct, (shown.correct + 1) % len(shown.options)

    async def tick(self) -> None:
        await self.h.scheduler.tick()


async def test_a_full_host_session_with_three_players(
    h: DiscordHarness, clock: FakeClock
) -> None:
    room = Room(h, 3)
    bob, chandra, dipa = room.players
    lobby = await room.slash(room.host, "host", quiz="sample", questions=3)
    assert "3 questions" in lobby.content
    for p in room.players:
        joined = await room.click(p, lobby.id, "lv:join")
        assert joined.ephemeral and joined.text == "You joined."
    # three joins at once: one edit of the lobby (a crowd must not meet the edit limits)
    assert len(room.fake.edits(lobby.id)) == 1
    assert "1 player joined" in room.fake.messages[lobby.id]["content"]
    refused = await room.slash(bob, "next")
    assert refused.ephemeral and "Only the host" in refused.text
    # 1: everyone answers; it closes at once with the distribution and the explanation
    message, post_id, right, wrong = await room.question()
    start = room.last_id()
    for p, option in ((bob, right), (chandra, right)):
        seen = await room.click(p, message, f"lv:{post_id}:{option}")
        assert seen.ephemeral and seen.text == "Your answer is in."
    again = await room.click(bob, message, f"lv:{post_id}:{wrong}")
    assert again.text == "Your first answer stands."
    await room.click(dipa, message, f"lv:{post_id}:{wrong}")
    # the reveal follows the last answer's ephemeral reply
    await room.fake.until(lambda: any("Question closed" in t and "3 people answered" in t
                                      for t in room.channel_texts(start)), 10, "the reveal")
    # 2: paused for a while, then it runs out
    message, post_id, right, _ = await room.question()
    await room.click(bob, message, f"lv:{post_id}:{right}")
    assert "Paused" in (await room.slash(room.host, "pause")).text
    clock.advance(90)
    start = room.last_id()
    await room.tick()
    assert room.channel_texts(start) == []
    assert "Resumed" in (await room.slash(room.host, "pause")).text
    clock.advance(31)
    await room.tick()
    assert any("Question closed" in t for t in room.channel_texts(start))
    # 3: skipped
    message, post_id, right, _ = await room.question()
    await room.click(chandra, message, f"lv:{post_id}:{right}")
    assert "Skipped" in (await room.slash(room.host, "skip")).text
    podium = await room.slash(room.host, "next")
    assert podium.content.splitlines()[1:4] == [
        "🥇 Bob: 2,000 points, 2 right, 0 s", "🥈 Chandra: 1,000 points, 1 right, 0 s",
        "🥉 Dipa: 0 points, 0 right, 0 s"]
    # each person's place, ephemeral
    places = [await room.click(p, podium.id, all_buttons_of(podium.message)[0]["custom_id"])
              for p in room.players]
    assert all(p.ephemeral for p in places)
    assert [p.text for p in places] == [
        "Your place: 1 of 3, with 2,000 points.", "Your place: 2 of 3, with 1,000 points.",
        "Your place: 3 of 3, with 0 points."]


async def test_a_member_cannot_host_and_their_quiz_is_refused(h: DiscordHarness) -> None:
    room = Room(h, 1)
    (member,) = room.players
    assert "Only this chat's admins" in (await room.slash(member, "host", quiz="sample")).text
    await room.slash(room.host, "host", quiz="sample", questions=2)
    refused = await room.slash(member, "quiz")
    assert "live session is running" in refused.text


async def test_a_60_s_countdown_with_ten_players_stays_within_the_edit_rate(
    h: DiscordHarness, clock: FakeClock
) -> None:
    room = Room(h, 10)
    lobby = await room.slash(room.host, "host", quiz="sample", questions=1, seconds=60)
    for p in room.players:
        await room.click(p, lobby.id, "lv:join")
    message, post_id, *_ = await room.question()
    await stored_refs(h.service.storage, post_id)
    for _ in range(130):  # a tick every half second, past the end
        clock.advance(0.5)
        await room.tick()
    edits = len(room.fake.edits(message))
    assert 0 < edits <= 60 // 3  # one edit per 3 s at most


async def test_a_teams_session(h: DiscordHarness) -> None:
    room = Room(h, 4)
    lobby = await room.slash(room.host, "host", quiz="sample", questions=1, teams=2)
    for p in room.players:  # Bob, Dipa: team 1; Chandra, Esha: team 2
        await room.click(p, lobby.id, "lv:join")
    message, post_id, right, wrong = await room.question()
    for p, option in zip(room.players, (right, wrong, right, right), strict=True):
        await room.click(p, message, f"lv:{post_id}:{option}")
    podium = await room.slash(room.host, "next")
    assert podium.content.splitlines()[-2:] == [
        "1. Team 1: 1,000 points (2 players)", "2. Team 2: 500 points (2 players)"]


async def test_a_restart_mid_countdown_resumes_with_the_time_left(
    h: DiscordHarness, clock: FakeClock
) -> None:
    room = Room(h, 2)
    lobby = await room.slash(room.host, "host", quiz="sample", questions=1, seconds=30)
    for p in room.players:
        await room.click(p, lobby.id, "lv:join")
    message, post_id, right, _ = await room.question()
    await room.click(room.players[0], message, f"lv:{post_id}:{right}")
    clock.advance(10)
    await h.restart()
    clock.advance(19)
    start = room.last_id()
    await room.tick()
    assert room.channel_texts(start) == []
    clock.advance(2)
    await room.tick()
    (reveal,) = room.channel_texts(start)
    assert "Question closed" in reveal and "1 person answered" in reveal


async def start_peer(room: Room) -> tuple[int, int, int, int]:
    reply = await room.slash(room.host, "peer", quiz="sample")
    post_id = int(all_buttons_of(reply.message)[0]["custom_id"].split(":")[1])
    shown = await room.h.service.show(post_id)
    assert shown is not None
    return reply.id, post_id, shown.correct, (shown.correct + 1) % len(shown.options)


async def votes(room: Room, message: int, post_id: int, options: list[int]) -> None:
    for p, option in zip(room.players, options, strict=True):
        seen = await room.click(p, message, f"lv:{post_id}:{option}")
        assert seen.ephemeral and seen.text == "Your answer is in."


async def test_a_split_peer_round_discusses_and_revotes(
    h: DiscordHarness, clock: FakeClock
) -> None:
    room = Room(h, 5)
    message, post_id, right, wrong = await start_peer(room)
    await votes(room, message, post_id, [right, right, wrong, wrong, wrong])
    start = room.last_id()
    clock.advance(61)
    await room.tick()
    (split,) = room.channel_texts(start)
    assert "5 voted" in split and "Discuss for 2 min" in split and "✓" not in split
    start = room.last_id()
    clock.advance(121)
    await room.tick()
    (revote,) = [k for k in room.fake.messages if k > start]
    assert "Vote again" in room.fake.messages[revote]["content"]
    await votes(room, revote, post_id, [right, right, right, right, wrong])
    start = room.last_id()
    clock.advance(61)
    await room.tick()
    (result,) = room.channel_texts(start)
    assert "right: 40% → 80%" in result
    answers = {a.person_key: a.correct for a in await h.service.storage.answers_for_post(post_id)}
    assert [answers[h.person_key(p)] for p in room.players] == [True, True, False, False, False]


async def test_a_peer_round_above_the_threshold_has_no_discussion(
    h: DiscordHarness, clock: FakeClock
) -> None:
    room = Room(h, 4)
    message, post_id, right, wrong = await start_peer(room)
    await votes(room, message, post_id, [right, right, right, wrong])
    start = room.last_id()
    clock.advance(61)
    await room.tick()
    (result,) = room.channel_texts(start)
    assert "75% were right at the first vote: no discussion needed." in result
