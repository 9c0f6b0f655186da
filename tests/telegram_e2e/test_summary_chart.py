"""The chart on a question's summary (/settings chart on), the ways only Telegram has: the
summary as the photo's caption when it fits 1,024 characters, else the photo and then the
text; a photo Telegram refuses leaves the text. The real PTB against the fake Bot API."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import pytest

from bot.core.models import PostSummary
from bot.core.service import QuizService
from bot.reports import summary_chart_size, summary_png
from tests.fakes.telegram_api import png_size
from tests.telegram_e2e.conftest import Harness


async def closed(tg: Harness, service: QuizService, group: dict[str, Any],
                 alice: dict[str, Any]) -> PostSummary:
    """A question asked in `group`, answered by alice, closed: its summary not shown yet."""
    await tg.command(group, alice, "/quiz sample")
    [poll] = tg.fake.calls_of("sendPoll")
    await tg.answer(poll, alice, 0)
    post_id = await service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")
    assert post_id is not None
    summary = await service.questions.close(post_id)
    assert summary is not None
    return replace(summary, chart=summary_png(summary))


def anchored(call: Any) -> int | None:
    return (call.params.get("reply_parameters") or {}).get("message_id")


async def test_a_short_summary_is_the_photos_caption(
    tg: Harness, service: QuizService, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    summary = await closed(tg, service, group, alice)
    assert tg.adapter is not None
    await tg.adapter.close_question(summary)
    [photo] = tg.fake.calls_of("sendPhoto")
    assert png_size(photo.params["photo"]) == summary_chart_size(len(summary.per_option))
    assert "answered" in photo.params["caption"]
    assert anchored(photo) is not None  # under the question
    assert tg.fake.calls_of("sendMessage") == []  # the caption is the summary


async def test_a_long_summary_comes_after_the_photo(
    tg: Harness, service: QuizService, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    summary = await closed(tg, service, group, alice)
    long = replace(summary, question=replace(summary.question, explanation="Why. " * 300))
    assert tg.adapter is not None
    await tg.adapter.close_question(long)
    [photo] = tg.fake.calls_of("sendPhoto")
    [text] = tg.fake.calls_of("sendMessage")
    assert "caption" not in photo.params
    assert "Why. Why." in text.params["text"]
    assert tg.fake.calls.index(photo) < tg.fake.calls.index(text)


async def test_a_refused_photo_leaves_the_text(
    tg: Harness, service: QuizService, group: dict[str, Any], alice: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    summary = await closed(tg, service, group, alice)
    tg.fake.fail_next("sendPhoto", status=400, description="Bad Request: PHOTO_INVALID_DIMENSIONS")
    assert tg.adapter is not None
    with caplog.at_level(logging.WARNING):
        await tg.adapter.close_question(summary)
    assert tg.fake.calls_of("sendPhoto") == []
    [text] = tg.fake.calls_of("sendMessage")
    assert "answered" in text.params["text"] and anchored(text) is not None
    assert any("refused" in r.getMessage() for r in caplog.records)
