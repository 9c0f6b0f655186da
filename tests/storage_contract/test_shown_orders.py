"""ItemStore.shown_orders on every store: each question's option order at its latest post in
one chat, what /analysis letters the options by (bot/core/chat_analysis.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.storage_contract.backends import Backend

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


async def test_the_latest_post_of_each_question_in_the_chat_gives_its_order(
    backend: Backend,
) -> None:
    async with backend.opened() as store:
        for chat in ("tg:-1", "tg:-2"):
            await store.upsert_chat(chat, chat)
        posts = [
            ("tg:-1", "sample", "s-one", (2, 0, 1)),
            ("tg:-1", "sample", "s-one", (1, 2, 0)),  # shown again, shuffled anew: this one
            ("tg:-1", "sample", "s-two", (0, 1, 2)),
            ("tg:-1", "other", "o-one", (1, 0)),
            ("tg:-2", "sample", "s-one", (0, 2, 1)),  # another chat
        ]
        for minute, (chat, quiz, question, order) in enumerate(posts):
            await store.create_post(chat, quiz, question, order, "en",
                                    NOW + timedelta(minutes=minute))
        assert await store.shown_orders("tg:-1") == {
            ("sample", "s-one"): (1, 2, 0),
            ("sample", "s-two"): (0, 1, 2),
            ("other", "o-one"): (1, 0),
        }
        assert await store.shown_orders("tg:-1", "sample") == {
            ("sample", "s-one"): (1, 2, 0),
            ("sample", "s-two"): (0, 1, 2),
        }
        assert await store.shown_orders("tg:-2", "other") == {}
        assert await store.shown_orders("tg:-3") == {}
