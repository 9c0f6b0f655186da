"""Public questions: /quiz, clicks, the live count, closing, restarts, forged clicks."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.adapters.discord import DiscordAdapter
from bot.content import load_catalog
from bot.core.models import Chat
from bot.core.render import letter
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from bot.storage import SqliteStorage
from tests.clock import FakeClock
from tests.discord_e2e.conftest import StartBot
from tests.discord_e2e.helpers import bound_post, click, post_quiz, wrong
from tests.fakes.discord_api import (
    EPHEMERAL,
    MANAGE_GUILD,
    FakeDiscord,
    User,
    buttons_of,
    text_of,
)

SUCCESS, SECONDARY = 3, 2  # button styles


def disabled(message: dict[str, Any]) -> bool:
    return all(b.get("disabled") for b in buttons_of(message))


async def test_quiz_posts_an_embed_with_every_option_and_a_button_each(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    [embed] = reply.embeds
    assert "Sample Quiz" in embed["title"]
    assert q.prompt in embed["description"]
    for i, option in enumerate(q.options):
        assert f"**{letter(i)})** {option}" in embed["description"]
    assert [b["label"] for b in reply.buttons] == [letter(i) for i in range(len(q.options))]
    assert [b["custom_id"] for b in reply.buttons] == [
        f"qz:{q.post_id}:{i}" for i in range(len(q.options))
    ]
    assert "0 answers so far" in embed["footer"]["text"]
    assert embed["timestamp"].startswith("2026-03-01T12:10:00")  # closes after 600 s


async def test_a_click_gets_an_ephemeral_explanation_and_a_second_click_changes_nothing(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, storage: SqliteStorage,
    alice: User,
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    first = await click(fake, reply, q.correct, alice)
    assert first.flags & EPHEMERAL
    assert "Correct" in first.content
    assert q.explanation in first.content
    assert f"{letter(q.correct)}) {q.options[q.correct]}" in first.content

    second = await click(fake, reply, wrong(q), alice)
    assert second.ephemeral
    assert f"You already answered {letter(q.correct)})" in second.content

    stored = await storage.answer_of(q.post_id, f"dc:{alice.id}")
    assert stored is not None and stored.correct
    board = await fake.reply(await fake.slash("leaderboard", user=alice))
    assert board.ephemeral
    assert "1. Alice — 1/1 right" in board.text
    assert "#general" in board.text and "Quiz Guild" not in board.text
    # the organiser's pages and `quizbot chats` tell the servers' #general apart
    assert await storage.chat_title(f"dc:{fake.channel_id}") == "Quiz Guild #general"


async def test_the_reply_is_in_the_clickers_language(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    await fake.reply(await fake.slash("lang", {"code": "bn"}, user=bob))
    answer = await click(fake, reply, q.correct, bob)
    bengali = await service.questions.show(q.post_id, "bn")
    assert bengali is not None
    assert bengali.explanation in answer.content  # the sample pack's Bengali, else English
    english = await click(fake, reply, q.correct, alice)
    assert q.explanation in english.content


async def test_the_live_count_is_coalesced_into_few_edits(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply, _q = await post_quiz(fake, service, alice, quiz="sample")
    people = [User(800 + i, f"P{i}") for i in range(8)]
    clicks = [fake.click(reply.id, reply.buttons[i % 3]["custom_id"], user=p)
              for i, p in enumerate(people)]
    interactions = await asyncio.gather(*clicks)
    for interaction in interactions:
        assert (await fake.reply(interaction)).ephemeral
    await fake.until(lambda: "8 answers so far" in text_of(fake.messages[reply.id]), 3.0,
                     "the count to reach 8")
    await fake.until(lambda: bot.publisher.idle, 3.0, "no count edit pending")
    edits = fake.edits(reply.id)
    assert 1 <= len(edits) <= 2, "eight clicks, at most two edits"
    gaps = [b.at - a.at for a, b in itertools.pairwise(edits)]
    assert all(gap >= bot.publisher.live_interval * 0.9 for gap in gaps)


async def test_closing_edits_the_message_once_with_disabled_buttons(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, scheduler: Scheduler,
    clock: FakeClock, alice: User, bob: User,
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    await click(fake, reply, q.correct, alice)
    clock.advance(seconds=1.5)
    await click(fake, reply, wrong(q), bob)
    await fake.until(lambda: "2 answers so far" in text_of(fake.messages[reply.id]), 3.0)
    count_edits = len(fake.edits(reply.id))

    clock.advance(seconds=598)  # 599.5 s after it was posted
    assert (await scheduler.tick()).closed == 0, "open for 600 s"
    clock.advance(seconds=1)
    assert (await scheduler.tick()).closed == 1
    assert disabled(fake.messages[reply.id])
    assert bot.publisher.idle, "no count edit after the closing edit"
    edits = fake.edits(reply.id)
    assert len(edits) == count_edits + 1, "closing is one edit, and the last"
    closing = edits[-1].json
    styles = [b["style"] for b in buttons_of(closing)]
    assert styles[q.correct] == SUCCESS
    assert styles.count(SECONDARY) == len(q.options) - 1
    text = text_of(closing)
    assert "2 people answered · 50% right" in text
    assert f"✅ **{letter(q.correct)})** {q.options[q.correct]} — 1 (50%)" in text
    assert "Fastest: Alice (0 s)" in text
    assert (q.details or q.explanation) in text

    late = await click(fake, reply, q.correct, User(7, "Late"))
    assert late.ephemeral and "closed" in late.content


async def test_a_new_question_closes_the_previous_one_first(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    # an admin's /quiz replaces the open question (a member's points at it)
    first, q1 = await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")
    second, q2 = await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")
    assert q1.post_id != q2.post_id
    [closing] = fake.edits(first.id)
    assert disabled(closing.json) and "0 people answered" in text_of(closing.json)
    callbacks = fake.find("POST", r"/interactions/\d+/[^/]+/callback")
    assert fake.requests.index(closing) < fake.requests.index(callbacks[-1]), \
        "the old question is closed before the new one is shown"
    assert not disabled(fake.messages[second.id])


async def test_four_quizzes_at_once_in_a_channel_leave_one_question_open(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    people = [User(600 + i, f"P{i}") for i in range(4)]
    interactions = await asyncio.gather(
        *(fake.slash("quiz", {"quiz": "sample"}, user=p, permissions=MANAGE_GUILD)
          for p in people))  # admins: each may replace the open question
    replies = [await fake.reply(it) for it in interactions]
    posts = [await bound_post(service, r.id) for r in replies]
    assert len(set(posts)) == 4
    [still_open] = await service.storage.open_posts(f"dc:{fake.channel_id}")
    for reply, post_id in zip(replies, posts, strict=True):
        assert disabled(fake.messages[reply.id]) == (post_id != still_open.id)


async def test_an_old_message_still_works_after_a_restart(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, storage: SqliteStorage,
    alice: User,
) -> None:
    first = await start_bot()
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    await first.stop()

    second = await start_bot()
    assert second.client is not first.client
    answer = await click(fake, reply, q.correct, alice)
    assert answer.ephemeral and "Correct" in answer.content
    assert await storage.answer_of(q.post_id, f"dc:{alice.id}") is not None
    await fake.until(lambda: "1 answer so far" in text_of(fake.messages[reply.id]), 3.0)


async def test_forged_and_stale_custom_ids_are_refused_politely(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, storage: SqliteStorage,
    alice: User,
) -> None:
    old, q1 = await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")
    new, q2 = await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")

    def forged(custom_id: str) -> list[dict[str, Any]]:
        return [{"type": 1, "components": [
            {"type": 2, "style": 1, "label": "A", "custom_id": custom_id}]}]

    # the old message, carrying a custom_id of the open question: not bound to that post
    for custom_id in (f"qz:{q2.post_id}:0", "qz:999999:0", "qz:99999999999999999999:0"):
        it = await fake.click(old.id, custom_id, user=alice, components=forged(custom_id))
        refusal = await fake.reply(it)
        assert refusal.ephemeral
        assert "no longer available" in refusal.content
    assert await storage.answer_of(q2.post_id, f"dc:{alice.id}") is None
    # an option the question does not have
    it = await fake.click(new.id, f"qz:{q2.post_id}:7", user=alice,
                          components=forged(f"qz:{q2.post_id}:7"))
    assert "not one of the options" in (await fake.reply(it)).content
    # the real button of the closed question
    stale = await click(fake, old, q1.correct, alice)
    assert stale.ephemeral and "closed" in stale.content
    assert await storage.answer_of(q1.post_id, f"dc:{alice.id}") is None


async def test_the_core_posts_and_closes_through_the_chat_port(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, scheduler: Scheduler,
    clock: FakeClock, alice: User,
) -> None:
    chat = Chat(f"dc:{fake.channel_id}", "general")
    q = await service.questions.ask(chat, "sample", "en", open_for=timedelta(minutes=5))
    await bot.send_question(q)
    [post] = fake.find("POST", rf"/channels/{fake.channel_id}/messages")
    message = next(m for m in fake.messages.values() if m["channel_id"] == str(fake.channel_id))
    assert post.headers.get("Authorization") == f"Bot {fake.token}"
    assert await service.questions.post_id_for(f"dc-msg:{message['id']}") == q.post_id, \
        "bound at once"
    answer = await click(fake, message, q.correct, alice)
    assert "Correct" in answer.content
    clock.advance(minutes=6)
    await scheduler.tick()
    assert disabled(fake.messages[int(message["id"])])


async def test_a_deleted_question_message_does_not_break_closing(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, scheduler: Scheduler,
    clock: FakeClock, alice: User, error_log,
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    del fake.messages[reply.id]  # a moderator deleted it
    clock.advance(seconds=601)
    await scheduler.tick()
    assert len(fake.edits(reply.id)) == 1, "the closing edit was tried"
    post = await service.storage.get_post(q.post_id)
    assert post is not None and post.closed_at is not None
    clock.advance(hours=1)
    await scheduler.tick()
    assert len(fake.edits(reply.id)) == 1, "a deleted message is done with, not retried"
    assert not error_log.records


async def test_rate_limited_edits_are_retried_by_discord_py(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, scheduler: Scheduler,
    clock: FakeClock, alice: User,
) -> None:
    reply, _q = await post_quiz(fake, service, alice, quiz="sample")
    fake.fail("PATCH", rf"/channels/\d+/messages/{reply.id}", 429)
    clock.advance(seconds=601)
    await scheduler.tick()
    assert disabled(fake.messages[reply.id])
    assert len(fake.edits(reply.id)) == 2


async def assert_a_click_on_a_new_quiz_counts(fake: FakeDiscord, alice: User) -> None:
    """/quiz, then a click on its first option at once: answered, not refused as stale."""
    reply = await fake.reply(await fake.slash("quiz", {"quiz": "sample"}, user=alice))
    answer = await fake.reply(await fake.click(reply.id, reply.buttons[0]["custom_id"],
                                               user=alice))
    assert "no longer available" not in answer.content
    assert "Correct" in answer.content or "Not quite" in answer.content


async def test_a_click_before_the_message_is_bound_waits_for_the_binding(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_bind = service.questions.bind

    async def slow_bind(post_id: int, *refs: str) -> None:
        await asyncio.sleep(0.2)
        await real_bind(post_id, *refs)

    monkeypatch.setattr(service.questions, "bind", slow_bind)
    # clicked at once: the bot has shown the message but not yet bound it
    await assert_a_click_on_a_new_quiz_counts(fake, alice)


async def test_a_click_whose_read_races_the_binding_commit_is_not_refused(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The click's read of the binding starts before the binding commits and returns (empty)
    after it: the click is still counted (seen as 1 in 640 refused in test_shards.py)."""
    real_bind, real_lookup = service.questions.bind, service.questions.post_id_for
    clicked, bound = asyncio.Event(), asyncio.Event()

    async def bind_after_the_click(post_id: int, *refs: str) -> None:
        await clicked.wait()
        await real_bind(post_id, *refs)
        bound.set()

    async def read_before_the_commit(ref: str) -> int | None:
        found = await real_lookup(ref)
        if found is None and not bound.is_set():
            clicked.set()
            await bound.wait()  # the answer of a read that began before the commit
        return found

    monkeypatch.setattr(service.questions, "bind", bind_after_the_click)
    monkeypatch.setattr(service.questions, "post_id_for", read_before_the_commit)
    await assert_a_click_on_a_new_quiz_counts(fake, alice)


async def test_the_largest_question_fits_discords_limits(
    fake: FakeDiscord, start_bot: StartBot, storage: SqliteStorage, clock: FakeClock,
    alice: User, tmp_path: Path,
) -> None:
    """Ten options of 100 characters, a 300-character prompt with Markdown characters, the
    longest explanation and details: the fake checks rows, labels and embed lengths."""
    prompt = ("Is x_1 * y_2 `code` ~~not~~ shown literally? " * 8)[:299] + "?"
    options = [{"en": f"{i}" * 100, **({"correct": True} if i == 7 else {})} for i in range(10)]
    pack = {"id": "big", "title": "Big " * 25, "questions": [{
        "id": "q1", "prompt": prompt, "options": options,
        "explanation": "e" * 200, "details": "d" * 1000,
    }]}
    (tmp_path / "packs").mkdir()
    (tmp_path / "packs" / "big.yaml").write_text(json.dumps(pack))
    core = QuizService(load_catalog(tmp_path / "packs"), storage, clock, random.Random(1))
    await start_bot(service=core)

    reply, q = await post_quiz(fake, core, alice, quiz="big")
    rows = reply.components
    assert [len(row["components"]) for row in rows] == [5, 5, 1]  # the ⚑ on a third row of 5
    description = reply.embeds[0]["description"]
    assert r"x\_1 \* y\_2 \`code\` \~\~not\~\~" in description
    assert all(option in description for option in q.options)
    answer = await click(fake, reply, q.correct, alice)
    assert "d" * 1000 in answer.content
    clock.advance(seconds=601)
    await Scheduler(core).tick()
    assert disabled(fake.messages[reply.id])
    closing = fake.edits(reply.id)[-1].json
    assert "d" * 1000 in text_of(closing)


async def test_a_failed_closing_edit_is_made_again_later(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, scheduler: Scheduler,
    clock: FakeClock, alice: User,
) -> None:
    reply, _q = await post_quiz(fake, service, alice, quiz="sample")
    fake.fail("PATCH", rf"/channels/\d+/messages/{reply.id}", 503)  # not retried by discord.py
    clock.advance(seconds=601)
    await scheduler.tick()
    assert len(fake.edits(reply.id)) == 1 and not disabled(fake.messages[reply.id])
    await scheduler.tick()
    assert len(fake.edits(reply.id)) == 1, "not offered again within the core's backoff"
    clock.advance(seconds=31)
    await scheduler.tick()
    assert disabled(fake.messages[reply.id])
    clock.advance(hours=1)
    await scheduler.tick()
    assert len(fake.edits(reply.id)) == 2, "confirmed once it was made: no third edit"


async def test_a_members_quiz_links_the_open_question_and_closes_nothing(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    first, q = await post_quiz(fake, service, alice, quiz="sample")
    refused = await fake.reply(await fake.slash("quiz", {}, user=User(601, "Bo")))
    assert refused.ephemeral and "This question is still open" in refused.text
    link = f"https://discord.com/channels/{fake.guild_id}/{fake.channel_id}/{first.id}"
    assert link in refused.text
    assert not disabled(fake.messages[first.id])
    assert [p.id for p in await service.storage.open_posts(f"dc:{fake.channel_id}")] == [
        q.post_id]
