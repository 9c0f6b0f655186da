"""Private chats: whole quiz runs (surviving restarts), single questions, languages."""

from __future__ import annotations

from tests.fakes.telegram_api import Call
from tests.telegram_e2e.conftest import Harness


async def next_poll(tg: Harness, count: int) -> Call:
    return (await tg.fake.wait_for("sendPoll", count))[count - 1]


def right(poll: Call) -> int:
    correct: int = poll.params["correct_option_ids"][0]
    return correct


def wrong(poll: Call) -> int:
    return (right(poll) + 1) % len(poll.params["options"])


async def test_private_run_from_first_question_to_score_across_restarts(
    tg, alice, alice_dm, clock
):
    await tg.command(alice_dm, alice, "/quiz sample")
    q1 = await next_poll(tg, 1)
    assert q1.params["question"] == "1/3 · What is one plus one?"
    assert "open_period" not in q1.params  # a run waits for its person

    await tg.answer(q1, alice, right(q1))
    q2 = await next_poll(tg, 2)
    assert q2.params["question"] == "2/3 · Which is a colour?"
    result = tg.texts(alice_dm)[-1]
    assert result.startswith("✅ Correct!")
    assert "Addition of two ones gives two." in result  # the longer explanation

    await tg.restart()  # the poll id -> post mapping lives in the database
    await tg.answer(q2, alice, wrong(q2))
    q3 = await next_poll(tg, 3)
    assert q3.params["question"] == "3/3 · Pick the last letter."
    assert tg.texts(alice_dm)[-1].startswith("❌ Not quite. The answer is")

    await tg.restart()
    await tg.command(alice_dm, alice, "/quiz")  # resumes: the same question again
    q3_again = await next_poll(tg, 4)
    assert q3_again.params["question"] == q3.params["question"]
    await tg.answer(q3_again, alice, right(q3_again))

    score = tg.texts(alice_dm)[-1]
    assert score.startswith("🏁 Sample Quiz: 2 of 3 right")
    assert "Which is a colour?" in score and "→ Red" in score
    assert len(tg.fake.calls_of("sendPoll")) == 4  # no question after the last one

    await tg.command(alice_dm, alice, "/review")
    assert tg.texts(alice_dm)[-1].startswith("Nothing is due for review")
    clock.advance(120)  # the missed question comes back a minute later (FSRS's first step)
    await tg.command(alice_dm, alice, "/review")
    review = await next_poll(tg, 5)
    assert "Which is a colour?" in review.params["question"]
    await tg.command(alice_dm, alice, "/stats")
    assert "3 questions answered · 67% right" in tg.texts(alice_dm)[-1]


async def test_a_redelivered_run_answer_does_not_skip_a_question(tg, alice, alice_dm):
    await tg.command(alice_dm, alice, "/quiz sample")
    q1 = await next_poll(tg, 1)
    first = tg.fake.answer_poll(q1.result["poll"]["id"], alice, [right(q1)])
    await tg.send(first)
    await tg.send(tg.fake.redeliver(first))

    assert len(tg.fake.calls_of("sendPoll")) == 2
    assert sum(t.startswith("✅ Correct!") for t in tg.texts(alice_dm)) == 1


async def test_run_with_buttons_in_a_private_chat(tg, alice, alice_dm):
    await tg.command(alice_dm, alice, "/quiz buttons sample")
    for number in range(1, 4):
        sent = await tg.fake.wait_for(
            "sendMessage", number, where=lambda c: "reply_markup" in c.params
        )
        message = sent[number - 1].result
        shown = await tg.service.questions.show(await tg.post_of(message))
        assert f"question {number} of 3" in message["text"]
        data = message["reply_markup"]["inline_keyboard"][0][shown.correct]["callback_data"]
        press = await tg.press(message, alice, data)
        assert press.params["text"].startswith("✅ Correct!")
    await tg.fake.wait_for("sendMessage", where=lambda c: c.params["text"].startswith("🏁"))
    assert "3 of 3 right" in tg.texts(alice_dm)[-1]
    assert not tg.fake.calls_of("sendPoll")


async def test_single_private_question_is_closed_once_answered(tg, alice, alice_dm):
    await tg.command(alice_dm, alice, "/quiz")  # no run to resume: one question
    q = await next_poll(tg, 1)
    post_id = await tg.service.questions.post_id_for(f"tg-poll:{q.result['poll']['id']}")
    assert (await tg.service.questions.show(post_id)).run_id is None

    await tg.answer(q, alice, wrong(q))
    assert tg.texts(alice_dm)[-1].startswith("❌ Not quite.")
    assert (await tg.service.storage.get_post(post_id)).closed_at is not None

    await tg.command(alice_dm, alice, "/quiz testing")  # a tag: one more question
    await next_poll(tg, 2)
    assert not any("Question closed" in t for t in tg.texts(alice_dm))


async def test_unknown_quiz_lists_the_available_quizzes(tg, group, alice, alice_dm):
    for chat in (group, alice_dm):
        await tg.command(chat, alice, "/quiz nonsense")
        reply = tg.texts(chat)[-1]
        assert "There is no quiz or topic called “nonsense”." in reply
        assert "• sample — Sample Quiz (3 questions)" in reply
    assert not tg.fake.calls_of("sendPoll")


async def test_person_and_chat_languages(tg, fake_tg, group, alice, bob, alice_dm):
    await tg.command(alice_dm, alice, "/lang bn")
    assert await tg.service.storage.person_locale("tg:1001") == "bn"
    await tg.command(alice_dm, alice, "/quiz sample")
    q1 = await next_poll(tg, 1)
    assert q1.params["question"].endswith("এক যোগ এক কত?")
    await tg.command(alice_dm, alice, "/lang xx")
    assert "“xx”" in tg.texts(alice_dm)[-1]
    assert await tg.service.storage.person_locale("tg:1001") == "bn"

    fake_tg.set_admins(group["id"], alice["id"])
    await tg.command(group, bob, "/lang chat hi")
    assert tg.texts(group)[-1] == "Only this chat's admins can change its language."
    assert await tg.service.storage.chat_locale(f"tg:{group['id']}") is None
    [check] = fake_tg.calls_of("getChatMember")
    assert check.params == {"chat_id": group["id"], "user_id": bob["id"]}

    await tg.command(group, alice, "/lang chat hi")
    assert await tg.service.storage.chat_locale(f"tg:{group['id']}") == "hi"
    await tg.command(group, bob, "/quiz")
    [poll] = await tg.fake.wait_for("sendPoll", where=lambda c: c.params["chat_id"] == group["id"])
    post_id = await tg.service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")
    assert (await tg.service.questions.show(post_id)).locale == "hi"


async def test_someone_elses_private_poll_does_not_count_for_them(tg, fake_tg, alice, bob,
                                                                   alice_dm):
    """Alice forwards her private question to Bob; his vote reaches the bot but is not his."""
    bob_dm = fake_tg.private_chat(bob)
    await tg.command(alice_dm, alice, "/quiz testing")
    q = await next_poll(tg, 1)
    post_id = await tg.service.questions.post_id_for(f"tg-poll:{q.result['poll']['id']}")

    await tg.answer(q, bob, right(q))
    assert await tg.service.storage.answers_for_post(post_id) == []
    assert tg.texts(bob_dm) == [
        "This question belongs to someone else's quiz. Start your own with /quiz."
    ]
    assert tg.texts(alice_dm) == []  # nothing in Alice's chat
    assert (await tg.service.storage.get_post(post_id)).closed_at is None

    await tg.answer(q, alice, right(q))
    assert tg.texts(alice_dm)[-1].startswith("✅ Correct!")
    assert (await tg.service.storage.get_post(post_id)).closed_at is not None


async def test_a_voter_who_never_started_the_bot_is_not_told(tg, fake_tg, alice, bob, alice_dm):
    await tg.command(alice_dm, alice, "/quiz testing")
    q = await next_poll(tg, 1)
    await tg.answer(q, bob, right(q))  # bob has no private chat with the bot: no error
    assert [c.params["chat_id"] for c in fake_tg.calls_of("sendMessage", ok_only=False)] \
        == [bob["id"]]


async def test_a_topic_does_not_resume_the_run_and_the_run_goes_on(tg, alice, alice_dm):
    await tg.command(alice_dm, alice, "/quiz sample")
    q1 = await next_poll(tg, 1)
    await tg.command(alice_dm, alice, "/quiz testing")  # one question; the run waits
    single = await next_poll(tg, 2)
    assert not single.params["question"].startswith("1/3")
    await tg.answer(single, alice, right(single))
    assert len(tg.fake.calls_of("sendPoll")) == 2  # a single question has no next

    await tg.answer(q1, alice, right(q1))  # the run's question still takes its answer
    q2 = await next_poll(tg, 3)
    assert q2.params["question"].startswith("2/3")
