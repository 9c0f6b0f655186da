"""Private quiz runs: ephemeral in a channel, plain messages in a DM, resumable."""

from __future__ import annotations

from bot.adapters.discord import DiscordAdapter
from bot.core.models import ShownQuestion
from bot.core.service import QuizService
from bot.storage import SqliteStorage
from tests.discord_e2e.conftest import StartBot
from tests.discord_e2e.helpers import bound_post, click, wrong
from tests.fakes.discord_api import FakeDiscord, Reply, User


async def shown(service: QuizService, reply: Reply) -> ShownQuestion:
    question = await service.questions.show(await bound_post(service, reply.id))
    assert question is not None
    return question


async def test_a_private_run_from_first_question_to_score(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, storage: SqliteStorage,
    alice: User,
) -> None:
    reply = await fake.reply(await fake.slash("quiz", {"quiz": "sample", "run": True},
                                              user=alice))
    assert reply.ephemeral
    q = await shown(service, reply)
    assert q.run_id is not None
    assert "question 1 of 3" in reply.embeds[0]["title"]
    assert "answers so far" not in reply.text  # no public count on a private question
    assert len(reply.buttons) == len(q.options)

    # right, wrong, right: each reply explains and brings the next question's buttons
    after_first = await click(fake, reply, q.correct, alice)
    assert after_first.ephemeral and "Correct" in after_first.content
    assert q.explanation in after_first.content
    assert "question 2 of 3" in after_first.embeds[0]["title"]
    q2 = await shown(service, after_first)
    assert q2.run_id == q.run_id

    after_second = await click(fake, after_first, wrong(q2), alice)
    assert "Not quite" in after_second.content
    q3 = await shown(service, after_second)
    assert "question 3 of 3" in after_second.embeds[0]["title"]

    last = await click(fake, after_second, q3.correct, alice)
    assert last.ephemeral and "Correct" in last.content
    assert not last.buttons
    assert "Sample Quiz: 2 of 3 right" in last.text
    assert q2.prompt in last.text  # the question missed
    run = await storage.get_run(q.run_id)
    assert run is not None and run.finished_at is not None
    # the public channel saw nothing of it
    assert not fake.find("POST", r"/channels/\d+/messages")
    assert all(m["flags"] & 64 for m in fake.messages.values())


async def test_a_run_resumes_after_a_restart(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, alice: User
) -> None:
    first = await start_bot()
    reply = await fake.reply(await fake.slash("quiz", {"quiz": "sample", "run": True},
                                              user=alice))
    q = await shown(service, reply)
    await click(fake, reply, q.correct, alice)
    await first.stop()

    await start_bot()
    resumed = await fake.reply(await fake.slash("quiz", {"run": True}, user=alice))
    assert resumed.ephemeral
    assert "question 2 of 3" in resumed.embeds[0]["title"]
    q2 = await shown(service, resumed)
    assert q2.run_id == q.run_id
    answer = await click(fake, resumed, q2.correct, alice)
    assert "Correct" in answer.content and "question 3 of 3" in answer.embeds[0]["title"]


async def test_in_a_dm_a_named_quiz_runs_privately_as_plain_messages(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply = await fake.reply(await fake.slash("quiz", {"quiz": "sample"}, user=alice, dm=True))
    assert not reply.ephemeral  # a DM is private already, and messages there stay readable
    q = await shown(service, reply)
    assert q.run_id is not None and q.chat_key == f"dc:{fake.dm_channel(alice)}"
    answer = await click(fake, reply, q.correct, alice)
    assert "Correct" in answer.content and "question 2 of 3" in answer.embeds[0]["title"]
    # without a quiz, /quiz in the DM continues the run
    again = await fake.reply(await fake.slash("quiz", user=alice, dm=True))
    assert "question 2 of 3" in again.embeds[0]["title"]


async def test_nothing_to_resume_gets_an_ephemeral_list_of_quizzes(
    fake: FakeDiscord, bot: DiscordAdapter, alice: User
) -> None:
    reply = await fake.reply(await fake.slash("quiz", {"run": True}, user=alice))
    assert reply.ephemeral
    assert "no unfinished quiz" in reply.text
    assert "sample — Sample Quiz" in reply.text


async def test_an_unknown_quiz_for_a_run_gets_an_ephemeral_list(
    fake: FakeDiscord, bot: DiscordAdapter, alice: User
) -> None:
    for dm in (False, True):
        reply = await fake.reply(await fake.slash("quiz", {"quiz": "nope", "run": True},
                                                  user=alice, dm=dm))
        assert reply.ephemeral
        assert "There is no quiz or topic called “nope”" in reply.text
        assert "sample — Sample Quiz" in reply.text


async def test_a_run_in_the_persons_language(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    await fake.reply(await fake.slash("lang", {"code": "bn"}, user=alice))
    reply = await fake.reply(await fake.slash("quiz", {"quiz": "sample", "run": True},
                                              user=alice))
    assert "নমুনা কুইজ" in reply.embeds[0]["title"]
    assert "এক যোগ এক কত?" in reply.embeds[0]["description"]  # s-one comes first in a run


async def test_in_a_dm_a_topic_gives_one_question_closed_once_answered(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, storage: SqliteStorage,
    alice: User, bob: User,
) -> None:
    reply = await fake.reply(await fake.slash("quiz", {"quiz": "basics"}, user=alice, dm=True))
    assert not reply.ephemeral
    q = await shown(service, reply)
    assert q.run_id is None and q.owner_key == f"dc:{alice.id}"
    assert "answers so far" not in reply.text  # one person's question: no public count

    # someone else clicking it (a forged client: nobody else sees a DM) is refused
    other = await click(fake, reply, q.correct, bob)
    assert other.ephemeral and "belongs to someone else's quiz" in other.content
    assert await storage.answer_of(q.post_id, f"dc:{bob.id}") is None

    answer = await click(fake, reply, q.correct, alice)
    assert not answer.ephemeral and "Correct" in answer.content and not answer.buttons
    post = await storage.get_post(q.post_id)
    assert post is not None and post.closed_at is not None, "closed once answered"
