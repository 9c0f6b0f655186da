"""Live sessions and peer rounds (issue 25), written once and checked on Telegram and on
Discord through the real library and its fake (harness.py): who hosts, joins, answers and
paces; when a question closes; the podium and each person's place; teams; a restart
mid-countdown; a host who leaves; the peer-instruction loop."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.core.models import Person as CorePerson
from bot.core.models import ShownQuestion
from tests.behaviour.harness import Harness, Person, Place, stored_refs


@dataclass
class Room:
    """The group, its host (an admin) and the players."""

    h: Harness
    group: Place
    host: Person
    players: list[Person] = field(default_factory=list)

    @classmethod
    def of(cls, h: Harness, players: int) -> Room:
        host = h.person(1)
        h.make_admin(host)
        return cls(h, h.group(), host, [h.person(n) for n in range(2, 2 + players)])

    async def join_all(self, teams: int = 0) -> None:
        """Everyone joins; with `teams`, in turn (each told theirs)."""
        for i, p in enumerate(self.players):
            told = f"You joined team {i % teams + 1}." if teams else "You joined."
            assert (await self.h.join_live(self.group, p)).texts == [told]

    async def question(self) -> tuple[int, ShownQuestion]:
        """/next by the host: the question's post and how it reads."""
        seen = await self.h.live_step(self.group, self.host, "next")
        [post_id] = seen.post_ids
        shown = await self.h.service.questions.show(post_id)
        assert shown is not None
        return post_id, shown

    async def answers(self, post_id: int, options: list[int]) -> list[str]:
        """Each player answers in turn: the notices they saw."""
        return [(await self.h.live_answer(self.group, p, post_id, option)).texts[0]
                for p, option in zip(self.players, options, strict=True)]

    def new_texts(self, before: int) -> list[str]:
        return self.h.live_texts(self.group)[before:]


def wrong(question: ShownQuestion) -> int:
    return (question.correct + 1) % len(question.options)


# /host ----------------------------------------------------------------------------------------
async def test_a_full_host_session_with_three_players(h: Harness) -> None:
    room = Room.of(h, 3)
    bob, chandra, dipa = room.players
    (lobby,) = (await h.host(room.group, room.host, "sample", 3)).texts
    assert "3 questions" in lobby
    await room.join_all()
    # three joins at once: one edit of the lobby (a crowd must not meet the edit limits)
    text, edits = h.lobby(room.group)
    assert edits == 1 and "1 player joined" in text
    # 1: everyone answers; it closes at once with the distribution and the explanation
    post_id, question = await room.question()
    right = question.correct
    assert (await h.live_answer(room.group, bob, post_id, right)).texts == ["Your answer is in."]
    assert (await h.live_answer(room.group, chandra, post_id, right)).texts[0] == \
        "Your answer is in."
    assert (await h.live_answer(room.group, bob, post_id, wrong(question))).texts == \
        ["Your first answer stands."]
    last = await h.live_answer(room.group, dipa, post_id, wrong(question))
    [reveal] = last.texts[1:]
    assert "Question closed" in reveal and "3 people answered" in reveal
    assert question.explanation in reveal
    assert "/next asks the next question." in reveal
    # 2: paused for longer than its time, then it runs out
    post_id, question = await room.question()
    await h.live_answer(room.group, bob, post_id, question.correct)
    assert "Paused" in (await h.live_step(room.group, room.host, "pause")).text
    h.clock.advance(90)
    before = len(h.live_texts(room.group))
    await h.tick()
    assert room.new_texts(before) == []
    assert "Resumed" in (await h.live_step(room.group, room.host, "pause")).text
    h.clock.advance(31)
    await h.tick()
    assert any("Question closed" in t and "1 person answered" in t
               for t in room.new_texts(before))
    # 3: skipped
    post_id, question = await room.question()
    await h.live_answer(room.group, chandra, post_id, question.correct)
    skipped = await h.live_step(room.group, room.host, "skip")
    assert "Skipped" in skipped.text and "/next shows the podium." in skipped.text
    podium = (await h.live_step(room.group, room.host, "next")).texts[0]
    assert podium.splitlines()[1:4] == [  # the skipped question counts for nobody
        "🥇 Bob: 2,000 points, 2 right, 0 s", "🥈 Chandra: 1,000 points, 1 right, 0 s",
        "🥉 Dipa: 0 points, 0 right, 0 s"]
    # each person's place, privately
    assert [await h.my_place(room.group, p) for p in room.players] == [
        "Your place: 1 of 3, with 2,000 points.", "Your place: 2 of 3, with 1,000 points.",
        "Your place: 3 of 3, with 0 points."]
    # it is over: /quiz is back for everyone
    assert (await h.quiz(room.group, bob)).post_ids


async def test_only_the_host_paces_and_only_joined_people_answer(h: Harness) -> None:
    room = Room.of(h, 2)
    joined, outsider = room.players
    await h.host(room.group, room.host, "sample", 2)
    await h.join_live(room.group, joined)
    refused = await h.live_step(room.group, joined, "next")
    assert refused.post_ids == [] and "Only the host" in refused.text
    for step in ("pause", "skip", "end"):
        assert "Only the host" in (await h.live_step(room.group, joined, step)).text
    post_id, question = await room.question()
    seen = await h.live_answer(room.group, outsider, post_id, question.correct)
    assert "Join the session first" in seen.text
    assert await h.service.storage.answers_for_post(post_id) == []


async def test_a_member_cannot_host_and_their_quiz_points_at_the_session(h: Harness) -> None:
    room = Room.of(h, 1)
    (member,) = room.players
    assert "Only this chat's admins" in (await h.host(room.group, member, "sample")).text
    await h.host(room.group, room.host, "sample", 2)
    refused = await h.quiz(room.group, member)
    assert refused.post_ids == []
    assert "live session is running" in refused.text and "Join" in refused.text


async def test_another_admin_takes_over_from_a_host_who_left(h: Harness) -> None:
    room = Room.of(h, 1)
    (player,) = room.players
    second = h.person(8)
    h.make_admin(second)
    await h.host(room.group, room.host, "sample", 1)
    await room.join_all()
    # the host left: another admin's /host takes the session over, with its players
    assert "A new host runs this session now." in (
        await h.host(room.group, second, "sample")).text
    assert "Only the host" in (await h.live_step(room.group, room.host, "next")).text
    [post_id] = (await h.live_step(room.group, second, "next")).post_ids
    question = await h.service.questions.show(post_id)
    assert question is not None
    await h.live_answer(room.group, player, post_id, question.correct)
    podium = (await h.live_step(room.group, second, "next")).texts[0]
    assert "🥇 Bob: 1,000 points, 1 right, 0 s" in podium


async def test_a_60_s_countdown_with_ten_players_stays_within_the_edit_rate(
    h: Harness,
) -> None:
    room = Room.of(h, 10)
    await h.host(room.group, room.host, "sample", 1, seconds=60)
    await room.join_all()
    post_id, _ = await room.question()
    await stored_refs(h.service.storage, post_id)
    for _ in range(130):  # a tick every half second, past the end
        h.clock.advance(0.5)
        await h.tick()
    edits = h.question_edits(post_id)
    assert 0 < edits <= 60 // h.countdown_every + 1  # and the edit that closes it


async def test_a_teams_session_scores_each_team_by_its_average(h: Harness) -> None:
    room = Room.of(h, 4)
    assert "Teams: 2" in (await h.host(room.group, room.host, "sample", 1, teams=2)).text
    await room.join_all(teams=2)  # Bob, Dipa: team 1; Chandra, Esha: team 2 (in turn)
    post_id, question = await room.question()
    right = question.correct
    await room.answers(post_id, [right, wrong(question), right, right])
    podium = (await h.live_step(room.group, room.host, "next")).texts[0]
    assert podium.splitlines()[-2:] == [
        "1. Team 1: 1,000 points (2 players)", "2. Team 2: 500 points (2 players)"]


async def test_people_choose_their_team_while_it_is_not_too_big(h: Harness) -> None:
    room = Room.of(h, 5)
    bob, chandra, dipa, esha, farid = room.players
    refused = await h.host(room.group, room.host, "sample", 1, choose=True)
    assert "say how many, e.g. /host teams 3 choose" in refused.text
    (lobby,) = (await h.host(room.group, room.host, "sample", 1, teams=2, choose=True)).texts
    assert "Team 1: 0 players · Team 2: 0 players" in lobby
    assert "Press your team's button" in lobby
    for who, team in ((bob, 1), (chandra, 1)):
        assert (await h.join_live(room.group, who, team)).texts == ["You joined team 1."]
    # team 1 has two more than team 2: full until team 2 grows
    assert "Team 1 is full for now" in (await h.join_live(room.group, dipa, 1)).text
    assert (await h.join_live(room.group, dipa, 2)).texts == ["You joined team 2."]
    assert (await h.join_live(room.group, bob, 2)).texts == ["You joined team 1."]  # once
    assert (await h.join_live(room.group, esha, 1)).texts == ["You joined team 1."]
    assert "Team 1 is full for now" in (await h.join_live(room.group, farid, 1)).text
    assert (await h.join_live(room.group, farid, 2)).texts == ["You joined team 2."]
    post_id, question = await room.question()  # team 1: Bob, Chandra, Esha; 2: Dipa, Farid
    right, other = question.correct, wrong(question)
    await room.answers(post_id, [right, other, right, right, right])
    podium = (await h.live_step(room.group, room.host, "next")).texts[0]
    assert podium.splitlines()[-2:] == [
        "1. Team 2: 1,000 points (2 players)", "2. Team 1: 667 points (3 players)"]


async def test_a_restart_mid_countdown_resumes_with_the_time_left(h: Harness) -> None:
    room = Room.of(h, 2)
    await h.host(room.group, room.host, "sample", 1, seconds=30)
    await room.join_all()
    post_id, question = await room.question()
    await h.live_answer(room.group, room.players[0], post_id, question.correct)
    h.clock.advance(10)
    await h.restart()
    h.clock.advance(19)
    before = len(h.live_texts(room.group))
    await h.tick()
    assert room.new_texts(before) == []
    h.clock.advance(2)
    await h.tick()
    (reveal,) = room.new_texts(before)
    assert "Question closed" in reveal and "1 person answered" in reveal


# /peer ----------------------------------------------------------------------------------------
async def start_peer(room: Room) -> tuple[int, ShownQuestion]:
    [post_id] = (await room.h.peer(room.group, room.host, "sample")).post_ids
    shown = await room.h.service.questions.show(post_id)
    assert shown is not None
    return post_id, shown


async def test_a_split_peer_round_discusses_and_revotes(h: Harness) -> None:
    room = Room.of(h, 5)
    post_id, question = await start_peer(room)
    right, other = question.correct, wrong(question)
    # anyone in the chat votes (no Join), alone: the notice tells nothing of the others
    assert await room.answers(post_id, [right, right, other, other, other]) == \
        ["Your answer is in."] * 5
    before = len(h.live_texts(room.group))
    h.clock.advance(61)
    await h.tick()
    (split,) = room.new_texts(before)
    assert "5 voted" in split and "Discuss for 2 min: convince your neighbours" in split
    assert "✓" not in split and question.explanation not in split  # no answer yet
    assert h.discussion(room.group) is None  # no topic or thread may be opened here
    h.clock.advance(121)
    await h.tick()
    _, revote = h.live_questions(post_id)
    assert "Vote again" in revote and question.prompt in revote
    assert await room.answers(post_id, [right, right, right, right, other]) == \
        ["Your answer is in."] * 5
    before = len(h.live_texts(room.group))
    h.clock.advance(61)
    await h.tick()
    (result,) = room.new_texts(before)
    assert "right: 40% → 80%" in result and question.explanation in result
    # the revote is kept apart; the first vote is what each person's review saw
    storage = h.service.storage
    answers = {a.person_key: a.correct for a in await storage.answers_for_post(post_id)}
    assert [answers[h.person_key(p)] for p in room.players] == [True, True, False, False, False]
    assert sorted(v.correct for v in await storage.revotes(post_id)) == [False] + [True] * 4
    reviews = [await h.service.spaced.stats(CorePerson(h.person_key(p), ""))
               for p in room.players]
    # one card each, graded by the first vote: a wrong one is due again within minutes
    assert [(r.cards, r.due) for r in reviews] == [(1, 0)] * 2 + [(1, 1)] * 3


async def test_a_peer_round_above_the_threshold_has_no_discussion(h: Harness) -> None:
    room = Room.of(h, 4)
    post_id, question = await start_peer(room)
    right = question.correct
    await room.answers(post_id, [right, right, right, wrong(question)])
    before = len(h.live_texts(room.group))
    h.clock.advance(61)
    await h.tick()
    (result,) = room.new_texts(before)
    assert "75% were right at the first vote: no discussion needed." in result
    assert await h.service.storage.revotes(post_id) == []


async def test_admins_set_the_peer_threshold_and_discussion_time(h: Harness) -> None:
    room = Room.of(h, 4)
    member = room.players[0]
    shown = (await h.change_settings(room.group, member)).text
    assert "no discussion when 70% or more are right at the first vote (the default)" in shown
    assert "discussion for 2 min (the default)" in shown
    refused = await h.change_settings(room.group, member, peer=90)
    assert "admins" in refused.text
    for bad, said in (({"peer": 150}, "“150” is not a share of right first votes"),
                      ({"peer": 0}, "“0” is not a share of right first votes"),
                      ({"discussion": "20s"}, "“20s” is not a discussion time"),
                      ({"discussion": "soon"}, "“soon” is not a discussion time")):
        assert said in (await h.change_settings(room.group, room.host, **bad)).text
    assert "(the default)" in (await h.change_settings(room.group, member)).text
    changed = (await h.change_settings(room.group, room.host, peer=90, discussion="1")).text
    assert "no discussion when 90% or more are right at the first vote\n" in changed + "\n"
    assert "discussion for 1 min\n" in changed + "\n"
    # 3 of 4 right is under 90 %: they discuss, for a minute
    post_id, question = await start_peer(room)
    right = question.correct
    await room.answers(post_id, [right, right, right, wrong(question)])
    before = len(h.live_texts(room.group))
    h.clock.advance(61)
    await h.tick()
    (split,) = room.new_texts(before)
    assert "Discuss for 1 min" in split
    h.clock.advance(61)
    await h.tick()
    assert len(h.live_questions(post_id)) == 2  # the revote


async def test_the_discussion_opens_in_a_topic_or_thread_where_the_bot_may(h: Harness) -> None:
    room = Room.of(h, 3)
    h.allow_threads(room.group)
    post_id, question = await start_peer(room)
    await room.answers(post_id, [question.correct, wrong(question), wrong(question)])
    before = len(h.live_texts(room.group))
    h.clock.advance(61)
    await h.tick()
    opened = h.discussion(room.group)
    assert opened is not None
    name, [prompt] = opened
    assert name.startswith("💬 Discuss: ") and len(name) <= 100
    assert question.prompt in prompt and "Convince your neighbours for 2 min" in prompt
    assert "✓" not in prompt and question.explanation not in prompt
    (split,) = room.new_texts(before)  # the split stays in the chat, pointing there
    assert "3 voted" in split and f"Discuss for 2 min in “{name}”" in split
    # the revote and the result come in the chat
    h.clock.advance(121)
    await h.tick()
    assert len(h.live_questions(post_id)) == 2
    await room.answers(post_id, [question.correct] * 3)
    h.clock.advance(61)
    await h.tick()
    assert "right: 33% → 100%" in room.new_texts(before)[-1]
