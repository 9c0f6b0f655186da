"""Live and peer messages that close (issue 37), on Telegram and on Discord through the real
library and its fake: a live question's message loses its buttons and its countdown when it
closes; the lobby lists who joined (by team) and says the session ended after the podium; a
peer round's first vote stops counting down when the discussion starts."""

from __future__ import annotations

from tests.behaviour.harness import Harness, stored_refs
from tests.behaviour.test_live import Room, start_peer, wrong


async def test_a_closed_live_question_has_no_buttons_and_the_lobby_says_it_ended(
    h: Harness,
) -> None:
    room = Room.of(h, 3)
    await h.host(room.group, room.host, "sample", 1, teams=2)
    await room.join_all(teams=2)  # each told their team
    lobby, _ = h.lobby(room.group)  # edited at the first join (then paced)
    assert "Team 1: Bob" in lobby and "Press Join" in lobby, lobby
    post_id, question = await room.question()
    await stored_refs(h.service.storage, post_id)
    text, buttons = h.live_question_now(post_id)
    assert buttons and "s left" in text
    await room.answers(post_id, [question.correct, wrong(question), question.correct])  # all
    text, buttons = h.live_question_now(post_id)
    assert not buttons, text
    assert "🔒 Closed" in text and "s left" not in text and question.prompt in text
    await h.live_step(room.group, room.host, "next")  # the podium
    lobby, _ = h.lobby(room.group)
    assert "Live quiz over: 3 players, 1 questions." in lobby, lobby
    assert "Press Join" not in lobby
    assert "Team 1: Bob, Dipa" in lobby and "Team 2: Chandra" in lobby


async def test_a_question_that_runs_out_closes_its_message(h: Harness) -> None:
    room = Room.of(h, 2)
    await h.host(room.group, room.host, "sample", 2, seconds=10)
    await room.join_all()
    post_id, _ = await room.question()
    await stored_refs(h.service.storage, post_id)
    h.clock.advance(11)
    await h.tick()
    text, buttons = h.live_question_now(post_id)
    assert not buttons and "🔒 Closed" in text


async def test_the_first_vote_stops_counting_down_when_the_discussion_starts(
    h: Harness,
) -> None:
    room = Room.of(h, 4)
    post_id, question = await start_peer(room)
    await stored_refs(h.service.storage, post_id)
    right, other = question.correct, wrong(question)
    await room.answers(post_id, [right, other, other, other])
    h.clock.advance(61)
    await h.tick()  # the split: the discussion starts
    text, buttons = h.live_question_now(post_id)
    assert not buttons and "🔒 Closed" in text
    edits = h.question_edits(post_id)
    for _ in range(20):  # the discussion's two minutes, less a little
        h.clock.advance(5)
        await h.tick()
    assert h.question_edits(post_id) == edits  # no countdown on the closed vote
    assert h.live_question_now(post_id) == (text, False)


async def test_an_end_while_a_question_is_open_closes_its_message(h: Harness) -> None:
    room = Room.of(h, 2)
    await h.host(room.group, room.host, "sample", 3)
    await room.join_all()
    post_id, _ = await room.question()
    await stored_refs(h.service.storage, post_id)
    await h.live_step(room.group, room.host, "end")
    text, buttons = h.live_question_now(post_id)
    assert not buttons and "🔒 Closed" in text
    lobby, _ = h.lobby(room.group)
    assert "Live quiz over: 2 players, 1 questions." in lobby, lobby


async def test_a_hindi_players_place_is_told_in_hindi(h: Harness) -> None:
    room = Room.of(h, 1)
    hindi = h.person(7, language="hi")
    room.players.append(hindi)
    await h.host(room.group, room.host, "sample", 1)
    await room.h.join_live(room.group, room.players[0])
    assert (await h.join_live(room.group, hindi)).texts == ["आप जुड़ गए।"]
    post_id, question = await room.question()
    await room.answers(post_id, [question.correct, question.correct])
    await h.live_step(room.group, room.host, "next")
    assert await h.my_place(room.group, hindi) == "आपका स्थान: 2 में से 1, 1,000 अंकों के साथ।"
