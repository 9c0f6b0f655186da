"""Whose language: what one person reads alone follows them (their /lang, else their client's),
what a shared chat reads follows the chat; a private chat has one reader."""

from __future__ import annotations

import pytest

from bot.core.locales import personal_locale
from bot.core.models import Chat, Person
from bot.core.service import QuizService

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database

GROUP = Chat("tg:-100", "Study group")
EN_US = Person("dc:1", "Ada", platform_locale="en-US")
NO_CLIENT = Person("dc:2", "Bo")


def test_the_persons_choice_then_their_client_then_the_chat() -> None:
    assert personal_locale("bn", "hi-IN", "en") == "bn"
    assert personal_locale(None, "hi-IN", "bn") == "hi"
    assert personal_locale(None, "fr-FR", "bn") == "bn"  # a client language we do not speak
    assert personal_locale(None, None, None) == "en"


async def test_in_private_the_person_wins_and_in_a_group_the_chat(service: QuizService) -> None:
    await service.set_language(None, "hi", chat=GROUP)
    private = Chat("dc:900", "@ada", is_private=True)
    await service.set_language(None, "bn", chat=private)
    # an en-US person reads English alone (an ephemeral reply in the Hindi group, their DM)
    assert await service.locales.for_person(EN_US, GROUP) == "en"
    assert await service.locales.for_audience(private, EN_US) == "en"
    # what the group reads is the group's
    assert await service.locales.for_audience(GROUP, EN_US) == "hi"
    # their /lang beats their client
    await service.set_language(EN_US, "bn")
    assert await service.locales.for_audience(private, EN_US) == "bn"
    assert await service.locales.for_person(EN_US, GROUP) == "bn"
    # with no client language, the chat's
    assert await service.locales.for_person(NO_CLIENT, GROUP) == "hi"


async def test_a_personal_question_in_a_group_follows_the_person(service: QuizService) -> None:
    await service.set_language(None, "hi", chat=GROUP)
    async with service.asking.quiz(GROUP, EN_US, "sample", run=True) as question:
        pass
    assert question.locale == "en"
