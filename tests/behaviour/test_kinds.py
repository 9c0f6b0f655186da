"""Every kind of question answered on each platform, its native way (tests/data/kinds): right,
wrong, partly right (several right answers count all or nothing), a number typed in Bengali
digits, a Latin spelling of a Bengali answer, a second answer refused, a forged component
refused, and a restart between the question and the answer.

Each question of the kinds pack is its own one-question pack here (`k-multi` ...), so /quiz
names the one it wants."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.content import Catalog, load_catalog
from bot.content.items import Kind
from bot.core.models import ShownQuestion
from bot.core.ports import Storage
from bot.core.service import QuizService
from bot.reports.png import PngCharts
from tests.behaviour.conftest import PLATFORMS
from tests.behaviour.harness import KindsHarness, Place, Seen
from tests.clock import FakeClock
from tests.errorlog import failing_on_errors

KINDS = Path(__file__).parent.parent / "data" / "kinds" / "kinds.yaml"
ALREADY = "Your first answer is final."


@pytest.fixture
def sample_catalog(tmp_path: Path) -> Catalog:
    """One pack per question of the kinds pack, named as the question."""
    pack = yaml.safe_load(KINDS.read_text(encoding="utf-8"))
    for question in pack["questions"]:
        one = {"id": question["id"], "title": {"en": question["id"], "bn": question["id"],
                                                 "hi": question["id"]},
               "questions": [{**question, "id": question["id"] + "-q"}]}
        (tmp_path / f"{question['id']}.yaml").write_text(yaml.safe_dump(one, allow_unicode=True),
                                                          encoding="utf-8")
    return load_catalog(tmp_path)


@pytest.fixture
def service(sample_catalog: Catalog, storage: Storage, clock: FakeClock) -> QuizService:
    return QuizService(sample_catalog, storage, clock, random.Random(7), charts=PngCharts())


@pytest.fixture(params=PLATFORMS)
async def h(request: pytest.FixtureRequest, service: QuizService,
            clock: FakeClock) -> AsyncIterator[KindsHarness]:
    start: Callable[[QuizService, FakeClock], AbstractAsyncContextManager[Any]]
    if request.param == "telegram":
        from tests.behaviour.telegram import telegram_harness as start
    else:
        from tests.behaviour.discord import discord_harness as start
    with failing_on_errors("telegram", "discord", "bot", "aiohttp"):
        async with start(service, clock) as harness:
            yield harness


async def ask(h: KindsHarness, where: Place, who: Any, quiz: str) -> tuple[int, ShownQuestion]:
    [post] = (await h.quiz(where, who, quiz)).post_ids
    shown = await h.service.questions.show(post)
    assert shown is not None
    return post, shown


def wrong(shown: ShownQuestion) -> int:
    return next(i for i in range(len(shown.options)) if i != shown.correct)


async def recorded(h: KindsHarness, post: int, who: Any) -> bool | None:
    """Whether `who`'s stored answer to `post` is right; None: nothing stored. (A vote on a
    Telegram quiz poll is answered by the poll itself, not by a message to read.)"""
    answer = await h.service.storage.answer_of(post, h.person_key(who))
    return None if answer is None else answer.correct


def said_right(seen: Seen) -> bool:
    return "✅" in seen.text


def said_wrong(seen: Seen) -> bool:
    return "❌" in seen.text


# several right answers -------------------------------------------------------------------
async def test_multi_right_wrong_partial_and_a_second_answer(h: KindsHarness) -> None:
    group, alice, bob, chandra = h.group(), h.person(1), h.person(2), h.person(3)
    post, shown = await ask(h, group, alice, "k-multi")
    assert shown.kind is Kind.MULTI and len(shown.correct_set) == 3
    right = set(shown.correct_set)
    wrong_one = next(i for i in range(len(shown.options)) if i not in right)
    await h.answer_picks(group, alice, post, right)
    await h.answer_picks(group, bob, post, set(sorted(right)[:2]))
    await h.answer_picks(group, chandra, post, right | {wrong_one})
    assert [await recorded(h, post, p) for p in (alice, bob, chandra)] == [True, False, False]
    await h.answer_picks(group, alice, post, {wrong_one})  # a second answer
    assert await recorded(h, post, alice) is True


async def test_multi_in_buttons_mode_says_what_was_partly_right(h: KindsHarness) -> None:
    group, alice, bob, chandra = h.group(), h.person(1), h.person(2), h.person(3)
    h.make_admin(alice)
    await h.change_settings(group, alice, mode="buttons")
    post, shown = await ask(h, group, alice, "k-multi")
    right = set(shown.correct_set)
    assert said_right(await h.answer_picks(group, bob, post, right))
    partial = await h.answer_picks(group, chandra, post, set(sorted(right)[:2]))
    assert said_wrong(partial) and "2 of 3 right options" in partial.text
    assert ALREADY in (await h.answer_picks(group, bob, post, set(sorted(right)[:1]))).text
    assert [await recorded(h, post, p) for p in (bob, chandra)] == [True, False]


# true or false ---------------------------------------------------------------------------
async def test_true_false_is_never_shuffled(h: KindsHarness) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    post, shown = await ask(h, group, alice, "k-tf")
    assert shown.kind is Kind.TRUEFALSE and shown.options == ("True", "False")
    assert shown.correct == 1  # the statement is false
    await h.answer(group, alice, post, 1)
    await h.answer(group, bob, post, 0)
    assert [await recorded(h, post, p) for p in (alice, bob)] == [True, False]


# typed: a number, a text ---------------------------------------------------------------
async def test_a_number_typed_in_bengali_digits_and_a_wrong_one(h: KindsHarness) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    post, shown = await ask(h, group, alice, "k-num")
    assert shown.kind is Kind.NUMERIC and shown.unit == "GB"
    assert said_right(await h.answer_typed(group, alice, post, "০.৪২ GB"))
    assert said_wrong(await h.answer_typed(group, bob, post, "4"))
    assert ALREADY in (await h.answer_typed(group, alice, post, "4")).text
    assert [await recorded(h, post, p) for p in (alice, bob)] == [True, False]


async def test_an_unreadable_number_says_what_to_type_and_may_be_typed_again(
    h: KindsHarness,
) -> None:
    group, alice = h.group(), h.person(1)
    post, _ = await ask(h, group, alice, "k-num")
    refused = await h.answer_typed(group, alice, post, "about half")
    assert "number" in refused.text and not said_right(refused)
    assert await recorded(h, post, alice) is None
    assert said_right(await h.answer_typed(group, alice, post, "0.4"))


async def test_a_text_in_latin_letters_for_a_bengali_answer(h: KindsHarness) -> None:
    group, alice, bob = h.group(), h.person(1, language="bn"), h.person(2)
    post, shown = await ask(h, group, alice, "k-text")
    assert shown.kind is Kind.TEXT
    assert said_right(await h.answer_typed(group, alice, post, "Punargonona"))
    assert said_wrong(await h.answer_typed(group, bob, post, "mixed precision"))


async def test_a_typed_answer_in_a_private_chat(h: KindsHarness) -> None:
    alice = h.person(1)
    dm = h.private(alice)
    post, _ = await ask(h, dm, alice, "k-text")
    assert said_right(await h.answer_typed(dm, alice, post, "gradient checkpointing"))


# an order --------------------------------------------------------------------------------
async def test_an_order_in_a_group_right_and_wrong(h: KindsHarness) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    post, shown = await ask(h, group, alice, "k-order")
    assert shown.kind is Kind.ORDER and len(shown.correct_set) == 4
    assert list(shown.correct_set) != [0, 1, 2, 3]  # never shown in the right order
    assert said_right(await h.answer_order(group, alice, post, list(shown.correct_set)))
    assert said_wrong(await h.answer_order(group, bob, post, list(shown.correct_set)[::-1]))


async def test_an_order_in_a_private_chat(h: KindsHarness) -> None:
    alice = h.person(1)
    dm = h.private(alice)
    post, shown = await ask(h, dm, alice, "k-order")
    assert said_right(await h.answer_order(dm, alice, post, list(shown.correct_set)))


# forged, restarted -----------------------------------------------------------------------
@pytest.mark.parametrize("quiz", ["k-multi", "k-order"])
async def test_a_forged_component_is_refused_and_records_nothing(
    h: KindsHarness, quiz: str
) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    h.make_admin(alice)
    await h.change_settings(group, alice, mode="buttons")
    post, shown = await ask(h, group, alice, quiz)
    refused = await h.forged_submit(group, bob, post)
    assert refused.texts and not said_right(refused) and not said_wrong(refused)
    assert await recorded(h, post, bob) is None
    # nothing recorded: bob still answers
    if quiz == "k-multi":
        assert said_right(await h.answer_picks(group, bob, post, set(shown.correct_set)))
    else:
        assert said_right(await h.answer_order(group, bob, post, list(shown.correct_set)))


@pytest.mark.parametrize("quiz", ["k-multi", "k-num", "k-order"])
async def test_a_restart_between_the_question_and_the_answer(
    h: KindsHarness, quiz: str
) -> None:
    group, alice = h.group(), h.person(1)
    post, shown = await ask(h, group, alice, quiz)
    await h.restart()
    if quiz == "k-multi":
        seen = await h.answer_picks(group, alice, post, set(shown.correct_set))
    elif quiz == "k-num":
        seen = await h.answer_typed(group, alice, post, "0.4")
    else:
        seen = await h.answer_order(group, alice, post, list(shown.correct_set))
    assert await recorded(h, post, alice) is True
    assert said_right(seen) or quiz == "k-multi"  # a Telegram quiz poll answers itself
