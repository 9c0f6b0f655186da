"""Whether an answer waits for "How sure are you?" (bot/core/confidence_ask.py), in the core
with no platform: the chat's setting, the post, the kind and the response, the person's
earlier answer; the setting remembered, a change here seen at once and one made elsewhere
within SETTING_SECONDS of the fake clock."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

import pytest

from bot.content import Catalog, load_catalog
from bot.core.confidence_ask import SETTING_SECONDS, SETTINGS_KEPT
from bot.core.models import Chat, Confidence, Ordered, Person, Picks, ShownQuestion, Typed
from bot.core.ports import ChatSettingsRecord, Storage
from bot.core.service import QuizService
from tests.clock import FakeClock

pytestmark = pytest.mark.memory_store

KINDS = Path(__file__).parent / "data" / "kinds"
GROUP = Chat("tg:-100", "Study group")
DM = Chat("tg:1", "Ada")
ADA = Person("tg:1", "Ada")
BO = Person("tg:2", "Bo")


@pytest.fixture
def kinds() -> Catalog:
    return load_catalog(KINDS)


@pytest.fixture
def service(kinds: Catalog, storage: Storage, clock: FakeClock) -> QuizService:
    return QuizService(kinds, storage, clock, random.Random(7))


async def confidence(service: QuizService, chat: Chat, on: bool) -> None:
    await service.chat_settings.change(chat, allowed=True, confidence=on)


async def post(service: QuizService, question_id: str, chat: Chat = GROUP, *,
               kind: str = "quiz", owner: Person | None = None) -> ShownQuestion:
    return await service.questions.post(chat, "kinds", question_id, "en", kind=kind,
                                        owner=owner, open_for=timedelta(minutes=5))


class Reads:
    """Counts the reads of chat settings the service makes."""

    def __init__(self, storage: Storage) -> None:
        self.count = 0
        read = storage.get_chat_settings

        async def counted(chat_key: str) -> ChatSettingsRecord | None:
            self.count += 1
            return await read(chat_key)

        storage.get_chat_settings = counted  # type: ignore[method-assign]


async def test_off_by_default_and_asked_once_on(service: QuizService) -> None:
    q = await post(service, "k-choice")
    assert not await service.confidence.asks(q.post_id, ADA, 0)
    await confidence(service, GROUP, True)
    assert await service.confidence.asks(q.post_id, ADA, 0)
    assert await service.confidence.asks(q.post_id, ADA, 0, chat_key=GROUP.key)
    await confidence(service, GROUP, False)
    assert not await service.confidence.asks(q.post_id, ADA, 0)


async def test_the_first_answer_is_final_so_no_second_ask(service: QuizService) -> None:
    await confidence(service, GROUP, True)
    q = await post(service, "k-choice")
    result = await service.answer(q.post_id, ADA, 1, confidence=Confidence.SURE)
    assert result.accepted
    assert not await service.confidence.asks(q.post_id, ADA, 0)
    assert await service.confidence.asks(q.post_id, BO, 0)  # someone else's first answer


async def test_a_closed_question_does_not_ask(service: QuizService, clock: FakeClock) -> None:
    await confidence(service, GROUP, True)
    closed = await post(service, "k-choice")
    await service.questions.close(closed.post_id)
    assert not await service.confidence.asks(closed.post_id, ADA, 0)
    due = await post(service, "k-tf")
    clock.advance(minutes=5)  # its time is up, before the scheduler closed it
    assert not await service.confidence.asks(due.post_id, ADA, 0)
    assert not await service.confidence.asks(10_000, ADA, 0)  # no such post


async def test_live_sessions_peer_rounds_and_someone_elses_question_do_not_ask(
    service: QuizService,
) -> None:
    await confidence(service, GROUP, True)
    await confidence(service, DM, True)
    for kind in ("live", "peer"):
        q = await post(service, "k-choice", kind=kind)
        assert not await service.confidence.asks(q.post_id, ADA, 0)
    mine = await post(service, "k-choice", DM, owner=ADA)
    assert await service.confidence.asks(mine.post_id, ADA, 0)
    assert not await service.confidence.asks(mine.post_id, BO, 0)


async def test_only_an_answer_a_tap_can_carry_and_the_question_offers(
    service: QuizService,
) -> None:
    await confidence(service, GROUP, True)
    choice, multi, order = (await post(service, "k-choice"), await post(service, "k-multi"),
                            await post(service, "k-order"))
    num, text = await post(service, "k-num"), await post(service, "k-text")
    asks = service.confidence.asks
    assert await asks(choice.post_id, ADA, len(choice.options) - 1)
    assert not await asks(choice.post_id, ADA, len(choice.options))  # forged: refused at once
    assert not await asks(choice.post_id, ADA, Picks(frozenset({0})))  # a multi's on a choice
    assert await asks(multi.post_id, ADA, Picks(frozenset({0, 1})))
    assert not await asks(multi.post_id, ADA, Picks(frozenset({0, 99})))
    assert await asks(order.post_id, ADA, Ordered(tuple(range(len(order.options)))))
    assert not await asks(order.post_id, ADA, Ordered((0, 0)))
    # a typed answer is sent whole: only the form it is typed in can carry the question
    assert not await asks(num.post_id, ADA, Typed("0.4"))
    assert not await asks(num.post_id, ADA, Typed("0.4"), in_form=True)
    assert await asks(num.post_id, ADA, in_form=True)
    assert await asks(text.post_id, ADA, in_form=True)
    assert not await asks(text.post_id, ADA)
    assert not await asks(choice.post_id, ADA, in_form=True)  # an option takes the tap
    await service.answer(text.post_id, ADA, Typed("Punargonona"))
    assert not await asks(text.post_id, ADA, in_form=True)


async def test_the_setting_is_remembered_and_a_change_here_seen_at_once(
    service: QuizService, storage: Storage,
) -> None:
    q = await post(service, "k-choice")
    reads = Reads(storage)
    for _ in range(5):
        assert not await service.confidence.asks(q.post_id, ADA, 0, chat_key=GROUP.key)
    assert reads.count == 1
    await confidence(service, GROUP, True)  # /settings in this process
    before = reads.count
    assert await service.confidence.asks(q.post_id, ADA, 0, chat_key=GROUP.key)
    assert reads.count == before  # told by the change, not read again


async def test_a_change_in_another_process_is_seen_within_setting_seconds(
    service: QuizService, storage: Storage, clock: FakeClock,
) -> None:
    q = await post(service, "k-choice")
    assert not await service.confidence.chat_asks(GROUP.key)
    # another process on the same database: the store changed, this process not told
    await storage.set_chat_settings(ChatSettingsRecord(GROUP.key, confidence=True), clock.now())
    clock.advance(SETTING_SECONDS - 1)
    assert not await service.confidence.asks(q.post_id, ADA, 0)
    clock.advance(1)
    assert await service.confidence.asks(q.post_id, ADA, 0)


async def test_a_clock_gone_back_reads_the_setting_again(
    service: QuizService, storage: Storage, clock: FakeClock,
) -> None:
    assert not await service.confidence.chat_asks(GROUP.key)
    await storage.set_chat_settings(ChatSettingsRecord(GROUP.key, confidence=True), clock.now())
    clock.advance(-60)
    assert await service.confidence.chat_asks(GROUP.key)


async def test_the_remembered_chats_are_bounded(service: QuizService, storage: Storage) -> None:
    reads = Reads(storage)
    for n in range(SETTINGS_KEPT + 1):
        await service.confidence.chat_asks(f"tg:-{n}")
    assert reads.count == SETTINGS_KEPT + 1
    await service.confidence.chat_asks(f"tg:-{SETTINGS_KEPT}")  # the newest: still kept
    assert reads.count == SETTINGS_KEPT + 1
    await service.confidence.chat_asks("tg:-0")  # the oldest: dropped, read again
    assert reads.count == SETTINGS_KEPT + 2
