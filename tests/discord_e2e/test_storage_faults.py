"""A storage that cannot be used for a while (a read-only or full disk, a connection lost):
an interaction whose answer or command was not stored is answered with an honest error
(nothing was saved: click or send it again), never "recorded" and never a generic apology.
Discord does not send an interaction again, so asking the person to is right here."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.adapters.discord import DiscordAdapter
from bot.core.service import QuizService
from bot.storage import SqliteStorage
from tests.discord_e2e.helpers import click, post_quiz
from tests.fakes.discord_api import FakeDiscord, User
from tests.telegram_e2e.test_storage_faults import Fault, readonly_error

NOT_SAVED = "Your answer was not saved: I cannot save anything right now"
NOTHING_SAVED = "Nothing was saved: I cannot save anything right now"


async def test_a_click_not_stored_is_told_so_and_a_later_click_is_recorded(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, storage: SqliteStorage,
    alice: User, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    fault = Fault(lambda: readonly_error(tmp_path))
    monkeypatch.setattr(storage, "record_answer", fault.wrap(storage.record_answer))
    fault.on = True
    refused = await click(fake, reply, q.correct, alice)
    assert fault.failures == 1
    assert refused.ephemeral
    assert NOT_SAVED in refused.content and "Correct" not in refused.content
    assert await storage.answer_of(q.post_id, f"dc:{alice.id}") is None

    fault.on = False  # the storage is back: the same click counts
    again = await click(fake, reply, q.correct, alice)
    assert "Correct" in again.content
    stored = await storage.answer_of(q.post_id, f"dc:{alice.id}")
    assert stored is not None and stored.correct


async def test_a_command_not_stored_is_told_so(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, storage: SqliteStorage,
    alice: User, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    fault = Fault(lambda: readonly_error(tmp_path))
    monkeypatch.setattr(storage, "create_post", fault.wrap(storage.create_post))
    fault.on = True
    refused = await fake.reply(await fake.slash("quiz", {"quiz": "sample"}, user=alice))
    assert fault.failures == 1
    assert refused.ephemeral
    assert NOTHING_SAVED in refused.content
    assert not await storage.open_posts()
