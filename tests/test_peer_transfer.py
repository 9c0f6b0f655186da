"""A peer round's isomorphic question (peer.py): after the revote, the question's `pair:` (or
one of its quiz sharing a concept) is asked alone; the result gives the first-vote share, the
revote share, the share right on the isomorphic question, Hake's normalised gain and the
weighted learning gain, each equal to a count by hand; a question with neither asks none."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.content import Catalog, load_catalog
from bot.core.live import Asked
from bot.core.live_text import peer_result_text, revote_text
from bot.core.models import Chat, Person, ShownQuestion
from bot.core.peer import (
    Gains,
    PeerResult,
    Revoting,
    Split,
    gains,
    isomorphic,
    weighted_learning_gain,
)
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from bot.i18n import translator
from tests.clock import FakeClock
from tests.test_live import LiveFakePort

pytestmark = pytest.mark.memory_store

PACK = """\
id: pairs
title: Pairs
questions:
  - id: p-first
    prompt: What does checkpointing cost?
    options:
      - {en: Compute, correct: true}
      - Accuracy
      - Bandwidth
    explanation: It runs the forward again.
    pair: p-second
  - id: p-second
    prompt: What grows when a block is checkpointed?
    options:
      - Memory
      - {en: Step time, correct: true}
      - Accuracy
    explanation: The replay takes time.
  - id: p-concept
    prompt: Which is recomputed?
    options:
      - {en: Activations, correct: true}
      - Weights
    explanation: Activations.
    concepts: [recompute]
  - id: p-concept-two
    prompt: What is dropped and rebuilt?
    options:
      - Gradients
      - {en: Activations, correct: true}
    explanation: Activations.
    concepts: [recompute, memory]
  - id: p-alone
    prompt: Alone?
    options:
      - {en: Yes, correct: true}
      - "No"
    explanation: Yes.
"""
GROUP = Chat("tg:-100", "Study group")
HOST = Person("tg:1", "Host")
PEOPLE = [Person(f"tg:{30 + i}", f"P{i}") for i in range(6)]


@pytest.fixture
def sample_catalog(tmp_path: Path) -> Catalog:
    (tmp_path / "pairs.yaml").write_text(PACK, "utf-8")
    return load_catalog(tmp_path / "pairs.yaml")


@pytest.fixture
def port(service: QuizService, clock: FakeClock) -> LiveFakePort:
    port = LiveFakePort(clock)
    port.attach(service)
    return port


def isomorphic_of(catalog: Catalog, question_id: str) -> str | None:
    quiz = catalog.quizzes["pairs"]
    found = isomorphic(quiz, quiz.question(question_id))
    return None if found is None else found.id


def test_the_pair_else_a_shared_concept(sample_catalog: Catalog) -> None:
    assert isomorphic_of(sample_catalog, "p-first") == "p-second"
    assert isomorphic_of(sample_catalog, "p-concept") == "p-concept-two"
    assert isomorphic_of(sample_catalog, "p-concept-two") == "p-concept"
    assert isomorphic_of(sample_catalog, "p-alone") is None
    assert isomorphic_of(sample_catalog, "p-second") is None


def test_the_weighted_learning_gain_by_hand() -> None:
    firsts = {"a": False, "b": False, "c": False, "d": True, "e": True}
    transfers = {"a": True, "b": True, "c": False, "d": True, "e": False, "late": True}
    # wrong at first: 2 of 3 right on the transfer; right at first: 1 of 2
    assert weighted_learning_gain(firsts, transfers) == pytest.approx((2 / 3) / (1 / 2))
    assert weighted_learning_gain({"a": False}, {"a": True}) is None  # nobody knew it first
    assert weighted_learning_gain({"a": True}, {"a": False}) is None  # nor on the transfer


def test_the_figures_count_only_those_who_voted_first() -> None:
    firsts = {"a": False, "b": False, "c": True, "d": True}
    found = gains(firsts, {"a": True, "b": True, "c": True, "d": False},
                  {"a": True, "b": False, "c": True, "d": True, "late": False, "later": False})
    assert (found.first_right, found.voted) == (0.5, 4)
    assert (found.second_right, found.revoted) == (0.75, 4)
    assert found.normalised_gain == pytest.approx((0.75 - 0.5) / (1 - 0.5))
    # the two who came after the first vote are not counted: 3 of 4, not 3 of 6
    assert (found.transfer_right, found.transferred) == (0.75, 4)
    assert found.learning_gain == pytest.approx((1 / 2) / (2 / 2))
    assert gains({}, None, None) == Gains(0.0, 0)
    alone = gains({"a": True})
    assert (alone.second_right, alone.normalised_gain, alone.transfer_right) == (None,) * 3
    assert gains({"a": True}, {"a": True}).normalised_gain is None  # nothing left to gain


async def vote(service: QuizService, q: ShownQuestion, rights: list[bool]) -> None:
    for person, right in zip(PEOPLE, rights, strict=False):
        option = q.correct if right else (q.correct + 1) % len(q.options)
        assert (await service.live_answer(q.post_id, person, option)).status == "accepted"


async def round_on(service: QuizService, clock: FakeClock, question_id: str) -> ShownQuestion:
    """A peer round whose question is `question_id`: every other one was asked here once, so
    the choice (the chat's least asked) falls on it."""
    for other in service.catalog.quizzes["pairs"].questions:
        if other.id != question_id:
            await service.storage.create_post(GROUP.key, "pairs", other.id,
                                              tuple(range(len(other.options))), "en",
                                              clock.now())
    asked = await service.peer.start(GROUP, HOST, "pairs", allowed=True, locale="en")
    assert isinstance(asked, Asked) and asked.question.question_id == question_id
    return asked.question


async def discussed(service: QuizService, clock: FakeClock, q: ShownQuestion,
                    first: list[bool], second: list[bool], port: LiveFakePort) -> None:
    await vote(service, q, first)
    scheduler = Scheduler(service)
    clock.advance(61)
    await scheduler.tick()
    assert isinstance(port.live[-1], Split)
    clock.advance(121)
    await scheduler.tick()
    assert isinstance(port.live[-1], Revoting) and not port.live[-1].transfer
    await vote(service, q, second)
    clock.advance(61)
    await scheduler.tick()


async def test_the_isomorphic_question_is_asked_alone_and_measured(
    service: QuizService, port: LiveFakePort, clock: FakeClock
) -> None:
    q = await round_on(service, clock, "p-first")
    await discussed(service, clock, q, [True, False, False, False, False, True],  # 2 of 6
                    [True, True, True, True, False, True], port)  # 5 of 6
    transfer = port.live[-1]
    assert isinstance(transfer, Revoting) and transfer.transfer
    assert transfer.question.question_id == "p-second"
    assert "answered alone" in revote_text(transfer, translator("en"))
    # wrong at first (P1-P4): P1, P2, P3 right now; right at first (P0, P5): P0 right
    await vote(service, transfer.question, [True, True, True, True, False, False])
    late = Person("tg:99", "Late")  # came after the first vote: answered, but not counted
    assert (await service.live_answer(transfer.question.post_id, late,
                                      transfer.question.correct)).status == "accepted"
    assert (await service.live_answer(transfer.question.post_id, PEOPLE[0], 0)).status \
        == "duplicate"
    clock.advance(61)
    await Scheduler(service).tick()
    result = port.live[-1]
    assert isinstance(result, PeerResult)
    assert result.first_right == pytest.approx(2 / 6)
    assert result.second_right == pytest.approx(5 / 6)
    assert result.transfer_right == pytest.approx(4 / 6) and result.transferred == 6
    assert result.normalised_gain == pytest.approx((5 / 6 - 2 / 6) / (1 - 2 / 6))
    assert result.learning_gain == pytest.approx((3 / 4) / (1 / 2))
    text = peer_result_text(result, translator("en"))
    assert "the same idea, answered alone: 67% right" in text
    assert "normalised gain +0.75 · weighted learning gain 1.50" in text
    assert any(line.startswith("Answer: ") and line.endswith(") Step time")
               for line in text.splitlines()), text
    assert await service.live.session(GROUP.key) is None
    # the transfer's votes are ordinary answers; the discussion gain is the first question's
    analysis = await service.item_analysis.for_chat(GROUP, allowed=True)
    assert set(analysis.gains) == {("pairs", "p-first")}


async def test_a_question_with_no_isomorphic_one_ends_after_the_revote(
    service: QuizService, port: LiveFakePort, clock: FakeClock
) -> None:
    q = await round_on(service, clock, "p-alone")
    await discussed(service, clock, q, [True, False, False], [True, True, False], port)
    result = port.live[-1]
    assert isinstance(result, PeerResult)
    assert (result.transfer_right, result.learning_gain) == (None, None)
    assert result.normalised_gain == pytest.approx((2 / 3 - 1 / 3) / (1 - 1 / 3))
    assert "answered alone" not in peer_result_text(result, translator("en"))
