"""A group's round through the real python-telegram-bot and the fake (issue 37): what the chat
is sent for a round of 5 on the bundled content, counted in messages and in phone lines, so a
close summary that floods the group shows up as a number here.

A phone line is PHONE_COLUMNS characters of text (a message's line wraps after that); a
summary must fit on one phone screen (SCREEN_LINES), whatever the question's details say.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from bot.content import Catalog, load_catalog
from bot.core.ports import Storage
from bot.core.service import QuizService
from bot.reports.png import PngCharts
from tests.clock import FakeClock
from tests.conftest import BUNDLED
from tests.telegram_e2e.conftest import QUESTION_SECONDS

PHONE_COLUMNS = 40  # characters on one line of a phone's chat bubble
SCREEN_LINES = 20  # lines of text a phone shows at once
ROUND = 5


@pytest.fixture(scope="module")
def bundled() -> Catalog:
    return load_catalog(BUNDLED)


@pytest.fixture
def service(bundled: Catalog, storage: Storage, clock: FakeClock) -> QuizService:
    return QuizService(bundled, storage, clock, random.Random(7), charts=PngCharts())


def phone_lines(text: str) -> int:
    return sum(max(1, math.ceil(len(line) / PHONE_COLUMNS)) for line in text.split("\n"))


def shown_text(call: Any) -> str:
    """What a message sent to the chat reads as: a poll's question and options, a text."""
    if call.method == "sendPoll":
        return "\n".join([call.params["question"], *(o["text"] for o in call.params["options"])])
    return str(call.params.get("text") or call.params.get("caption") or "")


def sent_to(tg: Any, chat: dict[str, Any]) -> list[Any]:
    return [c for c in tg.fake.calls
            if c.ok and c.method in ("sendMessage", "sendPoll", "sendPhoto")
            and c.result["chat"]["id"] == chat["id"]]


async def play_round(tg: Any, group: dict[str, Any], people: list[dict[str, Any]],
                     clock: FakeClock) -> list[Any]:
    """A round of 5 in the group, each question answered by everyone (half of them right),
    closed by time; what the group was sent from the round's start on."""
    await tg.command(group, people[0], f"/quiz allocator-and-compile {ROUND}")
    for n in range(ROUND):
        polls = await tg.fake.wait_for("sendPoll", n + 1)
        poll = polls[n]
        right = poll.params["correct_option_ids"][0]
        for i, person in enumerate(people):
            await tg.answer(poll, person, right if i % 2 == 0 else (right + 1) % 2)
        clock.advance(QUESTION_SECONDS + 1)
        await tg.tick()
    assert [t for t in tg.texts(group) if "Round over" in t]
    return sent_to(tg, group)


async def test_a_round_of_five_fits_the_group(tg, group, fake_tg, clock, capsys):
    people = [fake_tg.user(2000 + i, f"Person{i}") for i in range(8)]
    sent = await play_round(tg, group, people, clock)
    summaries = [c for c in sent if "Question closed" in shown_text(c)]
    lines = [phone_lines(shown_text(c)) for c in sent]
    with capsys.disabled():
        print(f"\nround of {ROUND}: {len(sent)} messages, {sum(lines)} phone lines "
              f"({sum(lines) / SCREEN_LINES:.1f} screens); summaries: "
              f"{[phone_lines(shown_text(c)) for c in summaries]} lines")
    assert len(summaries) == ROUND
    assert len(sent) == 2 * ROUND + 1  # the questions, their summaries, the round's end
    # 267 phone lines before issue 37, each summary 37 to 44 (the prompt again, every option
    # cut at 48 characters, the whole details paragraph)
    assert sum(lines) <= 150
    for summary in summaries:
        text = shown_text(summary)
        assert phone_lines(text) <= SCREEN_LINES * 2 // 3
        question = next(c for c in sent if c.method == "sendPoll"
                        and c.result["message_id"]
                        == summary.params["reply_parameters"]["message_id"])
        assert question.params["question"].split(" · ", 1)[1] not in text  # not repeated
        assert "8 people answered · 50% right" in text


async def test_the_full_explanation_is_a_tap_away_in_private(tg, group, alice, alice_dm, clock,
                                                             bundled):
    await tg.command(group, alice, "/quiz allocator-and-compile")
    [poll] = await tg.fake.wait_for("sendPoll")
    post_id = await tg.service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")
    shown = await tg.service.questions.show(post_id)
    assert shown is not None and shown.details
    link = f"https://t.me/quizbot_test_bot?start=why_{post_id}"

    await tg.command(alice_dm, alice, f"/start why_{post_id}")  # before it closes: no answer
    assert tg.texts(alice_dm)[-1] == ("This question is still open: its explanation comes "
                                      "when it closes.")
    clock.advance(QUESTION_SECONDS + 1)
    await tg.tick()
    [summary] = [c for c in tg.fake.calls_of("sendMessage") if c.result["chat"]["id"]
                 == group["id"] and "Question closed" in c.params["text"]]
    assert shown.details not in summary.params["text"]
    [[button]] = summary.params["reply_markup"]["inline_keyboard"]
    assert button["url"] == link and button["text"] == "📖 Full explanation"

    await tg.command(alice_dm, alice, f"/start why_{post_id}")  # what the button sends
    details = tg.texts(alice_dm)[-1]
    assert shown.prompt in details and shown.details in details
    assert f"Answer: {'ABCD'[shown.correct]}) {shown.options[shown.correct]}" in details
    assert all(option in details for option in shown.options)  # whole, not cut
    await tg.command(alice_dm, alice, "/start why_99999")
    assert tg.texts(alice_dm)[-1] == "This question is no longer available."


async def test_a_settings_change_echoes_only_what_changed(tg, group, alice):
    tg.fake.set_admins(group["id"], alice["id"])
    await tg.command(group, alice, "/settings time 45")
    assert tg.texts(group)[-1] == "⚙️ Changed:\nQuestion time: 45 s"
    await tg.command(group, alice, "/settings chart on")
    assert tg.texts(group)[-1] == "⚙️ Changed:\nChart of the answers when a question closes: on"
    await tg.command(group, alice, "/settings chart on")
    assert tg.texts(group)[-1] == "⚙️ Nothing changed: that was the setting already."
    await tg.command(group, alice, "/settings")  # shown in full when asked for
    assert "Question time: 45 s" in tg.texts(group)[-1]
    assert "Ask how sure with each answer: off" in tg.texts(group)[-1]
