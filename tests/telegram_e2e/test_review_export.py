"""/review export on Telegram: the due and missed cards as an Anki deck, a document in the
person's private chat, in their language (real python-telegram-bot against the fake)."""

from __future__ import annotations

from bot.core import render
from bot.i18n import translator
from tests import apkg
from tests.fakes.telegram_api import Call
from tests.telegram_e2e.conftest import GROUP_ID, Harness


async def poll(tg: Harness, count: int) -> Call:
    return (await tg.fake.wait_for("sendPoll", count))[count - 1]


def right(poll: Call) -> int:
    correct: int = poll.params["correct_option_ids"][0]
    return correct


async def run_sample(tg: Harness, chat, user, wrong_ones: set[int]) -> None:
    """The whole sample quiz in a private run, answering the questions numbered in
    `wrong_ones` (1-based) wrong."""
    await tg.command(chat, user, "/quiz sample")
    for number in (1, 2, 3):
        asked = await poll(tg, number)
        choice = right(asked)
        if number in wrong_ones:
            choice = (choice + 1) % len(asked.params["options"])
        await tg.answer(asked, user, choice)


async def test_nothing_missed_or_due_is_said_and_sends_no_file(tg, alice, alice_dm):
    await tg.command(alice_dm, alice, "/review export")
    assert tg.texts(alice_dm)[-1].startswith("No question is due for review or was answered "
                                             "wrong")
    assert not tg.fake.calls_of("sendDocument")


async def test_the_missed_questions_come_as_a_deck_in_the_private_chat(tg, alice, alice_dm):
    await run_sample(tg, alice_dm, alice, wrong_ones={2})
    await tg.command(alice_dm, alice, "/review export")
    [sent] = tg.fake.calls_of("sendDocument")
    assert sent.params["chat_id"] == alice["id"]
    assert sent.params["_document_filename"] == "quizbot-review.apkg"
    assert sent.params["caption"].startswith("🗂 Your review deck: 1 question due or missed.")
    [note] = apkg.notes(sent.params["document"])
    assert note.fields["Question id"] == "s-two" and note.tags == "sample"
    assert note.fields["Prompt"] == "Which is a colour?"
    assert note.fields["Options"] == "A. Red\nB. Seven\nC. Dog"
    assert note.fields["Answer"] == "A. Red"
    assert note.fields["Explanation"] == "Red is a colour."
    # plain /review still runs the review (the export's handler takes only `export`)
    await tg.command(alice_dm, alice, "/review")
    assert tg.texts(alice_dm)[-1].startswith("Nothing is due for review")
    assert len(tg.fake.calls_of("sendDocument")) == 1


async def test_asked_in_a_group_the_deck_goes_privately_in_the_person_s_language(
        tg, alice, alice_dm, group, clock):
    await tg.command(alice_dm, alice, "/lang bn")
    await run_sample(tg, alice_dm, alice, wrong_ones={1, 3})
    await tg.command(group, alice, f"/review@{tg.fake.bot['username']} export")
    [sent] = tg.fake.calls_of("sendDocument")
    assert sent.params["chat_id"] == alice["id"] != GROUP_ID
    assert "Anki-তে" in sent.params["caption"]
    notes = apkg.notes(sent.params["document"])
    assert [n.fields["Question id"] for n in notes] == ["s-one", "s-three"]
    assert notes[0].fields["Prompt"] == "এক যোগ এক কত?"
    assert notes[0].fields["Answer"] == "B. ২"
    assert notes[0].deck == "quizbot review (bn)"
    # the group is only told where it went, in her language
    assert tg.texts(group)[-1] == render.review_elsewhere_text(translator("bn"))
    # the next deck has the same notes (Anki updates them rather than adding copies)
    clock.advance(3600)
    await tg.command(alice_dm, alice, "/review export")
    again = tg.fake.calls_of("sendDocument")[-1]
    assert [n.guid for n in apkg.notes(again.params["document"])] == [n.guid for n in notes]


async def test_a_person_the_bot_cannot_write_to_is_told_how_to_start(
        tg, alice, alice_dm, group):
    await run_sample(tg, alice_dm, alice, wrong_ones={2})
    tg.fake.fail_next("sendDocument", status=403,
                      description="Forbidden: bot can't initiate conversation with a user")
    await tg.command(group, alice, "/review export")
    assert tg.texts(group)[-1].startswith("I cannot write to you privately yet")
