"""Click storms and memory through the real discord.py and python-telegram-bot, the fake
server, the bot and this driver each in a process of its own; writes bench_storm.json,
asserts nothing.

    .venv/bin/python scripts/bench_storm.py [--clicks 1000] [--repeat 3] [--quick]
                                            [--json bench_storm.json] [--skip-telegram]
                                            [--skip-discord] [--skip-memory]
                                            [--command-storm 5000]

The fake (tests/fakes/) runs in one process and times what it receives; the bot under test
runs in another, so its CPU is its own: utime + stime of every thread of the bot's process
(/proc/<pid>/stat) from the first click until every click was acknowledged and every
deferred click's follow-up sent, divided by the clicks.
The floor runs in the same run on the same fake, in a process of its own too.

1. Discord: N people click an answer button within 0.1 s, sent as INTERACTION_CREATE events
   on the fake gateway; per click, the time from its dispatch to the interaction callback
   reaching the fake (the response, or a deferral: what Discord's 3 s are about), and the time
   until the person sees the answer (the response, or the follow-up of a deferral); REST
   calls per click.
   floor: a bare discord.py Client whose DynamicItem button at once sends an ephemeral message
   and stores nothing, clicked on a message of the same shape as quizbot's question (its embed
   and buttons: Discord sends the clicked message with every click).
   quizbot: the service as `quizbot run` opens it (bot/app.py open_service: the catalog, a
   SQLite file, the core) and DiscordAdapter, clicking the right answer of a /quiz post.
2. Telegram (button mode): N presses on an answer keyboard pushed to the fake Bot API within
   0.1 s; per press, the time from the push to answerCallbackQuery reaching the fake.
   floors: a bare PTB Application whose CallbackQueryHandler answers at once, fed (a) by PTB's
   stock Updater (concurrent_updates=100) and (b) by quizbot's own poller
   (bot/adapters/telegram/polling.py), as quizbot is. quizbot: TelegramAdapter.
   A command during a storm (Discord): a storm of 5,000 clicks, whose answers queue, and a
   clicker's /stats sent as the last click goes out; the time until its answer is shown,
   beside the same /stats on the same bot after the storm (goal: within Discord's 3 s).
3. Memory: the RSS of each bot process (VmRSS, and its peak VmHWM) after start-up, a posted
   question and 100 clicks: the bare libraries; quizbot with the bundled content; quizbot with
   10,000 questions (scripts/bench.py's generated packs, loaded from the content cache as a
   restarted bot does).

Floors and quizbot alternate (which goes first changes every run); every run has a fresh
fake, a fresh bot process and a fresh SQLite file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")

from bench_common import (  # noqa: E402
    Calibration,
    Row,
    commands,
    part,
    proc_cpu,
    proc_status,
    say,
)

DEADLINE = 3.0  # seconds Discord waits for an interaction's response
SPREAD = 0.1  # seconds over which the N clicks are sent
GOAL = 1.2  # p99 at most this times the floor's
TG_CONCURRENCY = 100  # the stock Updater's concurrent_updates (quizbot's batch is 100)
PACKS = ROOT / "tests" / "data" / "packs"
BUNDLED = ROOT / "content"
MEMORY_CLICKS = 100
# start-up as fast as the tests start it; the answer count edited every 3 s, as by default
FAST = {"guild_ready_timeout": 0.05, "ready_timeout": 10.0, "identify_interval": 0.0}
HOST_ID = 900_000_000_000_000_001


def summary(latencies: list[float], n: int, first: float, last: float) -> dict[str, Any]:
    lat = sorted(latencies)
    q = statistics.quantiles(lat, n=100, method="inclusive") if len(lat) > 1 else lat * 99
    return {
        "n": n, "answered": len(lat),
        "p50_s": round(statistics.median(lat), 4) if lat else None,
        "p99_s": round(q[98], 4) if lat else None,
        "max_s": round(lat[-1], 4) if lat else None,
        "per_s": round(len(lat) / (last - first), 1) if lat and last > first else None,
        "within_3s": sum(1 for x in lat if x <= DEADLINE),
    }


async def until(predicate: Any, within: float) -> None:
    deadline = time.monotonic() + within
    while not predicate() and time.monotonic() < deadline:  # noqa: ASYNC110 (polls the fake)
        await asyncio.sleep(0.02)


# the fakes' process ---------------------------------------------------------------------
async def fake_discord() -> None:
    from tests.fakes.discord_api import FakeDiscord, User, buttons_of

    class TimedDiscord(FakeDiscord):
        def __init__(self) -> None:
            super().__init__()
            self.acked: dict[int, float] = {}  # interaction id -> time of its callback
            self.shown: dict[int, float] = {}  # interaction id -> when its answer was shown

        def _callback(self, iid: int, token: str, r: Any) -> dict[str, Any]:
            self.acked.setdefault(iid, time.monotonic())
            if r.json.get("type") == 4:  # the answer itself
                self.shown.setdefault(iid, time.monotonic())
            return super()._callback(iid, token, r)

        def _webhook(self, token: str, target: str | None, r: Any) -> dict[str, Any]:
            found = super()._webhook(token, target, r)
            if target is None and r.method == "POST":  # a follow-up: a deferral's answer
                self.shown.setdefault(int(token.removeprefix("itoken-")), time.monotonic())
            return found

        def _interaction_for(self, iid: int | None, token: str) -> Any:
            # the fake scans every interaction; a dict lookup keeps it O(1) in a storm
            it = self.interactions.get(iid) if iid is not None else None
            if it is not None and it.token == token:
                return it
            return super()._interaction_for(iid, token)

    def clicker(i: int) -> Any:
        return User(900_000_000_000_000_000 + 10_000_000 + i, f"P{i}")

    async def shown_after(command: str, user: Any) -> tuple[float, float | None]:
        """A slash command: when it was dispatched, and when its answer was shown."""
        t0 = time.monotonic()
        it = await fake.slash(command, {}, user=user, within=30)
        await until(lambda: it.id in fake.shown, 120)
        return t0, fake.shown.get(it.id)

    async def storm(n: int, message_id: int, custom_id: str, command: str | None = None
                    ) -> None:
        sent: dict[int, float] = {}
        start = time.monotonic()
        for i in range(n):
            ahead = start + SPREAD * i / n - time.monotonic()
            if ahead > 0.001:
                await asyncio.sleep(ahead)
            t0 = time.monotonic()
            it = await fake.click(message_id, custom_id, user=clicker(i))
            sent[it.id] = t0
        # a clicker's command sent as the last click goes out: it must not wait behind the
        # storm's follow-ups (answered within Discord's 3 s)
        during = asyncio.create_task(shown_after(command, clicker(0))) if command else None
        await until(lambda: all(i in fake.acked for i in sent), 30 + n / 50)
        say({"acked": len([i for i in sent if i in fake.acked])})
        lat = [fake.acked[i] - t for i, t in sent.items() if i in fake.acked]
        done = [fake.acked[i] for i in sent if i in fake.acked]
        out = summary(lat, n, start, max(done) if done else start)
        its = [fake.interactions[i] for i in sent]
        await until(lambda: all(it.followups for it in its if it.callback_type == 5), 30)
        shown = sorted(fake.shown[i] - t for i, t in sent.items() if i in fake.shown)
        if shown:
            q = statistics.quantiles(shown, n=100, method="inclusive") if len(shown) > 1 \
                else shown * 99
            out["answer_p99_s"] = round(q[98], 4)
        out["deferred"] = sum(1 for it in its if it.callback_type == 5)
        calls = sum(1 for r in fake.requests if r.at >= start
                    and r.path.startswith(("/interactions/", "/webhooks/")))
        out["rest_per_click"] = round(calls / n, 3) if n else None
        if during is not None and command is not None:
            t0, seen = await during
            out["command_s"] = None if seen is None else round(seen - t0, 4)
            t0, seen = await shown_after(command, clicker(1))  # the same, the storm over
            out["command_quiet_s"] = None if seen is None else round(seen - t0, 4)
        say(out)

    fake = TimedDiscord()
    await fake.start()
    say({"api_base": fake.api_base, "gateway_url": fake.gateway_url, "token": fake.token})
    async for cmd in commands():
        if cmd["cmd"] == "post":
            reply = await fake.reply(await fake.slash("quiz", {}, user=User(HOST_ID, "Host")),
                                     within=30)
            say({"message_id": reply.id,
                 "custom_ids": [b["custom_id"] for b in buttons_of(reply.message)],
                 "shape": {k: reply.message[k] for k in ("content", "embeds", "components")}})
        elif cmd["cmd"] == "message":
            message = fake._create_message(fake.channel_id, cmd["body"])
            say({"message_id": int(message["id"])})
        elif cmd["cmd"] == "storm":
            await storm(cmd["n"], cmd["message_id"], cmd["custom_id"], cmd.get("command"))
        else:
            break
    await fake.close()


async def fake_telegram() -> None:
    from tests.fakes.telegram_api import FakeTelegramAPI

    class TimedTelegram(FakeTelegramAPI):
        def __init__(self) -> None:
            super().__init__()
            self.answered: dict[str, float] = {}  # callback query id -> monotonic time

        def _api_answerCallbackQuery(self, params: dict[str, Any]) -> bool:
            self.answered.setdefault(str(params.get("callback_query_id")), time.monotonic())
            return super()._api_answerCallbackQuery(params)

    async def storm(n: int, message: dict[str, Any], data: str) -> None:
        sent: dict[str, float] = {}
        start = time.monotonic()
        for i in range(n):
            ahead = start + SPREAD * i / n - time.monotonic()
            if ahead > 0.001:
                await asyncio.sleep(ahead)
            user = fake.user(50_000_000 + i, f"P{i}")
            t0 = time.monotonic()
            fake.press(message, user, data)
            sent[fake._all_updates[-1]["callback_query"]["id"]] = t0
        await until(lambda: all(q in fake.answered for q in sent), 30 + n / 20)
        say({"acked": len([q for q in sent if q in fake.answered])})
        lat = [fake.answered[q] - t for q, t in sent.items() if q in fake.answered]
        done = [fake.answered[q] for q in sent if q in fake.answered]
        say(summary(lat, n, start, max(done) if done else start))

    fake = TimedTelegram()
    await fake.start()
    say({"base_url": fake.base_url, "token": fake.token})
    group = fake.group(-100123, "Storm")
    async for cmd in commands():
        if cmd["cmd"] == "post":
            host = fake.user(1001, "Host", language_code="en")
            before = len(fake.calls_of("sendMessage"))
            fake.command(group, host, "/quiz buttons")
            calls = await fake.wait_for("sendMessage", before + 1, within=30,
                                        where=lambda c: "reply_markup" in c.params)
            message = calls[-1].result
            say({"message": message,
                 "ref": f"tg-msg:{message['chat']['id']}:{message['message_id']}",
                 "data": [b["callback_data"] for row in message["reply_markup"]
                          ["inline_keyboard"] for b in row]})
        elif cmd["cmd"] == "message":
            message = fake._api_sendMessage({
                "chat_id": group["id"], "text": "question",
                "reply_markup": {"inline_keyboard": [[{"text": "A", "callback_data": "x:1"}]]},
            })
            say({"message": message, "data": ["x:1"]})
        elif cmd["cmd"] == "storm":
            await storm(cmd["n"], cmd["message"], cmd["data"])
        else:
            break
    await fake.stop()


# the bots' processes --------------------------------------------------------------------
async def bare_discord(fake: dict[str, Any], pooled: bool = False) -> None:
    """`pooled`: with the same kept-alive connection pool quizbot's client has
    (bot/adapters/discord/client.py), so that a ratio below 1 is not just the pool."""
    import aiohttp
    import discord
    import discord.http
    import yarl
    from discord.gateway import DiscordWebSocket

    class BareButton(discord.ui.DynamicItem[discord.ui.Button[Any]],
                     template=r"bare:(?P<o>\d+)"):
        def __init__(self, option: int) -> None:
            super().__init__(discord.ui.Button(label=str(option), custom_id=f"bare:{option}"))

        @classmethod
        async def from_custom_id(cls, interaction: discord.Interaction, item: Any,
                                 match: re.Match[str]) -> BareButton:
            return cls(int(match["o"]))

        async def callback(self, interaction: discord.Interaction) -> None:
            await interaction.response.send_message("Got it", ephemeral=True)

    class BareClient(discord.Client):
        async def setup_hook(self) -> None:
            self.add_dynamic_items(BareButton)

    discord.http.Route.BASE = fake["api_base"].rstrip("/")
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake["gateway_url"])
    intents = discord.Intents.none()
    intents.guilds = True
    connector = aiohttp.TCPConnector(limit=50) if pooled else None
    client = BareClient(intents=intents, connector=connector)
    await client.login(fake["token"])
    task = asyncio.create_task(client.connect())
    await asyncio.wait_for(client.wait_until_ready(), 30)
    say({"ready": True})
    async for _ in commands():
        break
    await client.close()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def bare_telegram(fake: dict[str, Any], poller: bool) -> None:
    from telegram import Update
    from telegram.ext import Application, CallbackQueryHandler, ContextTypes

    async def on_press(update: Update, context: Any) -> None:
        assert update.callback_query is not None
        await update.callback_query.answer("Got it", show_alert=True)

    builder = Application.builder().token(fake["token"]).base_url(fake["base_url"])
    app: Any
    if poller:  # quizbot's poller takes quizbot's application type; the handler uses none
        from bot.adapters.telegram.app import quiet_library_deprecations
        from bot.adapters.telegram.context import BotData
        from bot.adapters.telegram.polling import Poller

        quiet_library_deprecations()
        app = builder.updater(None).context_types(ContextTypes(bot_data=BotData)).build()
        # the poller stamps each update's idempotency key with the service's clock
        from types import SimpleNamespace

        from bot.core.clock import SystemClock
        app.bot_data.service = SimpleNamespace(clock=SystemClock())
    else:
        app = builder.concurrent_updates(TG_CONCURRENCY).build()
    app.add_handler(CallbackQueryHandler(on_press))
    await app.initialize()
    await app.start()
    feeder = Poller(app, Update.ALL_TYPES) if poller else None
    if feeder is not None:
        await feeder.start()
    else:
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0.0, timeout=1)
    say({"ready": True})
    async for _ in commands():
        break
    if feeder is not None:
        await feeder.stop()
    elif app.updater is not None and app.updater.running:
        await app.updater.stop()
    await app.stop()
    await app.shutdown()


async def quizbot(platform: str, fake: dict[str, Any], content: Path, db: Path,
                  cache: Path | None) -> None:
    """The service as `quizbot run` opens it, and one platform's adapter."""
    import bot.cli  # noqa: F401 - the module `quizbot run` runs in, and what it imports
    from bot.adapters import Adapter
    from bot.app import freeze_startup_objects, open_service
    from bot.settings import Settings

    values: dict[str, Any] = {"quizbot_content_dir": content, "quizbot_database": db,
                              "quizbot_cache_dir": cache, "telegram_bot_token": None,
                              "discord_bot_token": None}
    if platform == "discord":
        values |= {"discord_bot_token": fake["token"], "discord_api_base_url": fake["api_base"],
                   "discord_gateway_url": fake["gateway_url"], "discord_guild_id": None}
    else:
        values |= {"telegram_bot_token": fake["token"],
                   "telegram_api_base_url": fake["base_url"]}
    settings = Settings(_env_file=None, **values)
    async with open_service(settings) as service:
        adapter: Adapter
        if platform == "discord":
            from bot.adapters.discord import DiscordAdapter

            adapter = DiscordAdapter(service, settings, **FAST)
        else:
            from bot.adapters.telegram import TelegramAdapter

            adapter = TelegramAdapter(service, settings)
        await adapter.start()
        if not os.environ.get("QUIZBOT_BENCH_NO_FREEZE"):  # to measure what it changes
            freeze_startup_objects()  # as run_adapters does once the adapters are up
        say({"ready": True})
        async for cmd in commands():
            if cmd["cmd"] != "correct":
                break
            post_id = None
            for _ in range(500):  # bound just after the message is sent
                if (post_id := await service.questions.post_id_for(cmd["ref"])) is not None:
                    break
                await asyncio.sleep(0.01)
            shown = await service.questions.show(post_id) if post_id is not None else None
            say({"correct": None if shown is None else shown.correct})
        await adapter.stop()


# the driver -----------------------------------------------------------------------------
class Child:
    """A process of this script in one role, spoken to in JSON lines."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.pid = proc.pid

    @classmethod
    async def start(cls, role: str, *args: str) -> Child:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--role", role, *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            limit=2**24)
        return cls(proc)

    async def send(self, cmd: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd).encode() + b"\n")
        await self.proc.stdin.drain()

    async def read(self, within: float = 300) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), within)
        if not line:
            raise RuntimeError(f"process {self.pid} ended (status {await self.proc.wait()})")
        found: dict[str, Any] = json.loads(line)
        return found

    async def ask(self, cmd: dict[str, Any]) -> dict[str, Any]:
        await self.send(cmd)
        return await self.read()

    async def stop(self) -> None:
        if self.proc.returncode is None:
            try:
                await self.send({"cmd": "stop"})
                await asyncio.wait_for(self.proc.wait(), 20)
            except (TimeoutError, ConnectionError, RuntimeError):
                self.proc.kill()
                await self.proc.wait()


async def one_run(platform: str, who: str, n: int, tmp: Path, content: Path,
                  shape: dict[str, Any], cache: Path | None = None,
                  command: str | None = None) -> dict[str, Any]:
    """A fresh fake and a fresh bot process (`who`: bare, poller or quizbot); a storm of `n`
    on the bot's question (quizbot) or a message of its shape (the floors); `command`: a
    clicker's slash command sent as the last click goes out, and again after the storm."""
    fake = await Child.start(f"fake-{platform}")
    bot: Child | None = None
    try:
        info = await fake.read()
        args = ["--fake", json.dumps(info)]
        if who == "quizbot":
            args += ["--content", str(content), "--db", str(tmp / f"{time.monotonic_ns()}.db")]
            if cache is not None:
                args += ["--cache", str(cache)]
        bot = await Child.start(f"{who}-{platform}", *args)
        t0 = time.monotonic()
        await bot.read()  # ready
        started_s = time.monotonic() - t0
        ready = proc_status(bot.pid)
        if who == "quizbot":
            posted = await fake.ask({"cmd": "post"})
            correct = (await bot.ask({"cmd": "correct", "ref": posted.get("ref") or
                                      f"dc-msg:{posted.get('message_id')}"}))["correct"]
            if platform == "discord":
                shape.update(posted["shape"])
                target = {"message_id": posted["message_id"],
                          "custom_id": posted["custom_ids"][correct]}
            else:
                target = {"message": posted["message"], "data": posted["data"][correct]}
        elif platform == "discord":
            body = json.loads(re.sub(r'"qz:\d+:(\d+)"', r'"bare:\1"', json.dumps(shape)))
            target = {"message_id": (await fake.ask({"cmd": "message", "body": body}))
                      ["message_id"], "custom_id": "bare:0"}
        else:
            posted = await fake.ask({"cmd": "message"})
            target = {"message": posted["message"], "data": posted["data"][0]}
        cpu0, fake0, st0 = proc_cpu(bot.pid), proc_cpu(fake.pid), proc_status(bot.pid)
        await fake.send({"cmd": "storm", "n": n, **target,
                         **({"command": command} if command else {})})
        await fake.read()  # every click acknowledged (or given up on)
        acked = proc_cpu(bot.pid)
        out = await fake.read()  # and every deferred click's follow-up sent
        cpu1, fake1, st1 = proc_cpu(bot.pid), proc_cpu(fake.pid), proc_status(bot.pid)
        out |= {
            "cpu_ms_per_click": round((cpu1 - cpu0) * 1000 / n, 3),
            "cpu_ms_per_click_to_ack": round((acked - cpu0) * 1000 / n, 3),
            "switches_per_click": round((st1["switches"] - st0["switches"]) / n, 2),
            "fake_cpu_ms_per_click": round((fake1 - fake0) * 1000 / n, 3),
            "rss_ready_mb": round(ready["VmRSS"] / 1024, 1),
            "rss_mb": round(st1["VmRSS"] / 1024, 1), "hwm_mb": round(st1["VmHWM"] / 1024, 1),
            "start_s": round(started_s, 2),
        }
        return out
    finally:
        if bot is not None:
            await bot.stop()
        await fake.stop()


def runs_of(runs: list[dict[str, Any]], key: str) -> list[float]:
    return [r[key] for r in runs if r.get(key) is not None]


async def storms(platform: str, n: int, repeat: int, tmp: Path,
                 shape: dict[str, Any]) -> tuple[dict[str, list[dict[str, Any]]], list[Row]]:
    floors = ["bare", "pooled"] if platform == "discord" else ["bare", "poller"]
    whos = ["quizbot", *floors]
    runs: dict[str, list[dict[str, Any]]] = {who: [] for who in whos}
    for r in range(repeat):
        order = whos if r % 2 == 0 else [*floors, "quizbot"]
        if not shape and platform == "discord":
            order = whos  # the floor's message takes the shape of quizbot's question
        for who in order:
            runs[who].append(await one_run(platform, who, n, tmp, PACKS, shape))
        print(f"  {platform} {n} run {r + 1}: " + ", ".join(
            f"{who} p99 {runs[who][-1]['p99_s']} s, {runs[who][-1]['cpu_ms_per_click']} ms CPU"
            for who in whos), flush=True)
    noun = "clicks" if platform == "discord" else "presses"
    names = {"bare": "bare discord.py, clicked on a message of the question's shape"
             if platform == "discord" else "bare PTB, stock Updater",
             "poller": "bare PTB behind quizbot's poller",
             "pooled": "bare discord.py with quizbot's connection pool, same message shape"}
    title = f"{platform.capitalize()}, {n:,} {noun}"
    ours = runs["quizbot"]
    rows = []
    for floor in floors:
        fl = runs[floor]
        tag = "" if len(floors) == 1 else f" (floor: {names[floor]})"
        rows += [
            Row(f"{title}, p99 to the acknowledgement{tag}", "s", runs_of(ours, "p99_s"),
                runs_of(fl, "p99_s"), names[floor], goal_ratio=GOAL),
            Row(f"{title}, CPU per {noun[:-1] if noun == 'clicks' else 'press'}{tag}", "ms",
                runs_of(ours, "cpu_ms_per_click"), runs_of(fl, "cpu_ms_per_click"),
                names[floor] + " (its process, all threads)", goal_ratio=1.15),
        ]
    if platform == "discord":
        rows += [
            Row(f"{title}, acknowledged within 3 s", "", runs_of(ours, "within_3s"),
                runs_of(runs["bare"], "within_3s"), names["bare"], better="higher",
                goal_value=n),
            Row(f"{title}, REST calls per click", "", runs_of(ours, "rest_per_click"),
                runs_of(runs["bare"], "rest_per_click"), names["bare"]),
        ]
    return runs, rows


async def command_storm(n: int, repeat: int, tmp: Path, shape: dict[str, Any]
                        ) -> tuple[list[dict[str, Any]], list[Row]]:
    """Discord: a storm of `n` clicks (enough that their answers queue) and a clicker's
    /stats sent as the last click goes out; floor: the same command on the same bot once the
    storm is over. Goal: answered within Discord's 3 s."""
    runs = []
    for r in range(repeat):
        runs.append(await one_run("discord", "quizbot", n, tmp, PACKS, shape, command="stats"))
        print(f"  discord {n} with /stats, run {r + 1}: /stats shown after "
              f"{runs[-1].get('command_s')} s (quiet {runs[-1].get('command_quiet_s')} s), "
              f"clicks p99 {runs[-1]['p99_s']} s", flush=True)
    title = f"Discord, {n:,} clicks"
    answers = ", ".join(f"{r.get('answer_p99_s')} s" for r in runs)
    rows = [
        Row(f"{title}, a clicker's /stats sent with the last click: until its answer shows",
            "s", runs_of(runs, "command_s"), runs_of(runs, "command_quiet_s"),
            "the same /stats on the same bot after the storm", goal_value=DEADLINE,
            note=f"the clicks' p99 to their answer in the same runs: {answers}"),
        Row(f"{title}, p99 to the acknowledgement", "s", runs_of(runs, "p99_s"),
            note="quizbot alone (the command runs): the storm the command competes with"),
    ]
    return runs, rows


def catalog_memory(catalog: Any) -> dict[str, float]:
    """What the catalog's texts hold (MB, sys.getsizeof of each string once), what the
    questions read from the content cache's files when asked for hold apart, what sharing a
    text left the same across languages saves, and a full garbage collection's time with the
    catalog alive, then with it frozen (gc.freeze, as quizbot run does after start-up)."""
    import gc

    seen: set[int] = set()
    sizes = {"texts": 0, "shared": 0, "deferred": 0}
    for quiz in catalog:
        media = [q.code.text if q.code is not None else None for q in quiz.questions]
        media += [t for q in quiz.questions for t in (q.formula, q.image)]
        held = [quiz.title, *media]
        for q in quiz.questions:
            texts = [q.prompt, *(o.text for o in q.options), q.explanation, q.details]
            if q.deferred:  # read from the content cache's file when asked for: not held
                sizes["deferred"] += sum(sys.getsizeof(v) for text in texts if text is not None
                                         for v in {id(v): v for v in
                                                   text.as_dict().values()}.values())
            else:
                held += texts
        for text in held:
            if text is None:
                continue
            values = [v for v in (text.en, text.bn, text.hi) if v is not None]
            for i, value in enumerate(values):
                if any(value is other for other in values[:i]):  # kept once
                    sizes["shared"] += sys.getsizeof(value)
                    continue
                if id(value) in seen:
                    continue
                seen.add(id(value))
                sizes["texts"] += sys.getsizeof(value)

    def collect_us() -> float:
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            gc.collect()
            times.append(time.perf_counter() - t0)
        return statistics.median(times) * 1e6

    before = collect_us()
    gc.freeze()
    after = collect_us()
    gc.unfreeze()
    return {f"{k}_mb": round(v / 1e6, 2) for k, v in sizes.items()} | {
        "gc_full_us": round(before, 1), "gc_full_frozen_us": round(after, 1)}


async def memory(tmp: Path, platforms: list[str], quick: bool,
                 shape: dict[str, Any]) -> tuple[dict[str, Any], list[Row]]:
    from bench import content_packs

    from bot.content import load_catalog

    questions = 1000 if quick else 10_000
    packs = tmp / f"content-{questions}"
    content_packs(packs, questions)
    cache = tmp / "cache"
    # as a restarted bot finds it: the packs' cache entries written, then read
    load_catalog(packs, cache)
    held = catalog_memory(load_catalog(packs, cache))
    print(f"  catalog of {questions:,} questions: {held}", flush=True)
    found: dict[str, Any] = {}
    rows = []
    for platform in platforms:
        bare = await one_run(platform, "bare", MEMORY_CLICKS, tmp, PACKS, shape)
        bundled = await one_run(platform, "quizbot", MEMORY_CLICKS, tmp, BUNDLED, shape,
                                cache)
        big = await one_run(platform, "quizbot", MEMORY_CLICKS, tmp, packs, shape, cache)
        found[platform] = {"bare": bare, "bundled": bundled, f"q{questions}": big}
        library = "bare discord.py" if platform == "discord" else "bare PTB (stock Updater)"
        print(f"  memory {platform}: bare {bare['rss_mb']} MB, bundled {bundled['rss_mb']} MB,"
              f" {questions:,} questions {big['rss_mb']} MB", flush=True)
        rows += [
            Row(f"{platform.capitalize()} process RSS, bundled content", "MB",
                [bundled["rss_mb"]], [bare["rss_mb"]], library, goal_ratio=1.3,
                note=f"after start-up, one question and {MEMORY_CLICKS} clicks; peak "
                     f"{bundled['hwm_mb']} MB (floor {bare['hwm_mb']} MB)"),
            Row(f"{platform.capitalize()} process RSS, {questions:,} questions", "MB",
                [big["rss_mb"]], [bare["rss_mb"]], library, goal_value=100,
                note=f"loaded from the content cache; peak {big['hwm_mb']} MB"),
        ]
    rows += [
        Row(f"catalog of {questions:,} questions: the texts it holds", "MB",
            [held["texts_mb"]],
            note=f"loaded from the content cache: titles, code, formulas; besides, "
                 f"{held['deferred_mb']} MB of prompts, options, explanations and details "
                 "read from the cache's files when asked for"),
        Row(f"a full garbage collection with {questions:,} questions loaded", "µs",
            [held["gc_full_frozen_us"]], [held["gc_full_us"]],
            "the same without gc.freeze() after start-up",
            note="median of 5 gc.collect(), in the bench's own process"),
    ]
    found["catalog"] = held
    return found, rows


async def drive(args: argparse.Namespace) -> None:
    platforms = [p for p in ("discord", "telegram") if not getattr(args, f"skip_{p}")]
    calibration = Calibration()
    rows: list[Row] = []
    raw: dict[str, Any] = {}
    shape: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="quizbot-storm-") as tmp_dir:
        tmp = Path(tmp_dir)
        for platform in [] if args.memory_only else platforms:
            for n in args.clicks:
                runs, found = await storms(platform, n, args.repeat, tmp, shape)
                raw[f"{platform}-{n}"] = runs
                rows += found
            if platform == "discord" and args.command_storm:
                runs_c, found = await command_storm(args.command_storm, args.repeat, tmp, shape)
                raw[f"discord-{args.command_storm}-command"] = runs_c
                rows += found
        storm_part = part("storms", "Click storms", calibration.end(), rows, runs=raw,
                          repeat=args.repeat, spread_s=SPREAD)
        parts = [] if args.memory_only else [storm_part]
        if not args.skip_memory:
            mem_calibration = Calibration()
            mem, mem_rows = await memory(tmp, platforms, args.quick, shape)
            parts.append(part("memory", "Memory", mem_calibration.end(), mem_rows, runs=mem))
    args.json.write_text(json.dumps({"parts": parts}, indent=2, ensure_ascii=False) + "\n")
    print(f"written to {args.json}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clicks", type=int, nargs="+", default=None)
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help="300 clicks, one run, 1,000 "
                        "questions for the memory figure")
    parser.add_argument("--json", type=Path, default=Path("bench_storm.json"))
    parser.add_argument("--skip-telegram", action="store_true")
    parser.add_argument("--skip-discord", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--command-storm", type=int, default=None, help="clicks of the "
                        "storm a /stats is sent into (default 5,000; --quick 1,000; 0: none)")
    parser.add_argument("--memory-only", action="store_true")
    parser.add_argument("--role", help=argparse.SUPPRESS)
    parser.add_argument("--fake", help=argparse.SUPPRESS)
    parser.add_argument("--content", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role:
        logging.basicConfig(level=logging.ERROR)  # on stderr; stdout carries the answers
        fake = json.loads(args.fake) if args.fake else {}
        who, _, platform = args.role.partition("-")
        role: dict[str, Callable[[], Coroutine[Any, Any, None]]] = {
            "fake": lambda: fake_discord() if platform == "discord" else fake_telegram(),
            "bare": lambda: bare_discord(fake) if platform == "discord"
            else bare_telegram(fake, poller=False),
            "poller": lambda: bare_telegram(fake, poller=True),
            "pooled": lambda: bare_discord(fake, pooled=True),
            "quizbot": lambda: quizbot(platform, fake, args.content, args.db, args.cache),
        }
        asyncio.run(role[who]())
        return
    args.clicks = args.clicks or ([300] if args.quick else [1000])
    args.repeat = args.repeat or (1 if args.quick else 3)
    if args.command_storm is None:
        args.command_storm = 1000 if args.quick else 5000
    asyncio.run(drive(args))


if __name__ == "__main__":
    main()
