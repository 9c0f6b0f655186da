"""The chat rules, written once, checked on Telegram and on Discord (see harness.py).

Each test is what a person does in a chat and what they (or the chat) then see; the database is
read only to check what was stored.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import MutableSequence
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.models import Chat, Person, ShownQuestion
from bot.core.render import letter, short
from bot.core.service import DEFAULT_QUESTION_TIME
from bot.reports import chart_size, summary_chart_size
from tests.behaviour.harness import Harness

BENGALI = range(0x0980, 0x0A00)
DEVANAGARI = range(0x0900, 0x0980)


async def chat_of(h: Harness, post_id: int) -> str:
    post = await h.service.storage.get_post(post_id)
    assert post is not None
    return post.chat_key


async def open_quiz_posts(h: Harness, chat_key: str) -> list[int]:
    return [p.id for p in await h.service.storage.open_posts(chat_key, kind="quiz")]


async def shown(h: Harness, post_id: int) -> ShownQuestion:
    question = await h.service.questions.show(post_id)
    assert question is not None
    return question


# /quiz in a shared chat ------------------------------------------------------------------------
async def test_four_people_asking_at_once_leave_one_question_open(h: Harness) -> None:
    group = h.group()
    people = [h.person(n) for n in range(1, 5)]
    for who in people:  # admins: each may replace the open question (issue 18)
        h.make_admin(who)
    seen = await asyncio.gather(*(h.quiz(group, who) for who in people))
    posts = [post for s in seen for post in s.post_ids]
    assert len(posts) == 4
    chat_key = await chat_of(h, posts[0])
    still_open = await open_quiz_posts(h, chat_key)
    assert len(still_open) == 1
    for post in set(posts) - set(still_open):
        assert h.closed_on_platform(post), f"replaced question {post} shows no summary"


async def test_a_new_quiz_closes_the_last_one_with_its_summary(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    h.make_admin(alice)  # an admin replaces the open question (a member's /quiz points at it)
    [first] = (await h.quiz(group, alice)).post_ids
    [second] = (await h.quiz(group, alice)).post_ids
    assert await open_quiz_posts(h, await chat_of(h, second)) == [second]
    assert h.closed_on_platform(first)


async def test_an_unknown_quiz_is_explained_and_closes_nothing(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    [post] = (await h.quiz(group, alice)).post_ids
    seen = await h.quiz(group, alice, "no-such-thing")
    assert seen.post_ids == []
    assert "There is no quiz or topic called “no-such-thing”." in seen.text
    assert "sample" in seen.text  # what exists instead
    assert await open_quiz_posts(h, await chat_of(h, post)) == [post]


async def test_a_question_closes_when_its_time_is_up(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    [post] = (await h.quiz(group, alice)).post_ids
    await h.tick()
    assert not h.closed_on_platform(post)
    h.clock.advance(DEFAULT_QUESTION_TIME.total_seconds() + 1)
    await h.tick()
    assert h.closed_on_platform(post)


# answers ---------------------------------------------------------------------------------------
async def test_the_first_answer_is_final(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    [post] = (await h.quiz(group, alice)).post_ids
    question = await shown(h, post)
    wrong = (question.correct + 1) % len(question.options)
    await h.answer(group, alice, post, wrong)
    await h.answer(group, alice, post, question.correct)
    stored = await h.service.storage.answer_of(post, h.person_key(alice))
    assert stored is not None and not stored.correct


async def test_a_redelivered_answer_is_stored_once_without_errors(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    [post] = (await h.quiz(group, alice)).post_ids
    question = await shown(h, post)
    await h.answer(group, alice, post, question.correct)
    await h.answer_again(group, alice, post, question.correct)
    assert await h.service.storage.answer_count(post) == 1


async def test_a_forged_button_is_refused_and_stores_nothing(h: Harness) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    [first] = (await h.quiz(group, alice)).post_ids
    await h.service.questions.close(first, quiet=True)
    [second] = (await h.quiz(group, alice)).post_ids
    # a click on the second question's message that claims to answer the first
    seen = await h.forged_click(group, bob, first, 0)
    assert seen.text, "a forged click gets a polite refusal"
    assert await h.service.storage.answer_of(first, h.person_key(bob)) is None
    assert await h.service.storage.answer_of(second, h.person_key(bob)) is None


# private chats ---------------------------------------------------------------------------------
async def test_a_topic_in_a_private_chat_gives_one_question_for_that_person(h: Harness) -> None:
    alice = h.person(1)
    dm = h.private(alice)
    [post_id] = (await h.quiz(dm, alice, "testing")).post_ids
    post = await h.service.storage.get_post(post_id)
    assert post is not None
    assert (post.quiz_id, post.run_id, post.owner_key) == ("sample", None, h.person_key(alice))


async def test_a_quiz_id_in_a_private_chat_runs_the_whole_quiz(h: Harness) -> None:
    alice = h.person(1)
    dm = h.private(alice)
    [first] = (await h.quiz(dm, alice, "sample")).post_ids
    question = await shown(h, first)
    assert question.run_id is not None
    seen = await h.answer(dm, alice, first, question.correct)
    assert seen.text, "the answer and its explanation appear at once"
    assert len(seen.post_ids) == 1 and seen.post_ids[0] != first  # the next question
    # /quiz alone resumes the run where it stands
    resumed = await h.quiz(dm, alice)
    assert resumed.post_ids == seen.post_ids


async def test_only_the_owner_answers_a_private_question(h: Harness) -> None:
    alice, bob = h.person(1), h.person(2)
    dm = h.private(alice)
    [post] = (await h.quiz(dm, alice, "testing")).post_ids
    question = await shown(h, post)
    await h.answer(dm, bob, post, question.correct)  # a forwarded poll, a replayed click
    assert await h.service.storage.answer_of(post, h.person_key(bob)) is None
    assert post in [p.id for p in await h.service.storage.open_posts(await chat_of(h, post))]
    await h.answer(dm, alice, post, question.correct)
    assert await h.service.storage.answer_of(post, h.person_key(alice)) is not None
    # a single private question is done once its person answered
    assert post not in [p.id for p in await h.service.storage.open_posts(await chat_of(h, post))]


# daily questions -------------------------------------------------------------------------------
async def test_only_admins_set_the_daily_question(h: Harness) -> None:
    group, bob = h.group(), h.person(2)
    await h.quiz(group, bob)  # the chat exists
    seen = await h.daily_set(group, bob)
    assert "Only this chat's admins can change its daily question." in seen.text
    assert await h.service.storage.schedules() == []


async def test_turning_the_daily_question_off_closes_it_with_its_summary(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    h.make_admin(alice)
    await h.daily_set(group, alice, "09:00", "UTC")
    [schedule] = await h.service.storage.schedules()
    h.clock.set(datetime(2026, 3, 2, 9, 0, 30, tzinfo=UTC))
    await h.tick()
    [daily] = await h.service.storage.open_posts(schedule.chat_key, kind="daily")
    await h.daily_off(group, alice)
    assert await h.service.storage.schedules() == []
    assert await h.service.storage.open_posts(schedule.chat_key, kind="daily") == []
    assert h.closed_on_platform(daily.id)


async def test_a_new_quiz_leaves_the_daily_question_open(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    h.make_admin(alice)
    await h.daily_set(group, alice, "09:00", "UTC")
    h.clock.set(datetime(2026, 3, 2, 9, 0, 30, tzinfo=UTC))
    await h.tick()
    [schedule] = await h.service.storage.schedules()
    [daily] = await h.service.storage.open_posts(schedule.chat_key, kind="daily")
    await h.quiz(group, alice)
    assert [p.id for p in await h.service.storage.open_posts(schedule.chat_key, kind="daily")] \
        == [daily.id]
    h.clock.advance(hours=1)
    await h.tick()
    assert not h.closed_on_platform(daily.id)


# boards and languages --------------------------------------------------------------------------
async def test_the_leaderboard_ranks_right_answers_first(h: Harness) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    [post] = (await h.quiz(group, alice)).post_ids
    question = await shown(h, post)
    await h.answer(group, bob, post, (question.correct + 1) % len(question.options))
    h.clock.advance(seconds=5)
    await h.answer(group, alice, post, question.correct)
    text = (await h.leaderboard(group, bob)).text
    alice_name = await h.service.storage.person_name(h.person_key(alice))
    bob_name = await h.service.storage.person_name(h.person_key(bob))
    assert alice_name and bob_name and alice_name != bob_name
    assert text.index(alice_name) < text.index(bob_name)


async def test_a_chosen_language_is_used_for_replies_and_questions(h: Harness) -> None:
    alice = h.person(1)
    dm = h.private(alice)
    seen = await h.set_language(dm, alice, "bn")
    assert any(ord(c) in BENGALI for c in seen.text), seen.text
    [post] = (await h.quiz(dm, alice, "testing")).post_ids
    assert (await shown(h, post)).locale == "bn"


async def test_a_question_survives_a_restart(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    [post] = (await h.quiz(group, alice)).post_ids
    question = await shown(h, post)
    await h.restart()
    await h.answer(group, alice, post, question.correct)
    stored = await h.service.storage.answer_of(post, h.person_key(alice))
    assert stored is not None and stored.correct
    h.clock.advance(timedelta(minutes=11).total_seconds())
    await h.tick()
    assert h.closed_on_platform(post)


# spaced review ---------------------------------------------------------------------------------
async def test_review_runs_the_due_cards_privately(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    person = Person(h.person_key(alice), "")
    nothing = await h.review(group, alice)
    assert nothing.text and not nothing.post_ids  # nothing answered yet: nothing due
    [post] = (await h.quiz(group, alice)).post_ids
    question = await shown(h, post)
    await h.answer(group, alice, post, (question.correct + 1) % len(question.options))
    h.clock.advance(120)  # a wrong answer is due again a minute later (FSRS's first step)

    started = await h.review(group, alice)
    assert len(started.post_ids) == 1, started.texts
    [card] = started.post_ids
    assert h.shown_privately(card)
    stored = await h.service.storage.get_post(card)
    assert stored is not None
    assert (stored.kind, stored.owner_key, stored.quiz_id, stored.question_id) == (
        "review", person.key, question.quiz_id, question.question_id)
    review = await shown(h, card)
    seen = await h.answer(h.private(alice), alice, card, review.correct)
    assert seen.text, "the answer and its explanation appear at once"
    assert not seen.post_ids  # nothing else is due
    answer = await h.service.storage.answer_of(card, person.key)
    assert answer is not None and answer.correct
    stats = await h.service.spaced.stats(person)
    assert (stats.cards, stats.due, stats.reviews, stats.right) == (1, 0, 1, 1)


async def test_remind_sets_and_removes_a_daily_review_reminder(h: Harness) -> None:
    alice = h.person(1)
    person = Person(h.person_key(alice), "")
    seen = await h.remind(h.private(alice), alice, "07:30", "Asia/Kolkata")
    assert "07:30" in seen.text and "Asia/Kolkata" in seen.text
    reminder = await h.service.spaced.reminder(person)
    assert reminder is not None and (reminder.at.strftime("%H:%M"), reminder.tz) == (
        "07:30", "Asia/Kolkata")
    assert (await h.remind(h.private(alice), alice, "off")).text
    assert await h.service.spaced.reminder(person) is None


# rounds and chat settings -------------------------------------------------------------------
async def test_a_round_asks_n_questions_in_a_row_and_sums_them_up(h: Harness) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    [first] = (await h.quiz(group, alice, "sample", count=3)).post_ids
    asked = [first]
    for _ in range(3):
        question = await shown(h, asked[-1])
        await h.answer(group, bob, asked[-1], question.correct)
        h.clock.advance(DEFAULT_QUESTION_TIME.total_seconds() + 1)
        await h.tick()
        assert h.closed_on_platform(asked[-1])
        asked = h.questions_in(group)
    assert len(asked) == 3 and len(set(asked)) == 3
    assert {(await shown(h, p)).quiz_id for p in asked} == {"sample"}
    [summary] = [t for t in h.posted_texts(group) if "Round over" in t]
    assert "3 of 3 right" in summary
    assert await open_quiz_posts(h, await chat_of(h, first)) == []


async def test_a_new_quiz_replaces_a_running_round(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    h.make_admin(alice)  # an admin ends a running round (a member's /quiz points at it)
    [first] = (await h.quiz(group, alice, count=4)).post_ids
    [single] = (await h.quiz(group, alice)).post_ids
    assert h.closed_on_platform(first)
    assert any("Round over after 1 of 4 questions" in t for t in h.posted_texts(group))
    h.clock.advance(DEFAULT_QUESTION_TIME.total_seconds() + 1)
    await h.tick()
    assert h.questions_in(group) == [first, single]


async def test_a_bad_round_size_is_explained(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    seen = await h.quiz(group, alice, count=99)
    assert seen.post_ids == []
    assert "A round has 1 to 20 questions, not “99”." in seen.text


async def test_only_admins_change_the_settings_and_the_question_time_is_used(
    h: Harness,
) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    h.make_admin(alice)
    await h.quiz(group, bob)  # the chat exists
    refused = await h.change_settings(group, bob, seconds=30)
    assert "Only this chat's admins can change its settings." in refused.text
    [post] = (await h.quiz(group, alice)).post_ids  # an admin replaces bob's open question
    chat_key = await chat_of(h, post)
    assert await h.service.storage.get_chat_settings(chat_key) is None
    done = await h.change_settings(group, alice, seconds=30)
    assert "Question time: 30 s" in done.text
    bad = await h.change_settings(group, alice, seconds=5)
    assert ("A question is open for 10 seconds to 30 days (/settings time 90, 10m, 2h or "
            "3d), not “5”.") in bad.text
    [timed] = (await h.quiz(group, alice)).post_ids
    h.clock.advance(31)
    await h.tick()
    assert h.closed_on_platform(timed)
    shown_to_anyone = await h.change_settings(group, bob)
    assert "Question time: 30 s" in shown_to_anyone.text


async def test_a_reminder_comes_privately_once_a_day_when_reviews_are_due(h: Harness) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    for who in (alice, bob):  # the clock is 12:00 UTC: the first reminder is tomorrow's
        await h.remind(h.private(who), who, "09:00", "UTC")
    [post] = (await h.quiz(group, alice)).post_ids
    question = await shown(h, post)
    await h.answer(group, alice, post, (question.correct + 1) % len(question.options))
    await h.tick()
    assert h.private_texts(alice) == []
    h.clock.set(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    await h.tick()
    await h.tick()
    assert h.private_texts(alice) == [
        "📚 1 question is due for review. Send /review to go through it."]
    assert h.private_texts(bob) == []  # nothing due: no message


# reporting a problem with a question -------------------------------------------------------
async def test_a_flagged_question_is_reported_with_the_person_and_text(h: Harness) -> None:
    group, alice = h.group(), h.person(1, language="bn")
    [post] = (await h.quiz(group, alice)).post_ids
    question = await shown(h, post)
    await h.answer(group, alice, post, question.correct)
    seen = await h.report_via_flag(group, alice, post, "  বিকল্প B-ও ঠিক  ")
    [report] = await h.service.problem_reports.list()
    assert (report.question_id, report.person_key, report.text) == (
        question.question_id, h.person_key(alice), "বিকল্প B-ও ঠিক")
    assert any(ord(c) in BENGALI for c in seen.text), seen.text  # thanked in her language
    # /report of the same question while it is open adds to it, not a second report
    again = await h.report(group, alice, question.question_id, "and the explanation")
    assert again.text
    [report] = await h.service.problem_reports.list()
    assert report.text == "বিকল্প B-ও ঠিক\nand the explanation"


async def test_a_forged_flag_for_an_unknown_question_is_refused_and_stores_nothing(
    h: Harness,
) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    await h.quiz(group, alice)
    for forged in ("no-such-question", "s-one'; DROP TABLE answers;--", "x" * 60):
        seen = await h.forged_flag(group, bob, forged)
        assert seen.text, "a forged flag gets a polite refusal"
    assert (await h.report(group, bob, None, "wrong")).text  # nothing answered here yet
    assert await h.service.problem_reports.list(open_only=False) == []
# item analysis -------------------------------------------------------------------------------
def png_size(data: bytes) -> tuple[int, int]:
    """A PNG's (width, height), read from its signature and IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


async def test_admins_see_the_item_analysis_with_its_chart(h: Harness) -> None:
    group, alice, bob, chandra = h.group(), h.person(1), h.person(2), h.person(3)
    h.make_admin(alice)
    nothing = await h.analysis(group, alice)
    assert "No answers in this chat yet" in nothing.text and nothing.images == []
    [post] = (await h.quiz(group, bob, "sample")).post_ids
    question = await shown(h, post)
    await h.answer(group, bob, post, question.correct)
    await h.answer(group, chandra, post, (question.correct + 1) % len(question.options))

    refused = await h.analysis(group, bob)
    assert "Only this chat's admins can see its item analysis." in refused.text
    assert refused.images == []

    seen = await h.analysis(group, alice)
    assert f"({question.question_id})" in seen.text
    assert "answered 2 · right 50%" in seen.text
    assert "Item analysis: " in seen.text and "(sample)" in seen.text
    [png] = seen.images
    chat_key = await chat_of(h, post)
    analysis = await h.service.item_analysis.for_chat(Chat(chat_key), allowed=True)
    assert png_size(png) == chart_size(analysis.charted) == (720, 316)

    unknown = await h.analysis(group, alice, "no-such-quiz")
    assert "There is no quiz or topic called “no-such-quiz”." in unknown.text
    assert unknown.images == []


class Reversing(random.Random):
    """Shows every question's options in reverse: letters that differ from the pack's."""

    def shuffle(self, x: MutableSequence[object]) -> None:
        x.reverse()


async def test_the_analysis_names_options_by_the_letters_the_chat_saw(h: Harness) -> None:
    group, alice, bob, chandra = h.group(), h.person(1), h.person(2), h.person(3)
    h.make_admin(alice)
    h.service.questions.rng = Reversing(1)
    [post] = (await h.quiz(group, bob, "sample")).post_ids
    question = await shown(h, post)
    stored = await h.service.storage.get_post(post)
    assert stored is not None
    # a wrong option whose letter in the chat is not its letter in the pack
    wrong = next(i for i in range(len(question.options))
                 if i != question.correct and stored.order[i] != i)
    await h.answer(group, bob, post, question.correct)
    await h.answer(group, chandra, post, wrong)

    lines = (await h.analysis(group, alice)).text.splitlines()
    for i, text in enumerate(question.options):
        chosen = i in (question.correct, wrong)
        line = f"{letter(i)}) {short(text)} — {int(chosen)} ({'50%' if chosen else '0%'})"
        assert line + (" ✓" if i == question.correct else "") in lines, lines
    assert "Letters as this chat last saw each question." in "\n".join(lines)


async def test_a_closed_question_shows_a_chart_only_when_the_chat_turned_it_on(
    h: Harness,
) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    h.make_admin(alice)

    async def asked_answered_and_closed() -> tuple[int, int]:
        [post] = (await h.quiz(group, bob)).post_ids
        question = await shown(h, post)
        await h.answer(group, bob, post, question.correct)
        h.clock.advance(DEFAULT_QUESTION_TIME.total_seconds() + 1)
        await h.tick()
        assert h.closed_on_platform(post)
        return post, len(question.options)

    plain, _ = await asked_answered_and_closed()
    assert h.summary_images(plain) == []  # off by default

    refused = await h.change_settings(group, bob, chart=True)
    assert "Only this chat's admins can change its settings." in refused.text
    done = await h.change_settings(group, alice, chart=True)
    assert "Chart of the answers when a question closes: on" in done.text
    charted, options = await asked_answered_and_closed()
    [png] = h.summary_images(charted)
    assert png_size(png) == summary_chart_size(options)

    off = await h.change_settings(group, alice, chart=False)
    assert "Chart of the answers when a question closes: off" in off.text
    again, _ = await asked_answered_and_closed()
    assert h.summary_images(again) == []


# reports that reach admins -----------------------------------------------------------------
async def test_an_unknown_report_id_is_refused_with_the_nearest_and_nothing_stored(
    h: Harness,
) -> None:
    group, alice = h.group(), h.person(1)
    [post] = (await h.quiz(group, alice)).post_ids
    question = await shown(h, post)
    await h.answer(group, alice, post, question.correct)
    typo = await h.report(group, alice, question.question_id[:-1], "the answer is wrong")
    assert question.question_id in typo.text, typo.text  # the nearest id
    far = await h.report(group, alice, "no-such-q", "the answer is wrong")
    assert question.question_id in far.text, far.text  # the last question she answered
    assert "Thank you" not in typo.text + far.text
    assert await h.service.problem_reports.list(open_only=False) == []


async def test_admins_read_and_resolve_the_reports_made_in_their_chat(h: Harness) -> None:
    group, admin, alice = h.group(), h.person(1), h.person(2)
    h.make_admin(admin)
    [post] = (await h.quiz(group, alice)).post_ids
    await h.report_via_flag(group, alice, post, "option C is right too")
    [report] = await h.service.problem_reports.list()
    assert report.chat_key == await chat_of(h, post)  # the group's, though written privately
    refused = await h.reports(group, alice)
    assert "option C" not in refused.text and refused.text
    listed = await h.reports(group, admin)
    assert f"#{report.id}" in listed.text and "option C is right too" in listed.text
    assert "Bob" in listed.text  # the reporter (person 2)
    done = await h.reports(group, admin, resolve=report.id, note="fixed")
    assert f"#{report.id}" in done.text
    assert await h.service.problem_reports.list() == []
    assert f"#{report.id}" not in (await h.reports(group, admin)).text


# help that teaches ---------------------------------------------------------------------------
async def test_help_lists_the_bundled_quizzes_and_the_commands_one_may_use(h: Harness) -> None:
    group, admin, alice = h.group(), h.person(1), h.person(2)
    h.make_admin(admin)
    member = (await h.help(group, alice)).text
    for quiz in h.service.questions.quizzes():
        assert quiz.id in member and quiz.title in member, member
        assert f"{quiz.questions} question" in member, member
    assert "/report" in member and "/reports" not in member and "/analysis" not in member
    assert "/reports" in (await h.help(group, admin)).text
    # the private chat is hers to manage, but what admins use in a group is not in its /help
    # (Telegram: /help admin shows it there)
    private = (await h.help(h.private(alice), alice)).text
    assert "/report" in private and "/analysis" not in private


async def test_the_bot_says_hello_once_when_it_joins(h: Harness) -> None:
    place = await h.join()
    [welcome] = h.posted_texts(place)
    for quiz in h.service.questions.quizzes():
        assert quiz.id in welcome, welcome
    assert "/quiz" in welcome and "/help" in welcome
    await h.join_again(place)
    assert h.posted_texts(place) == [welcome]


async def test_the_welcome_speaks_the_servers_language(h: Harness) -> None:
    if h.platform != "discord":
        pytest.skip("a Telegram group has no language of its own when the bot joins it")
    place = await h.join("hi")
    [welcome] = h.posted_texts(place)
    assert any(ord(c) in DEVANAGARI for c in welcome), welcome


# whose language --------------------------------------------------------------------------------
async def test_in_private_the_persons_language_wins_and_in_the_group_the_chats(
    h: Harness,
) -> None:
    group, admin = h.group(), h.person(1)
    alice, bipasha = h.person(2, language="en"), h.person(3, language="bn")
    h.make_admin(admin)
    await h.chat_language(group, admin, "hi")
    helped = (await h.help(h.private(alice), alice)).text
    assert not any(ord(c) in DEVANAGARI for c in helped), helped
    [mine] = (await h.quiz(h.private(alice), alice, "sample")).post_ids
    assert (await shown(h, mine)).locale == "en"
    [hers] = (await h.quiz(h.private(bipasha), bipasha, "sample")).post_ids
    assert (await shown(h, hers)).locale == "bn"
    [shared] = (await h.quiz(group, alice)).post_ids
    assert (await shown(h, shared)).locale == "hi"


async def test_a_start_link_starts_that_quiz_privately(h: Harness) -> None:
    if h.platform != "telegram":
        pytest.skip("Telegram's t.me/<bot>?start=<quiz id>; Discord's way is /quiz with the "
                    "quiz id (test_a_quiz_id_in_a_private_chat_runs_the_whole_quiz)")
    from tests.behaviour.telegram import TelegramHarness

    assert isinstance(h, TelegramHarness)
    alice = h.person(1)
    started = await h.start_link(alice, "sample")
    [post] = started.post_ids
    assert h.shown_privately(post)
    question = await shown(h, post)
    assert question.quiz_id == "sample" and question.personal
    unknown = await h.start_link(alice, "no-such-quiz")
    assert not unknown.post_ids and "no-such-quiz" in unknown.text
    for quiz in h.service.questions.quizzes():
        assert quiz.id in unknown.text


# who may start or cut a question (issue 18) ----------------------------------------------------
async def test_a_members_quiz_points_at_the_open_question_and_closes_nothing(h: Harness) -> None:
    group, alice, bob, chandra = h.group(), h.person(1), h.person(2), h.person(3)
    h.make_admin(alice)
    [post] = (await h.quiz(group, bob)).post_ids
    question = await shown(h, post)
    refused = await h.quiz(group, chandra)
    assert refused.post_ids == []
    assert "This question is still open" in refused.text
    assert question.prompt[:20] in refused.text  # named, so it can be found
    assert await open_quiz_posts(h, await chat_of(h, post)) == [post]
    assert not h.closed_on_platform(post)
    refused_again = await h.quiz(group, bob)  # its own asker cannot cut it short either
    assert refused_again.post_ids == [] and not h.closed_on_platform(post)
    [replacing] = (await h.quiz(group, alice)).post_ids  # an admin still replaces it
    assert h.closed_on_platform(post)
    assert await open_quiz_posts(h, await chat_of(h, post)) == [replacing]


async def test_a_members_quiz_does_not_end_a_running_round(h: Harness) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    h.make_admin(alice)
    [first] = (await h.quiz(group, alice, "sample", count=3)).post_ids
    refused = await h.quiz(group, bob)
    assert refused.post_ids == [] and "This question is still open" in refused.text
    assert not h.closed_on_platform(first)
    assert len(await h.service.storage.active_rounds(await chat_of(h, first))) == 1
    h.clock.advance(DEFAULT_QUESTION_TIME.total_seconds() + 1)
    await h.tick()  # the round goes on
    assert len(h.questions_in(group)) == 2


async def test_admins_can_keep_quiz_and_rounds_to_themselves(h: Harness) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    h.make_admin(alice)
    refused = await h.change_settings(group, bob, quiz="admins")
    assert "Only this chat's admins can change its settings." in refused.text
    done = await h.change_settings(group, alice, quiz="admins")
    assert "Who starts questions and rounds: admins only" in done.text
    for count in (None, 3):
        nope = await h.quiz(group, bob, count=count)
        assert nope.post_ids == []
        assert "In this chat only admins start questions and rounds." in nope.text
    assert h.questions_in(group) == []
    [post] = (await h.quiz(group, alice)).post_ids
    question = await shown(h, post)
    await h.answer(group, bob, post, question.correct)  # members still answer
    assert await h.service.storage.answer_of(post, h.person_key(bob)) is not None
    [own] = (await h.quiz(h.private(bob), bob, "sample")).post_ids  # and run quizzes alone
    assert h.shown_privately(own)
    back = await h.change_settings(group, alice, quiz="anyone")
    assert "Who starts questions and rounds: anyone" in back.text


# names and numbers (issue 18) ------------------------------------------------------------------
async def test_a_private_run_leaves_the_group_boards_names_intact(h: Harness) -> None:
    group, alice, dipa = h.group(), h.person(1), h.person(4)
    [post] = (await h.quiz(group, alice)).post_ids
    await h.answer(group, dipa, post, (await shown(h, post)).correct)
    dm = h.private(dipa)
    [first] = (await h.quiz(dm, dipa, "sample")).post_ids
    seen = await h.answer(dm, dipa, first, (await shown(h, first)).correct)
    assert seen.post_ids  # the run's next question was posted; Dipa stops here
    key = h.person_key(dipa)
    assert await h.service.storage.person_name(key) == "Dipa"
    board = (await h.leaderboard(group, alice)).text
    assert "Dipa" in board and key not in board


async def test_numbers_count_the_round_or_run_a_question_belongs_to(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    h.make_admin(alice)
    [single] = (await h.quiz(group, alice, "sample")).post_ids
    assert (await shown(h, single)).number is None
    assert " of " not in h.question_shown(single) and "/" not in h.question_shown(single)[:6]
    [first] = (await h.quiz(group, alice, "sample", count=2)).post_ids
    question = await shown(h, first)
    assert (question.number, question.total) == (1, 2)
    text = h.question_shown(first)
    assert "1/2 · " in text or "question 1 of 2" in text, text  # a poll or a message
    await h.answer(group, alice, first, question.correct)
    h.clock.advance(DEFAULT_QUESTION_TIME.total_seconds() + 1)
    await h.tick()
    second = h.questions_in(group)[-1]
    assert (await shown(h, second)).number == 2
    assert "2/2 · " in h.question_shown(second) or "question 2 of 2" in h.question_shown(second)


# review and reminders (issue 18) ---------------------------------------------------------------
async def test_review_says_when_the_next_card_is_due(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    dm = h.private(alice)
    [post] = (await h.quiz(group, alice)).post_ids
    await h.answer(group, alice, post, (await shown(h, post)).correct)
    nothing = await h.review(dm, alice)
    assert nothing.post_ids == []
    # a first right answer comes back after FSRS's 10-minute learning step
    assert "Your next card is due in 10 minutes." in nothing.text, nothing.text


async def test_remind_alone_shows_the_current_reminder(h: Harness) -> None:
    alice = h.person(1)
    dm = h.private(alice)
    none = await h.remind(dm, alice, "")
    assert "You have no review reminder." in none.text
    await h.remind(dm, alice, "07:30", "Asia/Kolkata")
    current = await h.remind(dm, alice, "")
    assert "Your review reminder: 07:30 (Asia/Kolkata)" in current.text


# a person's own data (/mydata) -----------------------------------------------------------------
async def test_mydata_sends_the_person_their_answers_as_a_json_file(h: Harness) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    [post] = (await h.quiz(group, alice)).post_ids
    await h.answer(group, bob, post, (await shown(h, post)).correct)
    seen = await h.mydata(h.private(bob), bob)
    [file] = seen.files
    data = json.loads(file)
    assert data["person"]["key"] == h.person_key(bob)
    assert data["person"]["name"] == await h.service.storage.person_name(h.person_key(bob))
    [answer] = data["answers"]
    assert (answer["chat"], answer["quiz"], answer["correct"]) == (
        await chat_of(h, post), "sample", True)
    assert seen.text  # a caption that says what the file is


async def test_mydata_in_a_group_is_seen_by_the_person_alone(h: Harness) -> None:
    group, alice = h.group(), h.person(1)
    seen = await h.mydata(group, alice)
    deleting = await h.mydata_delete(group, alice)
    if h.platform == "telegram":  # the whole group would see it: refused, nothing sent
        assert not seen.files and "/mydata" in seen.text
        assert "/mydata" in deleting.text
    else:  # an ephemeral reply (the harness checks it)
        assert len(seen.files) == 1
        assert deleting.text


async def test_mydata_delete_confirmed_removes_them_from_the_group_board(h: Harness) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    [post] = (await h.quiz(group, alice)).post_ids
    question = await shown(h, post)
    await h.answer(group, alice, post, question.correct)
    await h.answer(group, bob, post, question.correct)
    key = h.person_key(bob)
    bob_name = await h.service.storage.person_name(key)
    assert bob_name and bob_name in (await h.leaderboard(group, alice)).text
    [first] = (await h.quiz(h.private(bob), bob, "sample")).post_ids  # a run in their DM
    await h.answer(h.private(bob), bob, first, (await shown(h, first)).correct)
    seen = await h.mydata_delete(h.private(bob), bob)
    assert seen.text
    await h.service.storage.materialize()
    board = (await h.leaderboard(group, alice)).text
    assert bob_name not in board and key not in board
    assert await h.service.storage.person_name(key) is None
    assert await h.service.storage.get_post(first) is None  # their run's questions too
    assert json.loads((await h.mydata(h.private(bob), bob)).files[0])["answers"] == []


async def test_a_forged_or_anothers_delete_confirmation_deletes_nothing(h: Harness) -> None:
    group, alice, bob = h.group(), h.person(1), h.person(2)
    [post] = (await h.quiz(group, alice)).post_ids
    await h.answer(group, bob, post, (await shown(h, post)).correct)
    key = h.person_key(bob)
    bob_name = await h.service.storage.person_name(key)
    forged = await h.mydata_delete(h.private(bob), bob, forged=True)
    by_alice = await h.mydata_delete(h.private(bob), bob, pressed_by=alice)
    for seen in (forged, by_alice):
        assert seen.text  # refused with a word about it
    assert await h.service.storage.person_name(key) == bob_name
    assert bob_name and bob_name in (await h.leaderboard(group, alice)).text
