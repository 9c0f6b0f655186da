"""The Discord adapter (discord.py 2.7): slash commands, answer buttons, ephemeral replies.

Behaviour worth knowing:
- `/quiz [quiz]` in a channel posts one public question (closing the channel's previous one);
  `/quiz quiz:<id> run:True`, or `/quiz quiz:<id>` in a DM, takes the caller through the whole
  quiz privately (ephemeral in a channel, plain messages in a DM). `/quiz run:True` (or `/quiz`
  in a DM) resumes an unfinished run, after a restart too.
- Buttons are DynamicItems (`qz:<post>:<option>`), so old messages work after a restart.
- `/leaderboard` shows the channel's board (chat keys are per channel, as on Telegram); in a
  DM it shows the board across every chat. It is ephemeral, with the caller's own rank.
- The answer count on a question is edited at most once per `live_interval` (3 s).

Modules: `adapter` (start/stop, the Publisher methods), `client` (Client and CommandTree),
`commands` (slash commands), `buttons` (the answer DynamicItem and click handling), `publish`
(question messages, live count, closing edit), `embeds` (rendering), `replies` (answering in
time, errors), `identity` (people, chats, message references, locales).
"""

from bot.adapters.discord.adapter import DiscordAdapter

__all__ = ["DiscordAdapter"]
