"""/review-export on Discord: the due and missed cards as an Anki deck attached to an
ephemeral reply (a plain message in a DM), in the person's language (real discord.py against
the fake)."""

from __future__ import annotations

from bot.adapters.discord import DiscordAdapter
from bot.core.service import QuizService
from tests import apkg
from tests.discord_e2e.helpers import click, post_quiz, wrong
from tests.fakes.discord_api import FakeDiscord, User


async def test_nothing_to_export_is_said_to_the_person_alone(
    fake: FakeDiscord, bot: DiscordAdapter, alice: User
) -> None:
    reply = await fake.reply(await fake.slash("review-export", user=alice))
    assert reply.ephemeral
    assert reply.text.startswith("No question is due for review or was answered wrong")
    assert not fake.files.get(reply.id)


async def test_a_missed_question_comes_as_an_ephemeral_deck(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    await click(fake, reply, wrong(q), alice)
    export = await fake.reply(await fake.slash("review-export", user=alice))
    assert export.ephemeral
    assert export.text.startswith("🗂 Your review deck: 1 question due or missed.")
    [(name, data)] = fake.files[export.id]
    assert name == "quizbot-review.apkg"
    [note] = apkg.notes(data)
    assert (note.fields["Question id"], note.tags) == (q.question_id, "sample")
    assert note.deck == "quizbot review (en)"


async def test_in_a_dm_the_deck_is_in_the_person_s_language(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    await fake.reply(await fake.slash("lang", {"code": "bn"}, user=alice, dm=True))
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    await click(fake, reply, wrong(q), alice)
    export = await fake.reply(await fake.slash("review-export", user=alice, dm=True))
    assert not export.ephemeral and "Anki-তে" in export.text
    [(_, data)] = fake.files[export.id]
    [note] = apkg.notes(data)
    # in Bengali where the pack has it (else English, as the bot shows it)
    question = service.catalog.quizzes["sample"].question(q.question_id)
    assert note.fields["Prompt"] == question.prompt.get("bn")
    assert note.deck == "quizbot review (bn)"
