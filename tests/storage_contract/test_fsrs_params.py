"""A person's fitted FSRS parameters on every store (bot/storage/fsrs_params.py): the kept
review cards stay the replay of the person's answers with the parameters stored beside them,
through a fit, answers after it, a refit with other parameters, a fit that keeps the defaults,
an answer committed late, a chat's move and a person's deletion; who is due a fit; and the
fit's round trip."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from bot.core.deck import Deck, scheduler
from bot.core.fsrs_fit import MIN_CARDS
from bot.core.ports import ReviewFit
from bot.core.review_simulation import learner_parameters
from tests.storage_contract.backends import Store
from tests.storage_contract.test_cards import CHATS, answer

DAY0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
PEOPLE = ("tg:1", "tg:2", "tg:3")
QUESTIONS = tuple(f"s-{n}" for n in range(6))
FITTED = learner_parameters(random.Random(1))
OTHER = learner_parameters(random.Random(2))


async def replayed(store: Store, person: str) -> list[tuple[str, str, datetime, float | None]]:
    """The person's cards as /review replays them with their stored parameters."""
    deck = Deck(scheduler(await store.person_parameters(person)))
    for a in await store.review_answers(person):
        deck.apply(a)
    return sorted(((quiz, question, card.due, card.stability)
                   for (quiz, question), card in deck.cards.items()),
                  key=lambda c: (c[2], c[0], c[1]))


async def check(store: Store) -> None:
    await store.materialize()
    due: dict[str, list[datetime]] = {}
    for person in PEOPLE:
        kept = await store.person_cards(person)
        assert [(c.quiz_id, c.question_id, c.due, c.stability) for c in kept
                ] == await replayed(store, person)
        for c in kept:
            due.setdefault(c.chat_key, []).append(c.due)
    today = (DAY0 + timedelta(days=10)).date()
    for chat in (*CHATS, "tg:-4"):
        dues = due.get(chat, [])
        assert await store.chat_cards(chat, today) == (len(dues),
                                                       sum(d.date() <= today for d in dues))


async def answers(store: Store, rng: random.Random, start: datetime, n: int) -> None:
    for _ in range(n):
        when = start + timedelta(minutes=rng.randrange(60 * 24 * 8))
        await answer(store, rng.choice(CHATS), rng.choice(PEOPLE), rng.choice(QUESTIONS),
                     rng.random() < 0.6, when, rng.random() < 0.5,
                     rng.choice((4000, 30_000, 90_000)))


async def test_the_kept_cards_are_the_replay_with_the_stored_parameters(store: Store) -> None:
    rng = random.Random(7)
    await answers(store, rng, DAY0, 60)
    await check(store)
    default = await store.person_cards("tg:1")

    await store.save_fit("tg:1", ReviewFit(FITTED, 40, 30, 0.6, 0.5, 0.2, 0.1), DAY0)
    assert await store.person_parameters("tg:1") == FITTED
    await check(store)  # replayed in the fit's transaction, before any materializing
    assert await store.person_cards("tg:1") != default  # the fit moved their cards

    await answers(store, rng, DAY0 + timedelta(days=8), 30)  # applied with the fit
    await answers(store, rng, DAY0, 5)  # committed late: their cards replayed
    await check(store)

    await store.save_fit("tg:1", ReviewFit(OTHER, 60, 40), DAY0 + timedelta(days=2))
    await store.save_fit("tg:2", ReviewFit(FITTED, 60, 40), DAY0 + timedelta(days=2))
    await check(store)
    await store.save_fit("tg:1", ReviewFit(None, 70, 50), DAY0 + timedelta(days=3))
    assert await store.person_parameters("tg:1") is None  # the defaults again
    await check(store)

    assert await store.migrate_chat(CHATS[0], "tg:-4")
    await check(store)
    assert await store.delete_person("tg:2")
    assert await store.review_fit("tg:2") is None
    assert await store.person_parameters("tg:2") is None
    await check(store)


async def test_a_fit_comes_back_as_stored(store: Store) -> None:
    assert await store.review_fit("tg:1") is None
    fit = ReviewFit(FITTED, 321, 250, 0.61, 0.52, 0.13, 0.08)
    await store.save_fit("tg:1", fit, DAY0)
    assert await store.review_fit("tg:1") == (fit, DAY0)
    kept = ReviewFit(None, 400, 300, 0.5, 0.55, 0.1, 0.12)  # not better: the defaults stay
    await store.save_fit("tg:1", kept, DAY0 + timedelta(days=1))
    assert await store.review_fit("tg:1") == (kept, DAY0 + timedelta(days=1))


async def test_who_is_due_a_fit(store: Store) -> None:
    """Enough reviews over enough cards, then again only after more reviews and a while."""
    async def review(person: str, rounds: int, start: datetime) -> None:
        for r in range(rounds):
            for q in range(MIN_CARDS):
                await answer(store, CHATS[0], person, f"s-{q}", True,
                             start + timedelta(days=r, minutes=q), True, 30_000)

    await review("tg:1", 4, DAY0)  # 3 reviews of each of MIN_CARDS cards
    await review("tg:2", 2, DAY0)  # 1 review of each
    await store.materialize()
    now = DAY0 + timedelta(days=5)
    reviews = 3 * MIN_CARDS

    async def due(refit_after: int = 10, fitted_before: datetime = now) -> list[str]:
        return await store.fits_due(reviews, MIN_CARDS, refit_after, fitted_before, 10)

    assert await due() == ["tg:1"]
    assert await store.fits_due(MIN_CARDS, MIN_CARDS, 10, now, 10) == ["tg:1", "tg:2"]
    assert await store.fits_due(reviews, MIN_CARDS + 1, 10, now, 10) == []
    await store.save_fit("tg:1", ReviewFit(None, reviews, 40), now)
    assert await due(fitted_before=now + timedelta(days=1)) == []  # no new reviews
    await review("tg:1", 1, DAY0 + timedelta(days=6))
    await store.materialize()
    assert await due() == []  # fitted too recently
    assert await due(fitted_before=now + timedelta(days=1)) == ["tg:1"]
    assert await due(MIN_CARDS + 1, now + timedelta(days=1)) == []  # too few new reviews
