"""A text for every picture: a question's card photo carries what it shows as its caption
(the picture's description, the formula, the code in a pre entity) within 1,024 UTF-16 units;
and the fake refuses what the real server refuses (captions, entities, a poll's correct ids,
description and open_period). The real PTB against the fake Bot API."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from telegram import Bot, MessageEntity
from telegram.error import BadRequest

from bot.adapters.telegram.card_caption import card_caption
from bot.content import Catalog, load_catalog
from bot.content.limits import TG_CAPTION, tg_len
from bot.core.models import ShownQuestion
from bot.core.ports import Storage
from bot.core.service import QuizService
from bot.i18n import translator
from bot.reports.cards import PngCards
from tests.clock import FakeClock
from tests.fakes.telegram_api import FakeTelegramAPI
from tests.telegram_e2e.conftest import Harness

CARDS = Path(__file__).parent.parent / "data" / "cards"
CODE = "for step, batch in enumerate(loader):\n    loss = model(batch)\n"


@pytest.fixture
def service(storage: Storage, clock: FakeClock, tmp_path: Path) -> QuizService:
    catalog: Catalog = load_catalog(CARDS)
    return QuizService(catalog, storage, clock, random.Random(7),
                       cards=PngCards(tmp_path / "cache"))


def shown(**fields: Any) -> ShownQuestion:
    base = ShownQuestion(
        post_id=1, chat_key="tg:-1", quiz_id="q", quiz_title="Q", question_id="q-1",
        prompt="What is wrong?", options=("a", "b"), correct=0, explanation="", details=None,
        locale="en", number=None, total=None,
    )
    return replace(base, **fields)


def pre_text(caption: str, entities: list[MessageEntity]) -> str:
    """The text an entity covers, by UTF-16 offsets as Telegram counts them."""
    [entity] = entities
    units = caption.encode("utf-16-le")
    return units[2 * entity.offset: 2 * (entity.offset + entity.length)].decode("utf-16-le")


async def test_the_card_photo_says_what_it_shows(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    await tg.command(group, alice, "/quiz cards")
    [photo] = tg.fake.calls_of("sendPhoto")
    caption = photo.result["caption"]
    assert caption.startswith("Picture: Four blue squares in a row, one per pipeline stage.\n"
                              "Formula: g = \\sum_{i=1}^{k} \\nabla L_i\nCode (python):\n")
    [entity] = photo.result["caption_entities"]
    assert (entity["type"], entity["language"]) == ("pre", "python")
    assert caption[entity["offset"]:entity["offset"] + entity["length"]] == (
        "for step, batch in enumerate(loader):\n    loss = model(batch)\n    loss.backward()\n"
        "    if (step + 1) % accum == 0:\n        optimizer.step()\n"
        "        optimizer.zero_grad()")


async def test_the_caption_is_in_the_chats_language(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    tg.fake.set_admins(group["id"], alice["id"])
    await tg.command(group, alice, "/lang chat bn")
    await tg.command(group, alice, "/quiz cards")
    caption = tg.fake.calls_of("sendPhoto")[-1].result["caption"]
    assert caption.startswith("ছবি: এক সারিতে চারটি নীল বর্গ")
    assert "Picture" not in caption


async def test_a_refused_card_leaves_its_text_in_the_polls_description(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    tg.fake.fail_next("sendPhoto", status=400, description="Bad Request: IMAGE_PROCESS_FAILED")
    await tg.command(group, alice, "/quiz cards")
    [poll] = tg.fake.calls_of("sendPoll")
    description = poll.params["description"]
    assert description.startswith("Picture: Four blue squares")
    [entity] = poll.params["description_entities"]
    assert entity["type"] == "pre"
    assert description[entity["offset"]:].startswith("for step, batch in enumerate(loader):")


async def test_a_refused_card_leaves_its_text_in_a_buttons_question(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    tg.fake.set_admins(group["id"], alice["id"])
    await tg.command(group, alice, "/settings mode buttons")
    tg.fake.fail_next("sendPhoto", status=400, description="Bad Request: IMAGE_PROCESS_FAILED")
    await tg.command(group, alice, "/quiz cards")
    [sent] = [c for c in tg.fake.calls_of("sendMessage") if "reply_markup" in c.params]
    text = sent.params["text"]
    [entity] = sent.params["entities"]
    assert "\n\nPicture: Four blue squares" in text
    units = text.encode("utf-16-le")[2 * entity["offset"]:2 * (entity["offset"]
                                                                + entity["length"])]
    assert units.decode("utf-16-le").endswith("optimizer.zero_grad()")


async def test_a_card_sent_keeps_its_text_off_the_poll(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any]
) -> None:
    await tg.command(group, alice, "/quiz cards")
    [poll] = tg.fake.calls_of("sendPoll")
    assert "description" not in poll.params


def test_long_code_is_cut_at_a_line_with_a_pointer_to_the_picture() -> None:
    code = "".join(f"line_{i} = {i} * 2  # 😀 counted twice\n" for i in range(200))
    caption, entities = card_caption(shown(code=code, code_language="python"),
                                     translator("en"))
    assert tg_len(caption) <= TG_CAPTION
    assert caption.endswith("\n… (the picture shows all of the code)")
    inside = pre_text(caption, entities)
    assert code.startswith(inside + "\n")  # whole lines, none cut in the middle
    assert inside.count("\n") > 10


def test_no_card_text_no_caption() -> None:
    assert card_caption(shown(), translator("en")) == ("", [])
    text, entities = card_caption(shown(formula="E = mc^2"), translator("hi"))
    assert (text, entities) == ("सूत्र: E = mc^2", [])


@given(st.text(max_size=3000), st.text(max_size=1500), st.text(max_size=300),
       st.sampled_from(["text", "python", "c++"]))
def test_the_caption_always_fits_and_its_entity_is_inside(code, alt, formula, language):
    q = shown(code=code or None, image="x.png", image_alt=alt or None,
              formula=formula or None, code_language=language)
    caption, entities = card_caption(q, translator("bn"))
    assert tg_len(caption) <= TG_CAPTION
    for entity in entities:
        assert entity.offset >= 0 and entity.length > 0
        assert entity.offset + entity.length <= tg_len(caption)


# the fake refuses what Telegram refuses ------------------------------------------------------

@pytest.fixture
async def bot(fake_tg: FakeTelegramAPI) -> Any:
    async with Bot(fake_tg.token, base_url=fake_tg.base_url) as bot:
        yield bot


@pytest.fixture
def chat(fake_tg: FakeTelegramAPI) -> int:
    return int(fake_tg.group(-100_777, "Limits")["id"])


QUIZ = {"type": "quiz", "is_anonymous": False}


@pytest.mark.parametrize(("fields", "error"), [
    ({"correct_option_ids": [2, 0], "allows_multiple_answers": True}, "increasing"),
    ({"correct_option_ids": [0, 0], "allows_multiple_answers": True}, "increasing"),
    ({"correct_option_ids": [0, 2]}, "allows_multiple_answers"),
    ({"correct_option_ids": [3]}, "wrong correct option ids"),
    ({"correct_option_ids": [0], "description": "d" * 1025}, "description is too long"),
    ({"correct_option_ids": [0], "open_period": 4}, "invalid open_period"),
    ({"correct_option_ids": [0], "open_period": 2_628_001}, "invalid open_period"),
])
async def test_a_bad_poll_is_refused(
    bot: Any, chat: int, fields: dict[str, Any], error: str
) -> None:
    with pytest.raises(BadRequest, match=f"(?i){error}"):
        await bot.send_poll(chat, "Which?", ["a", "b", "c"], **QUIZ, **fields)


async def test_a_poll_at_the_limits_is_accepted(
    bot: Any, chat: int, fake_tg: FakeTelegramAPI
) -> None:
    sent = await bot.send_poll(chat, "Which?", ["a", "b", "c"], **QUIZ,
                               correct_option_ids=[0, 2], allows_multiple_answers=True,
                               description="😀" * 512, open_period=2_628_000)
    assert sent.poll.correct_option_ids == (0, 2)
    assert fake_tg.calls_of("sendPoll")[-1].result["poll"]["open_period"] == 2_628_000


async def test_a_bad_caption_is_refused(bot: Any, chat: int) -> None:
    png = (CARDS / "stages.png").read_bytes()
    with pytest.raises(BadRequest, match="caption is too long"):
        await bot.send_photo(chat, png, caption="😀" * 513)  # 1,026 UTF-16 units
    with pytest.raises(BadRequest, match="entity beyond the end"):
        await bot.send_photo(chat, png, caption="abc", caption_entities=[
            MessageEntity(MessageEntity.PRE, 1, 3)])
    sent = await bot.send_photo(chat, png, caption="😀" * 512)
    assert sent.caption == "😀" * 512
