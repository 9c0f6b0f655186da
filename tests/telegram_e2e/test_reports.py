"""Telegram's side of problem reports: the ⚑ under quiz polls and answer buttons (callback
data within 64 bytes), the private ForceReply prompt, someone the bot cannot write to, and
/report with and without a question id. The rules themselves run on both platforms in
tests/behaviour/test_rules.py."""

from __future__ import annotations

from typing import Any

from tests.telegram_e2e.test_buttons import button_question


def flag_data(message: dict[str, Any]) -> str:
    data: str
    [data] = [b["callback_data"] for row in message["reply_markup"]["inline_keyboard"]
              for b in row if b["text"] == "⚑"]
    assert data.startswith("r:") and len(data.encode()) <= 64
    return data


async def test_a_flag_asks_privately_and_the_reply_is_the_report(tg, group, alice):
    tg.fake.private_chat(alice)  # she started the bot
    await tg.command(group, alice, "/quiz")
    [poll] = await tg.fake.wait_for("sendPoll")
    message = tg.fake.messages[(group["id"], poll.result["message_id"])]
    data = flag_data(message)
    press = await tg.press(message, alice, data)
    assert "private chat" in press.params["text"]  # a toast in the group
    [prompt] = [c for c in tg.fake.calls_of("sendMessage") if c.params["chat_id"] == alice["id"]]
    assert prompt.params["reply_markup"]["force_reply"] is True
    # the prompt names the question as people know it, not by its id or the group's
    post_id = await tg.service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")
    shown = await tg.service.questions.show(post_id)
    quiz = tg.service.catalog.quizzes[shown.quiz_id]
    number = [q.id for q in quiz.questions].index(shown.question_id) + 1
    assert prompt.params["text"].startswith(
        f"⚑ {quiz.title.en} · question {number} of {len(quiz.questions)}\n"
        "What is wrong with this question?")
    assert data[2:] not in prompt.params["text"] and str(group["id"]) not in prompt.params["text"]
    [link] = prompt.params["entities"]  # the ⚑ itself carries where the reply belongs
    assert (link["type"], link["offset"], link["length"]) == ("text_link", 0, 1)
    assert link["url"] == ("https://t.me/quizbot_test_bot?start=hi_report"
                           f"#{data[2:]}:{group['id']}")
    await tg.send(tg.fake.reply(prompt.result, alice, "Two options are right"))
    [report] = await tg.service.problem_reports.list()
    assert (report.question_id, report.person_key, report.text, report.chat_key) == (
        data[2:], "tg:1001", "Two options are right", f"tg:{group['id']}")  # the group's
    assert tg.texts(alice)[-1].startswith("Thank you: your report on")


async def test_someone_the_bot_cannot_write_to_is_told_to_use_report(tg, group, alice):
    message = await button_question(tg, group, alice)
    data = flag_data(message)  # under the answer buttons, on a row of its own
    assert message["reply_markup"]["inline_keyboard"][-1] == [
        {"text": "⚑", "callback_data": data}]
    press = await tg.press(message, alice, data)
    assert press.params["show_alert"] is True
    assert f"/report {data[2:]}" in press.params["text"]
    assert await tg.service.problem_reports.list() == []


async def test_report_command_with_and_without_a_question_id(tg, group, alice):
    message = await button_question(tg, group, alice)
    post_id = await tg.post_of(message)
    shown = await tg.service.questions.show(post_id)
    await tg.press(message, alice, f"a:{post_id}:{shown.correct}")
    await tg.command(group, alice, "/report Typo in option B")  # the last one answered here
    [report] = await tg.service.problem_reports.list()
    assert (report.question_id, report.text) == (shown.question_id, "Typo in option B")

    other = next(q for q in ("s-one", "s-two") if q != shown.question_id)
    await tg.command(group, alice, f"/report {other}  The answer\nis wrong")
    reports = await tg.service.problem_reports.list()
    assert (reports[-1].question_id, reports[-1].text) == (other, "The answer\nis wrong")
    assert tg.texts(group)[-1].startswith("Thank you: your report on")


async def test_a_reply_to_another_message_is_no_report(tg, alice):
    private = tg.fake.private_chat(alice)
    await tg.command(private, alice, "/help")
    help_message = tg.fake.calls_of("sendMessage")[-1].result
    await tg.send(tg.fake.reply(help_message, alice, "s-one is wrong"))
    assert await tg.service.problem_reports.list() == []
