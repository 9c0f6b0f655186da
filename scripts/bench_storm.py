"""Click storms through the real discord.py and python-telegram-bot; prints a table, writes
bench_storm.json, asserts nothing.

    .venv/bin/python scripts/bench_storm.py [--clicks 1000 2000 5000] [--repeat 3]
                                            [--json bench_storm.json] [--skip-telegram]

Everything runs in this one process and event loop, against the fakes the end-to-end tests
use (tests/fakes/): the fake server, the library and the bot share the CPU, for the floor as
for quizbot, so only the ratios mean anything.

1. Discord: N people click an answer button within 0.1 s, sent as INTERACTION_CREATE events
   on the fake gateway; per click, the time from its dispatch to the interaction callback
   (POST /interactions/<id>/<token>/callback: the response, or a deferral) reaching the fake
   REST API, and the time until the person sees the answer (the response, or the follow-up
   of a deferral). Also CPU per click (the process, and the event loop's thread) and REST
   calls per click.
   floor: a bare discord.py Client with one DynamicItem button whose callback at once sends an
   ephemeral message and stores nothing, clicked on a message of the same shape as quizbot's
   question (its embed and buttons: Discord sends the clicked message with every click).
   quizbot: DiscordAdapter with the core and a SQLite file, clicking a question posted with
   /quiz.
2. Telegram (button mode): N presses on an answer keyboard pushed to the fake Bot API at once;
   per press, the time from the push to answerCallbackQuery reaching the fake.
   floors: a bare PTB Application whose CallbackQueryHandler answers the query at once, fed
   (a) by PTB's stock Updater (concurrent_updates=100: quizbot's poller handles a getUpdates
   batch of up to 100 concurrently) and (b) by quizbot's own poller
   (bot/adapters/telegram/polling.py), as quizbot is. quizbot: TelegramAdapter, answering
   after the answer's commit.

Floors and quizbot alternate, each run with a fresh fake and a fresh client; each figure is
the median of --repeat runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import discord  # noqa: E402
import discord.http  # noqa: E402
import yarl  # noqa: E402
from discord.gateway import DiscordWebSocket  # noqa: E402

from bot.content import load_catalog  # noqa: E402
from bot.core.clock import SystemClock  # noqa: E402
from bot.core.service import QuizService  # noqa: E402
from bot.storage import SqliteStorage  # noqa: E402
from tests.discord_e2e.helpers import make_settings, post_quiz  # noqa: E402
from tests.fakes.discord_api import FakeDiscord, User  # noqa: E402
from tests.fakes.telegram_api import FakeTelegramAPI  # noqa: E402

DEADLINE = 3.0  # seconds Discord waits for an interaction's response
SPREAD = 0.1  # seconds over which the N clicks are sent
GOAL = 1.2  # p99 at most this times the floor's
TG_CONCURRENCY = 100  # --tg-concurrency
PACKS = ROOT / "tests" / "data" / "packs"
# start-up as fast as the tests start it; the answer count edited every 3 s, as by default
FAST = {"guild_ready_timeout": 0.05, "ready_timeout": 5.0, "identify_interval": 0.0}


# the fakes, timing the answers they receive ---------------------------------------------
class TimedDiscord(FakeDiscord):
    def __init__(self) -> None:
        super().__init__()
        self.acked: dict[int, float] = {}  # interaction id -> monotonic time of its callback

        self.shown: dict[int, float] = {}  # interaction id -> when its answer was shown

    def _callback(self, iid: int, token: str, r: Any) -> dict[str, Any]:
        self.acked.setdefault(iid, time.monotonic())
        if r.json.get("type") == 4:  # the answer itself
            self.shown.setdefault(iid, time.monotonic())
        return super()._callback(iid, token, r)

    def _webhook(self, token: str, target: str | None, r: Any) -> dict[str, Any]:
        found = super()._webhook(token, target, r)
        if target is None and r.method == "POST":  # a follow-up: the answer of a deferral
            iid = int(token.removeprefix("itoken-"))
            self.shown.setdefault(iid, time.monotonic())
        return found

    def _interaction_for(self, iid: int | None, token: str) -> Any:
        # the fake scans every interaction; a dict lookup keeps it O(1) in a storm
        it = self.interactions.get(iid) if iid is not None else None
        if it is not None and it.token == token:
            return it
        return super()._interaction_for(iid, token)


class TimedTelegram(FakeTelegramAPI):
    def __init__(self) -> None:
        super().__init__()
        self.answered: dict[str, float] = {}  # callback query id -> monotonic time

    def _api_answerCallbackQuery(self, params: dict[str, Any]) -> bool:
        self.answered.setdefault(str(params.get("callback_query_id")), time.monotonic())
        return super()._api_answerCallbackQuery(params)


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


# Discord --------------------------------------------------------------------------------
class BareButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"bare:(?P<o>\d+)"):
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


async def storm_discord(fake: TimedDiscord, message_id: int, custom_id: str, n: int,
                        components: list[dict[str, Any]] | None) -> dict[str, Any]:
    sent: dict[int, float] = {}
    start = time.monotonic()
    cpu, loop_cpu = time.process_time(), time.thread_time()
    base = 10_000_000
    for i in range(n):
        ahead = start + SPREAD * i / n - time.monotonic()
        if ahead > 0.001:
            await asyncio.sleep(ahead)
        user = User(900_000_000_000_000_000 + base + i, f"P{i}")
        t0 = time.monotonic()
        it = await fake.click(message_id, custom_id, user=user, components=components)
        sent[it.id] = t0
    sent_in = time.monotonic() - start
    await until(lambda: all(i in fake.acked for i in sent), 30 + n / 50)
    lat = [fake.acked[i] - t for i, t in sent.items() if i in fake.acked]
    done = [fake.acked[i] for i in sent if i in fake.acked]
    out = summary(lat, n, start, max(done) if done else start)
    out["sent_in_s"] = round(sent_in, 3)
    # CPU per click until every click was acknowledged, all threads (the process) and the
    # event loop's thread alone (the fake and the library are in it too, as for the floor)
    out["cpu_ms_per_click"] = round((time.process_time() - cpu) * 1000 / n, 3)
    out["loop_cpu_ms_per_click"] = round((time.thread_time() - loop_cpu) * 1000 / n, 3)
    # what the bot asked of Discord per click: a deferral costs a second call (the follow-up)
    its = [fake.interactions[i] for i in sent]
    await until(lambda: all(it.followups for it in its if it.callback_type == 5), 30)
    # when each person saw the answer: the response itself, or the follow-up of a deferral
    shown = sorted(fake.shown[i] - t for i, t in sent.items() if i in fake.shown)
    if shown:
        q = statistics.quantiles(shown, n=100, method="inclusive") if len(shown) > 1 \
            else shown * 99
        out["answer_p99_s"] = round(q[98], 4)
        out["answer_max_s"] = round(shown[-1], 4)
    out["deferred"] = sum(1 for it in its if it.callback_type == 5)
    out["followups"] = sum(len(it.followups) for it in its)
    calls = sum(1 for r in fake.requests if r.at >= start
                and r.path.startswith(("/interactions/", "/webhooks/")))
    out["rest_per_click"] = round(calls / n, 2)
    return out


async def discord_bare(n: int) -> dict[str, Any]:
    fake = TimedDiscord()
    await fake.start()
    discord.http.Route.BASE = fake.api_base.rstrip("/")
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway_url)
    intents = discord.Intents.none()
    intents.guilds = True
    client = BareClient(intents=intents)
    try:
        await client.login(fake.token)
        task = asyncio.create_task(client.connect())
        await asyncio.wait_for(client.wait_until_ready(), 10)
        # the same message as quizbot's question (embed and buttons), so each click's payload,
        # which Discord builds from the clicked message, is as large for the floor
        shape = QUESTION_SHAPE or {"content": "question", "components": [{
            "type": 1, "components": [{"type": 2, "style": 1, "label": "A",
                                       "custom_id": "qz:1:0"}]}]}
        body = json.loads(re.sub(r'"qz:\d+:(\d+)"', r'"bare:\1"', json.dumps(shape)))
        message = fake._create_message(fake.channel_id, body)
        return await storm_discord(fake, int(message["id"]), "bare:0", n, None)
    finally:
        await client.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await fake.close()


QUESTION_SHAPE: dict[str, Any] = {}  # content, embeds, components of quizbot's question


async def discord_quizbot(n: int, tmp: Path) -> dict[str, Any]:
    return await _discord_quizbot(n, tmp)


async def question_shape(tmp: Path) -> None:
    """Post one question with quizbot, for the floor's message (`QUESTION_SHAPE`)."""
    await _discord_quizbot(0, tmp)


async def _core(tmp: Path, name: str) -> tuple[SqliteStorage, QuizService]:
    """The core on a fresh SQLite file, as `quizbot run` builds it (seeded choices)."""
    storage = SqliteStorage(tmp / f"{name}-{time.monotonic_ns()}.db")
    await storage.open()
    return storage, QuizService(load_catalog(PACKS), storage, SystemClock(), random.Random(7))


async def _discord_quizbot(n: int, tmp: Path) -> dict[str, Any]:
    from bot.adapters.discord import DiscordAdapter

    fake = TimedDiscord()
    await fake.start()
    storage, service = await _core(tmp, "dc")
    adapter = DiscordAdapter(service, make_settings(fake), **FAST)
    try:
        await adapter.start()
        reply, question = await post_quiz(fake, service, User(900_000_000_000_000_001, "Host"))
        if not QUESTION_SHAPE:
            QUESTION_SHAPE.update({k: reply.message[k] for k in ("content", "embeds",
                                                                  "components")})
        if n == 0:
            return {}
        button = reply.buttons[question.correct]
        return await storm_discord(fake, reply.id, button["custom_id"], n, None)
    finally:
        await adapter.stop()
        await storage.close()
        await fake.close()


# Telegram -------------------------------------------------------------------------------
async def storm_telegram(fake: TimedTelegram, message: dict[str, Any], data: str,
                         n: int) -> dict[str, Any]:
    sent: dict[str, float] = {}
    start = time.monotonic()
    cpu = time.process_time()
    for i in range(n):
        ahead = start + SPREAD * i / n - time.monotonic()
        if ahead > 0.001:
            await asyncio.sleep(ahead)
        user = fake.user(50_000_000 + i, f"P{i}")
        t0 = time.monotonic()
        fake.press(message, user, data)
        qid = fake._all_updates[-1]["callback_query"]["id"]
        sent[qid] = t0
    await until(lambda: all(q in fake.answered for q in sent), 30 + n / 20)
    lat = [fake.answered[q] - t for q, t in sent.items() if q in fake.answered]
    done = [fake.answered[q] for q in sent if q in fake.answered]
    out = summary(lat, n, start, max(done) if done else start)
    out["cpu_ms_per_click"] = round((time.process_time() - cpu) * 1000 / n, 3)
    return out


async def telegram_bare(n: int) -> dict[str, Any]:
    from telegram import Update
    from telegram.ext import Application, CallbackQueryHandler

    fake = TimedTelegram()
    await fake.start()
    app = (Application.builder().token(fake.token).base_url(fake.base_url)
           .concurrent_updates(TG_CONCURRENCY).build())

    async def on_press(update: Update, context: Any) -> None:
        assert update.callback_query is not None
        await update.callback_query.answer("Got it", show_alert=True)

    app.add_handler(CallbackQueryHandler(on_press))
    try:
        await app.initialize()
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0.0, timeout=1)
        group = fake.group(-100123, "Storm")
        message = fake._api_sendMessage({
            "chat_id": group["id"], "text": "question",
            "reply_markup": {"inline_keyboard": [[{"text": "A", "callback_data": "x:1"}]]},
        })
        return await storm_telegram(fake, message, "x:1", n)
    finally:
        if app.updater is not None and app.updater.running:
            await app.updater.stop()
        if app.running:
            await app.stop()
        await app.shutdown()
        await fake.stop()


async def telegram_bare_poller(n: int) -> dict[str, Any]:
    """The same bare handler, fed by quizbot's own poller (bot/adapters/telegram/polling.py):
    each getUpdates batch handled concurrently, as quizbot's are."""
    from telegram import Update
    from telegram.ext import Application, CallbackQueryHandler, ContextTypes

    from bot.adapters.telegram.app import quiet_library_deprecations
    from bot.adapters.telegram.context import BotData
    from bot.adapters.telegram.polling import Poller

    quiet_library_deprecations()  # the poller's getUpdates through do_api_request
    fake = TimedTelegram()
    await fake.start()
    # the application type the poller takes (quizbot's BotData; the handler below uses none)
    app = (Application.builder().token(fake.token).base_url(fake.base_url).updater(None)
           .context_types(ContextTypes(bot_data=BotData)).build())

    async def on_press(update: Update, context: Any) -> None:
        assert update.callback_query is not None
        await update.callback_query.answer("Got it", show_alert=True)

    app.add_handler(CallbackQueryHandler(on_press))
    poller = Poller(app, Update.ALL_TYPES)
    try:
        await app.initialize()
        await app.start()
        await poller.start()
        group = fake.group(-100123, "Storm")
        message = fake._api_sendMessage({
            "chat_id": group["id"], "text": "question",
            "reply_markup": {"inline_keyboard": [[{"text": "A", "callback_data": "x:1"}]]},
        })
        return await storm_telegram(fake, message, "x:1", n)
    finally:
        await poller.stop()
        if app.running:
            await app.stop()
        await app.shutdown()
        await fake.stop()


async def telegram_quizbot(n: int, tmp: Path) -> dict[str, Any]:
    from bot.adapters.telegram import TelegramAdapter
    from bot.settings import Settings

    fake = TimedTelegram()
    await fake.start()
    storage, service = await _core(tmp, "tg")
    settings = Settings(_env_file=None, telegram_bot_token=fake.token,
                        telegram_api_base_url=fake.base_url)
    adapter = TelegramAdapter(service, settings)
    try:
        await adapter.start()
        group = fake.group(-100123, "Storm")
        host = fake.user(1001, "Host", language_code="en")
        before = len(fake.calls_of("sendMessage"))
        fake.command(group, host, "/quiz buttons")
        calls = await fake.wait_for("sendMessage", before + 1,
                                    where=lambda c: "reply_markup" in c.params)
        message = calls[-1].result
        ref = f"tg-msg:{message['chat']['id']}:{message['message_id']}"
        post_id = None
        for _ in range(200):  # bound just after the message is sent
            if (post_id := await service.post_id_for(ref)) is not None:
                break
            await asyncio.sleep(0.01)
        assert post_id is not None
        shown = await service.show(post_id)
        assert shown is not None
        data = [b["callback_data"] for row in message["reply_markup"]["inline_keyboard"]
                for b in row][shown.correct]
        return await storm_telegram(fake, message, data, n)
    finally:
        await adapter.stop()
        await storage.close()
        await fake.stop()


# the run --------------------------------------------------------------------------------
def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in runs[0]:
        values = [r[key] for r in runs if r[key] is not None]
        out[key] = statistics.median(values) if values else None
    out["runs"] = runs
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, nargs="+", default=[1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, default=Path("bench_storm.json"))
    parser.add_argument("--skip-telegram", action="store_true")
    parser.add_argument("--skip-discord", action="store_true")
    parser.add_argument("--tg-concurrency", type=int, default=100,
                        help="concurrent_updates of the bare PTB app (default 100)")
    args = parser.parse_args()
    global TG_CONCURRENCY
    TG_CONCURRENCY = args.tg_concurrency
    logging.basicConfig(level=logging.ERROR)

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        # kind, its floors (name, runner), quizbot's runner, what one storm event is called
        kinds: list[tuple[str, list[tuple[str, Any]], Any, str]] = []
        if not args.skip_discord:
            await question_shape(tmp)
            kinds.append(("discord", [("floor", discord_bare)], discord_quizbot, "clicks"))
        if not args.skip_telegram:
            kinds.append(("telegram", [("floor", telegram_bare),
                                       ("floor_poller", telegram_bare_poller)],
                          telegram_quizbot, "presses"))
        for kind, floors, ours, noun in kinds:
            for n in args.clicks:
                runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in floors}
                runs["quizbot"] = []
                for r in range(args.repeat):
                    for name, bare in floors:
                        runs[name].append(await bare(n))
                    runs["quizbot"].append(await ours(n, tmp))
                    print(f"  {kind} {n} run {r + 1}: " + ", ".join(
                        f"{name} p99 {runs[name][-1]['p99_s']} s" for name in runs)
                        + f" ({runs['quizbot'][-1]['answered']}/{n} answered by quizbot)",
                        flush=True)
                row: dict[str, Any] = {"kind": kind, "noun": noun, "n": n}
                row |= {name: median_of(found) for name, found in runs.items()}
                bot = row["quizbot"]
                met = kind != "discord" or bot["within_3s"] == n
                for name, _ in floors:
                    p99 = row[name]["p99_s"]
                    ratio = bot["p99_s"] / p99 if p99 and bot["p99_s"] else None
                    row["p99_ratio" + name.removeprefix("floor")] = ratio
                    met = met and ratio is not None and ratio <= GOAL
                row["goal_met"] = met
                rows.append(row)

    print(f"\n{'storm':28}{'':14}{'p50 s':>8}{'p99 s':>8}{'max s':>8}{'/s':>8}"
          f"{'answered':>10}{'in 3 s':>8}{'cpu ms':>8}")
    for row in rows:
        whos = [k for k in row if k.startswith("floor")] + ["quizbot"]
        for i, who in enumerate(whos):
            f = row[who]
            name = f"{row['kind']} {row['n']:,} {row['noun']}" if i == 0 else ""
            print(f"{name:28}{who:14}{f['p50_s']:8.2f}{f['p99_s']:8.2f}{f['max_s']:8.2f}"
                  f"{f['per_s']:8.0f}{int(f['answered']):>10,}{int(f['within_3s']):>8,}"
                  f"{f['cpu_ms_per_click']:8.2f}")
        goal = "p99 <= 1.2x floor" + (", all within 3 s" if row["kind"] == "discord" else "")
        for who in whos[:-1]:
            ratio = row["p99_ratio" + who.removeprefix("floor")]
            print(f"{'':28}{'ratio/' + who:22}{ratio or 0:8.2f}")
        print(f"{'':28}goal {goal}: {'met' if row['goal_met'] else 'NOT met'}")
    args.json.write_text(json.dumps({"repeat": args.repeat, "spread_s": SPREAD,
                                     "storms": rows}, indent=2) + "\n")
    print(f"written to {args.json}")


if __name__ == "__main__":
    asyncio.run(main())
