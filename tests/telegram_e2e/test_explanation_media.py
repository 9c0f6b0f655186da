"""A question whose pack gives its explanation a picture (`explanation_image`) sends it as
its quiz poll's explanation media (Bot API 10.0): uploaded with the first poll, then by the
file_id Telegram gave it; a file_id refused is uploaded again. The real PTB against the fake
Bot API, which refuses explanation media anywhere but a quiz."""

from __future__ import annotations

import asyncio
import io
import random
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from bot.content import Catalog, load_catalog
from bot.core.ports import Storage
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.telegram_e2e.conftest import Harness

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


@pytest.fixture
def picture(tmp_path: Path) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 32), "#90caf9").save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def sample_catalog(tmp_path: Path, picture: bytes) -> Catalog:
    folder = tmp_path / "packs"
    folder.mkdir()
    (folder / "why.png").write_bytes(picture)
    (folder / "explained.yaml").write_text(PACK, "utf-8")
    return load_catalog(folder)


@pytest.fixture
def service(sample_catalog: Catalog, storage: Storage, clock: FakeClock) -> QuizService:
    return QuizService(sample_catalog, storage, clock, random.Random(7))


def uploaded(params: dict[str, Any]) -> bytes | None:
    ref = params["explanation_media"]["media"]
    return params.get(ref.removeprefix("attach://")) if ref.startswith("attach://") else None


async def test_the_poll_carries_the_picture_with_its_explanation(
    tg: Harness, group: dict[str, Any], other_group: dict[str, Any], alice: dict[str, Any],
    picture: bytes,
) -> None:
    await tg.command(group, alice, "/quiz explained")
    (first,) = tg.fake.calls_of("sendPoll")
    assert first.params["type"] == "quiz" and first.params["explanation_media"]["type"] == "photo"
    assert uploaded(first.params) == picture  # the pack's file, as it is
    assert first.params["explanation"].startswith("The first stage runs p forwards")
    assert tg.fake.calls_of("sendPhoto") == []  # nothing beside the poll
    file_id = first.result["poll"]["explanation_media"]["photo"][-1]["file_id"]

    await tg.command(other_group, alice, "/quiz explained")
    second = tg.fake.calls_of("sendPoll")[-1]
    assert second.params["explanation_media"]["media"] == file_id  # not uploaded again
    assert tg.fake.explanation_photos == [picture, picture]


async def test_a_file_id_telegram_no_longer_knows_is_uploaded_again(
    tg: Harness, group: dict[str, Any], other_group: dict[str, Any], alice: dict[str, Any],
    picture: bytes,
) -> None:
    await tg.command(group, alice, "/quiz explained")
    tg.fake.photos.clear()  # Telegram forgot it
    await tg.command(other_group, alice, "/quiz explained")
    refused, again = tg.fake.calls_of("sendPoll", ok_only=False)[1:]
    assert refused.status == 400 and not uploaded(refused.params)
    assert again.ok and uploaded(again.params) == picture
    assert again.params["chat_id"] == other_group["id"]
    assert len(tg.texts(other_group)) == 0  # one poll, no error text in the chat


async def test_a_picture_gone_since_the_pack_loaded_leaves_the_explanation(
    tg: Harness, group: dict[str, Any], alice: dict[str, Any], sample_catalog: Catalog,
) -> None:
    quiz = sample_catalog.quizzes["explained"]
    path = quiz.explanation_image_path(quiz.questions[0], "en")
    assert path is not None
    await asyncio.to_thread(Path(path).unlink)
    await tg.command(group, alice, "/quiz explained")
    (poll,) = tg.fake.calls_of("sendPoll")
    assert "explanation_media" not in poll.params and poll.params["explanation"]
