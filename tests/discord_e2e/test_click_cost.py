"""What one answer click costs beyond the answer itself: database round trips, rendering (a
click storm is a queue on one event loop: each round trip or render of ours is paid by every
click behind it)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from bot.adapters.discord import DiscordAdapter, embeds
from bot.core import render
from bot.core.service import QuizService
from tests.discord_e2e.helpers import click, post_quiz
from tests.fakes.discord_api import MANAGE_GUILD, FakeDiscord, User


def counted(monkeypatch: pytest.MonkeyPatch, *targets: tuple[object, str],
            callers: str = "") -> list[str]:
    """The names of the `(object, function name)` targets, in the order they are called
    (`callers`: only by code in the modules under that name, e.g. the adapters', not the
    core's own calls inside the answer)."""
    calls: list[str] = []
    for owner, name in targets:
        real = getattr(owner, name)

        def count(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            if sys._getframe(1).f_globals.get("__name__", "").startswith(callers):
                calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(owner, name, count)
    return calls


async def test_clicks_on_one_question_read_its_binding_once_and_no_language_first(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    calls = counted(monkeypatch, (service.questions, "post_id_for"),
                    (service.locales, "for_person"), callers="bot.adapters")
    carol = User(900_000_000_000_000_003, "Carol")
    for who in (alice, bob, carol):
        answer = await click(fake, reply, q.correct, who)
        assert "Correct" in answer.content
    assert calls == ["post_id_for"]


async def test_a_forged_click_after_real_ones_is_still_refused(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
) -> None:
    """The remembered binding is (message, post): another post's custom_id on that message
    is checked against the database and refused."""
    # an admin's /quiz replaces the open question (a member's points at it)
    old, q1 = await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")
    await click(fake, old, q1.correct, alice)
    _, q2 = await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")
    custom_id = f"qz:{q2.post_id}:{q2.correct}"
    forged = [{"type": 1, "components": [
        {"type": 2, "style": 1, "label": "A", "custom_id": custom_id}]}]
    refusal = await fake.reply(await fake.click(old.id, custom_id, user=bob, components=forged))
    assert refusal.ephemeral and "no longer available" in refusal.content
    assert await service.storage.answer_of(q2.post_id, f"dc:{bob.id}") is None


async def test_the_reply_to_an_option_is_rendered_and_escaped_once_per_language(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    calls = counted(monkeypatch, (render, "result_text"), (embeds, "plain"))
    people = [alice, bob, User(900_000_000_000_000_003, "Carol"),
              User(900_000_000_000_000_004, "Dan", locale="hi")]
    answers = [(await click(fake, reply, q.correct, who)).content for who in people]
    assert answers[0] == answers[1] == answers[2] != answers[3]
    assert "Correct" in answers[0]
    assert calls == ["result_text", "plain"] * 2  # English, then Hindi
