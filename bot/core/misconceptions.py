"""Which misconceptions a chat holds: a pack's distractors may name the wrong idea they stand
for (`misconception:`, docs/content.md), and a person whose latest answer to a question chose
such a distractor holds it (confidently if they said they were sure). /analysis, the
dashboard's Questions page and its Misconceptions page show the figures; a follow-up round on
one asks the questions whose distractors carry it (`misconception:<quiz>/<id>` as the round's
selector, resolved here for Questions.choose).

Pure over the catalog and the stored answers (bot/storage/misconceptions.py reads them): the
tags are the catalog's, so a pack's fixed tag counts every stored answer again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from bot.content import Catalog, Quiz
from bot.content.items import DEFAULT_LOCALE, Kind
from bot.core.errors import MAX_ROUND, UnknownQuiz, may_not_ask, may_not_see_analysis
from bot.core.grading import stored_options
from bot.core.models import Chat, Confidence, Person, ShownQuestion
from bot.core.ports import ChosenOption, MisconceptionStore


class Asks(Protocol):
    """Asking's door a follow-up round goes through (asking.py imports this module)."""

    def quiz(self, chat: Chat, person: Person | None, selector: str | None = None, *,
             count: int | str | None = None) -> AbstractAsyncContextManager[ShownQuestion]: ...


class Sends(Protocol):
    """Delivery's: a question the core created, onto its chat's platform."""

    async def question(self, question: ShownQuestion) -> bool: ...

SELECTOR = "misconception:"  # a round's selector: misconception:<quiz id>/<misconception id>


@dataclass(frozen=True, slots=True)
class Holder:
    """One person holding a misconception: their name, whether they said they were sure of
    one of those answers, and the questions where their latest answer chose it."""

    person_key: str
    name: str
    sure: bool
    questions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HeldMisconception:
    """A pack's misconception as a chat holds it: `people` chose one of its distractors in
    their latest answer (`sure` of them said they were sure), of `answered` who answered a
    question carrying it; `questions` carry it (the follow-up round's), in pack order."""

    quiz_id: str
    quiz_title: str
    id: str
    statement: str
    people: int
    sure: int
    answered: int
    holders: tuple[Holder, ...]  # the most questions first, then by name
    questions: tuple[str, ...]

    @property
    def selector(self) -> str:
        """The selector a follow-up round on it is started with."""
        return selector(self.quiz_id, self.id)

    @property
    def share(self) -> float:
        return self.people / self.answered if self.answered else 0.0


def selector(quiz_id: str, misconception_id: str) -> str:
    return f"{SELECTOR}{quiz_id}/{misconception_id}"


def named(selector: str | None) -> tuple[str, str] | None:
    """(quiz id, misconception id) of a misconception selector; None for any other."""
    if not selector or not selector.strip().lower().startswith(SELECTOR):
        return None
    quiz_id, slash, misconception_id = selector.strip().lower()[len(SELECTOR):].partition("/")
    return (quiz_id, misconception_id) if slash and quiz_id and misconception_id else None


def carrying(quiz: Quiz, misconception_id: str, kinds: Iterable[Kind] | None = None
             ) -> list[str]:
    """The questions of `quiz` one of whose options stands for the misconception."""
    allowed = None if kinds is None else set(kinds)
    return [q.id for q in quiz.questions if misconception_id in q.misconceptions
            and (allowed is None or q.kind in allowed)]


def follow_up(catalog: Catalog, selector: str, kinds: Iterable[Kind] | None = None
              ) -> tuple[Quiz, list[tuple[str, str]]]:
    """The quiz and the (quiz, question) candidates a misconception selector names;
    UnknownQuiz when it names no misconception any offered question carries."""
    found = named(selector)
    quiz = catalog.get(found[0]) if found else None
    questions = carrying(quiz, found[1], kinds) if quiz is not None and found else []
    if quiz is None or not questions:
        raise UnknownQuiz(selector, [])
    return quiz, [(quiz.id, q) for q in questions]


def chose(kind: Kind, chosen: ChosenOption, option: int) -> bool:
    """Whether the answer picked canonical `option` (a multi's among its picks)."""
    if kind is Kind.MULTI:
        return option in stored_options(chosen.response)
    return chosen.option == option


def held(catalog: Catalog, answers: Iterable[ChosenOption], quiz_ids: Sequence[str],
         locale: str = DEFAULT_LOCALE) -> list[HeldMisconception]:
    """Every misconception of `quiz_ids` that someone's latest answer chose, the most
    people first (then the most sure, then in pack order)."""
    # (quiz, misconception) -> person -> (name, sure, questions); and who answered
    holding: dict[tuple[str, str], dict[str, tuple[str, bool, list[str]]]] = {}
    answered: dict[tuple[str, str], set[str]] = {}
    for a in answers:
        quiz = catalog.quizzes.get(a.quiz_id)
        if quiz is None or a.question_id not in {q.id for q in quiz.questions}:
            continue  # a question the pack no longer has
        question = quiz.question(a.question_id)
        if not question.misconceptions:
            continue
        for m in dict.fromkeys(t for t in question.misconceptions if t is not None):
            answered.setdefault((quiz.id, m), set()).add(a.person_key)
        for option, tag in enumerate(question.misconceptions):
            if tag is None or not chose(question.kind, a, option):
                continue
            people = holding.setdefault((quiz.id, tag), {})
            _, sure, questions = people.get(a.person_key, (a.name, False, []))
            if question.id not in questions:
                questions.append(question.id)
            people[a.person_key] = (a.name, sure or a.confidence == Confidence.SURE, questions)
    out: list[tuple[tuple[int, int, int, int], HeldMisconception]] = []
    for qi, quiz_id in enumerate(quiz_ids):
        quiz = catalog.quizzes.get(quiz_id)
        if quiz is None:
            continue
        for mi, wrong in enumerate(quiz.misconceptions):
            holders_of = holding.get((quiz.id, wrong.id))
            if not holders_of:
                continue
            holders = tuple(sorted(
                (Holder(key, name, confident, tuple(questions))
                 for key, (name, confident, questions) in holders_of.items()),
                key=lambda h: (-len(h.questions), not h.sure, h.name, h.person_key)))
            confidently = sum(h.sure for h in holders)
            found = HeldMisconception(
                quiz.id, quiz.title.get(locale), wrong.id, wrong.statement.get(locale),
                len(holders), confidently, len(answered.get((quiz.id, wrong.id), ())), holders,
                tuple(carrying(quiz, wrong.id)))
            out.append(((-found.people, -confidently, qi, mi), found))
    return [found for _, found in sorted(out, key=lambda pair: pair[0])]


def tagged_quizzes(catalog: Catalog, quiz_id: str | None = None) -> list[str]:
    """The quizzes (all, or `quiz_id` alone) that list misconceptions, in catalog order."""
    return [q.id for q in catalog.quizzes.values() if q.misconceptions
            and (quiz_id is None or q.id == quiz_id)]


def option_tags(quiz: Quiz, locale: str = DEFAULT_LOCALE) -> dict[tuple[str, int], str]:
    """(question id, canonical option) -> the statement of the misconception it stands for,
    for every tagged option of `quiz` (what the Questions page shows beside a distractor)."""
    statements = {m.id: m.statement.get(locale) for m in quiz.misconceptions}
    return {(q.id, option): statements[tag] for q in quiz.questions
            for option, tag in enumerate(q.misconceptions) if tag in statements}


class Misconceptions:
    """The chat's misconceptions for its admins (the dashboard's page; /analysis reads
    `held` through ItemAnalysis), and a follow-up round on one: the questions carrying it,
    asked as any round is (Asking.quiz, then Delivery.question sends it to the chat)."""

    def __init__(self, catalog: Catalog, storage: MisconceptionStore, asking: Asks,
                 delivery: Sends) -> None:
        self.catalog = catalog
        self.storage = storage
        self.asking = asking
        self.delivery = delivery

    async def start_follow_up(self, chat: Chat, quiz_id: str, misconception_id: str, *,
                              allowed: bool) -> ShownQuestion:
        """A round in `chat` of the questions whose distractors carry the misconception (one
        question if only one does; at most MAX_ROUND), replacing what runs there as an
        admin's /quiz does; its first question sent now. Only the chat's admins."""
        if not allowed:
            raise may_not_ask()
        wanted = selector(quiz_id, misconception_id)
        _, questions = follow_up(self.catalog, wanted)  # UnknownQuiz when it names none
        count = min(len(questions), MAX_ROUND)
        async with self.asking.quiz(chat, None, wanted,
                                    count=count if count > 1 else None) as shown:
            await self.delivery.question(shown)
        return shown

    async def for_chat(self, chat: Chat, locale: str = DEFAULT_LOCALE, quiz_id: str | None = None,
                       *, allowed: bool) -> list[HeldMisconception]:
        """Only its admins may see who holds what (`allowed`: the platform's word)."""
        if not allowed:
            raise may_not_see_analysis()
        quiz_ids = tagged_quizzes(self.catalog, quiz_id)
        answers = await self.storage.chosen_options(chat.key, quiz_ids)
        return held(self.catalog, answers, quiz_ids, locale)
