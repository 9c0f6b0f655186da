"""Bot processes and bursts of clicks, for the kill -9 and SIGTERM tests (test_crash.py, and the
sharded processes of test_shards.py).

`BotProcess` runs crash_bot.py (the production wiring of `quizbot run`) against the fake
Discord on one database; `Burst` is many people clicking the answer buttons of questions on
screen; the checks compare what the fake saw acknowledged with what the database holds, and
the boards' aggregates with a recount of the raw answers, on either backend (through
tests/storage_contract/backends.py's view of a database).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

from tests.fakes.discord_api import (
    CHANNEL_MESSAGE,
    TOKEN,
    FakeDiscord,
    Interaction,
    User,
    text_of,
)
from tests.storage_contract.backends import Backend, PostgresBackend, SqliteBackend

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("crash_bot.py")
PACKS = ROOT / "tests" / "data" / "packs"
START_WITHIN = 20.0  # seconds; only reached when something is broken
ANSWER_WITHIN = 20.0
STOP_WITHIN = 5.0  # SIGTERM to exit; the drain is bounded at 5 s, bot.app's at 8 s
APOLOGY = "Sorry, something went wrong"
NOT_SAVED = "Your answer was not saved"
NOT_SAVED_RETRIES = 5


class BotProcess:
    """crash_bot.py against the fake, on one database. `env`: more settings (e.g. the shards
    it runs); `label` names its log files (`<label>-<start>.log` in `workdir`)."""

    def __init__(self, fake: FakeDiscord, database: Path | str, workdir: Path, *,
                 label: str = "bot", env: dict[str, str] | None = None) -> None:
        self.fake = fake
        self.database = str(database)  # QUIZBOT_DATABASE: a SQLite file or a PostgreSQL URL
        self.workdir = workdir
        self.label = label
        self.extra_env = dict(env or {})
        self.proc: asyncio.subprocess.Process | None = None
        self.signalled: float | None = None  # when the running process was sent a signal
        self.starts = 0

    async def start(self) -> None:
        """Start it and wait until it has synced its commands (it is READY by then)."""
        synced = len(self.fake.find("PUT", rf"/applications/{self.fake.app_id}/commands"))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TELEGRAM_", "DISCORD_", "QUIZBOT_"))}
        env |= {
            "DISCORD_BOT_TOKEN": TOKEN,
            "DISCORD_API_BASE_URL": self.fake.api_base,
            "DISCORD_GATEWAY_URL": self.fake.gateway_url,
            "QUIZBOT_DATABASE": self.database,
            "QUIZBOT_CONTENT_DIR": str(PACKS),
            "QUIZBOT_LOG_LEVEL": "INFO",
            "NO_PROXY": "127.0.0.1,localhost",
            "PYTHONPATH": str(ROOT),
        } | self.extra_env
        self.starts += 1
        with self.log_path.open("wb") as log:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, str(SCRIPT), cwd=self.workdir, env=env,
                stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log,
            )
        deadline = time.monotonic() + START_WITHIN
        while len(self.fake.find("PUT", rf"/applications/{self.fake.app_id}/commands")) \
                <= synced:
            if self.proc.returncode is not None:
                raise AssertionError(f"the bot exited at start:\n{self.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"the bot never got ready:\n{self.log()}")
            await asyncio.sleep(0.01)

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.label}-{self.starts}.log"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:]

    def logs(self) -> str:
        return "".join((self.workdir / f"{self.label}-{n}.log").read_text(errors="replace")
                       for n in range(1, self.starts + 1))

    def signal(self, sig: signal.Signals) -> None:
        assert self.proc is not None
        if self.signalled is None:
            self.signalled = time.monotonic()
            self.proc.send_signal(sig)

    async def kill(self) -> None:
        self.signal(signal.SIGKILL)
        await self.exited()

    async def terminate(self) -> tuple[int, float]:
        """SIGTERM, as a service manager stops it: its exit status and how long it took."""
        self.signal(signal.SIGTERM)
        return await self.exited()

    async def exited(self) -> tuple[int, float]:
        """Wait for the signalled process to end: its exit status, and how long it took."""
        assert self.proc is not None and self.signalled is not None
        try:
            code = await asyncio.wait_for(self.proc.wait(), STOP_WITHIN + 10)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
            raise AssertionError(f"the bot did not stop when signalled:\n{self.log()}") \
                from None
        took = time.monotonic() - self.signalled
        self.proc, self.signalled = None, None
        return code, took


class Burst:
    """The questions on screen and every click made on them."""

    def __init__(self, fake: FakeDiscord, rng: random.Random) -> None:
        self.fake = fake
        self.rng = rng
        self.questions: list[dict[str, Any]] = []  # one question message per channel
        self.clicks: list[tuple[Interaction, int, int]] = []  # (interaction, message, shown)
        self._people = 0

    async def post_questions(self, channels: list[int]) -> None:
        host = User(800_000_000_000_000_001, "Host")
        for channel in channels:
            it = await self.fake.slash("quiz", {"quiz": "sample"}, user=host, channel_id=channel)
            self.questions.append((await self.fake.reply(it)).message)

    def people(self, n: int) -> list[User]:
        first = self._people
        self._people += n
        return [User(900_000_000_000_000_000 + i, f"P{i}") for i in range(first, first + n)]

    async def click(self, user: User, message: dict[str, Any], shown: int,
                    within: float = 5.0) -> Interaction:
        """`within`: how long the fake waits for a gateway session to send it on (0: a click
        for a guild whose shard nobody runs now is lost, as on Discord)."""
        button = [c for row in message["components"] for c in row["components"]][shown]
        it = await self.fake.click(int(message["id"]), button["custom_id"], user=user,
                                   within=within)
        self.clicks.append((it, int(message["id"]), shown))
        return it

    def plan(self, users: list[User]) -> list[tuple[User, dict[str, Any], int]]:
        """Everyone clicks a random option of a random question."""
        return [(user, self.rng.choice(self.questions), self.rng.randrange(3))
                for user in users]

    async def send(self, plan: list[tuple[User, dict[str, Any], int]],
                   within: float = 5.0) -> list[Interaction]:
        """The clicks of `plan`, sent over the gateway as fast as it takes them."""
        return [await self.click(user, message, shown, within)
                for user, message, shown in plan]

    async def again(self, unanswered: list[Interaction]) -> list[Interaction]:
        """The people whose click went unanswered click the same button again."""
        made = []
        for it in unanswered:
            _, message_id, shown = next(c for c in self.clicks if c[0] is it)
            user = User(int(it.payload["member"]["user"]["id"]),
                        it.payload["member"]["user"]["username"])
            made.append(await self.click(user, self.fake.messages[message_id], shown))
        return made

    def not_saved(self, it: Interaction) -> bool:
        """Was the click answered that its answer was not saved (the storage could not be
        used for a moment, e.g. a loaded PostgreSQL server out of connection slots)? That
        reply acknowledges nothing: it asks the person to click again."""
        message = self.fake.messages.get(it.original_id or 0)
        return message is not None and NOT_SAVED in text_of(message)

    async def answered(self, interactions: list[Interaction]) -> None:
        """Wait until every click is answered; whoever was told their answer was not saved
        clicks again, as the reply asks (a few times at most)."""
        for _ in range(NOT_SAVED_RETRIES):
            pending = list(interactions)
            await self.fake.until(lambda: all(it.callback for it in pending),  # noqa: B023
                                  ANSWER_WITHIN, f"answers to {len(pending)} clicks")
            refused = [it for it in interactions if self.not_saved(it)]
            if not refused:
                return
            await asyncio.sleep(0.5)
            interactions = await self.again(refused)
        raise AssertionError(f"{len(interactions)} clicks were still not saved after "
                             f"{NOT_SAVED_RETRIES} tries")


async def stored_answers(backend: Backend) -> dict[tuple[int, str], list[int]]:
    """(post, person) -> the options stored, after the aggregates caught up."""
    async with backend.opened() as store:
        await store.materialize()  # aggregates are applied asynchronously
    stored: dict[tuple[int, str], list[int]] = {}
    for post, person, option in await backend.fetch(
            "SELECT post_id, person_key, option FROM answers"):
        stored.setdefault((int(post), person), []).append(int(option))
    return stored


async def post_and_order(backend: Backend, message_id: int) -> tuple[int, list[int]]:
    """The post a question message is bound to, and its option order (shown -> canonical)."""
    rows = await backend.fetch("SELECT p.id, p.option_order FROM post_refs r JOIN posts p"
                               " ON p.id = r.post_id WHERE r.ref = $1", f"dc-msg:{message_id}")
    assert rows, f"message {message_id} is bound to no post"
    post, order = rows[0]
    return int(post), [int(i) for i in (json.loads(order) if isinstance(order, str) else order)]


async def assert_acknowledged_clicks_stored(backend: Backend, burst: Burst,
                                            stored: dict[tuple[int, str], list[int]]) -> None:
    posts = {int(m["id"]): await post_and_order(backend, int(m["id"]))
             for m in burst.questions}
    clicked: dict[tuple[int, str], set[int]] = {}
    acknowledged: set[tuple[int, str]] = set()
    for it, message_id, shown in burst.clicks:
        post, order = posts[message_id]
        key = (post, f"dc:{it.payload['member']['user']['id']}")
        clicked.setdefault(key, set()).add(order[shown])
        if it.callback is not None and not burst.not_saved(it):
            acknowledged.add(key)
            message = burst.fake.messages.get(it.original_id or 0) or {}
            assert APOLOGY not in json.dumps(message), f"an apology for {it.id}"
            assert it.callback["type"] == CHANNEL_MESSAGE, "answered in time, not deferred"
    missing = acknowledged - set(stored)
    told = [(it.id, it.shard, text_of(burst.fake.messages.get(it.original_id or 0) or {}))
            for it, message_id, _ in burst.clicks if it.callback is not None
            and (posts[message_id][0], f"dc:{it.payload['member']['user']['id']}") in missing]
    assert not missing, (f"{len(missing)} of {len(acknowledged)} acknowledged clicks were lost;"
                         f" the first (interaction, shard, reply): {told[:3]}")
    assert set(stored) <= set(clicked), "answers nobody gave"
    twice = {key: options for key, options in stored.items() if len(options) != 1}
    assert not twice, f"stored more than once: {twice}"
    wrong = {key for key, [option] in stored.items() if option not in clicked[key]}
    assert not wrong, f"stored with an option not clicked: {wrong}"


async def assert_aggregates_match_answers(backend: Backend) -> None:
    """The boards' aggregates (per day, this week, all time; per chat and across chats as
    '*'; the streaks) equal a recount of the raw answers (after `stored_answers`, which lets
    the materializer catch up)."""
    assert await backend.count("answers")
    stored, recount = await backend.stored(), await backend.recount()
    for board in recount:
        assert stored[board] == recount[board], f"{board} differ from a recount of the answers"


def already_answered(burst: Burst) -> list[int]:
    """The clicks answered "you already answered" (each person meant to answer once)."""
    return [it.id for it, _, _ in burst.clicks if it.original_id is not None
            and "already answered" in text_of(burst.fake.messages[it.original_id])]


def assert_clean_logs(proc: BotProcess) -> None:
    logs = proc.logs()
    assert "Traceback" not in logs and " ERROR " not in logs, logs[-6000:]
    assert TOKEN not in logs


def backend_of(database: Path | str) -> Backend:
    """The checks' view of a database, as QUIZBOT_DATABASE names it."""
    text = str(database)
    if text.startswith(("postgresql://", "postgres://")):
        return PostgresBackend(text)
    return SqliteBackend(Path(text))


def seeded() -> tuple[random.Random, str]:
    seed = os.environ.get("CRASH_SEED") or str(random.randrange(10**6))
    return random.Random(seed), seed
