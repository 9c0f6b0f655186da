"""Issue 36 on Discord: the token's global limit (50 requests a second) paced ahead of time
(bot/adapters/discord/rate.py), which discord.py does not do (it follows each route's
bucket and waits out a global 429). The daily question due at once in many channels goes
out through the real discord.py with no more than 50 bot requests in any second."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.models import Chat
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.discord_e2e.conftest import StartBot
from tests.fakes.discord_api import FakeDiscord

AT = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)
CHANNELS = 120
JITTER = 0.1  # seconds two requests paced 1/50 s apart may arrive closer


async def test_the_daily_question_in_many_channels_keeps_to_the_global_rate(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, scheduler: Scheduler,
    clock: FakeClock,
) -> None:
    ids = [fake.add_channel(f"room-{i}") for i in range(CHANNELS)]
    await start_bot()
    for channel_id in ids:
        await service.daily.set(Chat(f"dc:{channel_id}"), "12:30", "UTC", allowed=True)
    started = len(fake.requests)
    clock.set(AT)
    assert (await scheduler.tick()).posted == CHANNELS

    sent = [r for r in fake.requests[started:]
            if not r.path.startswith(("/interactions/", "/webhooks/"))]
    posts = {r.path for r in sent if r.method == "POST" and r.path.endswith("/messages")}
    assert posts == {f"/channels/{c}/messages" for c in ids}
    times = sorted(r.at for r in sent)
    crowded = [times[i + 50] - times[i] for i in range(len(times) - 50)
               if times[i + 50] - times[i] < 1.0 - JITTER]
    assert not crowded, f"{len(crowded)} windows of 51 requests within a second"
