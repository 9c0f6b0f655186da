"""/analysis for a chat's admins, and the chart on a question's close summary.

The figures are item_stats.py's, from the chat's stored answers, lettered as that chat saw each
question (`as_seen_in_chat`), so /analysis names an option by the same letter as the chat's
close summary did. Drawing is the ChartRenderer port's (bot/reports/png.py: no imaging
library enters the core). The analysis of a big chat (hundreds of thousands of answers) and
a chart are CPU-bound and block while they run, so both run in a worker thread, HEAVY_JOBS
at a time, while the event loop keeps answering every other chat; a chart's size is bounded
(the caps below) and the text says when the chart leaves questions out.

A chart is an extra: drawing it may fail, and then the reply or the summary goes out as text
(the failure is logged once per process).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, TypeVar

from bot.content.items import DEFAULT_LOCALE
from bot.core.errors import UnknownQuiz, may_not_see_analysis
from bot.core.item_stats import analyse, as_seen_in_chat
from bot.core.misconceptions import HeldMisconception, held, tagged_quizzes
from bot.core.models import Chat, ItemStats, PostSummary, QuizReport
from bot.core.ports import (
    ChartRenderer,
    ItemStore,
    LiveStore,
    MisconceptionStore,
    PeerVotes,
    SettingsStore,
)
from bot.core.questions import Questions

log = logging.getLogger(__name__)
T = TypeVar("T")

# CPU-bound jobs (analyses, charts) running at once, each in a worker thread. Pure Python holds
# the GIL, so more would only slow each other down and the loop with them.
HEAVY_JOBS = 1

# A chart is a column a phone shows at full width, a panel per question and a bar per
# option: the caps keep it under about 2,100 pixels, so Telegram's downscaling of a photo to
# 1,280 pixels leaves its smallest text above 11 px (bot/reports/png.py). The text covers
# what the chart leaves out, and /analysis <quiz> charts another quiz.
MAX_CHART_QUIZZES = 1  # quizzes in one chart
MAX_CHART_QUESTIONS = 8  # per quiz (a bundled pack's size)
MAX_CHART_OPTIONS = 36  # bars in all, so questions with many options chart fewer of them


@dataclass(frozen=True, slots=True)
class ChatAnalysis:
    """A chat's item analysis: the quizzes answered there (or the one asked for)."""

    chat_key: str
    quiz_id: str | None  # the quiz asked for; None: every quiz answered in the chat
    reports: tuple[QuizReport, ...]  # in the reader's language; only quizzes with answers
    charted: tuple[QuizReport, ...] = ()  # what the chart shows (answered questions, capped)
    chart: bytes | None = None  # PNG; None: nothing answered, no renderer, or drawing failed
    # (quiz, question) -> share right after peer rounds' revotes minus at their first votes
    gains: Mapping[tuple[str, str], float] = field(default_factory=dict)
    # the misconceptions the chat's latest answers chose, the most people first
    misconceptions: tuple[HeldMisconception, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.reports

    @property
    def answered_questions(self) -> int:
        return sum(1 for r in self.reports for item in r.items if item.answered)

    @property
    def charted_questions(self) -> int:
        return sum(len(r.items) for r in self.charted)


def chart_rows(reports: Sequence[QuizReport]) -> tuple[QuizReport, ...]:
    """The answered questions of the first MAX_CHART_QUIZZES quizzes, at most
    MAX_CHART_QUESTIONS each and MAX_CHART_OPTIONS bars in all (always one question):
    what a chart of these reports shows."""
    rows = []
    bars = 0
    for report in reports[:MAX_CHART_QUIZZES]:
        items: list[ItemStats] = []
        # a number's, a text's or an order's answers have no option bars: their text lists them
        for item in (i for i in report.items if i.answered and any(i.option_counts)):
            if len(items) == MAX_CHART_QUESTIONS or (
                bars and bars + len(item.option_counts) > MAX_CHART_OPTIONS
            ):
                break
            items.append(item)
            bars += len(item.option_counts)
        if items:
            rows.append(replace(report, items=tuple(items)))
    return tuple(rows)


class Charts:
    """Draws through the renderer off the event loop; runs the heavy jobs (off_loop)."""

    def __init__(self, renderer: ChartRenderer | None, storage: SettingsStore) -> None:
        self.renderer = renderer
        self.storage = storage
        self._heavy = asyncio.Semaphore(HEAVY_JOBS)
        self._failed_before = False

    async def off_loop(self, job: Callable[[], T]) -> T:
        """`job()` in a worker thread, once at most HEAVY_JOBS others are running."""
        async with self._heavy:
            return await asyncio.to_thread(job)

    async def draw(self, what: str, draw: Callable[[], bytes]) -> bytes | None:
        """`draw()` in a worker thread; None (logged once per process) if it fails."""
        try:
            return await self.off_loop(draw)
        except Exception as exc:
            if not self._failed_before:
                self._failed_before = True
                # out of time (the drawing's limit, the bot stopping) is no bug to trace
                log.warning("drawing %s failed (%s); text only (logged once)", what,
                            exc, exc_info=not isinstance(exc, TimeoutError))
            return None

    async def on_summary(self, summary: PostSummary) -> PostSummary:
        """The summary with a chart of its answers if its chat turned charts on (and
        someone answered); as it is otherwise, and whenever the chart cannot be drawn."""
        renderer = self.renderer
        if renderer is None or summary.chart is not None or not summary.answered \
                or not any(summary.per_option):  # typed answers or an order: no bars to draw
            return summary
        try:
            settings = await self.storage.get_chat_settings(summary.chat_key)
        except Exception as exc:  # the summary matters more than its chart
            log.warning("chart setting of %s not read (%s); summary without chart",
                        summary.chat_key, exc)
            return summary
        if settings is None or not settings.chart:
            return summary
        png = await self.draw(f"the chart of post {summary.post_id}",
                              lambda: renderer.summary_chart(summary))
        return summary if png is None else replace(summary, chart=png)


def discussion_gains(votes: Iterable[PeerVotes]) -> dict[tuple[str, str], float]:
    """Per question, over the chat's peer rounds that had a discussion: the share right at
    the revotes minus the share right at the first votes (pooled over the rounds)."""
    sums: dict[tuple[str, str], list[int]] = {}
    for v in votes:
        row = sums.setdefault((v.quiz_id, v.question_id), [0, 0, 0, 0])
        row[0] += v.first
        row[1] += v.first_right
        row[2] += v.second
        row[3] += v.second_right
    return {key: r[3] / r[2] - r[1] / r[0] for key, r in sums.items() if r[0] and r[2]}


class ItemAnalysisStorage(ItemStore, LiveStore, MisconceptionStore, Protocol):
    """What ItemAnalysis reads: the answers, peer rounds' revotes, and the latest answers
    to the questions whose distractors stand for misconceptions."""


class ItemAnalysis:
    def __init__(
        self, questions: Questions, storage: ItemAnalysisStorage, charts: Charts
    ) -> None:
        self.questions = questions
        self.storage = storage
        self.charts = charts

    async def for_chat(
        self, chat: Chat, selector: str | None = None, locale: str = DEFAULT_LOCALE, *,
        allowed: bool, chart: bool = True,
    ) -> ChatAnalysis:
        """The chat's item analysis, of one quiz (its id) or of every quiz answered there.
        Only its admins may see it (`allowed`: the platform's word)."""
        if not allowed:
            raise may_not_see_analysis()
        quiz_id = None
        if selector is not None and selector.strip():
            quiz = self.questions.quiz_named(selector)
            if quiz is None:
                raise UnknownQuiz(selector, self.questions.quizzes(locale))
            quiz_id = quiz.id
        responses = await self.storage.item_responses(quiz_id, chat.key)
        catalog = self.questions.catalog
        reports = await self.charts.off_loop(lambda: tuple(
            r for r in analyse(catalog, responses, quiz_id, locale) if r.answers))
        if not reports:
            return ChatAnalysis(chat.key, quiz_id, ())
        orders = await self.storage.shown_orders(chat.key, quiz_id)
        reports = tuple(as_seen_in_chat(r, orders) for r in reports)
        charted = chart_rows(reports)
        png = None
        renderer = self.charts.renderer
        if chart and renderer is not None:
            png = await self.charts.draw(f"the item analysis of {chat.key}",
                                         lambda: renderer.report_chart(charted, locale))
        gains = discussion_gains(await self.storage.peer_votes(chat.key, quiz_id))
        tagged = tagged_quizzes(catalog, quiz_id)
        wrong_ideas = held(catalog, await self.storage.chosen_options(chat.key, tagged),
                           tagged, locale) if tagged else []
        return ChatAnalysis(chat.key, quiz_id, reports, charted, png, gains,
                            tuple(wrong_ideas))
