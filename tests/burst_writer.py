"""A bot's writes without a bot: answers in three chats recorded as fast as the storage takes
them, until a file appears. tests/test_backup.py takes backups meanwhile.

    python -m tests.burst_writer DATABASE STOP_FILE

Prints "writing" once 200 answers are stored."""

from __future__ import annotations

import asyncio
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.core.ports import AnswerRecord
from bot.storage import storage_for

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def stopped(stop: Path) -> bool:
    return stop.exists()


async def main(database: str, stop: Path) -> None:
    rng = random.Random(3)
    async with storage_for(database) as store:
        n = 0
        while not stopped(stop):
            when = NOW + timedelta(days=n % 9, minutes=n)
            post = await store.create_post(f"tg:-{n % 3}", "sample", "s-one", (0, 1, 2), "en",
                                           when)
            await asyncio.gather(*(
                store.record_answer(AnswerRecord(
                    post.id, f"tg:{p}", rng.randrange(3), rng.random() < 0.5,
                    when + timedelta(seconds=i), rng.randrange(9000), name=f"প্রিয় {p}"))
                for i, p in enumerate(rng.sample(range(60), 20))
            ))
            n += 1
            if n == 10:
                print("writing", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
