"""Where a person's name is unknown, boards and summaries show a neutral placeholder in the
reader's language, never the platform id (issue 18)."""

from __future__ import annotations

import pytest

from bot.core import render
from bot.core.models import BoardRow, Chat, Leaderboard, Period, Person
from bot.core.ports import RoundScore, RoundSummary
from bot.core.service import QuizService
from bot.i18n import translator

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database


def board(*rows: BoardRow) -> Leaderboard:
    return Leaderboard("tg:-1", Period.ALL, rows, None)


def test_an_unknown_name_on_a_board_is_a_placeholder_not_an_id() -> None:
    text = render.leaderboard_text(board(
        BoardRow(1, "tg:1001", "Alice", 2, 2, 3000),
        BoardRow(2, "tg:1003", "", 1, 2, 4000),
        BoardRow(3, "dc:1577000000000000001", " ", 1, 3, 5000),
    ), translator("en"))
    assert "1. Alice" in text
    assert "2. someone #2 — 1/2 right" in text and "3. someone #3" in text
    assert "tg:1003" not in text and "dc:1577" not in text


def test_the_placeholder_speaks_the_readers_language() -> None:
    for locale in ("bn", "hi"):
        text = render.leaderboard_text(board(BoardRow(1, "tg:1003", "", 1, 2, 4000)),
                                       translator(locale))
        assert "tg:1003" not in text and "someone" not in text, text


def test_a_round_summary_names_nobody_by_id() -> None:
    summary = RoundSummary(1, "tg:-1", "en", 2, 2, (RoundScore("tg:1003", "", 2, 2),))
    text = render.round_summary_text(summary, translator("en"))
    assert "1. someone #1: 2 of 2 right" in text and "tg:" not in text


def test_a_name_that_is_an_id_or_blank_is_not_a_name_to_store() -> None:
    assert Person("tg:1003", "Dipa Das ").known_name == "Dipa Das"
    for name in ("", "  ", "tg:1003", "tg:1004", "dc:1577000000000000001", "tg:-100200"):
        assert Person("tg:1003", name).known_name == "", name
    assert Person("console:ada", "ada").known_name == "ada"


async def test_the_core_never_stores_an_id_or_a_blank_over_a_name(service: QuizService) -> None:
    group, bo = Chat("tg:-100", "Study group"), Person("tg:2", "Bo")
    async with service.asking.quiz(group, Person("tg:1", "Ada")) as question:
        pass
    await service.answer(question.post_id, bo, question.correct)
    alone = Chat(bo.key, "Bo", is_private=True)
    async with service.asking.quiz(alone, Person(bo.key, bo.key), "sample") as first:  # an id
        pass
    result = await service.answer(first.post_id, Person(bo.key, " "), first.correct)
    assert result.next_question is not None  # the run went on, posting its next question
    assert await service.storage.person_name(bo.key) == "Bo"
