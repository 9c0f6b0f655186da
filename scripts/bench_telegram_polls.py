"""Poll answers per second through the real python-telegram-bot against the fake Bot API.

    python scripts/bench_telegram_polls.py [--answers 5000] [--rounds 3] [--no-poll-updates]

A backlog of `--answers` votes (distinct people, one shared quiz poll) waits on the fake
server; the clock runs until every one of them was handled (for quizbot: stored in SQLite on
disk, WAL, synchronous=FULL). Four set-ups, measured in the same run, in turns:

- PTB's Updater with a no-op handler: a bare Application, the floor of the library and fake;
- our polling loop (bot/adapters/telegram/polling.py) with the same no-op handler;
- PTB's Updater with quizbot's handlers (the way before: concurrent_updates(64), and a batch
  confirmed when it is queued, before it is handled);
- our loop with quizbot's handlers (TelegramAdapter as `quizbot run` starts it: a batch
  handled concurrently, confirmed after).

As Telegram does for the bot's own polls, each vote brings a `poll_answer` and a `poll`
update (--no-poll-updates: only the poll_answer). The fake runs in the same process and event
loop as the bot, so its work counts against every row alike (scripts/bench_storm.py runs the
bot in a process of its own); not part of `make bench`. Prints figures and the machine's
speed and load; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")

from bench_common import Calibration, calibration_line  # noqa: E402
from pydantic import SecretStr  # noqa: E402
from telegram import Update  # noqa: E402
from telegram.ext import (  # noqa: E402
    Application,
    ContextTypes,
    Defaults,
    PollAnswerHandler,
)

from bot.adapters.telegram import TelegramAdapter, routes  # noqa: E402
from bot.adapters.telegram.app import (  # noqa: E402
    RetryingRateLimiter,
    build_application,
    file_base_url,
    quiet_library_deprecations,
)
from bot.adapters.telegram.context import BotData  # noqa: E402
from bot.adapters.telegram.polling import Poller  # noqa: E402
from bot.adapters.telegram.publish import Poster  # noqa: E402
from bot.content import load_catalog  # noqa: E402
from bot.core.service import QuizService  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.storage import SqliteStorage  # noqa: E402
from tests.fakes.telegram_api import FakeTelegramAPI  # noqa: E402

GROUP = -1001000000001
WITHIN = 300.0  # seconds; only reached when something is broken

Setup = Callable[[FakeTelegramAPI, int, Path], Awaitable[float]]


def settings_for(fake: FakeTelegramAPI) -> Settings:
    return Settings(
        _env_file=None, telegram_bot_token=SecretStr(fake.token),
        telegram_api_base_url=fake.base_url,
    )


def fake_poll(fake: FakeTelegramAPI) -> str:
    """A quiz poll in the group, made on the fake's side (the no-op rows send nothing)."""
    message = fake._api_sendPoll({
        "chat_id": GROUP, "question": "Which is a colour?", "options": ["Red", "Seven", "Dog"],
        "type": "quiz", "is_anonymous": False, "correct_option_ids": [0],
    })
    return str(message["poll"]["id"])


def push_votes(fake: FakeTelegramAPI, poll_id: str, answers: int) -> int:
    """The backlog; returns the last update id."""
    for i in range(answers):
        user = fake.user(100_000 + i, f"Person {i}")
        fake.answer_poll(poll_id, user, [i % 3])
    return int(fake._all_updates[-1]["update_id"])


async def until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WITHIN
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the bot stopped handling updates")
        await asyncio.sleep(0.002)


# the four set-ups: each returns seconds from the backlog's arrival until all were handled ---
async def ptb_noop(fake: FakeTelegramAPI, answers: int, _dir: Path) -> float:
    handled = 0

    async def noop(update: Update, context: Any) -> None:
        nonlocal handled
        handled += 1

    app = (Application.builder().token(fake.token).base_url(fake.base_url)
           .base_file_url(file_base_url(fake.base_url)).build())
    app.add_handler(PollAnswerHandler(noop))
    await app.initialize()
    assert app.updater is not None
    await app.updater.start_polling(allowed_updates=Update.ALL_TYPES)
    await app.start()
    try:
        poll_id = fake_poll(fake)
        push_votes(fake, poll_id, answers)  # no await: the bot sees them only from here
        start = time.perf_counter()
        await until(lambda: handled == answers)
        return time.perf_counter() - start
    finally:
        await app.updater.stop()
        await app.stop()
        await app.shutdown()


async def ours_noop(fake: FakeTelegramAPI, answers: int, _dir: Path) -> float:
    handled = 0

    async def noop(update: Update, context: Any) -> None:
        nonlocal handled
        handled += 1

    app = build_application(settings_for(fake), fake.token)
    app.add_handler(PollAnswerHandler(noop))
    poller = Poller(app, Update.ALL_TYPES)
    await app.initialize()
    await app.start()
    await poller.start()
    try:
        poll_id = fake_poll(fake)
        last = push_votes(fake, poll_id, answers)
        start = time.perf_counter()
        await until(lambda: fake.confirmed_below > last)  # confirmed: handled
        assert handled == answers
        return time.perf_counter() - start
    finally:
        await poller.stop()
        await app.stop()
        await app.shutdown()


async def quizbot(
    fake: FakeTelegramAPI, answers: int, folder: Path, *, ours: bool
) -> float:
    async with SqliteStorage(folder / ("ours.db" if ours else "ptb.db")) as store:
        service = QuizService(load_catalog(ROOT / "content"), store)
        if ours:
            adapter = TelegramAdapter(service, settings_for(fake))
            await adapter.start()
            stop: Callable[[], Awaitable[None]] = adapter.stop
        else:
            app = old_application(fake, service)
            await app.initialize()
            assert app.updater is not None
            await app.updater.start_polling(allowed_updates=Update.ALL_TYPES)
            await app.start()

            async def stop() -> None:
                assert app.updater is not None
                await app.updater.stop()
                await app.stop()
                await app.shutdown()
        try:
            admin = fake.user(900, "Admin")
            before = len(fake.calls_of("sendPoll"))
            fake.command(fake.chats[GROUP], admin, "/quiz")
            [poll] = (await fake.wait_for("sendPoll", before + 1))[before:]
            await fake.wait_all_confirmed(WITHIN)
            if not ours:
                await app.update_queue.join()
            post_id = await service.questions.post_id_for(f"tg-poll:{poll.result['poll']['id']}")
            assert post_id is not None
            last = push_votes(fake, poll.result["poll"]["id"], answers)
            start = time.perf_counter()
            await until(lambda: fake.confirmed_below > last)
            if not ours:  # confirmed when queued: wait until handled too
                await app.update_queue.join()
            elapsed = time.perf_counter() - start
            stored = await service.questions.live_count(post_id)
            assert stored == answers, f"{stored} of {answers} answers stored"
            return elapsed
        finally:
            await stop()


def old_application(fake: FakeTelegramAPI, service: QuizService) -> Any:
    """quizbot's handlers on PTB's Updater, as the adapter was built before polling.py."""
    quiet_library_deprecations()
    app = (
        Application.builder().token(fake.token)
        .context_types(ContextTypes(bot_data=BotData))
        .base_url(fake.base_url).base_file_url(file_base_url(fake.base_url))
        .rate_limiter(RetryingRateLimiter(max_retries=3))
        .concurrent_updates(64)
        .defaults(Defaults(allow_sending_without_reply=True))
        .build()
    )
    app.bot_data.service = service
    app.bot_data.poster = Poster(app.bot, service)
    routes.register(app)
    return app


async def ptb_quizbot(fake: FakeTelegramAPI, answers: int, folder: Path) -> float:
    return await quizbot(fake, answers, folder, ours=False)


async def ours_quizbot(fake: FakeTelegramAPI, answers: int, folder: Path) -> float:
    return await quizbot(fake, answers, folder, ours=True)


SETUPS: list[tuple[str, str, Setup]] = [
    ("PTB Updater (bare app)", "no-op", ptb_noop),
    ("our loop", "no-op", ours_noop),
    ("PTB Updater (before)", "quizbot: core + SQLite", ptb_quizbot),
    ("our loop (after)", "quizbot: core + SQLite", ours_quizbot),
]


async def one(setup: Setup, answers: int, folder: Path, poll_updates: bool) -> float:
    fake = FakeTelegramAPI()
    fake.poll_state_updates = poll_updates
    await fake.start()
    fake.group(GROUP, "Bench")
    try:
        return answers / await setup(fake, answers, folder)
    finally:
        await fake.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--answers", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3, help="each set-up, in turns")
    parser.add_argument("--no-poll-updates", action="store_true",
                        help="votes bring only a poll_answer update")
    parser.add_argument("--dir", type=Path, default=None, help="where the databases go")
    args = parser.parse_args()
    rates: dict[int, list[float]] = {i: [] for i in range(len(SETUPS))}
    calibration = Calibration()
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="quizbot-bench-", dir=args.dir) as tmp:
            for i, (_, _, setup) in enumerate(SETUPS):
                folder = Path(tmp) / f"{r}-{i}"
                folder.mkdir()
                rates[i].append(await one(setup, args.answers, folder, not args.no_poll_updates))
    updates = "poll_answer only" if args.no_poll_updates else "poll_answer + poll per vote"
    print(f"{args.answers} votes waiting ({updates}), {args.rounds} rounds")
    print(calibration_line(calibration.end()))
    print(f"{'loop':26}{'handler':26}{'answers/s':>11}{'min':>9}{'max':>9}")
    for i, (loop, handler, _) in enumerate(SETUPS):
        values = rates[i]
        print(f"{loop:26}{handler:26}{statistics.median(values):11.0f}"
              f"{min(values):9.0f}{max(values):9.0f}")


if __name__ == "__main__":
    asyncio.run(main())
