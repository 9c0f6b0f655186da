"""Discord's side of problem reports: the ⚑ under a question (a row of its own), the form
it opens (limits), /report's autocomplete, /report with a question and no text opening the
form, an unknown question refused with the nearest ids, Discord's own syntax in a refusal, and
a form submitted after a restart still stored.
The rules themselves run on both platforms in tests/behaviour/test_rules.py."""

from __future__ import annotations

from bot.adapters.discord import DiscordAdapter
from bot.core.service import QuizService
from tests.discord_e2e.helpers import post_quiz
from tests.fakes.discord_api import (
    AUTOCOMPLETE_RESULT,
    EPHEMERAL,
    MODAL,
    FakeDiscord,
    User,
    flag_of,
)


async def test_the_flag_opens_a_form_and_its_submission_is_stored(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    flag = flag_of(reply.message)
    assert flag is not None and flag["custom_id"] == f"rp:{q.question_id}"
    assert reply.components[-1]["components"] == [flag]  # a row of its own
    click = await fake.click(reply.id, flag["custom_id"], user=alice)
    form = await fake.ack(click)
    assert form["type"] == MODAL
    assert form["data"]["custom_id"] == f"rpm:{q.question_id}"
    # the form names the question by its quiz and number, not its id
    number = [x.id for x in service.catalog.quizzes["sample"].questions].index(q.question_id) + 1
    assert form["data"]["title"] == f"Report: {q.quiz_title} · question {number} of 3"
    [field] = form["data"]["components"][0]["components"]
    assert field["max_length"] == 1000 and len(field["label"]) <= 45

    await bot.stop()  # submitted after a restart: no form object is kept in memory
    await bot.start()
    submitted = await fake.submit_modal(click, {"text": "  Red is not the only colour "},
                                        user=alice)
    thanks = await fake.reply(submitted)
    assert thanks.flags & EPHEMERAL and thanks.content.startswith("Thank you")
    [report] = await service.problem_reports.list()
    assert (report.question_id, report.person_key, report.text) == (
        q.question_id, f"dc:{alice.id}", "Red is not the only colour")


async def test_report_autocomplete_and_a_form_for_a_question_without_text(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    it = await fake.autocomplete("report", {"question": "colour"}, "question", user=alice)
    ack = await fake.ack(it)
    assert ack["type"] == AUTOCOMPLETE_RESULT
    assert ack["data"]["choices"] == [{"name": "s-two: Which is a colour?", "value": "s-two"}]
    it = await fake.slash("report", {"question": "s-two"}, user=alice)
    assert (await fake.ack(it))["type"] == MODAL
    it = await fake.slash("report", {"question": "nope"}, user=alice)
    refusal = await fake.reply(it)
    assert refusal.ephemeral and "nope" in refusal.text
    assert await service.problem_reports.list() == []


async def test_report_without_options_shows_discords_syntax(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User
) -> None:
    refusal = await fake.reply(await fake.slash("report", {}, user=alice))
    assert refusal.ephemeral and "/report question:" in refusal.text, refusal.text
    assert "<question id> <" not in refusal.text  # not Telegram's
    typo = await fake.reply(await fake.slash("report", {"question": "s-tw", "text": "x"},
                                             user=alice))
    assert "s-two" in typo.text  # the nearest id
    assert await service.problem_reports.list() == []
