"""/analysis and the close-summary chart in the core (chat_analysis.py, analysis_text.py),
through a FakePort: who may see it, what it says, the chart it draws (a valid PNG of the
expected size), the chart setting per chat, and a chart that fails never costing a summary."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

import pytest

from bot.core.analysis_text import analysis_blocks, chunks
from bot.core.chat_analysis import (
    MAX_CHART_QUESTIONS,
    MAX_CHART_QUIZZES,
    ChatAnalysis,
    chart_rows,
)
from bot.core.errors import BadChart, NotAllowed, UnknownQuiz
from bot.core.models import Chat, ItemStats, Person, PostSummary, QuizReport
from bot.core.service import QuizService
from bot.i18n import translator
from bot.reports import chart_size, summary_chart_size
from tests.clock import FakeClock
from tests.ports import FakePort

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database

GROUP = Chat("tg:-100", "Study group")
OTHER = Chat("tg:-200", "Other group")
ADA, BO, CY = Person("tg:1", "Ada"), Person("tg:2", "Bo"), Person("tg:3", "Cy")


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


class Broken:
    """A ChartRenderer that always fails."""

    calls = 0

    def report_chart(self, reports: Sequence[QuizReport], locale: str) -> bytes:
        self.calls += 1
        raise RuntimeError("no fonts")

    def summary_chart(self, summary: PostSummary) -> bytes:
        self.calls += 1
        raise RuntimeError("no fonts")


@pytest.fixture
def port(service: QuizService, clock: FakeClock) -> FakePort:
    return FakePort("tg:", clock).attach(service)


async def asked(service: QuizService, port: FakePort, chat: Chat = GROUP,
                selector: str | None = "sample") -> int:
    async with service.asking.quiz(chat, ADA, selector) as question:
        await port.send_question(question)
    return question.post_id


async def answered(service: QuizService, post_id: int, right: Sequence[Person],
                   wrong: Sequence[Person] = ()) -> None:
    question = await service.questions.show(post_id)
    assert question is not None
    for person in right:
        await service.answer(post_id, person, question.correct)
    for person in wrong:
        await service.answer(post_id, person, (question.correct + 1) % len(question.options))


# /analysis -----------------------------------------------------------------------------------
async def test_only_admins_see_the_analysis(service: QuizService) -> None:
    with pytest.raises(NotAllowed, match="Only this chat's admins can see its item analysis"):
        await service.item_analysis.for_chat(GROUP, allowed=False)


async def test_nothing_answered_is_said_plainly(service: QuizService, port: FakePort) -> None:
    await asked(service, port)  # asked, not answered
    analysis = await service.item_analysis.for_chat(GROUP, allowed=True)
    assert analysis.empty and analysis.chart is None
    [text] = analysis_blocks(analysis, translator("en"))
    assert text.startswith("📊 No answers in this chat yet")
    only = await service.item_analysis.for_chat(GROUP, "sample", allowed=True)
    assert "No answers to sample in this chat yet" in analysis_blocks(only, translator("en"))[0]


async def test_an_unknown_quiz_is_refused_with_the_list(service: QuizService) -> None:
    with pytest.raises(UnknownQuiz):
        await service.item_analysis.for_chat(GROUP, "nope", allowed=True)


async def test_the_chats_figures_and_a_chart_of_the_expected_size(
    service: QuizService, port: FakePort
) -> None:
    post = await asked(service, port)
    await answered(service, post, right=[ADA, BO], wrong=[CY])
    other = await asked(service, port, OTHER)
    await answered(service, other, right=[CY])  # another chat: not in this one's figures
    analysis = await service.item_analysis.for_chat(GROUP, allowed=True)
    [report] = analysis.reports
    [item] = [i for i in report.items if i.answered]
    assert (report.quiz_id, report.people, item.answered, item.right) == ("sample", 3, 3, 2)
    text = "\n\n".join(analysis_blocks(analysis, translator("en")))
    # three people: two right, one wrong; a lone question has no discrimination
    assert f"({item.question_id})" in text
    assert "answered 3 · right 67%" in text and "disc – ·" in text
    assert "The chart shows" not in text  # nothing left out
    assert analysis.chart is not None
    assert png_size(analysis.chart) == chart_size(analysis.charted) == (720, 316)


def test_the_chart_is_bounded_and_the_text_says_what_it_leaves_out() -> None:
    item = ItemStats("q", "prompt", 0, (1, 0), None, 0, 1000.0, ())
    unanswered = replace(item, option_counts=(0, 0))
    reports = tuple(QuizReport(f"quiz{n}", "Quiz", 1, (item,) * (MAX_CHART_QUESTIONS + 5)
                               + (unanswered,)) for n in range(MAX_CHART_QUIZZES + 2))
    rows = chart_rows(reports)
    assert len(rows) == MAX_CHART_QUIZZES
    assert all(len(r.items) == MAX_CHART_QUESTIONS and all(i.answered for i in r.items)
               for r in rows)
    width, height = chart_size(rows)
    assert width + height <= 10_000 and width / height <= 20  # Telegram's photo limits
    analysis = ChatAnalysis(GROUP.key, None, reports, rows)
    text = "\n\n".join(analysis_blocks(analysis, translator("en")))
    charted, total = MAX_CHART_QUIZZES * MAX_CHART_QUESTIONS, len(reports) * (
        MAX_CHART_QUESTIONS + 5)
    assert f"The chart shows {charted} of the {total} answered questions." in text


def test_chunks_fit_the_limit_and_keep_blocks_whole() -> None:
    blocks = ["a" * 30, "b" * 30, "c" * 30, "d" * 100]
    out = chunks(blocks, 64)
    assert out == ["a" * 30 + "\n\n" + "b" * 30, "c" * 30, "d" * 63 + "…"]
    assert all(len(c) <= 64 for c in out)


async def test_a_failing_chart_leaves_the_text(
    service: QuizService, port: FakePort, caplog: pytest.LogCaptureFixture
) -> None:
    broken = Broken()
    service.charts.renderer = broken
    post = await asked(service, port)
    await answered(service, post, right=[ADA])
    with caplog.at_level(logging.WARNING, logger="bot.core.chat_analysis"):
        first = await service.item_analysis.for_chat(GROUP, allowed=True)
        second = await service.item_analysis.for_chat(GROUP, allowed=True)
    assert first.reports and first.chart is None and second.chart is None
    assert broken.calls == 2
    assert len([r for r in caplog.records if "failed" in r.getMessage()]) == 1  # once


# the chart setting ---------------------------------------------------------------------------
async def test_the_chart_setting_is_off_until_an_admin_turns_it_on(service: QuizService) -> None:
    assert (await service.chat_settings.get(GROUP.key)).chart is False
    with pytest.raises(NotAllowed):
        await service.chat_settings.change(GROUP, by=ADA, allowed=False, words=["chart", "on"])
    on = await service.chat_settings.change(GROUP, by=ADA, allowed=True, words=["chart", "on"])
    assert on.chart is True and (await service.chat_settings.get(OTHER.key)).chart is False
    kept = await service.chat_settings.change(GROUP, allowed=True, words=["time", "90"])
    assert (kept.question_seconds, kept.chart) == (90, True)
    assert (await service.chat_settings.change(GROUP, allowed=True, chart=False)).chart is False
    assert (await service.chat_settings.change(GROUP, allowed=True, chart="default")).chart is False
    stored = await service.storage.get_chat_settings(GROUP.key)
    assert stored is not None and stored.chart is None  # default: nothing stored


@pytest.mark.parametrize("word", ["maybe", "1", ""])
async def test_a_bad_chart_word_changes_nothing(service: QuizService, word: str) -> None:
    await service.chat_settings.change(GROUP, allowed=True, chart=True)
    with pytest.raises(BadChart):
        await service.chat_settings.change(GROUP, allowed=True, words=["time", "60", "chart", word])
    settings = await service.chat_settings.get(GROUP.key)
    assert settings.chart is True and not settings.own_time


# the chart on close summaries -----------------------------------------------------------------
async def test_a_summary_carries_a_chart_only_where_it_was_turned_on(
    service: QuizService, port: FakePort
) -> None:
    await service.chat_settings.change(GROUP, allowed=True, chart=True)
    charted = await asked(service, port)
    await answered(service, charted, right=[BO], wrong=[CY])
    plain = await asked(service, port, OTHER)
    await answered(service, plain, right=[BO])
    unanswered_then = await asked(service, port)  # replaces `charted`: its summary goes out
    await asked(service, port)  # replaces the unanswered one
    await asked(service, port, OTHER)
    by_post = {s.post_id: s for s in port.closed}
    summary = by_post[charted]
    assert summary.chart is not None
    assert png_size(summary.chart) == summary_chart_size(len(summary.per_option))
    assert by_post[plain].chart is None  # the other chat did not ask for one
    assert by_post[unanswered_then].chart is None  # nobody answered: nothing to draw


async def test_a_failing_chart_never_costs_the_summary(
    service: QuizService, port: FakePort, caplog: pytest.LogCaptureFixture
) -> None:
    service.charts.renderer = Broken()
    await service.chat_settings.change(GROUP, allowed=True, chart=True)
    posts = []
    with caplog.at_level(logging.WARNING, logger="bot.core.chat_analysis"):
        for _ in range(3):
            post = await asked(service, port)
            await answered(service, post, right=[BO])
            posts.append(post)
        await asked(service, port)
    assert [s.post_id for s in port.closed] == posts  # every summary, in order, once
    assert all(s.chart is None for s in port.closed)
    assert len([r for r in caplog.records if "failed" in r.getMessage()]) == 1
