"""The Discord invite's permissions (bot/adapters/discord/invite.py): the number
docs/setup-discord.md and the README give is discord.py's value of the flags, the page lists
each one, and every permission the adapter's calls need is among them."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import discord

from bot.adapters.discord.invite import PERMISSIONS, SCOPES, invite_url

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "setup-discord.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
ADAPTER = ROOT / "bot" / "adapters" / "discord"
# a call in the adapter -> the permission the bot needs in the channel for it
NEEDS = {
    r"start_thread_with_message|create_thread": "create_public_threads",
    r"discord\.File\(": "attach_files",
    r"embed=|discord\.Embed\(": "embed_links",
    r"channel\.send\(|get_partial_messageable\(": "send_messages",
}
# the Developer Portal's and Discord's names of the flags
SHOWN = {"view_channel": "View Channels", "send_messages": "Send Messages",
         "embed_links": "Embed Links", "attach_files": "Attach Files",
         "create_public_threads": "Create Public Threads",
         "send_messages_in_threads": "Send Messages in Threads"}


def test_the_guide_gives_the_permissions_integer_of_the_flags() -> None:
    assert PERMISSIONS.value == discord.Permissions(**dict.fromkeys(SHOWN, True)).value
    numbers = set(re.findall(r"permissions=(\d+)", GUIDE)) | set(
        re.findall(r"\*\*Permissions\*\* `(\d+)`", GUIDE))
    assert numbers == {str(PERMISSIONS.value)}
    assert set(re.findall(r"permissions `(\d+)`", README)) == {str(PERMISSIONS.value)}


def test_the_guide_lists_each_permission_and_nothing_else() -> None:
    rows = set(re.findall(r"^\| ([A-Z][A-Za-z ]+) \|", GUIDE, re.M)) - {"permission"}
    assert rows == set(SHOWN.values())


def test_the_invite_link_has_both_scopes() -> None:
    query = parse_qs(urlsplit(invite_url(1234)).query)
    assert query["client_id"] == ["1234"] and query["permissions"] == [str(PERMISSIONS.value)]
    assert query["scope"] == [" ".join(SCOPES)] and set(SCOPES) == {"bot", "applications.commands"}
    assert "scope=bot+applications.commands" in GUIDE


def test_every_permission_the_adapters_calls_need_is_asked_for() -> None:
    code = "\n".join(p.read_text(encoding="utf-8") for p in ADAPTER.glob("*.py"))
    needed = {permission for pattern, permission in NEEDS.items() if re.search(pattern, code)}
    assert needed == set(NEEDS.values())  # each pattern still finds its call: none went stale
    assert all(getattr(PERMISSIONS, permission) for permission in needed)
    if "start_thread_with_message" in code:
        assert PERMISSIONS.send_messages_in_threads  # the prompt written in the thread
