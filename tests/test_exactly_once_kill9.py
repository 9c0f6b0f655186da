"""kill -9 at random moments while commands, rounds, reminders and summaries with charts are
in flight: each effect happens exactly once.

`quizbot run` is a process of its own (long polling, a SQLite file, its scheduler ticking in
real time) against the fake Bot API in this process; killed with SIGKILL at random moments
and started again under the same QUIZBOT_INSTANCE (so it takes up its leases at once). The
database is seeded first: people whose review cards are due and whose reminders are due now,
and an author's draft. Then the chats send /settings chart on, /quiz sample 2 (a round of two
questions, each closed with a chart) and the author a series of /undo, while a voter answers
every poll. At the end the fake's calls are counted: one reminder per person, one summary
(its chart, the text as its caption) per question, one round summary per chat, and the draft
lost exactly one question per /undo (a redelivered /undo found its key).

Run it again with the same moments: CRASH_SEED=<seed printed on failure>.
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.content import load_catalog
from bot.core.models import Chat, Person
from bot.core.service import QuizService
from bot.storage import SqliteStorage
from tests.clock import FakeClock
from tests.fakes.telegram_api import Call, FakeTelegramAPI
from tests.telegram_e2e.test_webhook import QuizbotRun

ROOT = Path(__file__).resolve().parents[1]
PACKS = ROOT / "tests" / "data" / "packs"
GROUPS = (-1001000000101, -1001000000102, -1001000000103)
ADMIN, AUTHOR = 900, 1001
PEOPLE = range(2001, 2031)  # reminded: each has a card due
DRAFTED, UNDONE = 12, 8
KILLS = 5
SPAN = 24.0  # seconds over which the kills fall: two 10 s questions and the round's end
WITHIN = 75.0  # seconds for everything to be delivered (past the 30 s grace of the leftovers)
pytestmark = pytest.mark.slow


def quizbot_env(fake: FakeTelegramAPI, db: Path) -> dict[str, str]:
    """`quizbot run` with long polling on one SQLite file, under one instance name."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "DISCORD_", "QUIZBOT_"))}
    return {
        **env, "NO_PROXY": "127.0.0.1,localhost", "PYTHONPATH": str(ROOT),
        "TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE_URL": fake.base_url,
        "QUIZBOT_DATABASE": str(db), "QUIZBOT_CONTENT_DIR": str(PACKS),
        "QUIZBOT_QUESTION_SECONDS": "10", "QUIZBOT_INSTANCE": "bot-1",
        "QUIZBOT_AUTHORS": str(AUTHOR), "QUIZBOT_LOG_LEVEL": "INFO",
    }


async def seed(db: Path) -> None:
    """People with a card due (a wrong answer two days ago) and a reminder due now (00:00
    UTC, set two days ago); the author's draft."""
    clock = FakeClock(datetime.now(UTC) - timedelta(days=2))
    async with SqliteStorage(db) as storage:
        service = QuizService(load_catalog(PACKS), storage, clock, random.Random(1))
        group = Chat(f"tg:{GROUPS[0]}", "Group 0")
        question = await service.questions.post(group, "sample", "s-one", "en")
        wrong = (question.correct + 1) % len(question.options)
        for user_id in PEOPLE:
            person = Person(f"tg:{user_id}", f"P{user_id}")
            assert (await service.answer(question.post_id, person, wrong)).accepted
            await service.set_reminder(person, "00:00", "UTC")
        for n in range(DRAFTED):
            await storage.add_draft_question(f"tg:{AUTHOR}", "en", f'"q{n}"', f"m{n}",
                                             clock.now())


async def vote_on_every_poll(fake: FakeTelegramAPI) -> None:
    """Two people answer each poll the bot sends, once."""
    voters = [fake.user(3001, "V1"), fake.user(3002, "V2")]
    seen: set[str] = set()
    while True:
        for call in fake.calls_of("sendPoll"):
            poll_id = call.result["poll"]["id"]
            if poll_id not in seen:
                seen.add(poll_id)
                for option, voter in enumerate(voters):
                    fake.answer_poll(poll_id, voter, [option])
        await asyncio.sleep(0.05)


def replying_to(call: Call) -> int | None:
    reply = call.params.get("reply_parameters")
    return reply.get("message_id") if isinstance(reply, dict) else None


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegramAPI]:
    fake = FakeTelegramAPI()
    await fake.start()
    yield fake
    await fake.stop()


async def test_kill_9_at_random_moments_leaves_every_effect_done_once(
    fake: FakeTelegramAPI, tmp_path: Path
) -> None:
    seed_text = os.environ.get("CRASH_SEED") or str(random.randrange(10**6))
    rng = random.Random(seed_text)
    db = tmp_path / "quiz.db"
    await seed(db)
    bot = QuizbotRun(fake, tmp_path, "bot", quizbot_env(fake, db), 0, ready="getUpdates")
    admin, author = fake.user(ADMIN, "Admin"), fake.user(AUTHOR, "Author")
    author_dm = fake.private_chat(author)
    for user_id in PEOPLE:
        fake.private_chat(fake.user(user_id, f"P{user_id}"))
    groups = [fake.group(chat_id, f"Group {i}") for i, chat_id in enumerate(GROUPS)]
    for chat in groups:
        fake.set_admins(chat["id"], ADMIN)
    voter = asyncio.create_task(vote_on_every_poll(fake))
    try:
        await bot.start()  # the reminders go out at its first tick
        for chat in groups:
            fake.command(chat, admin, "/settings chart on")
            fake.command(chat, admin, "/quiz sample 2")
        for _ in range(UNDONE):
            fake.command(author_dm, author, "/undo")
        started = asyncio.get_running_loop().time()
        # while the reminders go out, while the first questions close with their charts and
        # the next ones are asked, around the rounds' end, and anywhen
        moments = [rng.uniform(0.2, 1.2), rng.uniform(9.8, 11.0), rng.uniform(20.0, 22.0),
                   *(rng.uniform(0, SPAN) for _ in range(KILLS - 3))]
        for moment in sorted(moments):
            await asyncio.sleep(max(0.0, started + moment - asyncio.get_running_loop().time()))
            await bot.kill()
            await bot.start()

        deadline = asyncio.get_running_loop().time() + WITHIN
        while (left := undelivered(db)) != {"rounds": 0, "summaries": 0, "reminders": 0}:
            assert asyncio.get_running_loop().time() < deadline, (
                f"not all delivered (CRASH_SEED={seed_text}): {left}\n{bot.log()}")
            await asyncio.sleep(0.2)
        await fake.wait_all_confirmed(10)
        await asyncio.sleep(2.5)  # a second delivery would be out by now (1 s ticks)
        assert await bot.stop() == 0, bot.log()
    finally:
        voter.cancel()
        if bot.proc is not None:
            await bot.kill()

    context = f"CRASH_SEED={seed_text}\n{bot.log()}"
    reminders = Counter(c.params["chat_id"] for c in fake.calls_of("sendMessage", ok_only=False)
                        if "due for review" in c.params["text"])
    assert reminders == dict.fromkeys(PEOPLE, 1), (reminders, context)
    round_ends = Counter(c.params["chat_id"] for c in fake.calls_of("sendMessage", ok_only=False)
                         if "Round over" in c.params["text"])
    assert round_ends == dict.fromkeys(GROUPS, 1), (round_ends, context)

    # one summary per question: under its poll when the chat saw it (its chart, with the
    # text as the caption, when someone answered); a question whose process died between
    # creating and sending it is summed up too, unanchored
    summaries = [c for c in [*fake.calls_of("sendPhoto", ok_only=False),
                             *fake.calls_of("sendMessage", ok_only=False)]
                 if "Question closed" in str(c.params.get("caption") or c.params.get("text"))]
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        closed = conn.execute("SELECT count(*) FROM posts WHERE closed_at IS NOT NULL")
        assert len(summaries) == closed.fetchone()[0], context
        answered = {post for (post,) in conn.execute("SELECT DISTINCT post_id FROM answers")}
        shown = [ref for (ref,) in conn.execute(
            "SELECT ref FROM post_refs WHERE ref LIKE 'tg-msg:%'")]
        polls = {post for (post,) in conn.execute(
            "SELECT post_id FROM post_refs WHERE ref LIKE 'tg-poll:%'")}
    anchored = Counter((c.params["chat_id"], replying_to(c)) for c in summaries)
    for ref in shown:
        chat_id, message_id = (int(part) for part in ref.removeprefix("tg-msg:").split(":"))
        assert anchored[(chat_id, message_id)] == 1, (ref, anchored, context)
    photos = Counter((c.params["chat_id"], replying_to(c)) for c in fake.calls_of("sendPhoto")
                     if replying_to(c) is not None)
    assert all(n == 1 for n in photos.values()), (photos, context)
    assert len(photos) >= len(answered & polls), context  # a chart where answered

    async with SqliteStorage(db) as storage:
        draft = await storage.get_draft(f"tg:{AUTHOR}")
    assert draft is not None and len(draft.questions) == DRAFTED - UNDONE, context


def undelivered(db: Path) -> dict[str, int]:
    """What is still due: round summaries (of rounds not all started yet too), question
    summaries (of questions still open too), reminders."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rounds = conn.execute("SELECT count(*) FROM rounds").fetchone()[0]
        return {
            "rounds": len(GROUPS) - rounds + conn.execute(
                "SELECT count(*) FROM rounds WHERE summary_posted_at IS NULL").fetchone()[0],
            "summaries": conn.execute(
                "SELECT count(*) FROM posts WHERE summary_posted_at IS NULL").fetchone()[0],
            "reminders": conn.execute(
                "SELECT count(*) FROM reminder_days WHERE sent_at IS NULL").fetchone()[0],
        }
