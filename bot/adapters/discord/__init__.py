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
- `/daily set time:HH:MM timezone:<IANA> quiz:<id or tag> [minutes]`, `/daily off`,
  `/daily status`: the core's DailyScheduler posts the channel's question through
  `post_question` (the same button message as /quiz) and closes yesterday's with
  `post_summary`. set/off need Manage Server (the person themself in a DM), checked on every
  use; the group is also registered with `default_permissions(manage_guild=True)`, which hides
  it by default, status included (Discord has no per-subcommand permissions).
  A /quiz in the channel replaces the last /quiz question, never the daily one.
- A closing edit that fails is logged and offered again by the core (unposted_summaries).
- Languages: the whole channel sees the channel's /lang, else the server's language; one person
  (ephemeral replies) sees theirs, else the channel's, else their Discord client's. Command
  descriptions and choice names are localised at sync from the gettext catalogs (Hindi;
  Discord has no Bengali locale). Names stay English.

Modules: `adapter` (start/stop, the Publisher methods), `client` (Client and CommandTree),
`commands` (slash commands), `daily` (/daily), `localize` (the command Translator), `buttons`
(the answer DynamicItem and click handling), `publish` (question messages, live count, closing
edit), `embeds` (rendering), `replies` (answering in time, errors), `identity` (people, chats,
message references, locales, who may manage a channel).
"""

from bot.adapters.discord.adapter import DiscordAdapter

__all__ = ["DiscordAdapter"]
