"""Grading every kind of question (bot/core/grading.py): right, wrong, partial, typed numbers
in Bengali and Devanagari digits with separators and units, typed texts with joiners and
Latin spellings, orders as letters or digits; and no input ever raises."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.content.items import Kind
from bot.core.grading import (
    Graded,
    Key,
    Unreadable,
    allowed_distance,
    grade,
    normalise_text,
    number_text,
    parse_letters,
    parse_number,
    parse_order,
    stored_number,
    stored_options,
)
from bot.core.models import Ordered, Picks, Response, Typed

CHOICE = Key(Kind.CHOICE, answers=frozenset({2}))
TF = Key(Kind.TRUEFALSE, answers=frozenset({1}))  # the statement is false
MULTI = Key(Kind.MULTI, answers=frozenset({0, 2, 3}))
ORDER = Key(Kind.ORDER)
NUMERIC = Key.numeric(2.77, 2.97, ("GB", "জিবি", "जीबी"))  # 2.87 ± 0.1
TEXT = Key.text(["gradient checkpointing", "activation checkpointing",
                 "গ্রেডিয়েন্ট চেকপয়েন্টিং", "पुनर्गणना", "recomputation", "punargonona"])
SHUFFLED = (3, 0, 2, 1)  # shown -> canonical


# --- choice and true/false ------------------------------------------------------------------


def test_choice_right_and_wrong_through_the_shown_order():
    assert grade(CHOICE, SHUFFLED, 2) == Graded(True, option=2)
    assert grade(CHOICE, SHUFFLED, 0) == Graded(False, option=3)


def test_true_false_is_a_choice_of_two():
    assert grade(TF, (0, 1), 1) == Graded(True, option=1)
    assert grade(TF, (0, 1), 0) == Graded(False, option=0)


@pytest.mark.parametrize("response", [-1, 4, True, Picks(frozenset({1})), Typed("C"),
                                      Ordered((0, 1, 2, 3))])
def test_choice_refuses_another_shape_or_an_option_it_has_not(response):
    assert grade(CHOICE, SHUFFLED, response) == Unreadable(None)


# --- several right answers ------------------------------------------------------------------


def test_multi_is_right_only_with_exactly_the_right_set():
    order = (0, 1, 2, 3, 4)
    assert grade(MULTI, order, Picks(frozenset({0, 2, 3}))) == Graded(
        True, response="0,2,3", partial=(3, 3))


def test_multi_partial_counts_right_picks_but_is_wrong():
    order = (4, 3, 2, 1, 0)  # shown 1 is canonical 3, shown 2 is 2, shown 0 is 4
    result = grade(MULTI, order, Picks(frozenset({1, 2})))
    assert result == Graded(False, response="2,3", partial=(2, 3))
    # everything picked: every right one, but wrong
    everything = grade(MULTI, order, Picks(frozenset(range(5))))
    assert everything == Graded(False, response="0,1,2,3,4", partial=(3, 3))


def test_multi_takes_typed_letters():
    order = (0, 1, 2, 3, 4)
    assert grade(MULTI, order, Typed("a, c d")) == Graded(True, response="0,2,3",
                                                         partial=(3, 3))
    assert grade(MULTI, order, Typed("ACD")) == grade(MULTI, order, Typed("a c d"))
    assert grade(MULTI, order, Typed("A Z")) == Unreadable(Kind.MULTI)


@pytest.mark.parametrize("response", [Picks(frozenset()), Picks(frozenset({5})),
                                      Picks(frozenset({-1, 0})), 2, Ordered((0, 1))])
def test_multi_refuses_nothing_picked_a_forged_pick_or_another_shape(response):
    assert grade(MULTI, (0, 1, 2, 3, 4), response) == Unreadable(None)


# --- numbers --------------------------------------------------------------------------------


@pytest.mark.parametrize(("typed", "number"), [
    ("2.9", 2.9), ("২.৯", 2.9), ("२.९", 2.9), ("+2.9", 2.9), ("-1.5", -1.5), ("−1.5", -1.5),
    ("1,000", 1000), ("1,000,000", 1_000_000), ("1 000 000", 1_000_000),
    ("1\u2009000", 1000), ("1\u202f000", 1000), ("1\xa0000", 1000),
    ("1,00,000", 100_000), ("12,34,567", 1_234_567), ("১,০০,০০০", 100_000),
    ("१,००,०००.५", 100_000.5), ("1e9", 1e9), ("1.2E+09", 1.2e9), ("1.2×10^9", 1.2e9),
    ("1.2 x 10^9", 1.2e9), ("1.2×10⁹", 1.2e9), ("3×10⁻³", 3e-3), ("5.", 5), (".5", 0.5),
    ("２.９", 2.9),
])
def test_numbers_are_read_in_every_script_and_grouping(typed, number):
    assert parse_number(typed) == pytest.approx(number)


@pytest.mark.parametrize("typed", [
    "", "abc", ".", "2,87", "1,0000", "1,00,00", "1,000 000", "1e999", "2.9.1", "--2",
    "x" * 300, "1" * 300, "10^9", "2.9 kg",
])
def test_what_is_not_a_number_is_not_read_as_one(typed):
    assert parse_number(typed, ("gb",)) is None


@pytest.mark.parametrize("typed", ["2.9 GB", "2.9GB", "2.9 gb", "২.৯ জিবি", "२.९ जीबी",
                                   "2.9 GB.", " 2.9 "])
def test_numeric_takes_the_questions_unit_in_any_language(typed):
    assert grade(NUMERIC, (), Typed(typed)) == Graded(True, response="2.9")


def test_numeric_refuses_another_unit_and_says_a_number_is_expected():
    assert grade(NUMERIC, (), Typed("2.9 TB")) == Unreadable(Kind.NUMERIC)
    assert grade(NUMERIC, (), Typed("about three")) == Unreadable(Kind.NUMERIC)


def test_numeric_bounds_are_inclusive_despite_floating_point():
    low, high = 2.87 - 0.1, 2.87 + 0.1  # high is 2.9699999999999998
    key = Key.numeric(low, high)
    assert grade(key, (), Typed("2.97")) == Graded(True, response="2.97")
    assert grade(key, (), Typed("2.77")) == Graded(True, response="2.77")
    assert grade(key, (), Typed("2.98")) == Graded(False, response="2.98")
    assert grade(key, (), Typed("2.76")) == Graded(False, response="2.76")


def test_numbers_are_stored_in_their_shortest_form():
    assert number_text(100000.0) == "100000"
    assert number_text(2.9) == "2.9"
    assert stored_number(number_text(1.2e9)) == 1.2e9
    assert stored_number("nan") is None
    assert stored_number(None) is None


def test_a_typed_answer_to_a_choice_is_another_shape():
    assert grade(NUMERIC, (), 0) == Unreadable(None)
    assert grade(TEXT, (), Picks(frozenset({0}))) == Unreadable(None)


# --- texts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("typed", [
    "gradient checkpointing", "Gradient Checkpointing.", "  gradient   checkpointing ",
    "gradient-checkpointing", "«Activation checkpointing»", "GRADIENT_CHECKPOINTING!",
    "gradiant checkpointing", "activaton checkpointng",  # typos in a long answer
    "গ্রেডিয়েন্ট চেকপয়েন্টিং", "पुनर्गणना।", "Recomputation",
    "punargonona", "Punargoṇona", "punargonona.",  # the Latin spelling, diacritics folded
])
def test_text_accepts_every_languages_forms_and_small_typos(typed):
    result = grade(TEXT, (), Typed(typed))
    assert isinstance(result, Graded)
    assert result.correct, typed


@pytest.mark.parametrize("typed", ["checkpointing", "gradient", "recompute", "punar",
                                   "gradient accumulation"])
def test_text_refuses_other_answers(typed):
    assert grade(TEXT, (), Typed(typed)) == Graded(False, response=normalise_text(typed))


def test_zero_width_joiners_are_ignored_in_bengali_and_devanagari():
    # র‍্যাম: the ya-phala written with a zero-width joiner, as some keyboards do
    key = Key.text(["র্যাম", "क्षमता"])
    for typed in ("র\u200d্যাম", "র্যাম", "क्\u200cषमता", "क्षमता\u200b"):
        assert grade(key, (), Typed(typed)) == Graded(True, response=normalise_text(typed))
    assert normalise_text("র\u200d্যাম") == normalise_text("র্যাম")


def test_indic_vowel_signs_are_letters_not_diacritics():
    assert normalise_text("কাম") != normalise_text("কম")  # the aa sign is kept
    assert normalise_text("किताब") != normalise_text("कताब")
    assert normalise_text("Crème Brûlée") == "creme brulee"


def test_short_answers_must_be_exact_and_long_ones_forgive_a_typo_or_two():
    assert allowed_distance("adamw") == 0
    assert allowed_distance("recomputation") == 1
    assert allowed_distance("gradient checkpointing") == 2
    short = Key.text(["adamw"])
    assert grade(short, (), Typed("adam")) == Graded(False, response="adam")
    long = Key.text(["recomputation"])
    assert grade(long, (), Typed("recomputaton")) == Graded(True, response="recomputaton")
    assert grade(long, (), Typed("recomptaton")) == Graded(False, response="recomptaton")


def test_numbers_in_a_text_answer_are_exact():
    key = Key.text(["65 billion parameters"])
    assert grade(key, (), Typed("65 billion parametres")) == Graded(
        True, response="65 billion parametres")
    assert grade(key, (), Typed("66 billion parameters")) == Graded(
        False, response="66 billion parameters")


def test_an_empty_or_overlong_text_is_unreadable():
    for typed in ("", "   ", "...", "।", "x" * 500):
        assert grade(TEXT, (), Typed(typed)) == Unreadable(Kind.TEXT)


# --- orders ---------------------------------------------------------------------------------


@pytest.mark.parametrize("typed", ["B A D C", "BADC", "b,a,d,c", "B → A → D → C",
                                   "b > a > d > c", "2 1 4 3", "2143", "২ ১ ৪ ৩", "२,१,४,३",
                                   " b-a-d-c "])
def test_orders_are_read_as_letters_or_digits(typed):
    assert parse_order(typed, 4) == (1, 0, 3, 2)


@pytest.mark.parametrize("typed", ["A B C", "A B C D E", "A A B C", "A B C Z", "1 2 3 5",
                                   "A 2 C D", "", "ABCDE"])
def test_an_order_is_every_option_once(typed):
    assert parse_order(typed, 4) is None


def test_order_right_only_when_the_whole_order_is():
    order = (2, 0, 3, 1)  # shown -> canonical: canonical 0 is shown B, 1 is D, 2 is A, 3 is C
    assert grade(ORDER, order, Typed("B D A C")) == Graded(True, response="0,1,2,3")
    assert grade(ORDER, order, Ordered((1, 3, 0, 2))) == Graded(True, response="0,1,2,3")
    assert grade(ORDER, order, Ordered((1, 3, 2, 0))) == Graded(False, response="0,1,3,2")
    assert grade(ORDER, order, Typed("A B C D")) == Graded(False, response="2,0,3,1")


@pytest.mark.parametrize("response", [Ordered((0, 1, 2)), Ordered((0, 0, 1, 2)),
                                      Ordered((0, 1, 2, 4)), 1, Picks(frozenset({0}))])
def test_order_refuses_a_forged_sequence(response):
    assert grade(ORDER, (0, 1, 2, 3), response) == Unreadable(None)


def test_a_typed_order_that_cannot_be_read_says_an_order_is_expected():
    assert grade(ORDER, (0, 1, 2, 3), Typed("first B then A")) == Unreadable(Kind.ORDER)


def test_stored_options_read_back():
    assert stored_options("0,2,3") == (0, 2, 3)
    assert stored_options("") == ()
    assert stored_options(None) == ()
    assert stored_options("0,x") == ()
    assert parse_letters("a c", 3) == frozenset({0, 2})


# --- no input raises ------------------------------------------------------------------------

_PIECES = ["0", "1", "9", "২", "९", ".", ",", " ", "\u2009", "e", "E", "×", "x", "10", "^",
           "⁹", "⁻", "-", "−", "+", "GB", "জিবি", "A", "b", "→", ">", "\u200c", "\u200d",
           "é", "\u0301", "্", "।", "(", "\x00", "\ufeff", "🙂", "**", "\n", "\ud800", "\t"]
_TEXT = st.one_of(st.text(max_size=60),
                  st.lists(st.sampled_from(_PIECES), max_size=25).map("".join))
_RESPONSES = st.one_of(
    st.integers(-3, 12),
    st.builds(Picks, st.frozensets(st.integers(-3, 12), max_size=12)),
    st.builds(Ordered, st.lists(st.integers(-3, 12), max_size=8).map(tuple)),
    st.builds(Typed, _TEXT),
)
_KEYS = st.sampled_from([CHOICE, TF, MULTI, ORDER, NUMERIC, TEXT,
                         Key(Kind.MULTI)])


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_KEYS, st.lists(st.integers(0, 5), max_size=6).map(tuple), _RESPONSES)
def test_no_response_ever_raises(key: Key, order: tuple[int, ...], response: Response):
    result = grade(key, order, response)
    assert isinstance(result, Graded | Unreadable)
    if isinstance(result, Graded) and result.response is not None:
        assert len(result.response) <= 200
        # what storage keeps: no NUL, no unpaired surrogate (UTF-8 encodes it)
        assert "\x00" not in result.response
        result.response.encode("utf-8")


@settings(max_examples=1500, deadline=None)
@given(_TEXT)
def test_no_typed_text_ever_raises_a_parser(text: str):
    parse_number(text, ("gb",))
    parse_order(text, 4)
    parse_letters(text, 5)
    assert normalise_text(normalise_text(text)) == normalise_text(text)


def test_control_characters_and_lone_surrogates_are_dropped():
    assert normalise_text("recompu\x00tation\t") == "recomputation"
    assert normalise_text("re\ud800computation") == "recomputation"
