"""Load: 500 people answer one live question at once, on each platform, through the real
library and its fake, on a real database: every answer stored once, and the distribution
the chat is shown equals a recount of the stored answers."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from bot.core.service import QuizService
from tests.behaviour.discord import discord_harness
from tests.behaviour.telegram import telegram_harness
from tests.clock import FakeClock
from tests.errorlog import failing_on_errors

pytestmark = pytest.mark.slow

PLAYERS = 500
# seconds for a burst of 500 updates to be handled: a bound for a stuck bot, not a speed (4
# test workers share 2 cores in CI)
BURST_WITHIN = 60.0


async def check_once_and_recount(service: QuizService, post_id: int, shown: str) -> None:
    answers = await service.storage.answers_for_post(post_id)
    assert len(answers) == PLAYERS == len({a.person_key for a in answers})
    question = await service.questions.show(post_id)
    assert question is not None
    post = await service.storage.get_post(post_id)
    assert post is not None
    recount = Counter(post.order.index(a.option) for a in answers)
    # the reveal's line of answers per letter: "A 167 · B 167 · C 166 ✓"
    (line,) = [x for x in shown.splitlines() if x.startswith("A ") and " · B " in x]
    counts = [part.split()[1] for part in line.split(" · ")]
    assert counts == [f"{recount[i]:,}" for i in range(len(question.options))], (line, recount)


async def test_500_answers_on_telegram(service: QuizService, clock: FakeClock) -> None:
    with failing_on_errors("telegram", "bot", "aiohttp"):
        async with telegram_harness(service, clock) as h:
            fake, group, host = h.fake, h.group(), h.person(1)
            h.make_admin(host)
            people = [fake.user(5000 + i, f"P{i}") for i in range(PLAYERS)]
            fake.command(group, host, "/host sample 1")
            await h._settle()
            lobby = next(c.result for c in reversed(fake.calls)
                         if c.ok and c.method == "sendMessage" and "reply_markup" in c.params)
            for p in people:
                fake.press(lobby, p, "lj")
            await h._settle(within=BURST_WITHIN)
            fake.command(group, host, "/next")
            await h._settle()
            call = fake.calls_of("sendMessage")[-1]
            data = call.params["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
            post_id = int(data.split(":")[1])
            options = sum(len(r) for r in call.params["reply_markup"]["inline_keyboard"])
            start = len(fake.calls)
            for i, p in enumerate(people):
                fake.press(call.result, p, f"la:{post_id}:{i % options}")
            await h._settle(within=BURST_WITHIN)
            (reveal,) = [c.params["text"] for c in fake.calls[start:]
                         if c.ok and c.method == "sendMessage"]
            await check_once_and_recount(service, post_id, reveal)


async def test_500_answers_on_discord(service: QuizService, clock: FakeClock) -> None:
    with failing_on_errors("discord", "bot", "aiohttp"):
        async with discord_harness(service, clock) as h:
            fake, host = h.fake, h.person(1)
            h.make_admin(host)
            channel = h.group().channel_id
            people = [h.person(10 + i) for i in range(PLAYERS)]

            async def slash(name: str, **options: object) -> int:
                it = await fake.slash(name, options, user=host, channel_id=channel,
                                      permissions=h._permissions(host))
                return (await fake.reply(it, within=30)).id

            lobby = await slash("host", quiz="sample", questions=1)
            joins = await asyncio.gather(*(fake.click(lobby, "lv:join", user=p) for p in people))
            await asyncio.gather(*(fake.reply(it, within=60) for it in joins))
            question = await slash("next")
            buttons = [c["custom_id"] for row in fake.messages[question]["components"]
                       for c in row["components"]]
            post_id = int(buttons[0].split(":")[1])
            before = max(fake.messages)
            clicks = await asyncio.gather(*(
                fake.click(question, buttons[i % len(buttons)], user=p)
                for i, p in enumerate(people)))
            await asyncio.gather(*(fake.reply(it, within=60) for it in clicks))
            await fake.until(lambda: any(k > before and not m.get("interaction")
                                         and "Question closed" in (m.get("content") or "")
                                         for k, m in fake.messages.items()), 30, "the reveal")
            reveal = next(m["content"] for k, m in sorted(fake.messages.items())
                          if k > before and "Question closed" in (m.get("content") or ""))
            await check_once_and_recount(service, post_id, reveal)
