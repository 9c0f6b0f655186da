"""/review export: a person's due and missed cards as an Anki deck in their language.

The cards are the ones /review would ask now (due by FSRS, replayed from the answers as in
review.py) and every question whose latest answer was wrong, in that order, each once; a
question no longer in the catalog is left out. The deck is built by
bot/content/formats/anki.py (genanki) in a worker thread, and its notes' GUIDs are the ones
`quizbot content export --format anki` gives, so a learner who imports both has each question
once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from bot.content import Catalog, Question
from bot.core.clock import Clock
from bot.core.deck import Deck
from bot.core.models import Person
from bot.core.ports import ReviewAnswer
from bot.i18n import Translator

FILE_NAME = "quizbot-review.apkg"


def deck_caption(t: Translator, cards: int) -> str:
    # i18n: the caption of the Anki deck file; {n} is how many questions it holds
    return t.ngettext(
        "🗂 Your review deck: {n} question due or missed. Open it with Anki (File → Import); "
        "a newer deck updates these cards instead of adding them again.",
        "🗂 Your review deck: {n} questions due or missed. Open it with Anki (File → Import); "
        "a newer deck updates these cards instead of adding them again.", cards)


def nothing_to_export_text(t: Translator) -> str:
    return t.gettext("No question is due for review or was answered wrong, so there is no "
                     "deck to export yet. Answer some questions first.")


@dataclass(frozen=True, slots=True)
class ReviewDeck:
    content: bytes  # the .apkg file
    cards: int


class ReviewAnswers(Protocol):
    """What the export reads: the one ReviewStore call (ports.py) it makes."""

    async def review_answers(self, person_key: str) -> list[ReviewAnswer]: ...


class ReviewExport:
    def __init__(self, catalog: Catalog, storage: ReviewAnswers, clock: Clock) -> None:
        self.catalog = catalog
        self.storage = storage
        self.clock = clock

    async def cards(self, person_key: str) -> list[tuple[str, Question]]:
        """(quiz id, question) of each due or missed card, the longest overdue first."""
        deck = Deck()
        latest: dict[tuple[str, str], bool] = {}
        for answer in await self.storage.review_answers(person_key):
            deck.apply(answer)
            latest[(answer.quiz_id, answer.question_id)] = answer.correct
        missed = [key for key, right in latest.items() if not right]
        cards = []
        for quiz_id, question_id in dict.fromkeys([*deck.due(self.clock.now()), *missed]):
            quiz = self.catalog.get(quiz_id)
            try:
                if quiz is not None:
                    cards.append((quiz_id, quiz.question(question_id)))
            except KeyError:  # removed from its pack since it was answered
                continue
        return cards

    async def apkg(self, person: Person, locale: str) -> ReviewDeck | None:
        """The deck; None when no card is due or missed."""
        cards = await self.cards(person.key)
        if not cards:
            return None
        from bot.content.formats import anki  # genanki: imported by the first deck only

        # each with its quiz, whose folder has the question's picture
        pairs = [(self.catalog.quizzes[quiz_id], q) for quiz_id, q in cards]
        return ReviewDeck(await asyncio.to_thread(anki.review_deck, pairs, locale), len(cards))
