"""Telegram through webhooks: the fake Bot API POSTs every update to the adapter's endpoint
and sends it again until it is answered 2xx, as Telegram does."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.core.service import QuizService
from tests.behaviour import test_rules
from tests.behaviour.harness import Harness
from tests.behaviour.telegram import telegram_harness
from tests.clock import FakeClock
from tests.errorlog import failing_on_errors


# the chat rules (tests/behaviour), with every update coming through the webhook -------------
@pytest.fixture
async def h(service: QuizService, clock: FakeClock) -> AsyncIterator[Harness]:
    with failing_on_errors("telegram", "bot", "aiohttp"):
        async with telegram_harness(service, clock, webhook=True) as harness:
            yield harness
            fake = harness.fake
            assert fake.deliveries and not fake.calls_of("getUpdates", ok_only=False)


globals().update({name: getattr(test_rules, name) for name in dir(test_rules)
                  if name.startswith("test_")})
