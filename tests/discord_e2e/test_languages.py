"""Languages on Discord: localised command descriptions at sync, and the same /quiz end to end
in English, Bengali and Hindi with the bundled packs."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from typing import Any

import pytest

from bot.adapters.discord import DiscordAdapter, localize
from bot.adapters.discord.embeds import plain
from bot.content import load_catalog
from bot.core.models import Chat
from bot.core.render import heading
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from bot.i18n import translator
from bot.storage import SqliteStorage
from tests.clock import FakeClock
from tests.conftest import BUNDLED
from tests.discord_e2e.conftest import StartBot
from tests.discord_e2e.helpers import bound_post, click, wrong
from tests.fakes.discord_api import MANAGE_GUILD, FakeDiscord, User, buttons_of, text_of


def synced(fake: FakeDiscord) -> list[dict[str, Any]]:
    [put] = fake.find("PUT", rf"/applications/{fake.app_id}/commands")
    body: list[dict[str, Any]] = put.json
    return body


def walk(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every command, subcommand and option in a synced body."""
    for item in items:
        yield item
        yield from walk(item.get("options") or [])


async def test_descriptions_and_choices_carry_the_hindi_catalog(
    fake: FakeDiscord, bot: DiscordAdapter
) -> None:
    """Whatever the catalogs hold today: a Hindi entry where the catalog translates the
    English msgid, none where it does not (Discord then shows English)."""
    hindi = translator("hi")
    items = list(walk(synced(fake)))
    assert {i["name"] for i in items} >= {"quiz", "daily", "set", "timezone", "scope"}
    checked = 0
    for item in items:
        expected = hindi.gettext(item["description"])
        localised = item.get("description_localizations") or {}
        assert localised.get("hi") == (expected if expected != item["description"] else None)
        assert set(localised) <= {"hi"}, "no Bengali (Discord has none) and no English copies"
        assert not item.get("name_localizations"), "names stay English"
        for choice in item.get("choices") or []:
            expected = hindi.gettext(choice["name"])
            names = choice.get("name_localizations") or {}
            assert names.get("hi") == (expected if expected != choice["name"] else None)
            checked += 1
        checked += 1
    assert checked > 25


class StubCatalog:
    """A Hindi catalog with two entries, one of them too long for Discord."""

    TOO_LONG = "अ" * 101

    def gettext(self, message: str) -> str:
        return {
            "A question now, or a whole quiz just for you": "अभी एक सवाल",
            "this week": "इस हफ़्ते",
            "Your answers, accuracy and streaks": self.TOO_LONG,
        }.get(message, message)


async def test_the_translator_sends_hindi_and_keeps_english_for_what_does_not_fit(
    fake: FakeDiscord, start_bot: StartBot, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(localize, "translator",
                        lambda code: StubCatalog() if code == "hi" else translator(code))
    caplog.set_level(logging.WARNING, logger=localize.__name__)
    await start_bot()
    commands = {c["name"]: c for c in synced(fake)}
    assert commands["quiz"]["description_localizations"] == {"hi": "अभी एक सवाल"}
    period = next(o for o in commands["leaderboard"]["options"] if o["name"] == "period")
    week = next(c for c in period["choices"] if c["value"] == "week")
    assert week["name_localizations"] == {"hi": "इस हफ़्ते"}
    # too long: left out (the fake, like Discord, would refuse the whole sync with a 400)
    assert not commands["stats"]["description_localizations"]
    assert "over Discord's 100" in caplog.text
    assert not commands["review"]["description_localizations"]  # not translated: English


@pytest.fixture
async def bundled(storage: SqliteStorage, clock: FakeClock) -> QuizService:
    return QuizService(load_catalog(BUNDLED), storage, clock, random.Random(3))


@pytest.mark.parametrize("locale", ["en", "bn", "hi"])
async def test_the_same_quiz_in_each_language(
    fake: FakeDiscord, start_bot: StartBot, bundled: QuizService, clock: FakeClock,
    alice: User, bob: User, locale: str,
) -> None:
    """The channel's language (set with /lang scope:channel) for what the channel sees; what
    one person reads alone, in their Discord's language. The bundled packs are complete in
    all three."""
    await start_bot(service=bundled)
    done = await fake.reply(await fake.slash("lang", {"code": locale, "scope": "channel"},
                                             user=bob, permissions=MANAGE_GUILD))
    assert done.ephemeral
    assert await bundled.locales.for_audience(Chat(f"dc:{fake.channel_id}")) == locale

    reply = await fake.reply(await fake.slash("quiz", {"quiz": "gradient-accumulation"},
                                              user=alice))
    post_id = await bound_post(bundled, reply.id)
    q = await bundled.questions.show(post_id)
    assert q is not None and q.locale == locale
    question = bundled.catalog.question(q.quiz_id, q.question_id)
    quiz = bundled.catalog.quizzes[q.quiz_id]
    for text in (quiz.title, question.prompt, question.explanation,
                 *(o.text for o in question.options)):
        assert getattr(text, locale), f"the pack lacks {locale}"  # no English fallback here
    [embed] = reply.embeds
    assert embed["title"] == heading(q, translator(locale))
    assert quiz.title.get(locale) in embed["title"]
    # content is shown literally: Markdown characters (zero_grad) arrive escaped
    assert plain(question.prompt.get(locale)) in embed["description"]
    for option in question.options:
        assert plain(option.text.get(locale)) in embed["description"]
    assert translator(locale).ngettext("{n} answer so far", "{n} answers so far", 0) \
        in embed["footer"]["text"]

    right = await click(fake, reply, q.correct, alice)  # read by her alone: her en-US
    assert right.ephemeral and plain(question.explanation.get("en")) in right.content
    await click(fake, reply, wrong(q), bob)

    clock.advance(seconds=601)
    await Scheduler(bundled).tick()
    assert all(b.get("disabled") for b in buttons_of(fake.messages[reply.id]))
    closing = text_of(fake.messages[reply.id])
    correct_text = question.options[question.answer].text.get(locale)
    assert plain(correct_text) in closing
    assert plain((question.details or question.explanation).get(locale)) in closing
    assert translator(locale).ngettext("{n} person answered", "{n} people answered", 2) \
        in closing
    if locale != "en":
        assert question.prompt.en is not None
        assert question.prompt.en not in closing


async def test_a_hindi_discord_client_gets_hindi_replies_without_choosing(
    fake: FakeDiscord, start_bot: StartBot, bundled: QuizService, alice: User,
) -> None:
    """No /lang anywhere: the ephemeral reply follows the person's Discord language, while the
    question itself follows the server's."""
    await start_bot(service=bundled)
    reply = await fake.reply(await fake.slash("quiz", {"quiz": "gradient-accumulation"},
                                              user=alice))
    q = await bundled.questions.show(await bound_post(bundled, reply.id))
    assert q is not None and q.locale == "en"
    it = await fake.click(reply.id, reply.buttons[q.correct]["custom_id"], user=alice,
                          locale="hi")
    answer = await fake.reply(it)
    question = bundled.catalog.question(q.quiz_id, q.question_id)
    assert plain(question.explanation.get("hi")) in answer.content
