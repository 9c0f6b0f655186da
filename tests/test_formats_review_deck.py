"""Which cards /review export puts in a person's deck (bot/core/review_export.py): the due
ones, longest overdue first, then every question whose latest answer was wrong, each once;
questions gone from the catalog left out; a card's picture goes into the deck as media."""

from __future__ import annotations

from pathlib import Path

from bot.content import load_catalog
from bot.core.models import Person
from bot.core.ports import ReviewAnswer
from bot.core.review_export import ReviewExport
from tests import apkg
from tests.clock import FakeClock

SAMPLE = Path(__file__).parent / "data" / "packs"
CARDS = Path(__file__).parent / "data" / "cards"


class Answers:
    """The one storage call the export makes."""

    def __init__(self, answers: list[ReviewAnswer]) -> None:
        self.answers = answers

    async def review_answers(self, person_key: str) -> list[ReviewAnswer]:
        return self.answers


def answer(clock: FakeClock, question_id: str, correct: bool, quiz_id: str = "sample",
           ) -> ReviewAnswer:
    return ReviewAnswer(quiz_id, question_id, correct, clock.now(), 20_000, True)


async def test_due_cards_first_then_the_missed_ones_each_once() -> None:
    clock = FakeClock()
    history = [answer(clock, "s-three", True)]  # right: due again after 10 minutes
    clock.advance(3600)
    history += [answer(clock, "s-one", True), answer(clock, "s-two", False),  # 1 minute
                answer(clock, "gone", False), answer(clock, "s-x", False, quiz_id="nope")]
    clock.advance(2 * 3600)
    export = ReviewExport(load_catalog(SAMPLE), Answers(history), clock)
    # all three due, the longest overdue first; s-two, also missed, once; questions no
    # longer in the catalog left out
    assert [q.id for _, q in await export.cards("tg:1")] == ["s-three", "s-two", "s-one"]
    history.append(answer(clock, "s-three", False))  # wrong just now: not due, but missed
    assert [q.id for _, q in await export.cards("tg:1")] == ["s-two", "s-one", "s-three"]


async def test_no_card_no_deck_and_a_deck_is_in_the_person_s_language() -> None:
    clock = FakeClock()
    empty = ReviewExport(load_catalog(SAMPLE), Answers([]), clock)
    assert await empty.apkg(Person("tg:1", "Ann"), "bn") is None
    export = ReviewExport(load_catalog(SAMPLE), Answers([answer(clock, "s-one", False)]), clock)
    deck = await export.apkg(Person("tg:1", "Ann"), "bn")
    assert deck is not None and deck.cards == 1
    [note] = apkg.notes(deck.content)
    assert note.fields["Prompt"] == "এক যোগ এক কত?" and note.deck == "quizbot review (bn)"


async def test_a_card_with_a_picture_brings_it_into_the_deck() -> None:
    clock = FakeClock()
    catalog = load_catalog(CARDS)
    history = [answer(clock, "cards-accumulation", False, quiz_id="cards")]
    deck = await ReviewExport(catalog, Answers(history), clock).apkg(Person("tg:1", "Ann"), "hi")
    assert deck is not None
    [note] = apkg.notes(deck.content)
    [(name, data)] = apkg.media(deck.content).items()
    assert data == (CARDS / "stages.png").read_bytes()
    assert f'<img src="{name}"' in note.fields["Prompt"]
    question = catalog.question("cards", "cards-accumulation")
    assert question.code is not None and question.formula is not None
    assert question.code.text.get("hi") in note.fields["Prompt"]
    assert f"\\[{question.formula.get('hi')}\\]" in note.fields["Prompt"]
