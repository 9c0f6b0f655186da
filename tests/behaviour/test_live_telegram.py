"""Live sessions and peer rounds through the real python-telegram-bot against the fake Bot API:
every action is an update the fake delivers, every result a Bot API call the bot made
(the same rules on Discord: test_live_discord.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.core.service import QuizService
from tests.behaviour.harness import stored_refs
from tests.behaviour.telegram import TelegramHarness, telegram_harness
from tests.clock import FakeClock
from tests.errorlog import failing_on_errors

pytestmark = pytest.mark.memory_store


@pytest.fixture
async def h(service: QuizService, clock: FakeClock) -> AsyncIterator[TelegramHarness]:
    with failing_on_errors("telegram", "bot", "aiohttp"):
        async with telegram_harness(service, clock) as harness:
            yield harness


class Room:
    """The group, its host and players, and what the bot did there."""

    def __init__(self, h: TelegramHarness, players: int) -> None:
        self.h, self.fake = h, h.fake
        self.group = h.group()
        self.host = h.person(1)
        h.make_admin(self.host)
        self.players = [h.person(n) for n in range(2, 2 + players)]
        self.wrong = 0  # a wrong option of the last question

    async def settle(self, update_id: int | None = None) -> None:
        await self.h._settle(update_id)

    async def command(self, who: dict[str, Any], text: str) -> list[str]:
        """The texts the bot sent in the group because of it."""
        start = len(self.fake.calls)
        await self.settle(self.fake.command(self.group, who, text))
        return self.texts(start)

    def texts(self, start: int, chat_id: int | None = None) -> list[str]:
        chat = self.group["id"] if chat_id is None else chat_id
        return [c.params["text"] for c in self.fake.calls[start:]
                if c.ok and c.method == "sendMessage" and c.params["chat_id"] == chat]

    def last_message(self, data_prefix: str) -> dict[str, Any]:
        """The latest message the bot sent with buttons whose data starts so."""
        for call in reversed(self.fake.calls):
            rows = (call.params.get("reply_markup") or {}).get("inline_keyboard") or []
            if call.ok and call.method == "sendMessage" and any(
                    str(b.get("callback_data", "")).startswith(data_prefix)
                    for row in rows for b in row):
                return dict(call.result)
        raise AssertionError(f"no message with {data_prefix} buttons")

    async def press(self, who: dict[str, Any], message: dict[str, Any], data: str) -> str:
        """The notice the presser saw."""
        update_id = self.fake.press(message, who, data)
        await self.settle(update_id)
        notices = [c.params.get("text", "") for c in self.fake.calls_of("answerCallbackQuery")
                   if c.params["callback_query_id"] == self._update(update_id)["id"]]
        return notices[-1] if notices else ""

    def _update(self, update_id: int) -> dict[str, Any]:
        return dict(self.h._update(update_id)["callback_query"])

    async def join_all(self) -> None:
        lobby = self.last_message("lj")
        for p in self.players:
            assert await self.press(p, lobby, "lj") == "You joined."

    async def question(self) -> tuple[dict[str, Any], int, int]:
        """/next by the host: the question message, its post and the right option."""
        await self.command(self.host, "/next")
        message = self.last_message("la:")
        post_id = int(message["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
                      .split(":")[1])
        shown = await self.h.service.show(post_id)
        assert shown is not None
        self.wrong = (shown.correct + 1) % len(shown.options)
        return message, post_id, shown.correct

    async def tick(self) -> None:
        await self.h.scheduler.tick()
        await self.settle()


async def test_a_full_host_session_with_three_players(
    h: TelegramHarness, clock: FakeClock
) -> None:
    room = Room(h, 3)
    alice, bob, chandra = room.players  # shown as Bob, Chandra and Dipa
    (lobby,) = await room.command(room.host, "/host sample 3")
    assert "3 questions" in lobby
    edits = len(room.fake.calls_of("editMessageText"))
    await room.join_all()
    # three joins at once: one edit of the lobby (a crowd must not meet the flood limit)
    (edit,) = room.fake.calls_of("editMessageText")[edits:]
    assert "1 player joined" in edit.params["text"]
    refused = await room.command(alice, "/next")
    assert refused and "Only the host" in refused[0]
    # 1: everyone answers; it closes at once with the distribution and the explanation
    message, post_id, right = await room.question()
    start = len(room.fake.calls)
    for p in (alice, bob):
        assert await room.press(p, message, f"la:{post_id}:{right}") == "Your answer is in."
    assert await room.press(alice, message, f"la:{post_id}:{room.wrong}") == \
        "Your first answer stands."
    await room.press(chandra, message, f"la:{post_id}:{room.wrong}")
    (reveal,) = room.texts(start)
    assert "Question closed" in reveal and "3 people answered" in reveal
    # 2: paused for a minute, then it runs out
    message, post_id, right = await room.question()
    await room.press(alice, message, f"la:{post_id}:{right}")
    assert "Paused" in (await room.command(room.host, "/pause"))[0]
    clock.advance(90)
    start = len(room.fake.calls)
    await room.tick()
    assert room.texts(start) == []
    assert "Resumed" in (await room.command(room.host, "/pause"))[0]
    clock.advance(31)
    await room.tick()
    assert any("Question closed" in t for t in room.texts(start))
    # 3: skipped
    message, post_id, right = await room.question()
    await room.press(bob, message, f"la:{post_id}:{right}")
    assert "Skipped" in (await room.command(room.host, "/skip"))[0]
    start = len(room.fake.calls)
    (podium,) = await room.command(room.host, "/next")
    assert podium.splitlines()[1:4] == [  # the skipped question counts for nobody
        "🥇 Bob: 2,000 points, 2 right, 0 s", "🥈 Chandra: 1,000 points, 1 right, 0 s",
        "🥉 Dipa: 0 points, 0 right, 0 s"]
    # each person's place, privately
    ranks = {p["first_name"]: room.texts(start, p["id"]) for p in room.players}
    assert ranks == {"Bob": ["Your place: 1 of 3, with 2,000 points."],
                     "Chandra": ["Your place: 2 of 3, with 1,000 points."],
                     "Dipa": ["Your place: 3 of 3, with 0 points."]}


async def test_a_member_cannot_host_and_their_quiz_is_refused(h: TelegramHarness) -> None:
    room = Room(h, 1)
    (member,) = room.players
    assert "Only this chat's admins" in (await room.command(member, "/host sample"))[0]
    await room.command(room.host, "/host sample 2")
    refused = await room.command(member, "/quiz")
    assert refused and "live session is running" in refused[0]


async def test_a_60_s_countdown_with_ten_players_stays_within_the_edit_rate(
    h: TelegramHarness, clock: FakeClock
) -> None:
    room = Room(h, 10)
    await room.command(room.host, "/host sample 1 60s")
    await room.join_all()
    _, post_id, _ = await room.question()
    await stored_refs(h.service.storage, post_id)
    edits_before = len(room.fake.calls_of("editMessageText"))
    for _ in range(130):  # a tick every half second, past the end
        clock.advance(0.5)
        await room.tick()
    edits = len(room.fake.calls_of("editMessageText")) - edits_before
    # Telegram allows about 20 messages a minute in a group: one edit per 5 s at most
    assert 0 < edits <= 60 // 5


async def test_a_teams_session(h: TelegramHarness) -> None:
    room = Room(h, 4)
    await room.command(room.host, "/host sample 1 teams 2")
    await room.join_all()  # Bob, Dipa: team 1; Chandra, Esha: team 2
    message, post_id, right = await room.question()
    for p, option in zip(room.players, (right, room.wrong, right, right), strict=True):
        await room.press(p, message, f"la:{post_id}:{option}")
    (podium,) = await room.command(room.host, "/next")
    assert podium.splitlines()[-2:] == [  # the members' average
        "1. Team 1: 1,000 points (2 players)", "2. Team 2: 500 points (2 players)"]


async def test_a_restart_mid_countdown_resumes_with_the_time_left(
    h: TelegramHarness, clock: FakeClock
) -> None:
    room = Room(h, 2)
    await room.command(room.host, "/host sample 1 30s")
    await room.join_all()
    message, post_id, right = await room.question()
    await room.press(room.players[0], message, f"la:{post_id}:{right}")
    clock.advance(10)
    await h.restart()
    clock.advance(19)
    start = len(room.fake.calls)
    await room.tick()
    assert room.texts(start) == []
    clock.advance(2)
    await room.tick()
    (reveal,) = room.texts(start)
    assert "Question closed" in reveal and "1 person answered" in reveal


async def start_peer(room: Room) -> tuple[dict[str, Any], int, int, int]:
    """/peer by the host: the question message, its post, the right and a wrong option."""
    await room.command(room.host, "/peer sample")
    message = room.last_message("la:")
    post_id = int(message["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
                  .split(":")[1])
    shown = await room.h.service.show(post_id)
    assert shown is not None
    return message, post_id, shown.correct, (shown.correct + 1) % len(shown.options)


async def peer_votes(room: Room, message: dict[str, Any], post_id: int,
                     options: list[int]) -> None:
    for p, option in zip(room.players, options, strict=True):
        assert await room.press(p, message, f"la:{post_id}:{option}") == "Your answer is in."


async def test_a_split_peer_round_discusses_and_revotes(
    h: TelegramHarness, clock: FakeClock
) -> None:
    room = Room(h, 5)
    message, post_id, right, wrong = await start_peer(room)
    await peer_votes(room, message, post_id, [right, right, wrong, wrong, wrong])
    start = len(room.fake.calls)
    clock.advance(61)
    await room.tick()
    (split,) = room.texts(start)
    assert "5 voted" in split and "Discuss for 2 min" in split
    assert "✓" not in split  # the answer is not shown yet
    clock.advance(121)
    await room.tick()
    revote = room.last_message("la:")
    assert "Vote again" in revote["text"]
    await peer_votes(room, revote, post_id, [right, right, right, right, wrong])
    start = len(room.fake.calls)
    clock.advance(61)
    await room.tick()
    (result,) = room.texts(start)
    assert "right: 40% → 80%" in result
    # the first vote is what each person's review saw
    answers = {a.person_key: a.correct for a in await h.service.storage.answers_for_post(post_id)}
    assert [answers[h.person_key(p)] for p in room.players] == [True, True, False, False, False]


async def test_a_peer_round_above_the_threshold_has_no_discussion(
    h: TelegramHarness, clock: FakeClock
) -> None:
    room = Room(h, 4)
    message, post_id, right, wrong = await start_peer(room)
    await peer_votes(room, message, post_id, [right, right, right, wrong])
    start = len(room.fake.calls)
    clock.advance(61)
    await room.tick()
    (result,) = room.texts(start)
    assert "75% were right at the first vote: no discussion needed." in result
