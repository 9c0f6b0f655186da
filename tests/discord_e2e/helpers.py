"""Small steps the Discord tests share: post a question, find its right answer, click."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.core.models import ShownQuestion
from bot.core.service import QuizService
from bot.settings import Settings
from tests.fakes.discord_api import TOKEN, FakeDiscord, Reply, User


def make_settings(fake: FakeDiscord, **overrides: Any) -> Settings:
    """Settings pointing the adapter at the fake REST API and gateway."""
    values: dict[str, Any] = {
        "discord_bot_token": TOKEN,
        "discord_api_base_url": fake.api_base,
        "discord_gateway_url": fake.gateway_url,
        "discord_guild_id": None,
        "telegram_bot_token": None,
    } | overrides
    return Settings(_env_file=None, **values)


async def post_quiz(fake: FakeDiscord, service: QuizService, user: User,
                    permissions: int | None = None,
                    **options: Any) -> tuple[Reply, ShownQuestion]:
    """/quiz in the guild channel; the public reply and the question it shows.
    `permissions`: the member's (MANAGE_GUILD: an admin, who may replace an open one)."""
    reply = await fake.reply(await fake.slash("quiz", options, user=user,
                                              permissions=permissions))
    assert not reply.ephemeral
    post_id = await bound_post(service, reply.id)
    question = await service.questions.show(post_id)
    assert question is not None
    return reply, question


async def bound_post(service: QuizService, message_id: int) -> int:
    """The post a message is bound to; the bot binds just after the message is shown."""
    for _ in range(200):
        if (post_id := await service.questions.post_id_for(f"dc-msg:{message_id}")) is not None:
            return post_id
        await asyncio.sleep(0.005)
    raise AssertionError(f"message {message_id} was never bound to a post")


def wrong(question: ShownQuestion) -> int:
    return next(i for i in range(len(question.options)) if i != question.correct)


async def click(fake: FakeDiscord, message: Reply | dict[str, Any], option: int, user: User,
                **kwargs: Any) -> Reply:
    """Click the `option`-th button of a message; the reply the clicker sees."""
    msg = message.message if isinstance(message, Reply) else message
    button = [c for row in msg["components"] for c in row["components"]][option]
    return await fake.reply(await fake.click(int(msg["id"]), button["custom_id"], user=user,
                                             **kwargs))
