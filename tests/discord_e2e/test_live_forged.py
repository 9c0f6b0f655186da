"""Forged live buttons (`lv:` custom_ids a client can send on any message): numbers too big for
any id are answered like a question that is gone, politely and ephemerally, with nothing
logged as an error and nothing stored."""

from __future__ import annotations

import pytest

from bot.adapters.discord import DiscordAdapter
from bot.core.service import QuizService
from tests.discord_e2e.helpers import post_quiz
from tests.fakes.discord_api import FakeDiscord, User


@pytest.mark.parametrize("custom_id", ["lv:" + "9" * 20 + ":1", "lv:1:" + "9" * 20,
                                       "lv:place:" + "9" * 20])
async def test_a_live_button_with_a_20_digit_number_is_refused_politely(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
    custom_id: str,
) -> None:
    message, _ = await post_quiz(fake, service, alice, quiz="sample")
    forged = [{"type": 1, "components": [
        {"type": 2, "style": 1, "label": "A", "custom_id": custom_id}]}]
    reply = await fake.reply(await fake.click(message.id, custom_id, user=bob,
                                              components=forged))
    assert reply.ephemeral and reply.content
    assert "went wrong" not in reply.content
