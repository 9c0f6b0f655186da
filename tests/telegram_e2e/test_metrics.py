"""Metrics through the real python-telegram-bot against the fake: poll answers counted by
platform and outcome as stored, and a RetryAfter from Telegram counted as a rate-limit wait."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bot import metrics
from tests.telegram_e2e.conftest import Harness
from tests.test_metrics import scrape, value


@pytest.fixture
def endpoint() -> Iterator[int]:
    server = metrics.serve("127.0.0.1", 0)
    yield server.server_port
    server.shutdown()
    server.server_close()


async def test_poll_answers_and_a_flood_wait_are_scraped(
    tg: Harness, endpoint: int, group: dict[str, Any], alice: dict[str, Any],
    bob: dict[str, Any],
) -> None:
    tg.service.meter = metrics.METER  # as open_service wires it with QUIZBOT_METRICS_LISTEN
    before = await scrape(endpoint)

    tg.fake.fail_next("sendPoll", retry_after=1)  # the rate limiter waits, then sends
    await tg.command(group, alice, "/quiz")
    [call] = await tg.fake.wait_for("sendPoll")
    correct = call.params["correct_option_ids"][0]
    await tg.answer(call, alice, correct)
    await tg.answer(call, bob, (correct + 1) % len(call.params["options"]))
    post_id = await tg.service.post_id_for(f"tg-poll:{call.result['poll']['id']}")
    assert post_id is not None

    after = await scrape(endpoint)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    stored = await tg.service.storage.answers_for_post(post_id)
    assert delta("quizbot_answers_total", platform="telegram", outcome="accepted") \
        == len(stored) == 2
    assert delta("quizbot_answer_seconds_count", platform="telegram") == 2
    assert delta("quizbot_platform_rate_limit_waits_total", platform="telegram") == 1
    assert delta("quizbot_platform_rate_limit_wait_seconds_total", platform="telegram") == 1
