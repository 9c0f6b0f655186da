"""Telegram's limits: text fitting, callback data, and content at the edge of the limits."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from bot.adapters.telegram.callback_data import answer_data, parse_answer
from bot.adapters.telegram.text import fit, poll_explanation
from bot.content import load_catalog
from bot.content.limits import TG_ALERT, tg_len
from bot.core.service import QuizService
from tests.telegram_e2e.conftest import Harness

texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]))


@given(texts, st.integers(min_value=2, max_value=300))
def test_fit_never_exceeds_the_limit_and_keeps_short_text(text, limit):
    out = fit(text, limit)
    assert tg_len(out) <= limit
    if tg_len(text) <= limit:
        assert out == text
    else:
        assert out.endswith("…")


@given(texts)
def test_poll_explanation_fits_sendpoll(text):
    out = poll_explanation(text)
    assert tg_len(out) <= 200 and out.count("\n") <= 2


def test_fit_counts_utf16_like_telegram():
    emoji = "😀" * 150  # 300 UTF-16 units
    assert tg_len(fit(emoji, 200)) <= 200
    assert len(fit(emoji, 200)) < 101


@given(st.integers(min_value=1, max_value=10**18 - 1), st.integers(min_value=0, max_value=11))
def test_callback_data_round_trips_within_64_bytes(post_id, shown):
    data = answer_data(post_id, shown)
    assert len(data.encode()) <= 64
    assert parse_answer(data) == (post_id, shown)


def test_callback_data_rejects_anything_else():
    for data in (None, "", "a:1", "a:1:2:3", "a:x:1", "b:1:1", "a:1:100", " a:1:1", "a:-1:0"):
        assert parse_answer(data) is None, data


LONG_PACK = """
id: long
title: Long Texts
questions:
  - id: long-one
    prompt: {prompt}
    options:
      - {{en: "{option}", correct: true}}
      - "{option} (not this one)"
    explanation: "{explanation}"
"""


async def test_content_at_the_limits_fits_polls_and_alerts(
    tmp_path: Path, storage, clock, fake_tg, tg_settings, group, alice
):
    explanation = "Because " + "very " * 34 + "much.\\nSo.\\nYes."  # 192 chars once YAML decodes it
    pack = LONG_PACK.format(prompt="Why " + "so " * 95 + "?", option="x" * 80,
                            explanation=explanation)
    (tmp_path / "packs").mkdir()
    (tmp_path / "packs" / "long.yaml").write_text(pack)
    catalog = load_catalog(tmp_path / "packs")
    english = catalog.question("long", "long-one").explanation.en
    assert english is not None
    assert len(english) == 192
    service = QuizService(catalog, storage, clock, random.Random(3))
    harness = Harness(fake_tg, service, tg_settings)
    await harness.start()
    try:
        fake_tg.set_admins(group["id"], alice["id"])  # her second /quiz replaces the first
        await harness.command(group, alice, "/quiz")  # the fake rejects a poll over limits
        [poll] = await fake_tg.wait_for("sendPoll")
        assert tg_len(poll.params["explanation"]) <= 200

        await harness.command(group, alice, "/quiz buttons")
        [sent] = await fake_tg.wait_for("sendMessage", where=lambda c: "reply_markup" in c.params)
        post = await harness.post_of(sent.result)
        shown = await service.questions.show(post)
        assert shown is not None
        data = sent.result["reply_markup"]["inline_keyboard"][0][shown.correct]["callback_data"]
        press = await harness.press(sent.result, alice, data)
        alert = press.params["text"]
        cut, where = alert.rsplit("\n", 1)
        assert tg_len(alert) <= TG_ALERT and cut.endswith("…")
        assert alert.startswith("✅ Correct!")
        # cut between words, and saying where the rest is
        assert cut.removesuffix("…").split()[-1] in {"very", "much.", "Because"}
        assert where == "The whole explanation comes when the question closes."
    finally:
        await harness.stop()
