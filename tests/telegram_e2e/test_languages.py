"""Languages end to end on the bundled packs (complete in en, bn and hi): the command menu per
language, the same /quiz in each language, and who sees which language.

Interface strings are compared with what the translator gives, so these tests hold before and
after the bn/hi catalogs are filled in (until then bn/hi fall back to English)."""

from __future__ import annotations

import asyncio
import random
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.adapters.telegram.app import COMMANDS
from bot.adapters.telegram.text import fit, poll_explanation
from bot.content import load_catalog
from bot.core.service import QuizService
from bot.i18n import LANGUAGE_NAMES, translator
from tests.conftest import BUNDLED

LANGS = ("en", "bn", "hi")


@pytest.fixture
def service(storage, clock) -> QuizService:
    return QuizService(load_catalog(BUNDLED), storage, clock, random.Random(11))


@pytest.fixture
def charlie(fake_tg):
    return fake_tg.user(1003, "Charlie", language_code="hi")


async def prompt_language(fake_tg, chat: dict[str, Any], service: QuizService) -> str:
    """The language of the question prompt the bot sent into `chat` (waited for)."""
    prompts = {getattr(q.prompt, code): code for quiz in service.catalog.quizzes.values()
               for q in quiz.questions for code in ("en", "bn", "hi")}
    for _ in range(100):
        for call in reversed(fake_tg.calls):
            if call.ok and call.params.get("chat_id") == chat["id"]:
                text = str(call.params.get("question") or call.params.get("text")
                           or call.params.get("caption") or "")
                found = [code for prompt, code in prompts.items() if prompt in text]
                if found:
                    return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no question was sent to {chat['id']}")


async def question_of(tg, ref: str):
    post = await tg.service.storage.get_post(await tg.service.questions.post_id_for(ref))
    return post, tg.service.catalog.question(post.quiz_id, post.question_id)


async def test_command_menu_is_set_once_per_language(tg, fake_tg):
    calls = fake_tg.calls_of("setMyCommands")
    assert [c.params.get("language_code", "") for c in calls] == ["", "bn", "hi"]
    for call in calls:
        code = call.params.get("language_code") or "en"
        t = translator(code)
        assert [c["command"] for c in call.params["commands"]] == [n for n, _ in COMMANDS]
        assert [c["description"] for c in call.params["commands"]] == [
            t.gettext(msgid) for _, msgid in COMMANDS
        ]
    bn = {c["command"]: c["description"] for c in fake_tg.commands["bn"]}
    assert bn["daily"] == translator("bn").gettext(
        "A question every day: /daily HH:MM [Time/Zone] [quiz]"
    )


@pytest.mark.parametrize("code", LANGS)
async def test_the_same_quiz_in_each_language(tg, fake_tg, group, alice, bob, code):
    t = translator(code)
    fake_tg.set_admins(group["id"], alice["id"])
    await tg.command(group, alice, f"/lang chat {code}")
    assert tg.texts(group)[-1] == t.gettext("This chat's language is now {name}.",
                                            name=LANGUAGE_NAMES[code])

    await tg.command(group, bob, "/quiz")
    [poll] = await fake_tg.wait_for("sendPoll")
    post, question = await question_of(tg, f"tg-poll:{poll.result['poll']['id']}")
    assert post.locale == code
    prompt = getattr(question.prompt, code)
    assert prompt is not None  # the pack really has this language: no fallback
    assert poll.params["question"] == fit(prompt, 300)
    options = [getattr(question.options[i].text, code) for i in post.order]
    assert [o["text"] for o in poll.params["options"]] == options
    correct = poll.params["correct_option_ids"][0]
    assert options[correct] == getattr(question.options[question.answer].text, code)
    assert poll.params["explanation"] == poll_explanation(getattr(question.explanation, code))
    if code != "en":
        assert poll.params["question"] != question.prompt.en

    await tg.answer(poll, bob, correct)
    await tg.answer(poll, alice, (correct + 1) % len(options))
    await tg.command(group, alice, "/quiz")  # an admin's: closes the first with its summary
    await fake_tg.wait_for("sendPoll", 2)
    [summary] = [c.params["text"] for c in fake_tg.calls_of("sendMessage")
                 if c.params.get("reply_parameters", {}).get("message_id")
                 == poll.result["message_id"]]
    assert summary.startswith(t.gettext("⏱ Question closed."))
    assert prompt not in summary  # the question is right above it: not repeated
    assert t.gettext("Answer: {answer}", answer=f"{'ABCD'[correct]}) {options[correct]}") \
        in summary
    assert t.ngettext("{n} person answered", "{n} people answered", 2) in summary

    await tg.command(group, alice, "/leaderboard")
    board = tg.texts(group)[-1]
    assert board.startswith("🏆 " + t.gettext("Leaderboard · all time"))
    assert board.splitlines()[1] == t.gettext(
        "{rank}. {name} — {correct}/{answered} right ({time})",
        rank=t.number(1), name="Bob", correct=t.number(1), answered=t.number(1),
        time=board.splitlines()[1].rsplit("(", 1)[1].rstrip(")"),
    )


async def test_the_chat_sees_its_language_and_each_person_their_own(
    tg, fake_tg, group, alice, bob, charlie, alice_dm
):
    bob_dm, charlie_dm = fake_tg.private_chat(bob), fake_tg.private_chat(charlie)
    fake_tg.set_admins(group["id"], alice["id"])
    await tg.command(group, alice, "/lang chat hi")
    await tg.command(bob_dm, bob, "/lang bn")
    assert tg.texts(bob_dm)[-1] == translator("bn").gettext(
        "Your language is now {name}.", name=LANGUAGE_NAMES["bn"]
    )

    await tg.command(group, bob, "/quiz buttons")
    [sent] = [c.result for c in fake_tg.calls_of("sendMessage") if "reply_markup" in c.params]
    post, question = await question_of(tg, f"tg-msg:{group['id']}:{sent['message_id']}")
    assert question.prompt.hi in sent["text"]  # the whole group reads the group's language
    right = post.order.index(question.answer)
    data = sent["reply_markup"]["inline_keyboard"][0][right]["callback_data"]

    # each alert speaks to one person: their /lang choice, else their Telegram language,
    # else the chat's
    bob_alert = await tg.press(sent, bob, data)
    assert question.options[question.answer].text.bn in bob_alert.params["text"]
    assert bob_alert.params["text"].startswith(translator("bn").gettext(
        "✅ Correct! {answer}", answer=f"{'ABCD'[right]}) "
        f"{question.options[question.answer].text.bn}"
    ))
    alice_alert = await tg.press(sent, alice, data)  # her Telegram is in English
    assert question.options[question.answer].text.en in alice_alert.params["text"]
    dipa = fake_tg.user(1004, "Dipa")  # no language known: the chat's
    dipa_alert = await tg.press(sent, dipa, data)
    assert question.options[question.answer].text.hi in dipa_alert.params["text"]

    # private chats: the person's choice, else their Telegram language, else English
    for chat, user, code in ((bob_dm, bob, "bn"), (charlie_dm, charlie, "hi"),
                             (alice_dm, alice, "en")):
        await tg.command(chat, user, "/quiz")
        # whichever kind of question the person gets (a poll, or a message for a typed one)
        assert await prompt_language(fake_tg, chat, tg.service) == code, code

    await tg.command(group, bob, "/lang")
    status = tg.texts(group)[-1]
    bn = translator("bn")
    assert status.startswith(bn.gettext("Your language: {name}.", name=LANGUAGE_NAMES["bn"]))
    assert "en — English, bn — বাংলা, hi — हिन्दी" in status
    assert bn.gettext("This chat's language (polls, summaries, leaderboards): {name}.",
                      name=LANGUAGE_NAMES["hi"]) in status


async def test_daily_question_and_status_in_the_chats_language(tg, fake_tg, group, alice,
                                                                clock):
    fake_tg.set_admins(group["id"], alice["id"])
    await tg.command(group, alice, "/lang chat hi")
    await tg.command(group, alice, "/daily 09:00 Asia/Kolkata")
    hi = translator("hi")
    reply = tg.texts(group)[-1]
    assert reply.startswith(hi.gettext("Done: this chat gets a daily question."))
    assert hi.gettext("📅 A daily question at {time} ({zone}).", time="09:00",
                      zone="Asia/Kolkata") in reply
    assert "मार्च" in reply  # the date is written the Hindi way

    clock.set(datetime(2026, 3, 2, 9, 0, tzinfo=ZoneInfo("Asia/Kolkata")))
    assert (await tg.tick()).posted == 1
    [poll] = fake_tg.calls_of("sendPoll")
    post, question = await question_of(tg, f"tg-poll:{poll.result['poll']['id']}")
    assert (post.kind, post.locale) == ("daily", "hi")
    # labelled as the chat's daily question, in its language
    assert poll.params["question"] == hi.gettext("📅 Daily question") + " · " + question.prompt.hi
