"""The chart on a question's summary (/settings chart on) on Discord: the closing edit puts
it in the embed as an attached image; an attachment Discord refuses leaves the closing edit
without it. The real discord.py against the fake REST API."""

from __future__ import annotations

from dataclasses import replace

from bot.adapters.discord import DiscordAdapter
from bot.core.service import QuizService
from bot.reports import summary_chart_size, summary_png
from tests.discord_e2e.helpers import click, post_quiz
from tests.fakes.discord_api import FakeDiscord, User
from tests.fakes.telegram_api import png_size


async def test_the_closing_edit_carries_the_chart_as_the_embeds_image(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    await click(fake, reply, q.correct, alice)
    summary = await service.questions.close(q.post_id)
    assert summary is not None
    await bot.close_question(replace(summary, chart=summary_png(summary)))
    message = fake.messages[reply.id]
    [(name, data)] = fake.files[reply.id]
    assert message["embeds"][0]["image"]["url"] == f"attachment://{name}"
    assert png_size(data) == summary_chart_size(len(q.options))
    # the answer buttons are disabled; the ⚑ stays (a wrong answer shows in the summary)
    assert all(b.get("disabled") for row in message["components"] for b in row["components"]
               if not b.get("custom_id", "").startswith("rp:"))


async def test_a_refused_chart_leaves_the_closing_edit(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    summary = await service.questions.close(q.post_id)
    assert summary is not None
    fake.fail("PATCH", rf"/channels/\d+/messages/{reply.id}", 413, code=40005,
              message="Request entity too large")
    await bot.close_question(replace(summary, chart=summary_png(summary)))
    message = fake.messages[reply.id]
    assert reply.id not in fake.files
    assert "image" not in message["embeds"][0]
    assert message["embeds"][0]["title"].startswith("⏱")
