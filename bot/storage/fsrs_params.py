"""Each person's fitted FSRS parameters (bot/core/fsrs_fit.py), written once for both databases.

review_params holds one row per person fitted at least once: the parameters (JSON, FSRS-6's
21; NULL where the last fit did not predict the person better than the defaults, which then
stay), the number of reviews it saw, when, and its held-out figures (log loss and RMSE of the
predicted recall, default and fitted), which the dashboard's person page shows.

The review cards the materializer keeps (cards.py) are computed with the person's parameters,
so a fit whose parameters differ from those in use replays the person's cards in the same
transaction that stores it (`save_fit`): the kept table always equals a replay with the
parameters stored beside it. A person's deletion forgets their row; `db copy` copies it (a fit
is not repeatable to the bit: the optimizer's float sums follow its thread count), so the
destination schedules with the same parameters as the source.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from bot.core.ports import ReviewFit
from bot.storage.sql import Row, Sql

COLUMNS = ("person_key, parameters, reviews, items, fitted_at, default_loss, fitted_loss,"
           " default_rmse, fitted_rmse")
Parameters = tuple[float, ...]


def parameters_of(stored: Any) -> Parameters | None:
    return None if stored is None else tuple(float(w) for w in json.loads(stored))


def _fit(db: Sql, r: Row) -> tuple[ReviewFit, datetime]:
    def figure(v: Any) -> float | None:
        return None if v is None else float(v)

    return (ReviewFit(parameters_of(r[1]), int(r[2]), int(r[3]), figure(r[5]), figure(r[6]),
                      figure(r[7]), figure(r[8])), db.at(r[4]))


async def person_parameters(db: Sql, person_key: str) -> Parameters | None:
    """The parameters the person's cards are scheduled with (None: the defaults)."""
    return parameters_of(await db.value(
        "SELECT parameters FROM review_params WHERE person_key = $1", person_key))


async def chunk_parameters(db: Sql, where: str, *args: Any) -> dict[str, Parameters]:
    """The fitted parameters of the people whose answers `where` selects (a materializer's
    chunk, as cards.py's STORED reads its cards)."""
    rows = await db.rows(
        "SELECT person_key, parameters FROM review_params WHERE parameters IS NOT NULL"
        f" AND person_key IN (SELECT person_key FROM answers WHERE {where})", *args)
    return {r[0]: p for r in rows if (p := parameters_of(r[1])) is not None}


async def review_fit(db: Sql, person_key: str) -> tuple[ReviewFit, datetime] | None:
    """The person's last fit and when it ran; None: never fitted."""
    row = await db.row(f"SELECT {COLUMNS} FROM review_params WHERE person_key = $1",
                       person_key)
    return None if row is None else _fit(db, row)


async def save_fit(db: Sql, person_key: str, fit: ReviewFit, when: datetime) -> None:
    """Store the person's fit; where its parameters are not those in use, replay the person's
    cards with them in this transaction (the kept cards stay a replay)."""
    from bot.storage import cards  # cards.py reads the parameters stored here

    before = await person_parameters(db, person_key)
    await db.run(
        f"INSERT INTO review_params ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        " ON CONFLICT (person_key) DO UPDATE SET parameters = excluded.parameters,"
        " reviews = excluded.reviews, items = excluded.items, fitted_at = excluded.fitted_at,"
        " default_loss = excluded.default_loss, fitted_loss = excluded.fitted_loss,"
        " default_rmse = excluded.default_rmse, fitted_rmse = excluded.fitted_rmse",
        person_key, None if fit.parameters is None else json.dumps(list(fit.parameters)),
        fit.reviews, fit.items, db.when(when), fit.default_loss, fit.fitted_loss,
        fit.default_rmse, fit.fitted_rmse)
    if fit.parameters != before:
        await cards.replay_person(db, person_key)


async def fits_due(db: Sql, min_reviews: int, min_cards: int, refit_after: int,
                   fitted_before: datetime, limit: int) -> list[str]:
    """People to fit: `min_reviews` reviews (answers to a card seen before, counted from
    the kept cards) over `min_cards` cards, and never fitted, or fitted before
    `fitted_before` on `refit_after` fewer reviews than they have now. Most reviews first."""
    rows = await db.rows(
        "SELECT c.person_key, sum(c.reps) - count(*) AS reviews FROM cards AS c"
        " LEFT JOIN review_params AS r ON r.person_key = c.person_key"
        " WHERE r.person_key IS NULL OR r.fitted_at < $4"
        " GROUP BY c.person_key, r.reviews"
        " HAVING count(*) >= $2 AND sum(c.reps) - count(*) >= $1"
        " AND sum(c.reps) - count(*) >= COALESCE(r.reviews + $3, 0)"
        " ORDER BY reviews DESC, c.person_key LIMIT $5",
        min_reviews, min_cards, refit_after, db.when(fitted_before), limit)
    return [r[0] for r in rows]


async def forget_person(db: Sql, person_key: str) -> None:
    await db.run("DELETE FROM review_params WHERE person_key = $1", person_key)
