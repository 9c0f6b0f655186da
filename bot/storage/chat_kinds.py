"""What kind of chat a platform says a chat is ("group", "supergroup", "channel"), stored with
the chat, so a process that never saw the chat (after a restart, or another process) decides
polls or buttons without asking the platform: a lookup spends the send budget (issue 36).
"""

from __future__ import annotations

from bot.storage.sql import Sql


async def chat_kind(db: Sql, key: str) -> str | None:
    """The kind last seen for the chat (None: never seen, or not stored)."""
    row = await db.row("SELECT kind FROM chats WHERE key = $1", key)
    return None if row is None or row[0] is None else str(row[0])


async def set_chat_kind(db: Sql, key: str, kind: str) -> None:
    """Store the chat's kind, creating the chat if it is new (its title comes with its first
    command or post)."""
    await db.run(
        "INSERT INTO chats(key, kind) VALUES ($1, $2)"
        " ON CONFLICT (key) DO UPDATE SET kind = excluded.kind",
        key, kind,
    )
