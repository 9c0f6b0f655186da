"""A question whose pack gives its explanation a picture shows it when the question closes:
the closing edit adds an embed whose image is the picture, attached with its alt text in the
question's language, under the result (whose Answer field is the explanation's words); a
card stays beside it. The real discord.py against the fake REST API."""

from __future__ import annotations

import asyncio
import io
import random
from pathlib import Path

import pytest
from PIL import Image

from bot.adapters.discord import DiscordAdapter
from bot.content import Catalog, load_catalog
from bot.core.ports import Storage
from bot.core.service import QuizService
from bot.reports.cards import PngCards
from tests.clock import FakeClock
from tests.discord_e2e.helpers import post_quiz
from tests.fakes.discord_api import FakeDiscord, User

PACK = """\
id: explained
title: {en: Explained}
questions:
  - id: e-one
    prompt: {en: Which stage holds the most micro-batches?}
    options:
      - {en: The first, correct: true}
      - {en: The last}
    explanation: {en: The first stage runs p forwards before its first backward.}
    explanation_image: why.png
    explanation_image_alt: {en: Four rows of blocks; the first row starts with four forwards.}
"""
CARD = """\
  - id: e-two
    prompt: {en: What does this sum give?}
    formula: 'g = \\\\sum_i g_i'
    options:
      - {en: The gradient, correct: true}
      - {en: The loss}
    explanation: {en: The accumulated gradient.}
    explanation_image: why.png
    explanation_image_alt: {en: Two bars added into one.}
"""
ALT = "Four rows of blocks; the first row starts with four forwards."


@pytest.fixture
def picture() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 32), "#a5d6a7").save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def sample_catalog(tmp_path: Path, picture: bytes) -> Catalog:
    for name, text in (("explained", PACK), ("carded", PACK.replace(
            "id: explained", "id: carded").split("  - id: e-one")[0] + CARD)):
        folder = tmp_path / "packs"
        folder.mkdir(exist_ok=True)
        (folder / "why.png").write_bytes(picture)
        (folder / f"{name}.yaml").write_text(text, "utf-8")
    return load_catalog(tmp_path / "packs")


@pytest.fixture
def service(sample_catalog: Catalog, storage: Storage, clock: FakeClock,
            tmp_path: Path) -> QuizService:
    return QuizService(sample_catalog, storage, clock, random.Random(7),
                       cards=PngCards(tmp_path / "cache"))


async def test_the_closed_question_shows_the_picture_with_its_alt_text(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, picture: bytes,
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="explained")
    assert reply.id not in fake.files  # not while it is open: it would give the answer away
    summary = await service.questions.close(q.post_id)
    assert summary is not None
    await bot.close_question(summary)
    message = fake.messages[reply.id]
    result, explained = message["embeds"]
    assert result["title"].startswith("⏱") and "image" not in result
    assert "The first stage runs p forwards" in result["fields"][0]["value"]
    [attachment] = message["attachments"]
    assert explained["image"]["url"] == f"attachment://{attachment['filename']}"
    assert attachment["filename"] == "explanation.png" and attachment["description"] == ALT
    assert dict(fake.files[reply.id]) == {"explanation.png": picture}


async def test_a_card_stays_beside_the_picture(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, picture: bytes,
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="carded")
    [(card, drawn)] = fake.files[reply.id]
    summary = await service.questions.close(q.post_id)
    assert summary is not None
    await bot.close_question(summary)
    message = fake.messages[reply.id]
    assert [e["image"]["url"] for e in message["embeds"]] == [
        f"attachment://{card}", "attachment://explanation.png"]
    assert dict(fake.files[reply.id]) == {card: drawn, "explanation.png": picture}
    alts = {a["filename"]: a["description"] for a in message["attachments"]}
    assert alts["explanation.png"] == "Two bars added into one."


async def test_a_picture_gone_since_the_pack_loaded_leaves_the_result(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User,
    sample_catalog: Catalog,
) -> None:
    quiz = sample_catalog.quizzes["explained"]
    path = quiz.explanation_image_path(quiz.questions[0], "en")
    assert path is not None
    reply, q = await post_quiz(fake, service, alice, quiz="explained")
    await asyncio.to_thread(Path(path).unlink)
    summary = await service.questions.close(q.post_id)
    assert summary is not None
    await bot.close_question(summary)
    assert len(fake.messages[reply.id]["embeds"]) == 1 and reply.id not in fake.files
