"""Item analysis (bot/core/item_stats.py) against examples computed by hand, and the storage
read it uses (each person's first answer per question)."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.content import Catalog, Quiz
from bot.core.item_stats import _flagged, analyse, analyse_figures, analyse_quiz, correlation
from bot.core.models import MIN_ANSWERS, Flag, ItemStats
from bot.core.ports import AnswerRecord, ItemResponse, Storage
from bot.storage.item_figures import figures_of

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database


def quiz(quiz_id: str, answers: list[int], options: int = 4) -> Quiz:
    """A quiz whose question i (id f"q{i+1}") has `options` options, answers[i] correct."""
    return Quiz.model_validate({
        "id": quiz_id,
        "title": {"en": f"Quiz {quiz_id}"},
        "questions": [
            {
                "id": f"{quiz_id}-q{i + 1}",
                "prompt": f"Question {i + 1}?",
                "options": [
                    {"en": f"option {o}", "correct": o == answer} for o in range(options)
                ],
                "explanation": "Because.",
            }
            for i, answer in enumerate(answers)
        ],
    })


def responses(quiz_id: str, table: list[tuple[str, int, int, int]]) -> list[ItemResponse]:
    """(person, question number from 1, canonical option, elapsed ms) rows."""
    return [
        ItemResponse(person, "tg:-1", quiz_id, f"{quiz_id}-q{number}", option, False, ms)
        for person, number, option, ms in table
    ]


# --- a small example: every figure, and no flag below the minimum --------------------------
#
# Quiz "small": Q1's answer is A (option 0), Q2's is B (1), Q3's is C (2), Q4 nobody answered.
# Who chose what (canonical options; * = right) and how long it took (seconds):
#
#          Q1        Q2        Q3        right on Q1,Q2,Q3
#   P1     A* 4      B* 2      C* 1      1 1 1
#   P2     A* 6      B* 8      D  2      1 1 0
#   P3     A* 5      A  4      C* 3      1 0 1
#   P4     B  9      D  6      C* 4      0 0 1
#   P5     C  3      B* 10     D  5      0 1 0
#   P6     -         -         C* 7      (answered Q3 only)
#   P1 answers Q1 again later (D, 1 s): only a person's first answer counts.
#
# Shares: Q1 A 3/5 = 60%, B 20%, C 20%, D 0%. Q2 A 20%, B 60%, C 0%, D 20%.
#   Q3 (6 answers) C 4/6, D 2/6.
# Median time: Q1 sorted 3,4,5,6,9 -> 5 s. Q2 2,4,6,8,10 -> 6 s. Q3 1,2,3,4,5,7 -> (3+4)/2
#   = 3.5 s.
# Discrimination: the point-biserial r between x = right on this question and y = the score on
#   the other questions. Everyone here answered all three (except P6, who has no other
#   question and is left out), so y = the number right on the other two questions / 2, and
#   the /2 does not change r; below y is the number right. r = (M1 - M0) / s * sqrt(p q),
#   with M1, M0 the mean y of those right and wrong, s the population SD of y, p the share
#   right.
#   Q1: x = 1 1 1 0 0, y = Q2+Q3 = 2 1 1 1 1. M1 = 4/3, M0 = 1. mean y = 6/5 = 1.2,
#       E[y^2] = (4+1+1+1+1)/5 = 1.6, var = 1.6 - 1.44 = 0.16, s = 0.4. p = 0.6, q = 0.4.
#       r = (1/3) / 0.4 * sqrt(0.24) = (5/6) * sqrt(0.24) = 1/sqrt(6) = 0.4082.
#   Q2: x = 1 1 0 0 1, y = Q1+Q3 = 2 1 2 1 0. M1 = (2+1+0)/3 = 1, M0 = (2+1)/2 = 1.5.
#       mean y = 1.2, E[y^2] = (4+1+4+1+0)/5 = 2, var = 0.56. p = 0.6.
#       r = -0.5 / sqrt(0.56) * sqrt(0.24) = -0.5 * sqrt(3/7) = -0.3273.
#   Q3: x = 1 0 1 1 0, y = Q1+Q2 = 2 2 1 0 1. M1 = (2+1+0)/3 = 1, M0 = (2+1)/2 = 1.5.
#       mean y = 1.2, E[y^2] = (4+4+1+0+1)/5 = 2, var = 0.56. p = 0.6. r = -0.3273.
#   Q4: nobody answered: None.
# Flags: none. Q2 and Q3 discriminate negatively and on Q3 D is close, but 5 or 6 answers
#   are fewer than MIN_ANSWERS (10).
SMALL = quiz("small", [0, 1, 2, 3])
SMALL_ANSWERS = responses("small", [
    ("P1", 1, 0, 4000), ("P1", 2, 1, 2000), ("P1", 3, 2, 1000),
    ("P2", 1, 0, 6000), ("P2", 2, 1, 8000), ("P2", 3, 3, 2000),
    ("P3", 1, 0, 5000), ("P3", 2, 0, 4000), ("P3", 3, 2, 3000),
    ("P4", 1, 1, 9000), ("P4", 2, 3, 6000), ("P4", 3, 2, 4000),
    ("P5", 1, 2, 3000), ("P5", 2, 1, 10000), ("P5", 3, 3, 5000),
    ("P6", 3, 2, 7000),
    ("P1", 1, 3, 1000),  # a second answer: ignored
])


def test_small_example_every_figure_as_computed_by_hand() -> None:
    report = analyse_quiz(SMALL, SMALL_ANSWERS)
    assert (report.quiz_id, report.title, report.people, report.answers) == (
        "small", "Quiz small", 6, 16
    )
    q1, q2, q3, q4 = report.items

    assert (q1.question_id, q1.prompt, q1.answered, q1.right) == ("small-q1", "Question 1?", 5, 3)
    assert q1.option_counts == (3, 1, 1, 0)
    assert q1.option_shares == pytest.approx((0.6, 0.2, 0.2, 0.0))
    assert q1.share_right == pytest.approx(0.6)
    assert q1.discrimination == pytest.approx(1 / math.sqrt(6))  # 0.4082
    assert q1.discriminated == 5
    assert q1.median_ms == 5000

    assert q2.option_shares == pytest.approx((0.2, 0.6, 0.0, 0.2))
    assert q2.discrimination == pytest.approx(-0.5 * math.sqrt(3 / 7))  # -0.3273
    assert q2.median_ms == 6000

    assert (q3.answered, q3.right) == (6, 4)
    assert q3.option_shares == pytest.approx((0, 0, 4 / 6, 2 / 6))
    assert q3.discrimination == pytest.approx(-0.5 * math.sqrt(3 / 7))
    assert q3.discriminated == 5  # P6 answered nothing else
    assert q3.median_ms == 3500

    assert (q4.answered, q4.share_right, q4.option_shares) == (0, None, None)
    assert (q4.discrimination, q4.median_ms) == (None, None)

    assert all(item.flags == () for item in report.items)  # fewer than MIN_ANSWERS each


def test_discrimination_uses_the_share_on_other_questions_not_a_count() -> None:
    """P7 answered Q1 (right) and three others, one of them right: a score of 1/3 on the
    others, whatever the number of questions the rest answered."""
    base = analyse_quiz(SMALL, SMALL_ANSWERS).items[0].discrimination
    more = [*SMALL_ANSWERS, *responses("small", [
        ("P7", 1, 0, 1000), ("P7", 2, 1, 1000), ("P7", 3, 3, 1000), ("P7", 4, 0, 1000),
    ])]
    # P7's others: Q2 right, Q3 wrong, Q4 (answer D) wrong -> 1/3
    r = analyse_quiz(SMALL, more).items[0]
    # y as shares: P1 1, P2 1/2, P3 1/2, P4 1/2, P5 1/2, P7 1/3; x = 1 1 1 0 0 1
    assert r.discrimination == pytest.approx(
        correlation([1, 1, 1, 0, 0, 1], [1, 0.5, 0.5, 0.5, 0.5, 1 / 3])
    )
    assert r.discrimination != base


# --- flags: ten people ------------------------------------------------------------------
#
# Quiz "flags", four questions, answers: E -> A (0), H -> A (0), D -> A (0), N -> A (0).
# Ten people P0..P9, each answers all four:
#   E: everyone right (A).                                -> 10/10 = 100% > 90%: too easy
#   H: only P0 right; the rest choose B.                  ->  1/10 = 10% < 20%: too hard,
#      and B (9) beats the answer (1): distractor
#   D: P0, P1, P2 right (A); P3-P7 choose B, P8, P9 C.    ->  A 30%, B 50%, C 20%: distractor
#   N: P3..P9 right (A), P0, P1, P2 choose D.             ->  70% right
# Right (1) or wrong (0) per person, on E H D N:
#   P0 1 1 1 0    P1 1 0 1 0    P2 1 0 1 0    P3..P9 1 0 0 1
# Discrimination (y = number right on the other three; all answered all, so the share/3
# gives the same r):
#   E: x constant (all right): None.
#   H: y = E+D+N = 2 for everyone (P0 1+1+0, P1 1+1+0, P3 1+0+1): y constant: None.
#   D: x = 1 1 1 0 0 0 0 0 0 0, y = E+H+N = 2 1 1 2 2 2 2 2 2 2. M1 = 4/3, M0 = 2,
#      mean y = 18/10 = 1.8, E[y^2] = (4+1+1+7*4)/10 = 3.4, var = 3.4 - 3.24 = 0.16, s = 0.4,
#      p = 0.3, q = 0.7: r = (-2/3) / 0.4 * sqrt(0.21) = -(5/3) sqrt(0.21) = -0.7638.
#   N: x = 0 0 0 1 1 1 1 1 1 1, y = E+H+D = 3 2 2 1 1 1 1 1 1 1. M1 = 1, M0 = 7/3,
#      mean y = 1.4, E[y^2] = (9+4+4+7)/10 = 2.4, var = 2.4 - 1.96 = 0.44, p = 0.7:
#      r = (-4/3) / sqrt(0.44) * sqrt(0.21) = -(4/3) sqrt(21/44) = -0.9211.
def flags_answers() -> list[ItemResponse]:
    rows = []
    for p in range(10):
        person = f"P{p}"
        rows += [
            (person, 1, 0, 1000),
            (person, 2, 0 if p == 0 else 1, 1000),
            (person, 3, 0 if p < 3 else 1 if p < 8 else 2, 1000),
            (person, 4, 0 if p >= 3 else 3, 1000),
        ]
    return responses("flags", rows)


def test_flags_from_ten_answers_as_computed_by_hand() -> None:
    report = analyse_quiz(quiz("flags", [0, 0, 0, 0]), flags_answers())
    e, h, d, n = report.items
    assert e.share_right == 1.0 and e.discrimination is None
    assert e.flags == (Flag.TOO_EASY,)
    assert h.share_right == pytest.approx(0.1) and h.discrimination is None
    assert h.flags == (Flag.TOO_HARD, Flag.DISTRACTOR)
    assert h.popular_distractors == (1,)
    assert d.option_shares == pytest.approx((0.3, 0.5, 0.2, 0.0))
    assert d.discrimination == pytest.approx(-(5 / 3) * math.sqrt(0.21))  # -0.7638
    assert d.flags == (Flag.DISTRACTOR, Flag.NEGATIVE)
    assert n.share_right == pytest.approx(0.7)
    assert n.discrimination == pytest.approx(-(4 / 3) * math.sqrt(21 / 44))  # -0.9211
    assert n.flags == (Flag.NEGATIVE,)


def test_no_flag_one_answer_below_the_minimum() -> None:
    """The same pattern with P9 left out: nine answers each, nothing is flagged."""
    nine = [r for r in flags_answers() if r.person_key != "P9"]
    report = analyse_quiz(quiz("flags", [0, 0, 0, 0]), nine)
    assert all(item.answered == MIN_ANSWERS - 1 for item in report.items)
    assert all(item.flags == () for item in report.items)
    assert report.items[3].discrimination is not None  # shown, just not flagged


def test_thresholds_are_strict() -> None:
    """90% right is not too easy (above 90% is); 20% is not too hard (below 20% is); a
    distractor as popular as the answer does not beat it."""
    rows = []
    for p in range(10):
        rows += [
            (f"P{p}", 1, 0 if p < 9 else 1, 1000),  # 9/10 right
            (f"P{p}", 2, 0 if p < 2 else 1 if p < 4 else 2 if p < 7 else 3, 1000),  # 2,2,3,3
        ]
    a, b = analyse_quiz(quiz("t", [0, 0]), responses("t", rows)).items
    assert a.share_right == pytest.approx(0.9) and Flag.TOO_EASY not in a.flags
    assert b.share_right == pytest.approx(0.2) and Flag.TOO_HARD not in b.flags
    assert b.option_counts == (2, 2, 3, 3) and b.popular_distractors == (2, 3)


def test_correlation_undefined_cases() -> None:
    assert correlation([], []) is None
    assert correlation([1], [0.5]) is None
    assert correlation([1, 1], [0.0, 1.0]) is None  # x constant
    assert correlation([0, 1], [0.5, 0.5]) is None  # y constant
    assert correlation([0, 1], [0.0, 1.0]) == pytest.approx(1.0)
    # shares that differ only by rounding are constant
    assert correlation([0, 1, 1], [1 / 3, 1 / 3, (1 - 2 / 3)]) is None


def test_stale_answers_are_left_out_and_counted() -> None:
    """A question removed from the pack, or an option it no longer has."""
    rows = [
        ItemResponse("P1", "c", "small", "small-gone", 0, True, 1000),
        ItemResponse("P1", "c", "small", "small-q1", 7, True, 1000),
        ItemResponse("P1", "c", "small", "small-q1", 0, True, 1000),
    ]
    report = analyse_quiz(SMALL, rows)
    assert report.stale == 2
    assert report.items[0].option_counts == (1, 0, 0, 0)


def test_rightness_follows_the_pack_not_the_stored_flag() -> None:
    """The stored `correct` was scored against the key when answered; the analysis reads the
    option, so share right and the share on the correct option agree after a key is fixed."""
    rows = [ItemResponse("P1", "c", "small", "small-q1", 0, False, 1000)]
    assert analyse_quiz(SMALL, rows).items[0].right == 1


def test_analyse_groups_by_quiz_in_catalog_order() -> None:
    catalog = Catalog({"small": SMALL, "flags": quiz("flags", [0, 0, 0, 0]),
                       "quiet": quiz("quiet", [1])})
    everything = [*flags_answers(), *SMALL_ANSWERS,
                  ItemResponse("P1", "c", "gone", "x", 0, True, 1)]
    reports = analyse(catalog, everything)
    assert [r.quiz_id for r in reports] == ["small", "flags"]  # no answers, no report
    only = analyse(catalog, everything, quiz_id="quiet")
    assert [r.quiz_id for r in only] == ["quiet"] and only[0].answers == 0
    assert analyse(catalog, everything, quiz_id="nope") == []


# --- storage: the first answer per person and question --------------------------------------


async def answer(
    storage: Storage, chat: str, quiz_id: str, question_id: str, person: str,
    option: int, when: datetime, elapsed_ms: int = 1000,
) -> None:
    post = await storage.create_post(chat, quiz_id, question_id, (0, 1, 2), "en", when)
    outcome, _ = await storage.record_answer(
        AnswerRecord(post.id, person, option, option == 1, when, elapsed_ms, name=person)
    )
    assert outcome == "inserted"


async def test_storage_item_responses_first_answer_per_person_and_question(
    storage: Storage,
) -> None:
    t0 = datetime(2026, 3, 1, tzinfo=UTC)
    for chat in ("tg:-1", "dc:2"):
        await storage.upsert_chat(chat, chat)
    plan: list[tuple[Any, ...]] = [
        ("tg:-1", "sample", "s-one", "tg:1", 1),
        ("tg:-1", "sample", "s-one", "tg:1", 0),  # a later post of the same question: left out
        ("tg:-1", "sample", "s-two", "tg:1", 2),
        ("dc:2", "sample", "s-one", "dc:9", 0),
        ("dc:2", "other", "o-one", "dc:9", 1),
        ("tg:-1", "sample", "s-one", "tg:2", 1),
    ]
    for i, (chat, quiz_id, question_id, person, option) in enumerate(plan):
        await answer(storage, chat, quiz_id, question_id, person, option,
                     t0 + timedelta(minutes=i), elapsed_ms=1000 + i)

    everything = await storage.item_responses()
    assert [(r.person_key, r.question_id, r.option, r.elapsed_ms) for r in everything] == [
        ("tg:1", "s-one", 1, 1000), ("tg:1", "s-two", 2, 1002), ("dc:9", "s-one", 0, 1003),
        ("dc:9", "o-one", 1, 1004), ("tg:2", "s-one", 1, 1005),
    ]
    assert everything[0] == ItemResponse("tg:1", "tg:-1", "sample", "s-one", 1, True, 1000)
    in_chat = await storage.item_responses(chat_key="dc:2")
    assert [(r.quiz_id, r.question_id) for r in in_chat] == [("sample", "s-one"),
                                                             ("other", "o-one")]
    of_quiz = await storage.item_responses(quiz_id="sample", chat_key="tg:-1")
    assert [(r.person_key, r.question_id) for r in of_quiz] == [
        ("tg:1", "s-one"), ("tg:1", "s-two"), ("tg:2", "s-one")
    ]
    assert await storage.item_responses(quiz_id="none") == []


@pytest.mark.parametrize(("r", "flagged"), [(-0.05, False), (-0.1, False), (-0.11, True)])
def test_negative_discrimination_only_below_the_noise_floor(r: float, flagged: bool) -> None:
    """A correlation a hair under zero is noise, not a broken question."""
    item = ItemStats("q", "?", 0, (6, 2, 1, 1), r, MIN_ANSWERS, 1000.0, ())
    assert (Flag.NEGATIVE in _flagged(item).flags) is flagged


@pytest.mark.parametrize("seed", range(6))
def test_the_kept_figures_give_what_the_answers_give(seed: int) -> None:
    """analyse_figures (the dashboard's, from the materializer's figures) reports what
    analyse reports from the first answers, but the median time it has no figures for."""
    rng = random.Random(seed)
    quizzes = [quiz("a", [rng.randrange(4) for _ in range(6)]), quiz("b", [1, 0, 2], 3)]
    catalog = Catalog({q.id: q for q in quizzes})
    table = []
    for n in range(rng.randrange(20, 120)):
        for q in quizzes:
            for question in rng.sample(q.questions, rng.randrange(len(q.questions) + 1)):
                skill = (n % 7) / 7
                option = question.answer if rng.random() < skill else rng.randrange(
                    len(question.options))
                table.append(ItemResponse(f"tg:{n}", "tg:-1", q.id, question.id, option,
                                          option == question.answer, rng.randrange(9000)))
    table.append(ItemResponse("tg:1", "tg:-1", "a", "a-q1", 3, False, 5))  # not a first
    table.append(ItemResponse("tg:1", "tg:-1", "gone", "gone-q1", 0, False, 5))  # no quiz
    firsts: dict[tuple[str, str, str], ItemResponse] = {}
    for r in table:
        firsts.setdefault((r.person_key, r.quiz_id, r.question_id), r)
    figures = figures_of((r.quiz_id, r.question_id, r.person_key, r.option, r.correct,
                          r.response) for r in firsts.values())
    expected = analyse(catalog, table)
    kept = analyse_figures(catalog, figures)
    assert [r.quiz_id for r in kept] == [r.quiz_id for r in expected]
    for mine, theirs in zip(kept, expected, strict=True):
        assert (mine.title, mine.people, mine.stale) == (theirs.title, theirs.people,
                                                         theirs.stale)
        for a, b in zip(mine.items, theirs.items, strict=True):
            assert a.median_ms is None
            assert replace(a, median_ms=b.median_ms, discrimination=None) == replace(
                b, discrimination=None)
            assert a.discrimination == pytest.approx(b.discrimination, abs=1e-9)


def test_the_stated_difficulty_beside_the_observed_one() -> None:
    """Observed from MIN_ANSWERS answers: easy from 80% right, hard below 40%; shown beside
    the pack's stated difficulty when the two differ (in /analysis and the dashboard's
    flags)."""
    from bot.core.analysis_text import flags_text
    from bot.i18n import translator

    stated = quiz("flags", [0, 0, 0, 0]).export()
    for question, difficulty in zip(stated["questions"], ["hard", "hard", "easy", "medium"],
                                    strict=True):
        answer = question.pop("answer")
        question["options"] = [{"en": o["en"], "correct": i == answer}
                               for i, o in enumerate(question["options"])]
        question["difficulty"] = difficulty
    rated = Quiz.model_validate(stated)
    e, h, d, n = analyse_quiz(rated, flags_answers()).items  # 100%, 10%, 30%, 70% right
    assert [i.stated for i in (e, h, d, n)] == ["hard", "hard", "easy", "medium"]
    assert [i.observed for i in (e, h, d, n)] == ["easy", "hard", "hard", "medium"]
    en = translator("en")
    assert flags_text(e, en) == "⚠️ too easy; stated hard, observed easy (100% right)"
    assert "stated" not in flags_text(h, en) and "stated" not in flags_text(n, en)
    assert flags_text(d, en).endswith("; stated easy, observed hard (30% right)")
    assert "প্যাকে লেখা কঠিন, উত্তরে দেখা গেল সহজ" in flags_text(e, translator("bn"))
    # the kept figures carry it too, and nine answers observe nothing
    kept = figures_of((r.quiz_id, r.question_id, r.person_key, r.option, r.correct,
                       r.response) for r in flags_answers())  # one answer each: all first answers
    [figured] = analyse_figures(Catalog({"flags": rated}), kept)
    assert [i.stated for i in figured.items] == ["hard", "hard", "easy", "medium"]
    nine = [r for r in flags_answers() if r.person_key != "P9"]
    assert all(i.observed is None for i in analyse_quiz(rated, nine).items)
    assert flags_text(analyse_quiz(rated, nine).items[0], en) == ""
