"""Quiz polls in groups: sending, answers, summaries, leaderboards."""

from __future__ import annotations

import asyncio

from bot.content.limits import tg_len
from tests.telegram_e2e.conftest import QUESTION_SECONDS


async def test_quiz_in_group_sends_a_non_anonymous_quiz_poll(tg, group, alice, sample_catalog):
    await tg.command(group, alice, "/quiz")

    [call] = await tg.fake.wait_for("sendPoll")
    params, poll = call.params, call.result["poll"]
    assert params["chat_id"] == group["id"]
    assert params["type"] == "quiz"
    assert params["is_anonymous"] is False
    assert params["open_period"] == QUESTION_SECONDS
    assert "correct_option_id" not in params  # deprecated in PTB 22.8

    post_id = await tg.service.questions.post_id_for(f"tg-poll:{poll['id']}")
    assert post_id is not None
    assert await tg.service.questions.post_id_for(
        f"tg-msg:{group['id']}:{call.result['message_id']}") == post_id
    shown = await tg.service.questions.show(post_id)
    assert params["question"] == shown.prompt
    options = [o["text"] for o in params["options"]]
    assert options == list(shown.options)
    assert params["correct_option_ids"] == [shown.correct]
    # the option marked correct really is the content's answer, whatever the shuffle did
    question = sample_catalog.question(shown.quiz_id, shown.question_id)
    assert options[shown.correct] == question.options[question.answer].text.en
    assert params["explanation"] == question.explanation.en
    assert tg_len(params["explanation"]) <= 200 and params["explanation"].count("\n") <= 2


async def test_poll_answer_counts_once_and_shows_on_the_leaderboard(tg, group, alice, bob):
    await tg.command(group, alice, "/quiz")
    [call] = await tg.fake.wait_for("sendPoll")
    correct = call.params["correct_option_ids"][0]
    post_id = await tg.service.questions.post_id_for(f"tg-poll:{call.result['poll']['id']}")

    first = tg.fake.answer_poll(call.result["poll"]["id"], alice, [correct])
    tg.fake.redeliver(first)  # the same answer delivered twice
    await tg.answer(call, bob, (correct + 1) % len(call.params["options"]))

    answers = await tg.service.storage.answers_for_post(post_id)
    assert sorted((a.person_key, a.correct) for a in answers) == [
        ("tg:1001", True), ("tg:1002", False),
    ]

    await tg.command(group, bob, "/leaderboard")
    board = tg.texts(group)[-1]
    assert "Study Group" in board
    lines = board.splitlines()
    assert lines[1].startswith("1. Alice Smith — 1/1 right")
    assert lines[2].startswith("2. Bob — 0/1 right")


async def test_retracted_vote_and_unknown_poll_are_ignored(tg, group, alice):
    await tg.command(group, alice, "/quiz")
    [call] = await tg.fake.wait_for("sendPoll")
    post_id = await tg.service.questions.post_id_for(f"tg-poll:{call.result['poll']['id']}")

    await tg.send(tg.fake.answer_poll(call.result["poll"]["id"], alice, []))
    tg.fake.polls["42"] = {**call.result["poll"], "id": "42"}  # a poll the bot never bound
    await tg.send(tg.fake.answer_poll("42", alice, [0]))

    assert await tg.service.storage.answers_for_post(post_id) == []
    assert await tg.service.storage.person_name("tg:1001") is None


async def test_group_leaderboard_is_the_groups_and_private_is_global(
    tg, group, other_group, alice, bob, fake_tg
):
    bob_dm = fake_tg.private_chat(bob)
    for chat, user in ((group, alice), (other_group, bob)):
        await tg.command(chat, user, "/quiz")
        poll = (await tg.fake.wait_for("sendPoll", where=lambda c, ch=chat:
                                       c.params["chat_id"] == ch["id"]))[-1]
        await tg.answer(poll, user, poll.params["correct_option_ids"][0])

    await tg.command(group, bob, "/leaderboard week")
    in_group = tg.texts(group)[-1]
    assert "this week" in in_group
    assert "Alice Smith" in in_group
    # Bob has no answers here: his own line says so rather than vanishing
    assert "Bob" not in in_group and "You have no answers in this period yet." in in_group

    await tg.command(bob_dm, bob, "/leaderboard")
    global_board = tg.texts(bob_dm)[-1]
    assert "all chats" in global_board
    assert "Alice Smith — 1/1" in global_board and "Bob — 1/1" in global_board

    await tg.command(group, alice, "/leaderboard forever")
    assert tg.texts(group)[-1] == "“forever” is not a period: choose day, week or all."


async def test_new_quiz_closes_the_open_one_with_a_summary(tg, group, alice):
    tg.fake.set_admins(group["id"], alice["id"])  # an admin replaces the open question
    await tg.command(group, alice, "/quiz")
    [first] = await tg.fake.wait_for("sendPoll")
    await tg.answer(first, alice, first.params["correct_option_ids"][0])
    first_post = await tg.service.questions.post_id_for(f"tg-poll:{first.result['poll']['id']}")

    await tg.command(group, alice, "/quiz")
    polls = await tg.fake.wait_for("sendPoll", 2)

    [stop] = tg.fake.calls_of("stopPoll")
    assert stop.params["message_id"] == first.result["message_id"]
    [summary] = [
        c for c in tg.fake.calls_of("sendMessage") if "Question closed" in c.params["text"]
    ]
    assert summary.params["reply_parameters"]["message_id"] == first.result["message_id"]
    assert stop.at <= summary.at <= polls[1].at  # closed, summarised, then the next question
    shown = await tg.service.questions.show(first_post)
    text = summary.params["text"]
    assert f"Answer: {'ABC'[shown.correct]}) {shown.options[shown.correct]}" in text
    assert "1 person answered · 100% right" in text
    assert "Fastest: Alice Smith" in text
    assert (await tg.service.storage.get_post(first_post)).closed_at is not None


async def test_close_due_posts_exactly_one_summary(tg, group, alice, clock):
    await tg.command(group, alice, "/quiz")
    [poll] = await tg.fake.wait_for("sendPoll")
    post_id = await tg.service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")

    await tg.tick()
    assert not [t for t in tg.texts(group) if "Question closed" in t]  # not yet due
    clock.advance(QUESTION_SECONDS + 1)
    assert (await tg.tick()).closed == 1
    for _ in range(3):  # more rounds of the scheduler
        clock.advance(60)
        await tg.tick()

    summaries = [t for t in tg.texts(group) if "Question closed" in t]
    assert len(summaries) == 1
    assert "0 people answered" in summaries[0]
    assert len(tg.fake.calls_of("stopPoll")) == 1
    assert (await tg.service.storage.get_post(post_id)).closed_at is not None

    # Telegram closed the poll itself at open_period; a late answer does not count
    await tg.answer(poll, alice, poll.params["correct_option_ids"][0])
    assert await tg.service.storage.answers_for_post(post_id) == []


async def test_summary_survives_a_poll_telegram_already_closed(tg, group, alice, clock):
    await tg.command(group, alice, "/quiz")
    [poll] = await tg.fake.wait_for("sendPoll")
    tg.fake.polls[poll.result["poll"]["id"]]["is_closed"] = True  # open_period ran out

    clock.advance(QUESTION_SECONDS + 1)
    await tg.tick()
    assert [t for t in tg.texts(group) if "Question closed" in t]
    assert tg.fake.calls_of("stopPoll", ok_only=False)[0].status == 400


async def test_an_answer_racing_the_bind_still_counts(tg, group, alice, monkeypatch):
    bind = tg.service.questions.bind

    async def slow_bind(post_id: int, *refs: str) -> None:
        await asyncio.sleep(0.3)
        await bind(post_id, *refs)

    monkeypatch.setattr(tg.service.questions, "bind", slow_bind)
    tg.fake.command(group, alice, "/quiz")
    [poll] = await tg.fake.wait_for("sendPoll")  # sent, but not bound yet
    await tg.answer(poll, alice, poll.params["correct_option_ids"][0])

    post_id = await tg.service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")
    [answer] = await tg.service.storage.answers_for_post(post_id)
    assert answer.person_key == "tg:1001" and answer.correct


async def test_a_members_quiz_links_the_open_question_and_closes_nothing(tg, group, alice, bob):
    await tg.command(group, alice, "/quiz")
    [poll] = await tg.fake.wait_for("sendPoll")
    await tg.command(group, bob, "/quiz")  # Bob is no admin: Telegram says so
    reply = tg.texts(group)[-1]
    assert reply.startswith("This question is still open: “")
    internal = str(group["id"]).removeprefix("-100")  # a supergroup's message link
    assert reply.endswith(f"https://t.me/c/{internal}/{poll.result['message_id']}")
    assert not tg.fake.calls_of("stopPoll") and len(tg.fake.calls_of("sendPoll")) == 1
