"""End-to-end harness: the real python-telegram-bot, our adapter, the fake Bot API server, and
the core's Scheduler (time moves only through the FakeClock and `tick()`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from bot.adapters.telegram import TelegramAdapter
from bot.core.scheduler import Scheduler, Tick
from bot.core.service import DEFAULT_QUESTION_TIME, QuizService
from bot.settings import Settings
from tests.errorlog import ErrorLog, failing_on_errors
from tests.fakes.telegram_api import Call, FakeTelegramAPI

GROUP_ID = -1001234567890
OTHER_GROUP_ID = -1009876543210
CHANNEL_ID = -1005555555555
# seconds for the bot to fetch and handle what was sent: only reached when something is broken
# (a first card drawn cold, on 2 cores shared by 4 test workers, takes seconds)
SETTLE_WITHIN = 15.0
QUESTION_SECONDS = int(DEFAULT_QUESTION_TIME.total_seconds())  # the service fixture's


@pytest.fixture(autouse=True)
def error_log() -> Iterator[ErrorLog]:
    with failing_on_errors("telegram", "bot") as handler:
        yield handler


class Harness:
    """One bot process against the fake; restart() is a new adapter on the same database."""

    def __init__(self, fake: FakeTelegramAPI, service: QuizService, settings: Settings) -> None:
        self.fake = fake
        self.service = service
        self.settings = settings
        self.adapter: TelegramAdapter | None = None
        self.scheduler = Scheduler(service)

    async def start(self) -> None:
        self.adapter = TelegramAdapter(self.service, self.settings)
        await self.adapter.start()
        self.scheduler = Scheduler(self.service)  # a new process has a new one

    async def tick(self) -> Tick:
        """One round of the core's scheduler (daily posts, due closes, pending summaries),
        then every update it caused handled."""
        done = await self.scheduler.tick()
        await self.settle()
        return done

    async def stop(self) -> None:
        if self.adapter is not None:
            await self.adapter.stop()
            self.adapter = None

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    async def settle(self) -> None:
        """Wait until every pushed update was fetched and fully handled."""
        assert self.adapter is not None
        await self.fake.wait_all_confirmed(SETTLE_WITHIN)
        await asyncio.wait_for(self.adapter.idle(), SETTLE_WITHIN)

    async def send(self, update_id: int) -> None:
        await self.fake.wait_confirmed(update_id, SETTLE_WITHIN)
        await self.settle()

    # shortcuts ---------------------------------------------------------------------------
    async def command(
        self, chat: dict[str, Any], user: dict[str, Any] | None, text: str, **kwargs: Any
    ) -> None:
        await self.send(self.fake.command(chat, user, text, **kwargs))

    async def answer(self, poll: Call, user: dict[str, Any], option: int) -> None:
        await self.send(self.fake.answer_poll(poll.result["poll"]["id"], user, [option]))

    async def press(self, message: dict[str, Any], user: dict[str, Any], data: str) -> Call:
        """Press a button; returns the answerCallbackQuery call for this press."""
        before = len(self.fake.calls_of("answerCallbackQuery"))
        await self.send(self.fake.press(message, user, data))
        calls = await self.fake.wait_for("answerCallbackQuery", before + 1)
        return calls[before]

    async def post_of(self, message: dict[str, Any]) -> int:
        post_id = await self.service.questions.post_id_for(
            f"tg-msg:{message['chat']['id']}:{message['message_id']}"
        )
        assert post_id is not None, "the message is not bound to a post"
        return post_id

    def texts(self, chat: dict[str, Any]) -> list[str]:
        return self.fake.sent_texts(chat["id"])


@pytest.fixture
async def fake_tg() -> AsyncIterator[FakeTelegramAPI]:
    fake = FakeTelegramAPI()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
def tg_settings(fake_tg: FakeTelegramAPI) -> Settings:
    return Settings(
        _env_file=None,
        telegram_bot_token=fake_tg.token,
        telegram_api_base_url=fake_tg.base_url,
    )


@pytest.fixture
async def tg(
    fake_tg: FakeTelegramAPI, service: QuizService, tg_settings: Settings
) -> AsyncIterator[Harness]:
    harness = Harness(fake_tg, service, tg_settings)
    await harness.start()
    yield harness
    await harness.stop()


# people and chats ------------------------------------------------------------------------
@pytest.fixture
def alice(fake_tg: FakeTelegramAPI) -> dict[str, Any]:
    return fake_tg.user(1001, "Alice", "Smith", language_code="en")


@pytest.fixture
def bob(fake_tg: FakeTelegramAPI) -> dict[str, Any]:
    return fake_tg.user(1002, "Bob")


@pytest.fixture
def group(fake_tg: FakeTelegramAPI) -> dict[str, Any]:
    return fake_tg.group(GROUP_ID, "Study Group")


@pytest.fixture
def other_group(fake_tg: FakeTelegramAPI) -> dict[str, Any]:
    return fake_tg.group(OTHER_GROUP_ID, "Night Owls")


@pytest.fixture
def channel(fake_tg: FakeTelegramAPI) -> dict[str, Any]:
    return fake_tg.channel(CHANNEL_ID, "Daily ML")


@pytest.fixture
def alice_dm(fake_tg: FakeTelegramAPI, alice: dict[str, Any]) -> dict[str, Any]:
    return fake_tg.private_chat(alice)

