"""A peer round's transfer question (bot/core/peer.py), checked on Telegram and on Discord
through the real library and its fake (harness.py): after the revote the question's `pair:`
is asked alone; its answers are ordinary answers, one per person; the result gives the share
right on it and the gains, counting only the people who voted first."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.content import Catalog, load_catalog
from tests.behaviour.harness import Harness
from tests.behaviour.test_live import Room, wrong

# two questions on one idea, each the other's pair, so whichever /peer picks has a transfer
PACK = """\
id: pairs
title: Pairs
questions:
  - id: recompute-cost
    prompt: What does activation checkpointing spend to save memory?
    options:
      - {en: Extra compute, correct: true}
      - Accuracy
      - Bandwidth
    explanation: The dropped activations are recomputed in the backward pass.
    pair: recompute-step
  - id: recompute-step
    prompt: A block is checkpointed. What grows?
    options:
      - Peak memory
      - {en: Step time, correct: true}
      - The loss
    explanation: Its forward runs again during the backward pass.
    pair: recompute-cost
"""


@pytest.fixture
def sample_catalog(tmp_path: Path) -> Catalog:
    (tmp_path / "pairs.yaml").write_text(PACK, "utf-8")
    return load_catalog(tmp_path / "pairs.yaml")


async def test_the_transfer_question_is_answered_alone_and_measured(h: Harness) -> None:
    room = Room.of(h, 4)
    late = h.person(9)  # in the chat, but not at the first vote
    [post_id] = (await h.peer(room.group, room.host, "pairs")).post_ids
    question = await h.service.questions.show(post_id)
    assert question is not None
    right, other = question.correct, wrong(question)
    await room.answers(post_id, [right, other, other, other])  # 25 %: they discuss
    h.clock.advance(61)
    await h.tick()
    h.clock.advance(121)
    await h.tick()
    assert await room.answers(post_id, [right, right, right, other]) == \
        ["Your answer is in."] * 4
    before = len(h.live_texts(room.group))
    h.clock.advance(61)
    await h.tick()
    assert room.new_texts(before) == []  # no result yet: the transfer question first
    post = await h.service.storage.get_post(post_id)
    assert post is not None
    session = await h.service.storage.live_in_chat(post.chat_key)
    assert session is not None and session.state == "transfer"
    transfer_id = session.steps[-1].post_id
    transfer = await h.service.questions.show(transfer_id)
    assert transfer is not None and transfer_id != post_id
    assert transfer.question_id == {"recompute-cost": "recompute-step",
                                    "recompute-step": "recompute-cost"}[question.question_id]
    [shown] = h.live_questions(transfer_id)
    assert "answered alone: no discussion this time" in shown and transfer.prompt in shown
    # right at first: the first player; wrong at first: the other three, two right now
    assert await room.answers(transfer_id, [transfer.correct, transfer.correct,
                                            transfer.correct, wrong(transfer)]) == \
        ["Your answer is in."] * 4
    assert (await h.live_answer(room.group, late, transfer_id, transfer.correct)).texts[0] \
        == "Your answer is in."
    second = await h.live_answer(room.group, room.players[3], transfer_id, transfer.correct)
    assert second.texts[0] == "Your first answer stands."
    h.clock.advance(61)
    await h.tick()
    (result,) = room.new_texts(before)
    assert "right: 25% → 75%" in result
    # 3 of the 4 first voters; the latecomer's right answer would make it 4 of 5 (80%)
    assert "the same idea, answered alone: 75% right" in result
    assert f"{transfer.options[transfer.correct]}" in result
    # Hake: (0.75 − 0.25) / (1 − 0.25); Porter et al.: 2 of 3 over 1 of 1
    assert "normalised gain +0.67 · weighted learning gain 0.67" in result
    # the transfer's answers are ordinary answers, once each: the latecomer's is kept too
    answers = {a.person_key: a.correct
               for a in await h.service.storage.answers_for_post(transfer_id)}
    assert answers == {**{h.person_key(p): p is not room.players[3] for p in room.players},
                       h.person_key(late): True}
    assert await h.service.live.session(post.chat_key) is None
