"""The permissions the bot asks for when a server invites it, and its invite link: one place,
which docs/setup-discord.md quotes (tests/test_discord_invite.py keeps the two equal).

Each permission is one the adapter uses in a channel; nothing is asked for "in case":
- View Channels and Send Messages: a question, a summary, a daily question, a live session;
- Embed Links: every question and its result is an embed;
- Attach Files: a question's card (code, formula, picture), a summary's and /analysis' chart,
  an explanation's picture, /mydata's file;
- Create Public Threads and Send Messages in Threads: a /peer round's discussion opens in a
  thread started from the question's message, and the bot writes its prompt there.
Replies to slash commands and buttons go through the interaction's webhook, which needs no
channel permission; direct messages need none either.
"""

from __future__ import annotations

import discord

SCOPES = ("bot", "applications.commands")
PERMISSIONS = discord.Permissions(
    view_channel=True, send_messages=True, embed_links=True, attach_files=True,
    create_public_threads=True, send_messages_in_threads=True,
)


def invite_url(application_id: int) -> str:
    return discord.utils.oauth_url(application_id, permissions=PERMISSIONS, scopes=SCOPES)
