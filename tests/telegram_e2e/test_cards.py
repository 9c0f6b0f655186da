"""A question with code, a formula or an image goes out with its card: a photo just before
the poll, uploaded once and re-sent by its file_id after that, also by a new process. The
real PTB against the fake Bot API."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from bot.content import Catalog, load_catalog
from bot.core.ports import Storage
from bot.core.service import QuizService
from bot.reports.card import WIDTH
from bot.reports.cards import PngCards
from tests.clock import FakeClock
from tests.fakes.telegram_api import png_size
from tests.telegram_e2e.conftest import QUESTION_SECONDS, Harness

CARDS = Path(__file__).parent.parent / "data" / "cards"


@pytest.fixture
def sample_catalog() -> Catalog:
    return load_catalog(CARDS)


@pytest.fixture
def service(sample_catalog: Catalog, storage: Storage, clock: FakeClock,
            tmp_path: Path) -> QuizService:
    return QuizService(sample_catalog, storage, clock, random.Random(7),
                       cards=PngCards(tmp_path / "cache"))


async def test_the_card_is_sent_just_before_the_poll(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    await tg.command(group, alice, "/quiz cards")
    sent = [c for c in tg.fake.calls if c.method in ("sendPhoto", "sendPoll")]
    assert [c.method for c in sent] == ["sendPhoto", "sendPoll"]
    photo, poll = sent
    assert photo.params["chat_id"] == poll.params["chat_id"] == group["id"]
    width, height = png_size(photo.params["photo"])
    assert width == WIDTH and height > 300  # prompt, code, formula, image, options


async def test_a_plain_question_has_no_card(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    await tg.command(group, alice, "/quiz plain")
    assert tg.fake.calls_of("sendPhoto") == []
    assert len(tg.fake.calls_of("sendPoll")) == 1


async def test_the_second_post_and_a_new_process_resend_the_file_id(
    tg: Harness, service: QuizService, sample_catalog: Catalog, storage: Storage,
    clock: FakeClock, tmp_path: Path, group: dict[str, Any], other_group: dict[str, Any],
    alice: dict[str, Any], alice_dm: dict[str, Any],
) -> None:
    await tg.command(group, alice, "/quiz cards")
    await tg.command(other_group, alice, "/quiz cards")
    first, second = tg.fake.calls_of("sendPhoto")
    file_id = first.result["photo"][-1]["file_id"]
    assert isinstance(first.params["photo"], bytes)
    assert second.params["photo"] == file_id  # not uploaded again
    # a new process: a new service (nothing in memory) over the same database, and no
    # card files on disk: the file_id comes from the database, nothing is drawn
    await tg.stop()
    again = PngCards(tmp_path / "elsewhere")
    tg.service = QuizService(sample_catalog, storage, clock, random.Random(8), cards=again)
    await tg.start()
    await tg.command(alice_dm, alice, "/quiz cards")
    assert tg.fake.calls_of("sendPhoto")[-1].params["photo"] == file_id
    assert again.drawn == 0


async def test_a_file_id_telegram_forgot_is_uploaded_again(
    tg: Harness, service: QuizService, group: dict[str, Any], other_group: dict[str, Any],
    alice: dict[str, Any], alice_dm: dict[str, Any],
) -> None:
    await tg.command(group, alice, "/quiz cards")
    [first] = tg.fake.calls_of("sendPhoto")
    tg.fake.photos.clear()  # Telegram no longer knows it
    await tg.command(other_group, alice, "/quiz cards")
    photos = tg.fake.calls_of("sendPhoto")
    assert len(photos) == 2 and isinstance(photos[1].params["photo"], bytes)
    [key] = tg.fake.photos
    assert photos[1].result["photo"][-1]["file_id"] == key
    assert first.result["photo"][-1]["file_id"] != key
    await tg.command(alice_dm, alice, "/quiz cards")
    assert tg.fake.calls_of("sendPhoto")[-1].params["photo"] == key  # the new one kept


async def test_a_refused_card_leaves_the_question(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    tg.fake.fail_next("sendPhoto", status=400, description="Bad Request: IMAGE_PROCESS_FAILED")
    await tg.command(group, alice, "/quiz cards")
    assert tg.fake.calls_of("sendPhoto") == []
    assert len(tg.fake.calls_of("sendPoll")) == 1


async def test_the_card_is_deleted_when_its_poll_closes(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any], clock: FakeClock
) -> None:
    await tg.command(group, alice, "/quiz cards")
    [photo] = tg.fake.calls_of("sendPhoto")
    card = (group["id"], photo.result["message_id"])
    assert card in tg.fake.messages
    clock.advance(QUESTION_SECONDS + 1)
    assert (await tg.tick()).closed == 1
    [delete] = tg.fake.calls_of("deleteMessage")
    assert (delete.params["chat_id"], delete.params["message_id"]) == card
    assert card not in tg.fake.messages
    assert len(tg.fake.calls_of("stopPoll")) == 1
    for _ in range(2):  # later rounds of the scheduler delete nothing more
        clock.advance(60)
        await tg.tick()
    assert len(tg.fake.calls_of("deleteMessage", ok_only=False)) == 1


async def test_a_replaced_buttons_question_takes_its_card_along(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    tg.fake.set_admins(group["id"], alice["id"])  # an admin replaces the open question
    await tg.command(group, alice, "/quiz buttons cards")
    await tg.command(group, alice, "/quiz buttons cards")
    first, second = tg.fake.calls_of("sendPhoto")
    [delete] = tg.fake.calls_of("deleteMessage")
    assert delete.params["message_id"] == first.result["message_id"]
    [edit] = tg.fake.calls_of("editMessageReplyMarkup")  # the old buttons go too
    assert edit.params["message_id"] != first.result["message_id"]
    assert (group["id"], second.result["message_id"]) in tg.fake.messages  # the open one's


async def test_a_card_telegram_will_not_delete_leaves_the_summary(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any], clock: FakeClock
) -> None:
    await tg.command(group, alice, "/quiz cards")
    tg.fake.fail_next("deleteMessage", status=400,
                      description="Bad Request: message can't be deleted for everyone")
    clock.advance(QUESTION_SECONDS + 1)
    assert (await tg.tick()).closed == 1
    assert [t for t in tg.texts(group) if "Question closed" in t]
    assert len(tg.fake.calls_of("stopPoll")) == 1
