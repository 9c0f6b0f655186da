"""A person alone gets the question nearest the target success rate (Questions.choose with
the difficulty model's kept ratings, bot/core/difficulty.py), on the SQLite store in the loop:
what others got right is predicted easier, what they missed harder, and the choice is the
candidate nearest selection.TARGET, or the chat's own target (/settings target); the setting's
values checked."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.core import chat_settings, selection
from bot.core.errors import SettingsError
from bot.core.models import Chat, Person
from bot.core.ports import AnswerRecord, Storage
from bot.core.service import QuizService

pytestmark = pytest.mark.memory_store

ADA = Person("tg:1", "Ada")
ALONE = Chat(ADA.key, "Ada", is_private=True)
WHEN = datetime(2026, 3, 1, 9, tzinfo=UTC)


async def answered(storage: Storage, question: str, correct: bool, people: range) -> None:
    for n in people:
        post = await storage.create_post("tg:-5", "sample", question, (0, 1, 2), "en", WHEN)
        await storage.record_answer(AnswerRecord(post.id, f"tg:{100 + n}", 0, correct, WHEN,
                                                 3000, name="X"))


async def test_what_others_got_right_is_predicted_easier_and_the_nearest_is_chosen(
    service: QuizService, storage: Storage
) -> None:
    await answered(storage, "s-one", True, range(30))  # everyone right: easy
    await answered(storage, "s-two", False, range(30))  # everyone wrong: hard
    await storage.materialize()
    pool = [("sample", "s-one"), ("sample", "s-two"), ("sample", "s-three")]
    success = await service.questions.predicted(ADA, pool)
    assert success[("sample", "s-one")] > success[("sample", "s-three")] == 0.5
    assert success[("sample", "s-three")] > success[("sample", "s-two")]
    nearest = min(pool, key=lambda c: abs(success[c] - selection.TARGET))
    for _ in range(5):
        assert await service.questions.choose(ALONE, "sample", ADA) == nearest
    # their own target (/settings target 50 in their private chat): the unrated one, at 50 %
    await service.chat_settings.change(ALONE, allowed=True, target=50)
    assert await service.questions.choose(ALONE, "sample", ADA) == ("sample", "s-three")
    # a shared chat's /quiz has no one person to aim at: no prediction is read
    assert await service.questions.choose(Chat("tg:-5", "G"), "sample", None) in pool


@pytest.mark.parametrize(("typed", "stored"), [("80", 80), ("50%", 50), (" 95 ", 95),
                                               ("default", None)])
def test_a_target_is_a_percentage_from_50_to_95(typed: str, stored: int | None) -> None:
    assert chat_settings.parse_target(typed) == stored


@pytest.mark.parametrize("typed", ["49", "96", "abc", "", "7.5"])
def test_another_target_is_refused_with_how_to_type_it(typed: str) -> None:
    with pytest.raises(SettingsError) as refused:
        chat_settings.parse_target(typed)
    assert "/settings target 75" in refused.value.template


async def test_a_bad_target_changes_nothing(service: QuizService) -> None:
    await service.chat_settings.change(ALONE, allowed=True, words=["target", "60"])
    with pytest.raises(SettingsError):
        await service.chat_settings.change(ALONE, allowed=True, words=["target", "99"])
    settings = await service.chat_settings.get(ALONE.key)
    assert (settings.target, settings.own_target) == (60, True)
    back = await service.chat_settings.change(ALONE, allowed=True, target="default")
    assert (back.target, back.own_target) == (75, False)
