"""The steps of a delivery that went out, or may have (each is stored before its send and
removed when the platform refused it), so that a retry after a failure or a crash does not
repeat them (core/delivery.py). Written once for every database (like ops.py and
queries.py)."""

from __future__ import annotations

from datetime import datetime

from bot.storage.sql import Sql


# steps of a delivery --------------------------------------------------------------------------
async def delivery_step_done(db: Sql, name: str, step: str, when: datetime) -> None:
    await db.run("INSERT INTO delivery_steps(name, step, done_at) VALUES ($1, $2, $3)"
                 " ON CONFLICT (name, step) DO NOTHING", name, step, db.when(when))


async def forget_delivery_step(db: Sql, name: str, step: str) -> None:
    await db.run("DELETE FROM delivery_steps WHERE name = $1 AND step = $2", name, step)


async def delivery_steps(db: Sql, name: str) -> frozenset[str]:
    rows = await db.rows("SELECT step FROM delivery_steps WHERE name = $1", name)
    return frozenset(r[0] for r in rows)


async def forget_delivery_steps(db: Sql, done_before: datetime) -> int:
    return await db.run("DELETE FROM delivery_steps WHERE done_at < $1", db.when(done_before))
