"""The fake Discord API refuses what Discord refuses (tests/fakes/discord_limits.py), with
Discord's answer: 400, code 50035 "Invalid Form Body" and the field's nested errors, so a
bot that breaks a limit fails in these tests as it would in production."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import discord
import pytest

from bot.adapters.discord import DiscordAdapter
from tests.fakes.discord_api import MESSAGE_COMPONENT, TOKEN, FakeDiscord, User
from tests.fakes.discord_limits import IS_COMPONENTS_V2

ROW = {"type": 1, "components": [{"type": 2, "style": 1, "label": "A", "custom_id": "a"}]}


@pytest.fixture
async def http(fake: FakeDiscord) -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(headers={"Authorization": f"Bot {TOKEN}"}) as session:
        yield session


async def post(http: aiohttp.ClientSession, fake: FakeDiscord,
               body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    async with http.post(f"{fake.api_base}/channels/{fake.channel_id}/messages",
                         json=body) as response:
        return response.status, await response.json()


def leaf(errors: dict[str, Any], path: str) -> dict[str, Any]:
    """The error at a dotted path of Discord's nested errors object."""
    found: Any = errors
    for key in path.split("."):
        found = found[key]
    [error] = found["_errors"]
    assert set(error) == {"code", "message"}
    return dict(error)


def button(custom_id: str, label: str = "A", style: int = 1) -> dict[str, Any]:
    return {"type": 2, "style": style, "label": label, "custom_id": custom_id}


def select(options: int, *, low: int = 1, high: int = 1) -> dict[str, Any]:
    return {"type": 1, "components": [{
        "type": 3, "custom_id": "s", "min_values": low, "max_values": high,
        "options": [{"label": f"o{i}", "value": str(i)} for i in range(options)]}]}


REFUSED = [
    ({"content": "x" * 2001}, "content"),
    ({"components": [ROW] * 6}, "components"),
    ({"components": [{"type": 1, "components": [button(str(i)) for i in range(6)]}]},
     "components.0.components"),
    ({"components": [{"type": 1, "components": [button("x" * 101)]}]},
     "components.0.components.0.custom_id"),
    ({"components": [{"type": 1, "components": [button("a"), button("a")]}]},
     "components.0.components.1.custom_id"),
    ({"components": [{"type": 1, "components": [button("a", "L" * 81)]}]},
     "components.0.components.0.label"),
    ({"components": [select(26, high=1)]}, "components.0.components.0.options"),
    ({"components": [select(3, high=4)]}, "components.0.components.0.max_values"),
    ({"components": [select(3, low=3, high=2)]}, "components.0.components.0.min_values"),
    ({"components": [select(3, low=-1)]}, "components.0.components.0.min_values"),
    ({"components": [{"type": 1, "components": [select(2)["components"][0], button("b")]}]},
     "components.0.components"),
    ({"components": [{"type": 10, "content": "hi"}]}, "components.0.type"),  # no V2 flag
    ({"embeds": [{"description": "d" * 4097}]}, "embeds.0.description"),
    ({"embeds": [{"description": "d" * 4000}, {"description": "d" * 2001}]}, "embeds"),
    ({"attachments": [{"id": 0, "filename": "a.png", "description": "d" * 1025}]},
     "attachments.0.description"),
    # Components V2
    ({"flags": IS_COMPONENTS_V2, "content": "hi", "components": [
        {"type": 10, "content": "x"}]}, "content"),
    ({"flags": IS_COMPONENTS_V2, "embeds": [{"title": "t"}], "components": [
        {"type": 10, "content": "x"}]}, "embeds"),
    ({"flags": IS_COMPONENTS_V2, "components": [{"type": 10, "content": "x"}] * 41},
     "components"),
    ({"flags": IS_COMPONENTS_V2, "components": [
        {"type": 17, "components": [{"type": 10, "content": "x" * 2000}] * 2
         + [{"type": 10, "content": "y"}]}]}, "components"),
    ({"flags": IS_COMPONENTS_V2, "components": [
        {"type": 17, "components": [{"type": 17, "components": [
            {"type": 10, "content": "x"}]}]}]}, "components.0.components.0.type"),
    ({"flags": IS_COMPONENTS_V2, "components": [
        {"type": 9, "components": [{"type": 10, "content": "x"}]}]},
     "components.0.accessory"),
    ({"flags": IS_COMPONENTS_V2, "components": [
        {"type": 12, "items": [{"media": {"url": "attachment://a.png"},
                                "description": "d" * 1025}]}]},
     "components.0.items.0.description"),
]


@pytest.mark.parametrize(("body", "path"), REFUSED)
async def test_a_message_over_a_limit_is_refused_as_discord_does(
    fake: FakeDiscord, http: aiohttp.ClientSession, body: dict[str, Any], path: str
) -> None:
    before = len(fake.messages)
    status, answer = await post(http, fake, body)
    assert status == 400
    assert answer["code"] == 50035 and answer["message"] == "Invalid Form Body"
    assert leaf(answer["errors"], path)["message"]
    assert len(fake.messages) == before  # nothing was created


async def test_messages_within_the_limits_are_taken(
    fake: FakeDiscord, http: aiohttp.ClientSession
) -> None:
    v2: dict[str, Any] = {"flags": IS_COMPONENTS_V2, "components": [{"type": 17, "components": [
        {"type": 10, "content": "x" * 3990},
        {"type": 9, "components": [{"type": 10, "content": "y"}],
         "accessory": button("b")},
        {"type": 12, "items": [{"media": {"url": "attachment://a.png"},
                                "description": "d" * 1024}]},
        {"type": 1, "components": [button(str(i)) for i in range(5)]},
    ]}] + [{"type": 14}] * 28}  # 40 components in all: 12 in the container, 28 separators
    rows = [{"type": 1, "components": [button(f"{r}{i}") for i in range(5)]} for r in range(4)]
    for body in ({"content": "x" * 2000, "components": [*rows, select(25, high=25)]}, v2):
        status, answer = await post(http, fake, body)
        assert status == 200, answer
    over = v2 | {"components": [*v2["components"], {"type": 14}]}
    assert (await post(http, fake, over))[0] == 400


async def test_a_v2_message_keeps_the_flag_and_refuses_content_in_an_edit(
    fake: FakeDiscord, http: aiohttp.ClientSession
) -> None:
    status, created = await post(http, fake, {"flags": IS_COMPONENTS_V2, "components": [
        {"type": 10, "content": "x"}]})
    assert status == 200
    url = f"{fake.api_base}/channels/{fake.channel_id}/messages/{created['id']}"
    async with http.patch(url, json={"content": "now text"}) as response:
        assert response.status == 400
        assert leaf((await response.json())["errors"], "content")


async def modal_callback(fake: FakeDiscord, http: aiohttp.ClientSession,
                         data: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    clicked = fake.post_message(fake.channel_id, "a question")
    payload = fake._base_interaction(MESSAGE_COMPONENT, User(1, "Alice"), dm=False,
                                     channel_id=None, permissions=None, locale=None,
                                     guild_locale="en-US")
    payload |= {"message": clicked, "data": {"custom_id": "x", "component_type": 2}}
    it = await fake.dispatch_interaction(payload, within=0)  # no bot: only recorded
    async with http.post(f"{fake.api_base}/interactions/{it.id}/{it.token}/callback",
                         params={"with_response": "1"},
                         json={"type": 9, "data": data}) as response:
        return response.status, await response.json()


def text_input(**extra: Any) -> dict[str, Any]:
    return {"type": 18, "label": "Your answer",
            "component": {"type": 4, "custom_id": "answer", "style": 1} | extra}


MODALS_REFUSED = [
    ({"custom_id": "m", "title": "T" * 46, "components": [text_input()]}, "data.title"),
    ({"custom_id": "m" * 101, "title": "T", "components": [text_input()]}, "data.custom_id"),
    ({"custom_id": "m", "title": "T", "components": []}, "data.components"),
    ({"custom_id": "m", "title": "T", "components": [text_input()] * 6}, "data.components"),
    ({"custom_id": "m", "title": "T", "components": [text_input(max_length=4001)]},
     "data.components.0.component.max_length"),
    ({"custom_id": "m", "title": "T", "components": [text_input(placeholder="p" * 101)]},
     "data.components.0.component.placeholder"),
    ({"custom_id": "m", "title": "T", "components": [
        text_input() | {"label": "L" * 46}]}, "data.components.0.label"),
    ({"custom_id": "m", "title": "T", "components": [text_input(label="own")]},
     "data.components.0.component.label"),
]


@pytest.mark.parametrize(("data", "path"), MODALS_REFUSED)
async def test_a_modal_over_a_limit_is_refused(
    fake: FakeDiscord, http: aiohttp.ClientSession, data: dict[str, Any], path: str
) -> None:
    status, answer = await modal_callback(fake, http, data)
    assert status == 400 and answer["code"] == 50035
    assert leaf(answer["errors"], path)


async def test_a_modal_within_the_limits_opens(
    fake: FakeDiscord, http: aiohttp.ClientSession
) -> None:
    status, answer = await modal_callback(fake, http, {
        "custom_id": "m" * 100, "title": "T" * 45,
        "components": [text_input(max_length=4000, placeholder="p" * 100)
                       | {"component": {"type": 4, "custom_id": f"t{i}", "max_length": 4000,
                                      "label": None}}  # discord.py sends a null label
                       for i in range(5)]})
    assert status == 200 and answer["interaction"]


async def test_discord_py_sees_the_refusal_with_its_field(
    fake: FakeDiscord, bot: DiscordAdapter
) -> None:
    """What the bot would log: discord.py's HTTPException names the field."""
    assert bot.client is not None
    channel = bot.client.get_partial_messageable(fake.channel_id)
    with pytest.raises(discord.HTTPException) as refused:
        await channel.send(file=discord.File(io.BytesIO(b"png"), "a.png",
                                             description="d" * 1025))
    assert refused.value.status == 400 and refused.value.code == 50035
    assert "attachments.0.description" in str(refused.value)
