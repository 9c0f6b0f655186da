"""Every kind of question through the core (tests/data/kinds: one question of each kind):
how it is shown, answered right, wrong and partly, refused when forged or unreadable, final
once answered, summarised, in a quiz run, rated for review with the person's confidence,
counted in /stats and the item analysis; live sessions ask only what they can carry."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.content import Catalog, load_catalog
from bot.content.items import Kind, Quiz
from bot.core import render
from bot.core.deck import Deck, rating
from bot.core.item_stats import analyse_figures, analyse_quiz
from bot.core.live import LIVE_KINDS, LiveError, Podium
from bot.core.models import (
    AnswerStatus,
    Chat,
    Confidence,
    Ordered,
    Person,
    Picks,
    Response,
    ShownQuestion,
    Typed,
)
from bot.core.ports import ReviewAnswer
from bot.core.questions import option_order
from bot.core.service import QuizService
from bot.i18n import translator
from tests.clock import FakeClock

pytestmark = pytest.mark.memory_store

KINDS = Path(__file__).parent / "data" / "kinds"
GROUP = Chat("tg:-100", "Study group")
ADA = Person("tg:1", "Ada")
BO = Person("tg:2", "Bo")
CY = Person("tg:3", "Cy")
EN = translator("en")
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


@pytest.fixture
def kinds() -> Catalog:
    return load_catalog(KINDS)


@pytest.fixture
def service(kinds: Catalog, storage, clock: FakeClock) -> QuizService:
    return QuizService(kinds, storage, clock, random.Random(7))


async def post(service: QuizService, question_id: str, locale: str = "en",
               chat: Chat = GROUP) -> ShownQuestion:
    return await service.questions.post(chat, "kinds", question_id, locale,
                                        open_for=timedelta(minutes=5))


def letters(shown: tuple[int, ...] | list[int]) -> str:
    return " ".join(render.LETTERS[i] for i in shown)


async def test_each_kind_is_shown_with_what_its_platforms_need(service: QuizService) -> None:
    multi = await post(service, "k-multi")
    assert multi.kind is Kind.MULTI and multi.correct == -1 and len(multi.correct_set) == 3
    assert {multi.options[i] for i in multi.correct_set} == {
        "A larger micro-batch", "A longer sequence", "More layers"}
    tf = await post(service, "k-tf", "bn")
    assert tf.options == ("সত্য", "মিথ্যা") and tf.correct == 1 and tf.correct_set == ()
    num = await post(service, "k-num")
    assert (num.kind, num.options, num.correct, num.unit) == (Kind.NUMERIC, (), -1, "GB")
    text = await post(service, "k-text")
    assert (text.kind, text.options, text.correct, text.unit) == (Kind.TEXT, (), -1, None)
    order = await post(service, "k-order")
    assert [order.options[i] for i in order.correct_set] == [
        "Receive activations", "Run forward", "Run backward", "Send gradients back"]
    choice = await post(service, "k-choice")
    assert choice.kind is Kind.CHOICE and choice.options[choice.correct] == "The backward pass"


def test_true_false_is_never_shuffled_and_an_order_never_shown_in_order(
    kinds: Catalog,
) -> None:
    rng = random.Random(1)
    tf, order = kinds.question("kinds", "k-tf"), kinds.question("kinds", "k-order")
    assert {option_order(tf, rng) for _ in range(50)} == {(0, 1)}
    orders = {option_order(order, rng) for _ in range(500)}
    assert (0, 1, 2, 3) not in orders and len(orders) == 23  # every other permutation


async def test_several_right_answers_all_or_nothing_with_the_picks_shown(
    service: QuizService,
) -> None:
    q = await post(service, "k-multi")
    right = await service.answer(q.post_id, ADA, Picks(frozenset(q.correct_set)))
    assert right.accepted and right.correct and right.partial == (3, 3)
    wrong_pick = next(i for i in range(4) if i not in q.correct_set)
    two = frozenset([*q.correct_set[:2], wrong_pick])
    partly = await service.answer(q.post_id, BO, Picks(two))
    assert partly.accepted and not partly.correct and partly.partial == (2, 3)
    assert f"{render.LETTERS[wrong_pick]} ✗" in partly.response_text
    assert partly.correct_option is None and partly.chosen is None
    shown = render.result_text(partly, EN)
    assert "2 of 3 right options" in shown and partly.response_text in shown
    stored = await service.storage.answer_of(q.post_id, BO.key)
    assert stored is not None and stored.option == -1 and not stored.correct
    assert stored.response is not None and len(stored.response.split(",")) == 3


@pytest.mark.parametrize("typed", ["0.4", "০.৪ GB", "०.४", "0.42gb", "4e-1"])
async def test_a_number_typed_in_any_script_is_right_within_its_tolerance(
    service: QuizService, typed: str,
) -> None:
    q = await post(service, "k-num")
    result = await service.answer(q.post_id, ADA, Typed(typed))
    assert result.accepted and result.correct, typed
    assert result.correct_text == "0.4 GB (±0.05)"


async def test_an_unreadable_typed_answer_is_refused_and_may_be_typed_again(
    service: QuizService,
) -> None:
    q = await post(service, "k-num", "bn")
    refused = await service.answer(q.post_id, ADA, Typed("about half a gig"))
    assert refused.status is AnswerStatus.INVALID_OPTION and refused.expected is Kind.NUMERIC
    assert render.result_text(refused, EN) == "Please type a number, e.g. 2.9."
    assert await service.storage.answer_of(q.post_id, ADA.key) is None
    again = await service.answer(q.post_id, ADA, Typed("৪ GB"))
    assert again.accepted and not again.correct and again.response_text == "4 GB"


@pytest.mark.parametrize(("typed", "right"), [
    ("Recomputation", True), ("punargonona", True), ("পুনর্গণনা।", True),
    ("पुनर्गणना", True), ("gradient checkpointng", True), ("recompute", False),
])
async def test_a_text_in_any_language_or_its_latin_spelling(
    service: QuizService, typed: str, right: bool,
) -> None:
    q = await post(service, "k-text", "hi")
    result = await service.answer(q.post_id, ADA, Typed(typed), locale="hi")
    assert result.accepted and result.correct is right, typed
    assert result.correct_text == "रीकम्प्यूटेशन"


async def test_an_order_by_buttons_or_typed_letters(service: QuizService) -> None:
    q = await post(service, "k-order")
    typed = await service.answer(q.post_id, ADA, Typed(letters(q.correct_set)))
    assert typed.accepted and typed.correct
    assert typed.response_text == " → ".join(letters(q.correct_set).split())
    swapped = list(q.correct_set)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    wrong = await service.answer(q.post_id, BO, Ordered(tuple(swapped)))
    assert wrong.accepted and not wrong.correct and wrong.partial is None


@pytest.mark.parametrize(("question_id", "forged"), [
    ("k-num", Picks(frozenset({0}))), ("k-order", 1), ("k-order", Ordered((0, 0, 1, 2))),
    ("k-multi", Picks(frozenset({7}))), ("k-choice", Typed("A")), ("k-tf", 2),
])
async def test_a_forged_or_stale_response_changes_nothing(
    service: QuizService, question_id: str, forged: object,
) -> None:
    q = await post(service, question_id)
    result = await service.answer(q.post_id, ADA, forged)  # type: ignore[arg-type]
    assert result.status is AnswerStatus.INVALID_OPTION and result.expected is None
    assert await service.storage.answer_of(q.post_id, ADA.key) is None


async def test_the_first_answer_of_every_kind_is_final(service: QuizService) -> None:
    for question_id, first, second in [
        ("k-num", Typed("4"), Typed("0.4")), ("k-text", Typed("recompute"),
                                              Typed("recomputation")),
    ]:
        q = await post(service, question_id)
        await service.answer(q.post_id, ADA, first)
        again = await service.answer(q.post_id, ADA, second)
        assert again.status is AnswerStatus.ALREADY_ANSWERED and not again.correct
        assert again.response_text in render.result_text(again, EN)
    q = await post(service, "k-multi")
    await service.answer(q.post_id, ADA, Picks(frozenset(q.correct_set)))
    again = await service.answer(q.post_id, ADA, Picks(frozenset({0})))
    assert again.status is AnswerStatus.ALREADY_ANSWERED and again.correct
    assert again.partial == (3, 3)


async def test_summaries_count_picks_and_list_typed_answers(service: QuizService) -> None:
    multi = await post(service, "k-multi")
    await service.answer(multi.post_id, ADA, Picks(frozenset(multi.correct_set)))
    await service.answer(multi.post_id, BO, Picks(frozenset(multi.correct_set[:1])))
    summary = await service.questions.close(multi.post_id)
    assert summary is not None and summary.answered == 2 and summary.right == 1
    assert [summary.per_option[i] for i in multi.correct_set] == [2, 1, 1]
    assert "Answer: " + summary.correct_text in render.summary_text(summary, EN)
    num = await post(service, "k-num")
    for person, typed in ((ADA, "0.4"), (BO, "4"), (CY, "4 GB")):
        await service.answer(num.post_id, person, Typed(typed))
    summary = await service.questions.close(num.post_id)
    assert summary is not None and summary.typed == (("4 GB", 2), ("0.4 GB", 1))
    text = render.summary_text(summary, EN)
    assert "Answer: 0.4 GB (±0.05)" in text and "“4 GB” 2 · “0.4 GB” 1" in text
    order = await post(service, "k-order")
    right = letters(order.correct_set)
    for person in (ADA, BO):
        await service.answer(order.post_id, person, Typed(right))
    summary = await service.questions.close(order.post_id)
    assert summary is not None and summary.per_option == ()
    assert summary.typed == ((" → ".join(right.split()), 2),)
    assert summary.correct_text.startswith(f"{right[0]}) Receive activations → ")


async def test_a_quiz_run_of_every_kind_shows_what_was_answered(service: QuizService) -> None:
    alone = Chat(ADA.key, "Ada", is_private=True)
    q = await service.runs.start(ADA, alone, service.questions.quiz_named("kinds"), "en")
    answers = {Kind.CHOICE: lambda q: q.correct, Kind.TRUEFALSE: lambda q: 1 - q.correct,
               Kind.MULTI: lambda q: Picks(frozenset(q.correct_set)),
               Kind.NUMERIC: lambda q: Typed("4"), Kind.TEXT: lambda q: Typed("punargonona"),
               Kind.ORDER: lambda q: Typed(letters(q.correct_set[::-1]))}
    result = None
    for _ in range(6):
        result = await service.answer(q.post_id, ADA, answers[q.kind](q))
        assert result.accepted
        if result.next_question is not None:
            q = result.next_question
    assert result is not None and result.run_summary is not None
    summary = result.run_summary
    assert summary.score == 3  # choice, multi, text right; true/false, number, order wrong
    chosen = {m.question_id: m.chosen_text for m in summary.missed}
    assert chosen["k-tf"] == "True" and chosen["k-num"] == "4 GB"
    assert chosen["k-order"] is not None and "→" in chosen["k-order"]
    assert "✗ 4 GB" in render.run_summary_text(summary, EN)


def test_confidence_sets_the_review_grade() -> None:
    from fsrs import Rating

    def said(correct: bool, confidence: int | None, personal: bool = True,
             ms: int = 30_000) -> Rating:
        return rating(ReviewAnswer("q", "a", correct, NOW, ms, personal, confidence))

    assert said(False, Confidence.SURE) is Rating.Again
    assert said(True, Confidence.GUESSING, ms=1000) is Rating.Hard
    assert said(True, Confidence.THINK_SO) is Rating.Good
    assert said(True, Confidence.SURE) is Rating.Easy
    assert said(True, Confidence.SURE, personal=False) is Rating.Good
    assert said(True, None, ms=1000) is Rating.Easy  # no confidence: the time says it


def test_a_sure_wrong_answer_is_reviewed_first() -> None:
    deck = Deck()
    deck.apply(ReviewAnswer("q", "unsure", False, NOW, 1000, True, Confidence.GUESSING))
    deck.apply(ReviewAnswer("q", "sure", False, NOW + timedelta(minutes=1), 1000, True,
                            Confidence.SURE))
    due = deck.due(NOW + timedelta(days=3))
    assert due == [("q", "sure"), ("q", "unsure")]  # though the other is due longer
    deck.apply(ReviewAnswer("q", "sure", True, NOW + timedelta(days=3), 1000, True,
                            Confidence.SURE))
    assert ("q", "sure") not in deck.misconceptions


async def test_stats_show_calibration_beside_accuracy(service: QuizService) -> None:
    said: list[tuple[str, Response, Confidence | None]] = [
        ("k-num", Typed("0.4"), Confidence.SURE), ("k-text", Typed("recompute"),
                                                   Confidence.SURE),
        ("k-multi", Picks(frozenset({0})), Confidence.GUESSING), ("k-choice", 0, None),
    ]
    for question_id, response, confidence in said:
        q = await post(service, question_id)
        await service.answer(q.post_id, ADA, response, confidence=confidence)
    stats = await service.boards.stats(ADA)
    assert stats.calibration == ((Confidence.SURE, 2, 1), (Confidence.GUESSING, 1, 0))
    text = render.stats_text(stats, EN)
    assert "How sure you said you were: sure: right 1 of 2 · guessing: right 0 of 1" in text


async def test_the_confidence_setting(service: QuizService) -> None:
    assert not (await service.chat_settings.get(GROUP.key)).confidence
    on = await service.chat_settings.change(GROUP, allowed=True, words=["confidence", "on"])
    assert on.confidence
    assert "Ask how sure with each answer: on" in render.settings_text(on, EN)
    off = await service.chat_settings.change(GROUP, allowed=True, confidence="off")
    assert not off.confidence


async def test_item_analysis_per_kind(service: QuizService, kinds: Catalog) -> None:
    people = [Person(f"tg:{n}", f"p{n}") for n in range(1, 7)]
    for n, person in enumerate(people):
        num = await post(service, "k-num")
        await service.answer(num.post_id, person, Typed("0.4" if n < 2 else "4"))
        multi = await post(service, "k-multi")
        await service.answer(multi.post_id, person, Picks(frozenset(multi.correct_set[:2 + n % 2])))
    responses = await service.storage.item_responses("kinds", GROUP.key)
    report = analyse_quiz(kinds.get("kinds"), responses)  # type: ignore[arg-type]
    items = {item.question_id: item for item in report.items}
    numbers = items["k-num"]
    assert (numbers.answered, numbers.right, numbers.option_counts) == (6, 2, ())
    assert numbers.typed == (("4 GB", 4, False), ("0.4 GB", 2, True))
    assert numbers.wrong == (("4 GB", 4),)
    picks = items["k-multi"]
    assert (picks.answered, picks.right) == (6, 3)
    assert [o.correct for o in picks.shown_options()] == [True, True, False, True]
    assert report.stale == 0


async def test_live_sessions_ask_only_what_a_tap_answers(service: QuizService) -> None:
    lobby = await service.live.host(GROUP, ADA, "kinds", 6, allowed=True, locale="en")
    asked = await service.live.next(GROUP.key, ADA)
    for _ in range(5):
        assert not isinstance(asked, Podium)
        assert asked.question.kind in LIVE_KINDS, asked.question.question_id
        await service.live.skip(GROUP.key, ADA)
        asked = await service.live.next(GROUP.key, ADA)
    assert lobby.session.total == 6


async def test_a_live_session_of_a_quiz_it_cannot_ask_is_refused(
    kinds: Catalog, storage, clock: FakeClock,
) -> None:
    quiz = kinds.quizzes["kinds"]
    typed = Quiz("typed", quiz.title, ["typed"],
                 [quiz.question(q) for q in ("k-num", "k-text", "k-order", "k-multi")])
    service = QuizService(Catalog({"typed": typed}), storage, clock, random.Random(7))
    with pytest.raises(LiveError) as refused:
        await service.live.host(GROUP, ADA, "typed", 3, allowed=True, locale="en")
    assert "no question with options to tap" in str(refused.value)


async def test_review_starts_with_the_answer_given_sure_and_wrong(
    service: QuizService, clock: FakeClock,
) -> None:
    """Two wrong answers in a group: a guess first, a sure one a minute later. Both are due
    the next day; /review asks the sure one (the misconception) first."""
    guess = await post(service, "k-choice")
    await service.answer(guess.post_id, ADA, (guess.correct + 1) % 4,
                         confidence=Confidence.GUESSING)
    clock.advance(minutes=1)
    sure = await post(service, "k-num")
    await service.answer(sure.post_id, ADA, Typed("4"), confidence=Confidence.SURE)
    clock.advance(days=1)
    assert await service.spaced.due(ADA.key) == [("kinds", "k-num"), ("kinds", "k-choice")]
    alone = Chat(ADA.key, "Ada", is_private=True)
    first = await service.spaced.start(ADA, alone, "en")
    assert first is not None and first.question_id == "k-num" and first.kind is Kind.NUMERIC
    result = await service.answer(first.post_id, ADA, Typed("0.4"), confidence=Confidence.SURE)
    assert result.accepted and result.correct
    assert result.next_question is not None and result.next_question.question_id == "k-choice"


async def test_the_dashboards_figures_give_what_the_answers_give_for_every_kind(
    service: QuizService, kinds: Catalog,
) -> None:
    """The dashboard's item analysis (the materializer's figures: option -1 and the
    responses) equals /analysis's from the first answers, kind by kind."""
    answers = {
        "k-multi": lambda q, n: Picks(frozenset(q.correct_set[: 1 + n % 3])),
        "k-num": lambda q, n: Typed(["0.4", "4", "4", "0.04", "0.4", "4"][n]),
        "k-text": lambda q, n: Typed(["recomputation", "recompute", "recompute"][n % 3]),
        "k-order": lambda q, n: Typed(letters(q.correct_set if n < 2 else q.correct_set[::-1])),
        "k-tf": lambda q, n: n % 2,
    }
    for n in range(6):
        person = Person(f"tg:{n + 10}", f"p{n}")
        for question_id, respond in answers.items():
            q = await post(service, question_id)
            assert (await service.answer(q.post_id, person, respond(q, n))).accepted
    await service.storage.materialize()
    figures = await service.storage.item_figures(GROUP.key, "kinds")
    [kept] = analyse_figures(kinds, figures)
    expected = analyse_quiz(kinds.quizzes["kinds"],
                            await service.storage.item_responses("kinds", GROUP.key))
    for a, b in zip(kept.items, expected.items, strict=True):
        assert replace(a, median_ms=None, discrimination=None) == replace(
            b, median_ms=None, discrimination=None), a.question_id
    by_id = {item.question_id: item for item in kept.items}
    assert by_id["k-num"].typed == (("4 GB", 3, False), ("0.4 GB", 2, True),
                                    ("0.04 GB", 1, False))
    assert by_id["k-order"].right == 2 and by_id["k-multi"].right == 2
    assert sum(by_id["k-multi"].option_counts) == 12  # 1 + 2 + 3 picks, twice


async def test_the_dashboards_person_page_shows_what_was_answered(
    service: QuizService,
) -> None:
    num = await post(service, "k-num")
    await service.answer(num.post_id, ADA, Typed("০.৪"))
    order = await post(service, "k-order")
    await service.answer(order.post_id, ADA, Ordered(order.correct_set))
    await service.storage.materialize()
    page = await service.dashboard_reads.person(GROUP.key, ADA.key, None, "en")
    assert page is not None
    chosen = {line.question_id: line.chosen for line in page.answers}
    assert chosen["k-num"] == "0.4 GB"
    assert chosen["k-order"] == " → ".join(letters(order.correct_set).split())
