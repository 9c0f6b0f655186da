"""Discord's publishing failures in the metrics: a rate limit longer than discord.py waits is
a rate-limit wait with its seconds, a network failure an API error; both stay TryLater."""

from __future__ import annotations

import aiohttp
import discord
import pytest

from bot import metrics
from bot.adapters.discord.publish import as_port_errors
from bot.core.ports import TryLater
from tests.test_metrics import Samples, value


def samples() -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in metrics.REGISTRY.collect() for sample in family.samples
    }


def test_rate_limits_and_failures_are_counted_and_still_retried() -> None:
    before = samples()
    for failure in (discord.RateLimited(7.5), aiohttp.ClientConnectionError("reset"),
                    TimeoutError()):
        with pytest.raises(TryLater), as_port_errors("dc:1"):
            raise failure
    after = samples()

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("quizbot_platform_rate_limit_waits_total", platform="discord") == 1
    assert delta("quizbot_platform_rate_limit_wait_seconds_total", platform="discord") == 7.5
    assert delta("quizbot_platform_api_errors_total", platform="discord",
                 operation="publish") == 2
