"""Writing a quiz by sending quiz polls to the bot in a private chat, through the real
python-telegram-bot against the fake Bot API: an author's draft built, named, published and
asked in a group; a non-author refused with nothing stored and told their id, which /whoami
also tells; an invalid draft not published, with the question and the reason; a draft kept
across a restart; discarding asks first; /unpublish withdraws a pack, its answers kept."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bot.content import Catalog
from bot.core.service import QuizService
from bot.storage import SqliteStorage
from tests.clock import FakeClock
from tests.telegram_e2e.conftest import Harness

PROMPTS = ("Cats have how many legs?", "Dogs bark at?", "Birds have?")


@pytest.fixture
def service(sample_catalog: Catalog, storage: SqliteStorage, clock: FakeClock) -> QuizService:
    """Alice (1001) is an author."""
    return QuizService(sample_catalog, storage, clock, random.Random(7), authors={"tg:1001"})


async def send_quiz(tg: Harness, chat: dict[str, Any], user: dict[str, Any], prompt: str,
                    options: list[str] | None = None, **kwargs: Any) -> str:
    """Send a poll; the bot's reply to it."""
    before = len(tg.texts(chat))
    kwargs.setdefault("correct", [0])
    kwargs.setdefault("explanation", "Because.")
    await tg.send(tg.fake.send_poll(chat, user, prompt, options or ["Four", "Two", "Six"],
                                    **kwargs))
    texts = tg.texts(chat)
    assert len(texts) == before + 1, texts[before:]
    return texts[-1]


async def reply_to(tg: Harness, chat: dict[str, Any], user: dict[str, Any], text: str) -> str:
    before = len(tg.texts(chat))
    await tg.command(chat, user, text)
    texts = tg.texts(chat)
    assert len(texts) == before + 1, texts[before:]
    return texts[-1]


async def test_an_author_builds_names_and_publishes_a_quiz_then_a_group_gets_it(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any], group: dict[str, Any],
    bob: dict[str, Any],
) -> None:
    for number, prompt in enumerate(PROMPTS, start=1):
        reply = await send_quiz(tg, alice_dm, alice, prompt)
        assert reply.startswith(f"Question {number} added to your draft.")
    draft = await reply_to(tg, alice_dm, alice, "/draft")
    assert "Questions: 3." in draft and all(p in draft for p in PROMPTS)
    assert "Cats and dogs" in await reply_to(tg, alice_dm, alice, "/name Cats and dogs")
    published = await reply_to(tg, alice_dm, alice, "/publish")
    assert published.startswith("Published “Cats and dogs” (questions: 3).")
    assert "/quiz cats-and-dogs" in published

    await tg.command(group, bob, "/quiz cats-and-dogs")
    [call] = await tg.fake.wait_for("sendPoll")
    assert call.params["chat_id"] == group["id"] and call.params["question"] in PROMPTS
    options = [o["text"] for o in call.params["options"]]
    assert options[call.params["correct_option_ids"][0]] == "Four"
    assert call.params["explanation"] == "Because."
    packs = await tg.service.storage.authored_packs()
    assert [(p.quiz_id, p.author_key) for p in packs] == [("cats-and-dogs", "tg:1001")]


async def test_a_non_author_is_refused_and_nothing_is_stored(
    tg: Harness, bob: dict[str, Any], fake_tg: Any,
) -> None:
    bob_dm = fake_tg.private_chat(bob)
    reply = await send_quiz(tg, bob_dm, bob, PROMPTS[0])
    # the refusal names the id the operator puts in QUIZBOT_AUTHORS
    assert reply == ("Only the bot's authors can write quizzes here; nothing was saved. To "
                     "become one, ask the bot's operator to add your id 1002 to "
                     "QUIZBOT_AUTHORS.")
    assert "Only the bot's authors" in await reply_to(tg, bob_dm, bob, "/newpack")
    assert await tg.service.storage.get_draft("tg:1002") is None


async def test_polls_that_cannot_be_questions_are_refused_with_a_hint(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any],
) -> None:
    regular = await send_quiz(tg, alice_dm, alice, PROMPTS[0], kind="regular", correct=None)
    assert "regular poll" in regular and "Quiz mode" in regular
    forwarded = await send_quiz(tg, alice_dm, alice, PROMPTS[0], forwarded=True)
    assert "forwarded poll" in forwarded
    assert await tg.service.storage.get_draft("tg:1001") is None


async def test_an_invalid_draft_is_not_published_and_the_author_is_told_where_and_why(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any], group: dict[str, Any],
) -> None:
    await send_quiz(tg, alice_dm, alice, PROMPTS[0])
    # Telegram itself allows this option (100 characters); 101 is over every platform's limit
    too_long = await send_quiz(tg, alice_dm, alice, PROMPTS[1], ["x" * 101, "Two"])
    assert "Question 2 added" in too_long
    assert "Question 2, option 1: 101 characters, at most 100" in too_long
    no_explanation = await send_quiz(tg, alice_dm, alice, PROMPTS[2], explanation=None)
    assert "Question 3, explanation: missing" in no_explanation
    await reply_to(tg, alice_dm, alice, "/name Broken pets")

    refused = await reply_to(tg, alice_dm, alice, "/publish")
    assert refused.startswith("Your draft was not published; nothing changed.")
    assert refused.splitlines()[1:] == [
        "• Question 2, option 1: 101 characters, at most 100",
        "• Question 3, explanation: missing",
    ]
    assert await tg.service.storage.authored_packs() == []
    assert tg.service.catalog.get("broken-pets") is None
    # mended with /undo and sending it again: published
    assert "Question 3 removed" in await reply_to(tg, alice_dm, alice, "/undo")
    assert "Question 2 removed" in await reply_to(tg, alice_dm, alice, "/undo")
    await send_quiz(tg, alice_dm, alice, PROMPTS[1])
    assert "(questions: 2)" in await reply_to(tg, alice_dm, alice, "/publish")
    await tg.command(group, alice, "/quiz broken-pets")
    await tg.fake.wait_for("sendPoll")


async def test_the_draft_survives_a_restart(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any],
) -> None:
    await send_quiz(tg, alice_dm, alice, PROMPTS[0])
    await send_quiz(tg, alice_dm, alice, PROMPTS[1])
    await tg.restart()
    assert "Questions: 2." in await reply_to(tg, alice_dm, alice, "/draft")
    assert (await send_quiz(tg, alice_dm, alice, PROMPTS[2])).startswith("Question 3 added")


async def test_discarding_asks_first(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any],
) -> None:
    await send_quiz(tg, alice_dm, alice, PROMPTS[0])
    await tg.command(alice_dm, alice, "/discard")
    [call] = [c for c in tg.fake.calls_of("sendMessage") if c.params.get("reply_markup")]
    message = call.result
    keep, discard = "draft:keep", "draft:discard"
    await tg.press(message, alice, keep)
    assert await tg.service.storage.get_draft("tg:1001") is not None
    await tg.press(message, alice, discard)
    assert await tg.service.storage.get_draft("tg:1001") is None
    edits = [c.params["text"] for c in tg.fake.calls_of("editMessageText")]
    assert edits == ["Your draft is kept.", "Your draft is discarded."]


async def test_a_bengali_author_writes_a_bengali_pack_and_reads_bengali(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any], group: dict[str, Any],
) -> None:
    await tg.command(alice_dm, alice, "/lang bn")
    reply = await send_quiz(tg, alice_dm, alice, "বিড়ালের কয়টি পা?", ["চার", "দুই"],
                            explanation=None)
    assert reply.startswith("প্রশ্ন 1 আপনার খসড়ায় যোগ হয়েছে।")
    assert "প্রশ্ন 1, ব্যাখ্যা: নেই" in reply
    await reply_to(tg, alice_dm, alice, "/undo")
    await send_quiz(tg, alice_dm, alice, "বিড়ালের কয়টি পা?", ["চার", "দুই"],
                    explanation="বিড়াল চার পায়ে হাঁটে।")
    await reply_to(tg, alice_dm, alice, "/name বিড়াল")
    published = await reply_to(tg, alice_dm, alice, "/publish")
    assert published.startswith("“বিড়াল” প্রকাশিত হয়েছে")
    [pack] = await tg.service.storage.authored_packs()
    quiz = tg.service.catalog.get(pack.quiz_id)
    assert quiz is not None and quiz.language == "bn"
    # an English group reads the pack in its one language
    await tg.command(group, alice, f"/quiz {pack.quiz_id}")
    [call] = await tg.fake.wait_for("sendPoll")
    assert call.params["question"] == "বিড়ালের কয়টি পা?"


async def test_a_redelivered_poll_or_undo_counts_once(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any],
) -> None:
    for prompt in PROMPTS:
        await send_quiz(tg, alice_dm, alice, prompt)
    sent = tg.fake.send_poll(alice_dm, alice, "Fish swim in?", ["Water", "Air"], correct=[0],
                             explanation="Gills.")
    await tg.send(sent)
    await tg.send(tg.fake.redeliver(sent))
    undo = tg.fake.command(alice_dm, alice, "/undo")
    await tg.send(undo)
    await tg.send(tg.fake.redeliver(undo))
    draft = await tg.service.storage.get_draft("tg:1001")
    assert draft is not None and len(draft.questions) == 3


async def test_whoami_tells_the_id_quizbot_authors_needs_in_a_group_and_privately(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any], group: dict[str, Any],
    bob: dict[str, Any],
) -> None:
    assert await reply_to(tg, group, bob, "/whoami") == (
        "Your id: 1002\nTo write quizzes here, ask the bot's operator to add it to "
        "QUIZBOT_AUTHORS.")
    mine = await reply_to(tg, alice_dm, alice, "/whoami")
    assert mine.startswith("Your id: 1001\nYou are one of the bot's authors")


async def test_unpublish_withdraws_a_pack_and_keeps_its_answers(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any], group: dict[str, Any],
    bob: dict[str, Any], fake_tg: Any,
) -> None:
    await send_quiz(tg, alice_dm, alice, PROMPTS[0])
    await reply_to(tg, alice_dm, alice, "/name Cats")
    assert "/quiz cats" in await reply_to(tg, alice_dm, alice, "/publish")
    await tg.command(group, bob, "/quiz cats")
    [call] = await tg.fake.wait_for("sendPoll")
    await tg.answer(call, bob, call.params["correct_option_ids"][0])

    bob_dm = fake_tg.private_chat(bob)
    assert "Only the bot's authors" in await reply_to(tg, bob_dm, bob, "/unpublish cats")
    assert await reply_to(tg, alice_dm, alice, "/unpublish") == (
        "Which quiz? /unpublish followed by its id, e.g. /unpublish my-quiz")
    assert await reply_to(tg, alice_dm, alice, "/unpublish cats") == (
        "“Cats” (cats) is withdrawn: it is no longer offered. Its answers and boards stay.")
    assert "There is no quiz or topic called “cats”" in await reply_to(
        tg, group, bob, "/quiz cats")
    [pack] = await tg.service.storage.authored_packs()
    assert pack.withdrawn_at is not None
    board = await tg.service.boards.leaderboard(f"tg:{group['id']}")
    assert [(r.person_key, r.correct) for r in board.rows] == [("tg:1002", 1)]
