"""Discord sharding: many processes, one community.

Each process runs some of the bot's shards (QUIZBOT_DISCORD_SHARD_COUNT, QUIZBOT_DISCORD_SHARDS)
as discord.py's AutoShardedClient; the fake Discord gives each shard its own guilds
(`(guild_id >> 22) % count`) and sends a guild's interactions only to the session of the shard
that owns it, DMs to shard 0's. All processes share one database.

Here two adapters in this test process stand for two processes (shards 0-1 and 2-3 of 4), each
with its own storage on the same database (the SQLite file, or PostgreSQL with
QUIZBOT_TEST_STORE=postgres), its own core and its own scheduler, against one fake: each gets
only its guilds' interactions, /quiz and clicks work in the guilds of both, a daily question is
posted once and each question's summary delivered once however both schedulers tick. Then the
lifecycle per process across its shards, and the settings. Last, two real processes
(crash_bot.py, wired as `quizbot run`) on one database, SQLite or PostgreSQL: one killed -9 in
the middle of bursts of clicks and restarted, and the close loop of both summing each question
up once.
"""

from __future__ import annotations

import asyncio
import logging
import random
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import discord
import pytest

from bot.adapters import ConnectionLost, CredentialsRejected
from bot.adapters.discord import DiscordAdapter
from bot.app import started_line
from bot.content import Catalog
from bot.core.scheduler import Scheduler, Tick
from bot.core.service import QuizService
from bot.settings import Settings, SettingsError, load_settings
from bot.storage import SqliteStorage
from tests.clock import FakeClock
from tests.discord_e2e.conftest import StartBot
from tests.discord_e2e.helpers import bound_post, click, make_settings, wrong
from tests.discord_e2e.processes import (
    BotProcess,
    Burst,
    assert_acknowledged_clicks_stored,
    assert_aggregates_match_answers,
    assert_clean_logs,
    backend_of,
    seeded,
    stored_answers,
)
from tests.fakes.discord_api import (
    MANAGE_GUILD,
    FakeDiscord,
    GuildRef,
    Interaction,
    Reply,
    User,
    buttons_of,
    shard_of,
    text_of,
)
from tests.storage_contract.backends import backend_for

COUNT = 4
WITHIN = 5.0  # seconds; only reached when something is broken
REJECTED = "DISCORD_BOT_TOKEN was rejected by Discord: check the token"


def sharded(shards: str | None = None, count: int = COUNT) -> dict[str, Any]:
    return {"quizbot_discord_shard_count": count, "quizbot_discord_shards": shards}


@dataclass
class Process:
    """One bot process as far as Discord and the database can tell."""

    adapter: DiscordAdapter
    service: QuizService
    scheduler: Scheduler
    seen: list[int] = field(default_factory=list)  # the interactions its client received

    @property
    def client(self) -> discord.Client:
        assert self.adapter.client is not None
        return self.adapter.client

    def watch(self) -> None:
        async def received(interaction: discord.Interaction) -> None:
            self.seen.append(interaction.id)

        client = self.adapter.client  # the adapter's Bot, which takes listeners
        assert client is not None
        client.add_listener(received, "on_interaction")


@pytest.fixture
def guilds(fake: FakeDiscord) -> list[GuildRef]:
    """One guild on each shard of 4 (added before the bots start, so READY has them)."""
    return [fake.add_guild(f"Guild {i}", shard=(i, COUNT)) for i in range(COUNT)]


@pytest.fixture
async def second_service(storage: Any, sample_catalog: Catalog,
                         clock: FakeClock) -> AsyncIterator[QuizService]:
    """Another process's core: its own storage on the same database (the SQLite file, or
    with QUIZBOT_TEST_STORE=postgres the same PostgreSQL database), the same clock."""
    if isinstance(storage, SqliteStorage):
        other: Any = SqliteStorage(storage.path)
    else:
        from bot.storage.postgres.storage import PostgresStorage

        other = PostgresStorage(storage.url, pool_size=4)
    await other.open()
    yield QuizService(sample_catalog, other, clock, random.Random(8))
    await other.close()


@pytest.fixture
async def two(fake: FakeDiscord, guilds: list[GuildRef], service: QuizService,
              second_service: QuizService, start_bot: StartBot) -> tuple[Process, Process]:
    """Shards 0-1 and 2-3 of 4, started one after the other, each watched. `start_bot` comes
    after both cores, so the bots stop (and their live-count edits end) before the second
    core's storage closes."""
    processes = []
    for shards, core in (("0-1", service), ("2-3", second_service)):
        adapter = await start_bot(settings=sharded(shards), service=core)
        process = Process(adapter, core, Scheduler(core))
        process.watch()
        processes.append(process)
    return processes[0], processes[1]


def owner(two: tuple[Process, Process], guild: GuildRef) -> Process:
    return two[0] if shard_of(guild.id, COUNT) < 2 else two[1]


async def quiz_in(fake: FakeDiscord, guild: GuildRef, host: User,
                  process: Process) -> tuple[Reply, int]:
    """/quiz sample in the guild's channel: the question message and its post."""
    reply = await fake.reply(await fake.slash("quiz", {"quiz": "sample"}, user=host,
                                              channel_id=guild.channel_id))
    assert not reply.ephemeral and reply.buttons
    return reply, await bound_post(process.service, reply.id)


def closing_edits(fake: FakeDiscord, message_id: int) -> list[Any]:
    """The edits of a question message that closed it (its buttons disabled)."""
    return [r for r in fake.edits(message_id)
            if r.json and buttons_of(r.json) and all(b.get("disabled") for b in buttons_of(r.json))]


def channel_posts(fake: FakeDiscord, channel_id: int) -> list[dict[str, Any]]:
    """What the bot posted in a channel on its own (the scheduler's questions)."""
    return [m for m in fake.messages.values()
            if m["type"] == 0 and int(m["channel_id"]) == channel_id]


async def both_tick(two: tuple[Process, Process]) -> Tick:
    """Both schedulers' rounds at the same time; what they did together."""
    a, b = await asyncio.gather(two[0].scheduler.tick(), two[1].scheduler.tick())
    return Tick(posted=a.posted + b.posted, closed=a.closed + b.closed)


# two processes, one community ----------------------------------------------------------------
async def test_each_process_runs_its_shards_and_receives_only_their_guilds(
    fake: FakeDiscord, guilds: list[GuildRef], two: tuple[Process, Process], alice: User
) -> None:
    first, second = two
    assert (first.adapter.name, second.adapter.name) == \
        ("Discord (shards 0-1 of 4)", "Discord (shards 2-3 of 4)")
    assert sorted(s for s in fake.identified_shards if s) == [(i, COUNT) for i in range(COUNT)]
    assert len(fake.find("GET", "/gateway/bot")) == 2, "each asked Discord how to shard"
    for process, mine in ((first, {0, 1}), (second, {2, 3})):
        expected = {g for g in fake.guilds if shard_of(g, COUNT) in mine}
        assert {g.id for g in process.client.guilds} == expected

    for guild in guilds:
        it = await fake.slash("stats", user=alice, channel_id=guild.channel_id)
        await fake.reply(it)
        assert it.shard == shard_of(guild.id, COUNT)
        assert it.id in owner(two, guild).seen
    dm = await fake.slash("stats", user=alice, dm=True)
    await fake.reply(dm)
    assert dm.shard == 0 and dm.id in first.seen, "DMs are shard 0's"
    assert not set(first.seen) & set(second.seen)
    assert len(first.seen) + len(second.seen) == COUNT + 1


async def test_quiz_and_clicks_work_in_the_guilds_of_both_processes(
    fake: FakeDiscord, guilds: list[GuildRef], two: tuple[Process, Process], alice: User,
    bob: User,
) -> None:
    for guild in (guilds[1], guilds[2]):
        process = owner(two, guild)
        message, post_id = await quiz_in(fake, guild, alice, process)
        q = await process.service.questions.show(post_id)
        assert q is not None
        right = await click(fake, message, q.correct, alice)
        other = await click(fake, message, wrong(q), bob)
        assert "Correct" in right.content and "Correct" not in other.content

        def live_count(m: Reply = message) -> bool:
            return "2 answers so far" in text_of(fake.messages[m.id])

        await fake.until(live_count, WITHIN, "the live count")
        # both processes read the same answers
        for reader in two:
            answers = await reader.service.storage.answers_for_post(post_id)
            assert sorted(a.person_key for a in answers) == [f"dc:{alice.id}", f"dc:{bob.id}"]
    assert {shard_of(g.id, COUNT) for g in (guilds[1], guilds[2])} == {1, 2}
    assert two[0].seen and two[1].seen


async def test_a_daily_question_is_posted_once_when_both_processes_tick(
    fake: FakeDiscord, guilds: list[GuildRef], two: tuple[Process, Process], clock: FakeClock,
    alice: User, bob: User,
) -> None:
    guild = guilds[2]  # shard 2: the second process's
    set_it = await fake.slash("daily set", {"time": "12:30", "quiz": "sample"}, user=bob,
                              channel_id=guild.channel_id, permissions=MANAGE_GUILD)
    assert "Done" in (await fake.reply(set_it)).text
    assert set_it.id in two[1].seen

    assert await both_tick(two) == Tick()
    clock.set(datetime(2026, 3, 1, 12, 30, tzinfo=UTC))
    assert await both_tick(two) == Tick(posted=1)
    [posted] = channel_posts(fake, guild.channel_id)
    for minutes in (1, 3, 10):  # again, and past the re-post of an unpublished claim
        clock.advance(minutes=minutes)
        assert await both_tick(two) == Tick()
    assert channel_posts(fake, guild.channel_id) == [posted]

    q = await two[0].service.questions.show(await bound_post(two[0].service, int(posted["id"])))
    assert q is not None
    assert "Correct" in (await click(fake, posted, q.correct, alice)).content

    clock.set(datetime(2026, 3, 2, 12, 30, tzinfo=UTC))  # the next day's closes the first
    assert (await both_tick(two)).posted == 1
    assert len(channel_posts(fake, guild.channel_id)) == 2
    assert len(closing_edits(fake, int(posted["id"]))) == 1
    assert "1 person answered · 100% right" in text_of(fake.messages[int(posted["id"])])
    assert len(fake.find("POST", rf"/channels/{guild.channel_id}/messages")) == 2


async def test_each_summary_is_delivered_once_when_both_processes_tick(
    fake: FakeDiscord, guilds: list[GuildRef], two: tuple[Process, Process], clock: FakeClock,
    alice: User,
) -> None:
    messages = []
    for guild in guilds:
        process = owner(two, guild)
        message, post_id = await quiz_in(fake, guild, alice, process)
        q = await process.service.questions.show(post_id)
        assert q is not None
        await click(fake, message, q.correct, alice)
        messages.append(message)

    def counted() -> bool:  # no count edit still in flight when the other process closes
        return all("1 answer so far" in text_of(fake.messages[m.id]) for m in messages)

    await fake.until(counted, WITHIN, "the live counts")
    clock.advance(seconds=601)  # every /quiz question's time is up
    assert await both_tick(two) == Tick(closed=COUNT)
    for _ in range(3):
        clock.advance(minutes=1)
        assert await both_tick(two) == Tick()
    for message in messages:
        assert len(closing_edits(fake, message.id)) == 1, "one summary per question"
        assert "1 person answered · 100% right" in text_of(fake.messages[message.id])


# the lifecycle, per process across its shards -------------------------------------------------
async def test_unsharded_is_one_connection_as_before(fake: FakeDiscord,
                                                     bot: DiscordAdapter) -> None:
    assert bot.name == "Discord"
    assert fake.identified_shards == [None]
    assert not fake.find("GET", "/gateway/bot")
    assert bot.client is not None and not isinstance(bot.client, discord.AutoShardedClient)


async def test_a_sharded_start_names_its_shards_in_the_started_line(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, tmp_path: Path
) -> None:
    bot = await start_bot(settings=sharded("2"))
    assert bot.name == "Discord (shard 2 of 4)"
    assert isinstance(bot.client, discord.AutoShardedClient)
    assert fake.identified_shards == [(2, 4)]
    line = started_line(service, [bot], make_settings(fake, **sharded("2")))
    assert "running: Discord (shard 2 of 4);" in line
    everything = await start_bot(settings=sharded(None, count=2))
    assert everything.name == "Discord (shards 0-1 of 2)"
    assert fake.identified_shards[1:] == [(0, 2), (1, 2)]


async def test_identifies_keep_to_discords_limit_and_its_advice_is_a_warning(
    fake: FakeDiscord, start_bot: StartBot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    fake.recommended_shards, fake.max_concurrency = 8, 2
    interval = 0.4
    await start_bot(settings=sharded(), identify_interval=interval)
    assert fake.identified_shards == [(i, COUNT) for i in range(COUNT)]
    at = dict(zip((s[0] for s in fake.identified_shards if s), fake.identified_at, strict=True))
    # two buckets (shard id % 2): 0 and 1 at once, 2 and 3 a window after 0 and 1
    assert at[1] - at[0] < interval / 2
    assert at[2] - at[0] >= interval * 0.9 and at[3] - at[1] >= interval * 0.9
    assert [r.getMessage() for r in caplog.records if r.name.startswith("bot")] == [
        "Discord recommends 8 shards for this bot; QUIZBOT_DISCORD_SHARD_COUNT is 4 "
        "(Discord refuses a shard with too many servers: close code 4011)"
    ]


async def test_a_token_revoked_on_one_shard_is_rejected_for_the_whole_process(
    fake: FakeDiscord, start_bot: StartBot, guilds: list[GuildRef]
) -> None:
    bot = await start_bot(settings=sharded("0-1"))
    await fake.close_gateway(4004, "Authentication failed.", shard=1)
    reason = await asyncio.wait_for(bot.wait_failed(), WITHIN)
    assert isinstance(reason, CredentialsRejected) and str(reason) == REJECTED
    assert bot.client is not None and bot.client.is_closed()
    await fake.until(lambda: not fake.connected, WITHIN, "every shard to disconnect")
    assert len(fake.identify_tokens) == 2, "no shard tried again"


@pytest.mark.parametrize("code", [4010, 4011, 4012, 4013, 4014])
async def test_a_fatal_close_on_one_shard_is_connection_lost_naming_it(
    fake: FakeDiscord, start_bot: StartBot, code: int
) -> None:
    bot = await start_bot(settings=sharded("0-1"))
    await fake.close_gateway(code, shard=1)
    reason = await asyncio.wait_for(bot.wait_failed(), WITHIN)
    assert isinstance(reason, ConnectionLost)
    assert f"of shard 1 with code {code}" in str(reason) and "\n" not in str(reason)
    await fake.until(lambda: not fake.connected, WITHIN, "every shard to disconnect")


async def test_one_shard_resuming_or_reconnecting_is_not_a_failure(
    fake: FakeDiscord, start_bot: StartBot, guilds: list[GuildRef], alice: User,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    bot = await start_bot(settings=sharded("0-1"))
    watcher = asyncio.create_task(bot.wait_failed())
    await fake.close_gateway(4000, "Unknown error.", shard=0)
    await fake.until(lambda: fake.resumes, WITHIN, "a RESUME of shard 0")
    # an outage: the reconnect is refused once (503), discord.py backs off and identifies anew
    fake.refuse_gateway(1)
    await fake.close_gateway(1001, "Going away.", shard=1)
    await fake.until(lambda: len(fake.identify_tokens) == 3, WITHIN, "shard 1 identified again")
    assert fake.identified_shards[-1] == (1, COUNT)
    for guild in guilds[:2]:  # both shards serve again
        it = await fake.slash("stats", user=alice, channel_id=guild.channel_id)
        await fake.reply(it)
        assert it.shard == shard_of(guild.id, COUNT)
    assert not watcher.done()
    watcher.cancel()
    [line] = [r for r in caplog.records if r.name.startswith("discord")]
    assert line.levelno == logging.WARNING and not line.exc_info
    assert line.getMessage().startswith(
        "Discord connection of shard 1 lost (WSServerHandshakeError"), line.getMessage()


async def test_a_shard_that_cannot_connect_at_start_is_connection_lost(
    fake: FakeDiscord, start_bot: StartBot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    fake.refuse_gateway(100)
    started = asyncio.get_running_loop().time()
    with pytest.raises(ConnectionLost, match="DISCORD_GATEWAY_URL"):
        await start_bot(settings=sharded("0-1"), ready_timeout=0.5)
    assert asyncio.get_running_loop().time() - started < 3.0, "stopped without its retries"
    lines = [r for r in caplog.records if r.name.startswith("discord")]
    assert lines and all(r.levelno == logging.WARNING and not r.exc_info for r in lines)
    assert lines[0].getMessage().startswith("Discord shard 0 could not connect (")


# settings ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("env", "line"), [
    ({"QUIZBOT_DISCORD_SHARDS": "0-1"},
     "QUIZBOT_DISCORD_SHARDS: needs QUIZBOT_DISCORD_SHARD_COUNT, the number of shards across "
     "every process"),
    ({"QUIZBOT_DISCORD_SHARD_COUNT": "4", "QUIZBOT_DISCORD_SHARDS": "2-4"},
     "QUIZBOT_DISCORD_SHARDS: shard 4 does not exist: shard ids go from 0 to 3 with "
     "QUIZBOT_DISCORD_SHARD_COUNT=4"),
    ({"QUIZBOT_DISCORD_SHARD_COUNT": "4", "QUIZBOT_DISCORD_SHARDS": "3-1"},
     "QUIZBOT_DISCORD_SHARDS: the range 3-1 is backwards"),
    ({"QUIZBOT_DISCORD_SHARD_COUNT": "4", "QUIZBOT_DISCORD_SHARDS": "1,0-2"},
     "QUIZBOT_DISCORD_SHARDS: shard 1 is listed twice"),
    ({"QUIZBOT_DISCORD_SHARD_COUNT": "4", "QUIZBOT_DISCORD_SHARDS": "0;1"},
     "QUIZBOT_DISCORD_SHARDS: '0;1' is not a shard id or a range (use e.g. 0-3 or 0,2,5)"),
    ({"QUIZBOT_DISCORD_SHARD_COUNT": "0"},
     "QUIZBOT_DISCORD_SHARD_COUNT: Input should be greater than or equal to 1"),
    ({"QUIZBOT_DISCORD_SHARD_COUNT": "four"},
     "QUIZBOT_DISCORD_SHARD_COUNT: Input should be a valid integer, unable to parse string as "
     "an integer"),
])
def test_bad_shard_settings_are_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], line: str
) -> None:
    for name in ("QUIZBOT_DISCORD_SHARD_COUNT", "QUIZBOT_DISCORD_SHARDS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as raised:
        load_settings(_env_file=None)
    assert raised.value.lines == [line]


@pytest.mark.parametrize(("count", "shards", "expected"), [
    (None, None, None),
    (4, None, ([0, 1, 2, 3], 4)),
    (4, "0-1", ([0, 1], 4)),
    (8, "0,2,5", ([0, 2, 5], 8)),
    (8, " 6-7 , 0 ", ([0, 6, 7], 8)),
    (1, "0", ([0], 1)),
])
def test_shard_settings(count: int | None, shards: str | None,
                        expected: tuple[list[int], int] | None) -> None:
    settings = Settings(_env_file=None, quizbot_discord_shard_count=count,
                        quizbot_discord_shards=shards)
    assert settings.discord_shards == expected



# processes killed -9 while the others go on ---------------------------------------------------
SHARDS = {"a": "0-1", "b": "2-3"}
GUILDS_PER_SHARD = 2
ROUNDS = 4  # the victim alternates: a, b, a, b
CLICKS = 160  # per round, over the questions of every guild
PACE = 5  # clicks sent together, every 2 ms


@pytest.fixture(params=["sqlite", "postgres"])
async def cluster(request: pytest.FixtureRequest, fake: FakeDiscord,
                  tmp_path: Path) -> AsyncIterator[dict[str, BotProcess]]:
    """Two crash_bot.py processes on one database (a SQLite file, or a fresh PostgreSQL
    database on QUIZBOT_TEST_POSTGRES_URL's server: skipped with one line without it), shards
    0-1 and 2-3 of 4 (not started)."""
    async with backend_for(request.param, tmp_path) as backend:
        processes = {
            label: BotProcess(fake, backend.database, tmp_path, label=label, env={
                "QUIZBOT_DISCORD_SHARD_COUNT": str(COUNT), "QUIZBOT_DISCORD_SHARDS": shards,
            })
            for label, shards in SHARDS.items()
        }
        try:
            yield processes
        finally:
            for process in processes.values():
                if process.proc is not None:
                    await process.kill()


def runs(label: str, guild_id: int) -> bool:
    low, high = (int(x) for x in SHARDS[label].split("-"))
    return low <= shard_of(guild_id, COUNT) <= high


async def round_with_a_kill(cluster: dict[str, BotProcess], victim: str, burst: Burst,
                            fake: FakeDiscord) -> bool:
    """A burst of clicks over the guilds of both processes; `victim` is killed -9 in the middle
    of it while the rest keep coming (the other process answers its guilds' ones; those for
    the victim's guilds are lost, as on Discord while nobody runs their shard). The victim is
    started again and whoever got no answer clicks again. Returns whether the kill left both
    answered and unanswered clicks behind it among those the victim was sent before it.

    The kill comes after a random number of clicks, at the first moment from then on when the
    victim has answered some of its clicks and not yet others: while it commits and answers."""
    rng = burst.rng
    proc = cluster[victim]
    survivor = cluster[next(label for label in cluster if label != victim)]

    def mine(it: Interaction) -> bool:
        return runs(victim, int(it.payload["guild_id"]))

    plan = burst.plan(burst.people(CLICKS))
    earliest = rng.randrange(CLICKS // 4, CLICKS // 2)
    sent: list[Interaction] = []
    cut: int | None = None
    for i, (user, message, shown) in enumerate(plan):
        if cut is None and i >= earliest:
            answered = [bool(it.callback) for it in sent if mine(it)]
            if (any(answered) and not all(answered)) or i == len(plan) - 1:
                proc.signal(signal.SIGKILL)
                cut = i
        sent.append(await burst.click(user, message, shown, within=5.0 if cut is None else 0))
        if i % PACE == PACE - 1:
            await asyncio.sleep(0.002)
    await proc.exited()

    theirs = [it for it in sent if not mine(it)]
    assert all(it.shard is not None for it in theirs), "the survivor's guilds were served"
    await burst.answered(theirs)
    unanswered = [it for it in sent if it.callback is None]
    assert all(mine(it) for it in unanswered)
    taken = [it for it in sent[:cut] if mine(it)]
    lost = sum(it.callback is None for it in taken)
    await proc.start()
    assert survivor.proc is not None and survivor.proc.returncode is None, survivor.log()
    await burst.answered(await burst.again(unanswered))
    return lost not in (0, len(taken))


@pytest.mark.slow
async def test_two_sharded_processes_with_kill_9_lose_nothing_acknowledged(
    fake: FakeDiscord, cluster: dict[str, BotProcess]
) -> None:
    rng, seed = seeded()
    guilds = [fake.add_guild(f"Guild {shard}.{n}", shard=(shard, COUNT))
              for shard in range(COUNT) for n in range(GUILDS_PER_SHARD)]
    for process in cluster.values():
        await process.start()
    burst = Burst(fake, rng)
    await burst.post_questions([g.channel_id for g in guilds])
    served = {label: {it.shard for it in fake.interactions.values()
                      if runs(label, int(it.payload["guild_id"]))} for label in cluster}
    assert served == {"a": {0, 1}, "b": {2, 3}}

    mid_burst = 0
    for n in range(ROUNDS):
        mid_burst += await round_with_a_kill(cluster, "ab"[n % 2], burst, fake)

    for process in cluster.values():
        code, _ = await process.terminate()
        assert code == 0, process.log()
    assert mid_burst, f"no kill came in the middle of the bot's work (CRASH_SEED={seed})"
    backend = backend_of(cluster["a"].database)
    stored = await stored_answers(backend)
    await assert_acknowledged_clicks_stored(backend, burst, stored)
    assert len(stored) == ROUNDS * CLICKS, f"CRASH_SEED={seed}"
    await assert_aggregates_match_answers(backend)
    for process in cluster.values():
        assert_clean_logs(process)


@pytest.mark.slow
async def test_a_question_of_a_killed_process_is_summed_up_once_by_the_other(
    fake: FakeDiscord, cluster: dict[str, BotProcess]
) -> None:
    """Both processes' schedulers close due questions (every second) through the database:
    each question is summed up exactly once, those of a process killed -9 by the other,
    and the killed one started again closes nothing a second time."""
    guilds = [fake.add_guild(f"Guild {shard}", shard=(shard, COUNT)) for shard in range(COUNT)]
    for process in cluster.values():
        process.extra_env["QUIZBOT_QUESTION_SECONDS"] = "10"  # the shortest allowed
        await process.start()
    burst = Burst(fake, random.Random(1))
    await burst.post_questions([g.channel_id for g in guilds])
    await burst.answered(await burst.send(burst.plan(burst.people(8))))
    await cluster["a"].kill()  # its guilds' questions are still open, in the database

    def closed() -> list[int]:
        return [len(closing_edits(fake, int(m["id"]))) for m in burst.questions]

    await fake.until(lambda: all(closed()), 30.0, "every question to be summed up")
    await cluster["a"].start()
    await asyncio.sleep(2.5)  # rounds of both schedulers, the restarted one's first
    assert closed() == [1] * COUNT, "one summary per question"
    for message in burst.questions:
        assert "answered" in text_of(fake.messages[int(message["id"])])
    for process in cluster.values():
        code, _ = await process.terminate()
        assert code == 0, process.log()
        assert_clean_logs(process)
