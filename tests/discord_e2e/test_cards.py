"""A question with code, a formula or an image shows its card as the embed's image, attached
to the question message; the live count's edits and the closing edit keep it (a closing
chart is attached beside it). The real discord.py against the fake REST API."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from bot.adapters.discord import DiscordAdapter
from bot.content import Catalog, load_catalog
from bot.core.ports import Storage
from bot.core.service import QuizService
from bot.reports import summary_png
from bot.reports.card import WIDTH
from bot.reports.cards import PngCards
from tests.clock import FakeClock
from tests.discord_e2e.helpers import click, post_quiz
from tests.fakes.discord_api import FakeDiscord, User
from tests.fakes.telegram_api import png_size

CARDS = Path(__file__).parent.parent / "data" / "cards"


@pytest.fixture
def sample_catalog() -> Catalog:
    return load_catalog(CARDS)


@pytest.fixture
def cards(tmp_path: Path) -> PngCards:
    return PngCards(tmp_path / "cache")


@pytest.fixture
def service(sample_catalog: Catalog, storage: Storage, clock: FakeClock,
            cards: PngCards) -> QuizService:
    return QuizService(sample_catalog, storage, clock, random.Random(7), cards=cards)


async def test_the_card_is_the_embeds_attached_image(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, cards: PngCards,
    alice: User, bob: User,
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="cards")
    message = fake.messages[reply.id]
    [(name, data)] = fake.files[reply.id]
    assert message["embeds"][0]["image"]["url"] == f"attachment://{name}"
    assert png_size(data)[0] == WIDTH
    assert cards.drawn == 1
    await click(fake, reply, q.correct, bob)
    await bot.publisher._edit_count(q.post_id, q.chat_key, reply.id)
    assert fake.messages[reply.id]["embeds"][0]["image"]["url"] == f"attachment://{name}"
    # the same card again: from the card cache, not drawn again
    again, _ = await post_quiz(fake, service, alice, quiz="cards", permissions=1 << 5)
    assert again.id != reply.id and len(fake.files[again.id]) == 1
    assert cards.drawn == 1


async def test_a_plain_question_has_no_image(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply, _ = await post_quiz(fake, service, alice, quiz="plain")
    assert reply.id not in fake.files
    assert "image" not in fake.messages[reply.id]["embeds"][0]


async def test_the_closing_edit_keeps_the_card(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="cards")
    [(name, _)] = fake.files[reply.id]
    summary = await service.questions.close(q.post_id)
    assert summary is not None
    await bot.close_question(summary)
    message = fake.messages[reply.id]
    assert message["embeds"][0]["title"].startswith("⏱")  # the closed embed
    assert message["embeds"][0]["image"]["url"] == f"attachment://{name}"
    assert [a["filename"] for a in message["attachments"]] == [name]


async def test_a_closing_chart_keeps_the_card_beside_it(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="cards")
    [(card_name, card)] = fake.files[reply.id]
    summary = await service.questions.close(q.post_id)
    assert summary is not None
    await bot.close_question(replace(summary, chart=summary_png(summary)))
    files = dict(fake.files[reply.id])
    assert files[card_name] == card and len(files) == 2
    [chart_name] = set(files) - {card_name}
    assert fake.messages[reply.id]["embeds"][0]["image"]["url"] == f"attachment://{chart_name}"


async def test_the_card_says_in_text_what_it_shows(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    """The code as a code block and the formula in the embed; the attachment's alt text
    (Discord's description) has the code and the formula too, as sent and after closing."""
    reply, q = await post_quiz(fake, service, alice, quiz="cards")
    description = fake.messages[reply.id]["embeds"][0]["description"]
    assert "```python\nfor step, batch in enumerate(loader):\n" in description
    assert "`g = \\sum_{i=1}^{k} \\nabla L_i`" in description
    assert description.index("```python") < description.index("**A)**")  # before the options
    [attachment] = fake.messages[reply.id]["attachments"]
    assert "optimizer.zero_grad()" in attachment["description"]
    assert "g = \\sum_{i=1}^{k} \\nabla L_i" in attachment["description"]
    summary = await service.questions.close(q.post_id)
    assert summary is not None
    await bot.close_question(summary)
    closed = fake.messages[reply.id]
    assert "```python\n" in closed["embeds"][0]["description"]
    assert "optimizer.zero_grad()" in closed["attachments"][0]["description"]
