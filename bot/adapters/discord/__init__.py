"""The Discord adapter (discord.py 2.7): slash commands, answer buttons, ephemeral replies.

Modules: `adapter` (start/stop, the Publisher methods), `client` (Client and CommandTree),
`commands` (slash commands), `buttons` (the answer DynamicItem and click handling), `publish`
(question messages, live count, closing edit), `embeds` (rendering), `replies` (answering in
time, errors), `identity` (people, chats, message references, locales).
"""

from bot.adapters.discord.adapter import DiscordAdapter

__all__ = ["DiscordAdapter"]
