"""Discord users and channels as core values, and the message references bound to posts."""

from __future__ import annotations

import discord

from bot.core.models import Chat, Person

PREFIX = "dc:"
MESSAGE_REF = "dc-msg:"


def person_of(interaction: discord.Interaction) -> Person:
    user = interaction.user
    return Person(f"{PREFIX}{user.id}", user.display_name, platform_locale=str(interaction.locale))


def channel_title(server: str | None, channel: str | None) -> str:
    """How an organiser tells channels apart (the dashboard, `quizbot chats`, /mydata): many
    servers have a #general, so the server's name comes first when it is known."""
    if not channel:
        return server or ""
    return f"{server} #{channel}" if server else f"#{channel}"


def chat_of(interaction: discord.Interaction) -> Chat:
    """The channel as a chat; a DM (no guild) is private and titled after the person. The
    server's language is the platform's language for the channel."""
    private = interaction.guild_id is None
    name = getattr(interaction.channel, "name", None)
    if private:
        title = name or f"@{interaction.user.name}"
    else:  # the guild's name is cached from GUILD_CREATE (the guilds intent); else None
        title = channel_title(getattr(interaction.guild, "name", None), name)
    server_locale = str(interaction.guild_locale) if interaction.guild_locale else None
    return Chat(f"{PREFIX}{interaction.channel_id}", title, is_private=private,
                platform_locale=server_locale)


def channel_id_of(chat_key: str) -> int:
    """The channel id inside a chat key such as "dc:123"."""
    if not chat_key.startswith(PREFIX):
        raise ValueError(f"not a Discord chat: {chat_key!r}")
    return int(chat_key.removeprefix(PREFIX))


def message_ref(message_id: int) -> str:
    return f"{MESSAGE_REF}{message_id}"


def message_ids(refs: tuple[str, ...]) -> list[int]:
    """The Discord message ids among a post's references (other platforms' refs skipped)."""
    return [int(r.removeprefix(MESSAGE_REF)) for r in refs
            if r.startswith(MESSAGE_REF) and r.removeprefix(MESSAGE_REF).isdigit()]


def can_manage(interaction: discord.Interaction) -> bool:
    """May this person change the channel's settings (language, daily question)? A platform
    fact the core is told (`allowed=`): in a server, members with Manage Server; in a DM, the
    person themself. `default_permissions` only sets who sees a command by default (server
    admins can change that), so this is checked on every use."""
    return interaction.guild_id is None or interaction.permissions.manage_guild
