"""A chat's settings in the core: its question time and mode, changed by its admins only
(the platform says who: `allowed=`), checked before anything is stored, used by /quiz."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.core.errors import (
    MAX_QUESTION_SECONDS,
    MIN_QUESTION_SECONDS,
    BadMode,
    BadQuestionTime,
    NotAllowed,
)
from bot.core.models import Chat, Person
from bot.core.service import DEFAULT_QUESTION_TIME, QuizService
from tests.clock import FakeClock
from tests.ports import FakePort

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database

GROUP = Chat("tg:-100", "Study group")
OTHER = Chat("tg:-200", "Another group")
ADA = Person("tg:1", "Ada")


@pytest.fixture
def port(service: QuizService, clock: FakeClock) -> FakePort:
    return FakePort("tg:", clock).attach(service)


async def test_defaults_until_changed(service: QuizService) -> None:
    settings = await service.chat_settings.get(GROUP.key)
    assert settings.question_time == DEFAULT_QUESTION_TIME and not settings.own_time
    assert settings.mode is None


async def test_admins_change_time_and_mode_per_chat(service: QuizService) -> None:
    changed = await service.chat_settings.change(GROUP, by=ADA, allowed=True, seconds="45",
                                                 mode="Buttons")
    assert (changed.question_seconds, changed.own_time, changed.mode) == (45, True, "buttons")
    assert await service.chat_settings.get(GROUP.key) == changed
    assert (await service.chat_settings.get(OTHER.key)).own_time is False
    only_mode = await service.chat_settings.change(GROUP, allowed=True, mode="poll")
    assert (only_mode.question_seconds, only_mode.mode) == (45, "polls")
    back = await service.chat_settings.change(GROUP, allowed=True, seconds="default")
    assert (back.own_time, back.mode) == (False, "polls")


async def test_only_admins_change_settings(service: QuizService) -> None:
    with pytest.raises(NotAllowed):
        await service.chat_settings.change(GROUP, by=ADA, allowed=False, seconds=30)
    assert (await service.chat_settings.get(GROUP.key)).own_time is False


@pytest.mark.parametrize(("typed", "seconds"), [
    ("90", 90), ("90s", 90), ("10m", 600), ("10 min", 600), ("2h", 7200), ("3d", 259_200),
    ("30d", 2_592_000), ("730h", MAX_QUESTION_SECONDS), (str(MAX_QUESTION_SECONDS),
                                                       MAX_QUESTION_SECONDS),
])
async def test_a_time_is_typed_in_seconds_minutes_hours_or_days(
    service: QuizService, typed: str, seconds: int
) -> None:
    changed = await service.chat_settings.change(GROUP, allowed=True, words=["time", typed])
    assert changed.question_seconds == seconds


@pytest.mark.parametrize("seconds", [MIN_QUESTION_SECONDS - 1, MAX_QUESTION_SECONDS + 1,
                                     "soon", "-5", 0, "31d", "9s", "2w", "1.5h"])
async def test_a_bad_time_is_refused_and_nothing_changes(
    service: QuizService, seconds: int | str
) -> None:
    with pytest.raises(BadQuestionTime):
        await service.chat_settings.change(GROUP, allowed=True, seconds=seconds, mode="buttons")
    assert await service.storage.get_chat_settings(GROUP.key) is None


async def test_a_bad_mode_is_refused(service: QuizService) -> None:
    with pytest.raises(BadMode):
        await service.chat_settings.change(GROUP, allowed=True, mode="carrier pigeon")


async def test_quiz_uses_the_chat_question_time(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    await service.chat_settings.change(GROUP, allowed=True, seconds=MIN_QUESTION_SECONDS)
    async with service.asking.quiz(GROUP, ADA) as question:
        await port.send_question(question)
    assert question.closes_at == clock.now() + timedelta(seconds=MIN_QUESTION_SECONDS)
    async with service.asking.quiz(OTHER, ADA) as question:
        await port.send_question(question)
    assert question.closes_at == clock.now() + DEFAULT_QUESTION_TIME


async def test_settings_follow_a_chat_that_moved(service: QuizService) -> None:
    await service.chat_settings.change(GROUP, allowed=True, seconds=90)
    assert await service.migrate_chat(GROUP.key, "tg:-1009")
    assert (await service.chat_settings.get(Chat("tg:-1009").key)).question_seconds == 90
