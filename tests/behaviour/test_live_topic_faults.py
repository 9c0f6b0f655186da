"""A peer round whose discussion topic cannot be opened for a reason other than a refusal (the
Bot API down: 502, a timeout) discusses in the chat: the split is still said there, with no
topic named, and the revote follows. Telegram only: Discord's thread failures are one
exception type (HTTPException), already caught."""

from __future__ import annotations

import pytest

from tests.behaviour.harness import Harness
from tests.behaviour.telegram import TelegramHarness
from tests.behaviour.test_live import Room, start_peer, wrong


@pytest.mark.parametrize("fault", ["createForumTopic", "sendMessage-in-topic"])
async def test_a_topic_that_cannot_be_opened_leaves_the_discussion_in_the_chat(
        h: Harness, fault: str) -> None:
    if not isinstance(h, TelegramHarness):
        pytest.skip("Telegram's forum topics only")
    room = Room.of(h, 3)
    h.allow_threads(room.group)
    post_id, question = await start_peer(room)
    await room.answers(post_id, [question.correct, wrong(question), wrong(question)])
    before = len(h.live_texts(room.group))
    # 502 every time the bot asks (it retries a network error three times)
    if fault == "createForumTopic":
        h.fake.fail_next("createForumTopic", status=502, times=4)
    else:  # the topic opens, its prompt does not go: the first sendMessage after it
        h.fake.fail_next("sendMessage", status=502, times=4)
    h.clock.advance(61)
    await h.tick()
    split = [t for t in room.new_texts(before) if "voted" in t]
    assert len(split) == 1 and "3 voted" in split[0] and "Discuss for 2 min:" in split[0]
    h.clock.advance(121)
    await h.tick()
    assert len(h.live_questions(post_id)) == 2  # the revote came
