"""A typed answer delivered twice is answered once, through the real python-telegram-bot and
the fake Bot API: the same message again (in an update of its own, in this process or after
a restart) and the same update again (a webhook's delivery repeated) record one answer and
send one reply. A second message of the person's own is no repeat: it is told that the first
answer is final. A reply whose send failed is not lost: Telegram's next delivery of the update
brings the verdict."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.content import Catalog, load_catalog
from bot.core.ports import Storage
from bot.core.service import QuizService
from bot.settings import Settings
from tests.behaviour.telegram import webhook_settings
from tests.clock import FakeClock
from tests.errorlog import ErrorLog
from tests.telegram_e2e.conftest import Harness

KINDS = Path(__file__).parent.parent / "data" / "kinds" / "kinds.yaml"
RIGHT = "0.4"  # k-num's answer (GB)
FINAL = "Your first answer is final."


@pytest.fixture
def typed_catalog(tmp_path: Path) -> Catalog:
    """The kinds pack's numeric question as a quiz of its own, `num`."""
    pack = yaml.safe_load(KINDS.read_text(encoding="utf-8"))
    [question] = [q for q in pack["questions"] if q["id"] == "k-num"]
    one = {"id": "num", "title": {"en": "Numbers", "bn": "সংখ্যা", "hi": "संख्या"},
           "questions": [question]}
    (tmp_path / "num.yaml").write_text(yaml.safe_dump(one, allow_unicode=True),
                                       encoding="utf-8")
    return load_catalog(tmp_path)


@pytest.fixture
def service(typed_catalog: Catalog, storage: Storage, clock: FakeClock) -> QuizService:
    return QuizService(typed_catalog, storage, clock, random.Random(5))


def message_of(tg: Harness, update_id: int) -> dict[str, Any]:
    update = next(u for u in tg.fake._all_updates if u["update_id"] == update_id)
    message: dict[str, Any] = update["message"]
    return message


def replies_to(tg: Harness, message: dict[str, Any]) -> list[str]:
    """What the bot sent quoting `message`."""
    return [c.params["text"] for c in tg.fake.calls_of("sendMessage")
            if c.params["chat_id"] == message["chat"]["id"]
            and (c.params.get("reply_parameters") or {}).get("message_id")
            == message["message_id"]]


async def question(tg: Harness, chat: dict[str, Any], who: dict[str, Any]) -> tuple[int, Any]:
    """/quiz num: its post and the message that shows it."""
    before = len(tg.fake.calls_of("sendMessage"))
    await tg.command(chat, who, "/quiz num")
    [sent] = [c for c in tg.fake.calls_of("sendMessage")[before:]
              if c.params.get("reply_markup")]
    return await tg.post_of(sent.result), sent.result


async def answers(tg: Harness, post_id: int) -> int:
    return len(await tg.service.storage.answers_for_post(post_id))


async def test_the_same_message_again_is_answered_once(
    tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any]
) -> None:
    post_id, _ = await question(tg, alice_dm, alice)
    first = tg.fake.say(alice_dm, alice, RIGHT)
    await tg.send(first)
    typed = message_of(tg, first)
    [reply] = replies_to(tg, typed)
    assert "Correct" in reply
    await tg.send(tg.fake.redeliver(first))  # in this process
    await tg.restart()
    await tg.send(tg.fake.redeliver(first))  # a new process: only the database remembers
    assert replies_to(tg, typed) == [reply]
    assert await answers(tg, post_id) == 1


async def test_a_groups_reply_again_is_answered_once_and_a_new_message_is_told(
    tg: Harness, alice: dict[str, Any], bob: dict[str, Any], group: dict[str, Any]
) -> None:
    post_id, shown = await question(tg, group, alice)
    first = tg.fake.reply(shown, bob, RIGHT)
    await tg.send(first)
    typed = message_of(tg, first)
    [reply] = replies_to(tg, typed)
    await tg.restart()
    await tg.send(tg.fake.redeliver(first))
    assert replies_to(tg, typed) == [reply]
    # a message of Bob's own after his answer: told, and his first answer stands
    second = tg.fake.reply(shown, bob, "0.9")
    await tg.send(second)
    [told] = replies_to(tg, message_of(tg, second))
    assert FINAL in told
    [answer] = await tg.service.storage.answers_for_post(post_id)
    assert answer.correct
    # a refusal is a reply like any other: its message again is not told twice
    await tg.send(tg.fake.redeliver(second))
    assert replies_to(tg, message_of(tg, second)) == [told]


class TestTheSameUpdateAgain:
    """Webhook deliveries: Telegram sends the very same update (its update_id) again when
    the bot did not answer 200 in time, or answered 500."""

    @pytest.fixture
    def tg_settings(self, tg_settings: Settings) -> Settings:
        return tg_settings.model_copy(update=webhook_settings())

    async def test_sent_again_while_it_runs_it_is_answered_once(
        self, tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any]
    ) -> None:
        post_id, _ = await question(tg, alice_dm, alice)
        tg.fake.delivery_timeout = 0.3  # Telegram gives up waiting, and sends it again
        tg.fake.delay_next("sendMessage", 1.0)
        update = tg.fake.say(alice_dm, alice, RIGHT)
        await tg.send(update)
        deliveries = tg.fake.deliveries_of(update)
        assert len(deliveries) >= 2 and deliveries[-1].status == 200
        assert len(replies_to(tg, message_of(tg, update))) == 1
        assert await answers(tg, post_id) == 1

    async def test_a_reply_that_failed_comes_with_the_next_delivery(
        self, tg: Harness, alice: dict[str, Any], alice_dm: dict[str, Any],
        error_log: ErrorLog,
    ) -> None:
        error_log.allow("handling update")
        post_id, _ = await question(tg, alice_dm, alice)
        # every try of the reply fails (the sends' own retries too: app.py)
        tg.fake.fail_next("sendMessage", status=500, description="Internal Server Error",
                          times=4)
        update = tg.fake.say(alice_dm, alice, RIGHT)
        await tg.send(update)
        statuses = [d.status for d in tg.fake.deliveries_of(update)]
        assert (statuses[0] or 0) >= 500 and statuses[-1] == 200, statuses  # failed, sent again
        [reply] = replies_to(tg, message_of(tg, update))  # the verdict, once
        assert FINAL in reply and "Correct" in reply
        assert await answers(tg, post_id) == 1
