"""Start-up: login, gateway, command registration, timeouts, and the token kept out of logs."""

from __future__ import annotations

import logging

import pytest

from bot.adapters import ConnectionLost, CredentialsRejected
from bot.adapters.discord import DiscordAdapter
from bot.adapters.discord.invite import PERMISSIONS
from bot.core.service import QuizService
from tests.discord_e2e.conftest import StartBot
from tests.fakes.discord_api import MANAGE_GUILD, TOKEN, FakeDiscord, User

COMMANDS = {"quiz", "leaderboard", "stats", "review", "remind", "lang", "daily", "settings",
            "report", "analysis", "reports", "help", "mydata", "review-export",
            "dashboard", "assign", "unassign", "host", "peer", "next", "pause", "skip", "end"}


async def test_start_registers_slash_commands_globally(
    fake: FakeDiscord, bot: DiscordAdapter
) -> None:
    puts = fake.find("PUT", rf"/applications/{fake.app_id}/commands")
    assert len(puts) == 1
    commands = {c["name"]: c for c in puts[0].json}
    assert set(commands) == COMMANDS
    quiz_options = {o["name"]: o for o in commands["quiz"]["options"]}
    assert quiz_options["quiz"]["autocomplete"] is True
    assert quiz_options["run"]["type"] == 5  # boolean
    assert quiz_options["questions"]["type"] == 4  # integer: a round's size, checked by the core
    # /settings shows the channel's settings to anyone; a change checks Manage Server when run
    settings = {o["name"]: o for o in commands["settings"]["options"]}
    assert settings["time"]["type"] == 3  # a time as typed: "90", "10m", "2h", "3d"
    # no mode: Discord's questions always come with buttons (issue 18)
    assert "mode" not in settings
    assert [c["value"] for c in settings["quiz"]["choices"]] == ["admins", "anyone"]
    assert commands["settings"].get("default_member_permissions") is None
    # /analysis is hidden from members without Manage Server; the core checks it when run
    assert int(commands["analysis"]["default_member_permissions"]) == MANAGE_GUILD
    assert int(commands["reports"]["default_member_permissions"]) == MANAGE_GUILD
    assert int(commands["dashboard"]["default_member_permissions"]) == MANAGE_GUILD
    assert settings["chart"]["type"] == 5  # boolean
    period = next(o for o in commands["leaderboard"]["options"] if o["name"] == "period")
    assert [c["value"] for c in period["choices"]] == ["day", "week", "all"]
    # /lang scope:me is for everyone: the command is not hidden, the channel scope is checked
    assert commands["lang"].get("default_member_permissions") is None
    # /daily is hidden from members without Manage Server by default (the group carries it:
    # Discord ignores it on subcommands); set and off check it again when they run
    daily = commands["daily"]
    assert int(daily["default_member_permissions"]) == MANAGE_GUILD
    subcommands = {o["name"]: o for o in daily["options"]}
    assert set(subcommands) == {"set", "off", "status"}
    assert all("default_member_permissions" not in o for o in subcommands.values())
    set_options = {o["name"]: o for o in subcommands["set"]["options"]}
    assert set_options["time"]["required"] is True
    assert set_options["timezone"]["autocomplete"] and set_options["quiz"]["autocomplete"]
    assert (set_options["minutes"]["min_value"], set_options["minutes"]["max_value"]) == \
        (1, 1440)
    assert not fake.find("PUT", r"/applications/\d+/guilds/\d+/commands")
    assert fake.identify_tokens == [TOKEN]
    assert bot.client is not None and bot.client.is_ready()


async def test_guild_id_syncs_to_that_server_only(fake: FakeDiscord, start_bot: StartBot) -> None:
    await start_bot(settings={"discord_guild_id": fake.guild_id})
    puts = fake.find("PUT", rf"/applications/{fake.app_id}/guilds/{fake.guild_id}/commands")
    assert len(puts) == 1
    assert {c["name"] for c in puts[0].json} == COMMANDS
    assert not fake.find("PUT", rf"/applications/{fake.app_id}/commands")


async def test_start_fails_cleanly_when_the_gateway_never_gets_ready(
    fake: FakeDiscord, start_bot: StartBot
) -> None:
    fake.hold_ready = True
    with pytest.raises(ConnectionLost, match="DISCORD_GATEWAY_URL"):
        await start_bot(ready_timeout=0.3)
    await fake.until(lambda: not fake.connected, 2.0, "the gateway connection to close")


async def test_a_wrong_token_fails_login_and_leaves_nothing_running(
    fake: FakeDiscord, start_bot: StartBot
) -> None:
    with pytest.raises(CredentialsRejected):
        await start_bot(settings={"discord_bot_token": "not-the-token"})
    assert not fake.identify_tokens and not fake.connected


async def test_the_token_never_appears_in_logs(
    fake: FakeDiscord, start_bot: StartBot, service: QuizService, alice: User,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    bot = await start_bot()
    reply = await fake.reply(await fake.slash("quiz", user=alice))
    await fake.reply(await fake.click(reply.id, reply.buttons[0]["custom_id"], user=alice))
    await bot.stop()
    assert len(caplog.records) > 20  # discord.py did log, at DEBUG, and the token is not there
    assert not [r for r in caplog.records if TOKEN in r.getMessage()]
    assert TOKEN not in caplog.text


async def test_start_logs_the_invite_link_with_the_permissions_it_uses(
    fake: FakeDiscord, start_bot: StartBot, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="bot")
    await start_bot()
    [line] = [r.getMessage() for r in caplog.records if "invite the bot" in r.getMessage()]
    link = line.rsplit(" ", 1)[1]
    assert link.startswith("https://discord.com/oauth2/authorize?")
    assert f"client_id={fake.app_id}" in link
    assert f"permissions={PERMISSIONS.value}" in link
    assert "scope=bot+applications.commands" in link


async def test_stop_and_start_again_uses_a_fresh_client(
    fake: FakeDiscord, start_bot: StartBot
) -> None:
    first = await start_bot()
    old_client = first.client
    await first.stop()
    await fake.until(lambda: not fake.connected, 2.0, "the first connection to close")
    second = await start_bot()
    assert second.client is not None and second.client is not old_client
    assert second.client.is_ready()
    assert fake.identify_tokens == [TOKEN, TOKEN]
