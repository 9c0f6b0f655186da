"""The answers a chat's misconceptions are counted from, on both backends: each person's
latest answer in the chat to each question of the quizzes asked for (with name, option, a
multi's picks and confidence) equals a recount of what was recorded; and the core's figures
over them (who chose a tagged distractor, who of them said they were sure) equal a count by
hand."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from bot.content import Catalog
from bot.content.items import Quiz
from bot.core.misconceptions import held
from bot.core.ports import AnswerRecord, ChosenOption
from tests.storage_contract.backends import Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
TEXT = {"en": "x", "bn": "x", "hi": "x"}
PACK = {
    "id": "mc", "title": "Misconceptions",
    "misconceptions": [{"id": "m-free", **TEXT}, {"id": "m-fast", **TEXT}],
    "questions": [
        {"id": "mc-choice", "prompt": "?", "explanation": ".", "options": [
            {"en": "right", "correct": True}, {"en": "a", "misconception": "m-free"},
            {"en": "b", "misconception": "m-fast"}, {"en": "c"}]},
        {"id": "mc-multi", "kind": "multi", "prompt": "?", "explanation": ".", "options": [
            {"en": "r1", "correct": True}, {"en": "r2", "correct": True},
            {"en": "w", "misconception": "m-free"}]},
        {"id": "mc-tf", "kind": "truefalse", "truth": True, "misconception": "m-fast",
         "prompt": "?", "explanation": "."},
    ],
}
ORDERS = {"mc-choice": (0, 1, 2, 3), "mc-multi": (2, 0, 1), "mc-tf": (0, 1)}
CHOICES: dict[str, list[tuple[int, str | None]]] = {  # (option, response) an answer may give
    "mc-choice": [(0, None), (1, None), (2, None), (3, None)],
    "mc-multi": [(-1, "0,1"), (-1, "0,2"), (-1, "1,2"), (-1, "2")],
    "mc-tf": [(0, None), (1, None)],
}


def catalog() -> Catalog:
    quiz = Quiz.model_validate(PACK)
    return Catalog({quiz.id: quiz})


async def record(store: Store, seed: int) -> list[tuple[str, ChosenOption]]:
    """Posts of each question in two chats (each asked three times), answered by some of
    eight people: every answer recorded, in order, as (chat, what it chose)."""
    rng = random.Random(seed)
    recorded: list[tuple[str, ChosenOption]] = []
    at = NOW
    for _ in range(3):
        for chat in ("tg:-1", "tg:-2"):
            for question, order in ORDERS.items():
                post = await store.create_post(chat, "mc", question, order, "en", at)
                for person in rng.sample(range(1, 9), rng.randint(2, 8)):
                    option, response = rng.choice(CHOICES[question])
                    confidence = rng.choice([None, 0, 1, 2])
                    at += timedelta(seconds=1)
                    outcome, _ = await store.record_answer(AnswerRecord(
                        post.id, f"tg:{person}", option, option == 0, at, 1000,
                        name=f"p{person}", response=response, confidence=confidence))
                    assert outcome == "inserted"
                    recorded.append((chat, ChosenOption(
                        "mc", question, f"tg:{person}", f"p{person}", option, response,
                        confidence)))
    return recorded


def recount(recorded: list[tuple[str, ChosenOption]], chat: str) -> list[ChosenOption]:
    latest: dict[tuple[str, str], tuple[int, ChosenOption]] = {}
    for i, (where, chosen) in enumerate(recorded):
        if where == chat:
            latest[(chosen.person_key, chosen.question_id)] = (i, chosen)
    return [chosen for _, chosen in sorted(latest.values(), key=lambda pair: pair[0])]


async def test_the_latest_answers_equal_a_recount(store: Store) -> None:
    recorded = await record(store, 11)
    other = await store.create_post("tg:-1", "other", "o-1", (0, 1), "en", NOW)
    await store.record_answer(AnswerRecord(other.id, "tg:1", 1, False, NOW, 1000, name="p1"))
    for chat in ("tg:-1", "tg:-2"):
        assert await store.chosen_options(chat, ["mc"]) == recount(recorded, chat)
        assert await store.chosen_options(chat, ["nothing"]) == []
        assert await store.chosen_options(chat, []) == []
    both = await store.chosen_options("tg:-1", ["mc", "other"])
    assert [c.quiz_id for c in both].count("other") == 1


async def test_who_holds_each_misconception_equals_a_count_by_hand(store: Store) -> None:
    recorded = await record(store, 5)
    answers = await store.chosen_options("tg:-2", ["mc"])
    figures = {m.id: m for m in held(catalog(), answers, ["mc"])}
    tags = {"mc-choice": {1: "m-free", 2: "m-fast"}, "mc-multi": {2: "m-free"},
            "mc-tf": {1: "m-fast"}}
    for misconception in ("m-free", "m-fast"):
        chose: dict[str, bool] = {}
        asked: set[str] = set()
        for a in recount(recorded, "tg:-2"):
            carries = [o for o, tag in tags[a.question_id].items() if tag == misconception]
            if not carries:
                continue
            asked.add(a.person_key)
            picks = {int(p) for p in a.response.split(",")} if a.response else {a.option}
            if picks & set(carries):
                chose[a.person_key] = chose.get(a.person_key, False) or a.confidence == 2
        found = figures.get(misconception)
        if not chose:
            assert found is None
            continue
        assert found is not None
        assert (found.people, found.sure, found.answered) == (
            len(chose), sum(chose.values()), len(asked)), misconception
        assert {h.person_key: h.sure for h in found.holders} == chose
    assert [m.people for m in figures.values()] == sorted(
        (m.people for m in figures.values()), reverse=True)
