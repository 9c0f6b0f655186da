"""Metrics through the real python-telegram-bot against the fake: poll answers counted by
platform and outcome as stored, a RetryAfter from Telegram counted as a rate-limit wait, and
every failed request to Telegram as an API error by method."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError, TimedOut

from bot import metrics
from bot.adapters.telegram.app import counted, quiet_library_deprecations
from tests.telegram_e2e.conftest import Harness
from tests.test_metrics import Samples, scrape, value


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
    post_id = await tg.service.questions.post_id_for(f"tg-poll:{call.result['poll']['id']}")
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


def samples() -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in metrics.REGISTRY.collect() for sample in family.samples
    }


async def test_each_failed_try_is_counted_but_not_our_own_bad_requests() -> None:
    quiet_library_deprecations()  # as the bot does: RetryAfter's constructor reads its int
    failures = iter([NetworkError("Bad Gateway"), TimedOut(), BadRequest("message is not modified"),
                     RetryAfter(3)])

    async def call(*args: Any, **kwargs: Any) -> bool:
        raise next(failures)

    before = samples()
    request = counted(call, "editMessageText")
    for _ in range(4):
        with pytest.raises(TelegramError):
            await request()
    after = samples()

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("quizbot_platform_api_errors_total", platform="telegram",
                 operation="editMessageText") == 2
    assert delta("quizbot_platform_rate_limit_waits_total", platform="telegram") == 1
    assert delta("quizbot_platform_rate_limit_wait_seconds_total", platform="telegram") == 3
