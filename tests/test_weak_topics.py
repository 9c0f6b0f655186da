"""The rule that names a person's weak topics (bot/core/weak_topics.py): an 88% topic is never
"weakest", nor one answered twice; a weak one is below 70% and below the chat's accuracy."""

from __future__ import annotations

from bot.core.weak_topics import is_weak, weakest


def test_a_topic_answered_well_is_not_weak_even_as_the_lowest() -> None:
    assert not is_weak(8, 7, chat_accuracy=0.95)  # 88%, the case seen on the People page
    assert weakest({"a": (8, 7), "b": (10, 10)}, 0.95, 2) == []


def test_too_few_answers_are_not_a_weakness() -> None:
    assert not is_weak(2, 0, chat_accuracy=0.9)
    assert is_weak(3, 0, chat_accuracy=0.9)


def test_below_70_percent_and_below_the_chat() -> None:
    assert is_weak(10, 6, chat_accuracy=0.75)
    assert not is_weak(10, 6, chat_accuracy=0.55)  # a hard pack: 60% is above this chat
    assert not is_weak(10, 7, chat_accuracy=0.9)  # 70% is not below 70%


def test_the_weakest_first_and_at_most_asked() -> None:
    topics = {"c": (10, 5), "a": (10, 2), "b": (10, 5), "d": (10, 9)}
    assert weakest(topics, 0.8, 2) == ["a", "b"]
    assert weakest(topics, 0.8, 5) == ["a", "b", "c"]
