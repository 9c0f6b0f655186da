"""kill -9 and SIGTERM in the middle of a burst of button clicks: nothing acknowledged is lost.

The bot is a process of its own (crash_bot.py: the real core, a real SQLite file and the real
DiscordAdapter under bot.app's run_adapters) against the fake Discord in this process. Each
round, many people click the answer buttons of questions in several channels at once; the bot
is killed with SIGKILL at a random moment while it works through them, started again, and
everyone whose click went unanswered clicks again (Discord never redelivers an interaction
to a new session: the person sees "This interaction failed" and tries again).

Then every click the fake saw acknowledged (an interaction callback was sent: the person was
told) must be stored exactly once, with the option clicked, and the boards' aggregates must
equal a recount from the raw answers. A SIGTERM in the middle of a burst must lose nothing
either, answer every click it took, and exit 0 promptly.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.discord_e2e.processes import (
    STOP_WITHIN,
    BotProcess,
    Burst,
    already_answered,
    assert_acknowledged_clicks_stored,
    assert_aggregates_match_answers,
    assert_clean_logs,
    backend_of,
    seeded,
    stored_answers,
)
from tests.fakes.discord_api import FakeDiscord

CHANNELS = 3
ROUNDS = 5
CLICKS = 150  # per round, spread over the channels' questions
PACE = 5  # clicks sent together, every 2 ms


@pytest.fixture
async def proc(fake: FakeDiscord, tmp_path: Path) -> AsyncIterator[BotProcess]:
    process = BotProcess(fake, tmp_path / "quiz.db", tmp_path)
    yield process
    if process.proc is not None:
        await process.kill()


async def round_with_a_signal(proc: BotProcess, burst: Burst, sig: signal.Signals) -> bool:
    """One burst of clicks with `sig` sent to the bot in the middle of it, then the rest of the
    burst goes to the bot started again, and whoever got no answer clicks again. Returns
    whether the signal left both answered and unanswered clicks behind it.

    People click over about a tenth of a second (a few clicks every 2 ms), so the bot commits
    and answers while more come in; the signal comes after a random number of them, when the
    latest are still arriving, some being committed, the earliest answered."""
    rng = burst.rng
    plan = burst.plan(burst.people(CLICKS))
    cut = rng.randrange(CLICKS // 3, CLICKS)
    before = []
    for i, (user, message, shown) in enumerate(plan[:cut]):
        before.append(await burst.click(user, message, shown))
        if i % PACE == PACE - 1:
            await asyncio.sleep(0.002)
    await asyncio.sleep(rng.uniform(0, 0.003))
    proc.signal(sig)
    if sig == signal.SIGTERM:
        # clicks keep coming until it disconnects: it answers those it took before it began
        # to drain and takes none after
        for i, (user, message, shown) in enumerate(plan[cut:]):
            if not burst.fake.connected:
                break
            before.append(await burst.click(user, message, shown))
            if i % PACE == PACE - 1:
                await asyncio.sleep(0.002)
        cut = len(before)
    code, took = await proc.exited()
    if sig == signal.SIGTERM:
        assert code == 0, f"exit status {code} after SIGTERM:\n{proc.log()}"
        assert took < STOP_WITHIN, f"SIGTERM took {took:.1f} s:\n{proc.log()}"
    unanswered = [it for it in before if it.callback is None]
    await proc.start()
    after = await burst.send(plan[cut:])
    retries = await burst.again(unanswered)
    await burst.answered(after + retries)
    return len(unanswered) not in (0, len(before))


@pytest.mark.slow
async def test_kill_9_during_bursts_of_clicks_loses_nothing_acknowledged(
    fake: FakeDiscord, proc: BotProcess
) -> None:
    rng, seed = seeded()
    channels = [fake.channel_id] + [fake.add_channel(f"quiz-{i}") for i in range(1, CHANNELS)]
    await proc.start()
    burst = Burst(fake, rng)
    await burst.post_questions(channels)

    mid_burst = 0  # kills that left both answered and unanswered clicks behind them
    for _ in range(ROUNDS):
        mid_burst += await round_with_a_signal(proc, burst, signal.SIGKILL)

    code, _ = await proc.terminate()
    assert code == 0, proc.log()
    assert mid_burst, f"no kill came in the middle of the bot's work (CRASH_SEED={seed})"
    backend = backend_of(proc.database)
    stored = await stored_answers(backend)
    await assert_acknowledged_clicks_stored(backend, burst, stored)
    # everyone was answered in the end, so everyone's answer is there, once
    assert len(stored) == ROUNDS * CLICKS, f"CRASH_SEED={seed}"
    await assert_aggregates_match_answers(backend)
    assert_clean_logs(proc)


@pytest.mark.slow
async def test_sigterm_during_a_burst_answers_what_it_took_and_exits_0(
    fake: FakeDiscord, proc: BotProcess
) -> None:
    rng, seed = seeded()
    channels = [fake.channel_id] + [fake.add_channel(f"quiz-{i}") for i in range(1, CHANNELS)]
    await proc.start()
    burst = Burst(fake, rng)
    await burst.post_questions(channels)
    for _ in range(2):
        await round_with_a_signal(proc, burst, signal.SIGTERM)

    code, _ = await proc.terminate()
    assert code == 0, proc.log()
    backend = backend_of(proc.database)
    stored = await stored_answers(backend)
    await assert_acknowledged_clicks_stored(backend, burst, stored)
    # a drain leaves nothing committed without its answer: nobody who clicked again after
    # getting no answer is told they had already answered
    assert not already_answered(burst), f"CRASH_SEED={seed}"
    await assert_aggregates_match_answers(backend)
    assert_clean_logs(proc)
