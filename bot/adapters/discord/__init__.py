"""The Discord adapter (discord.py 2.7): slash commands, answer buttons, ephemeral replies.

A thin translator: each interaction becomes one QuizService call, the result becomes Discord
messages. What replaces what, who may answer, which question comes next and what an error says
are the core's.

Behaviour worth knowing:
- `/quiz [quiz]` in a channel posts one public question (the core closes the channel's previous
  one first); `/quiz quiz:<id> run:True` takes the caller through the whole quiz ephemerally;
  in a DM, `/quiz` is private: plain messages, a quiz id runs the quiz, a topic gives one
  question, no quiz resumes the unfinished run (else one question).
- Buttons are DynamicItems (`qz:<post>:<option>`), so old messages work after a restart; a
  click counts only on the message bound to that post.
- Where a channel asks how sure (`/settings confidence:True`), a press is answered with "How
  sure are you?" and Sure / Think so / Guessing / Skip (`qc:<post>:<message>:<response>:<c>`);
  the tap records the answer with its confidence and becomes the result (`confidence`).
- `/leaderboard` shows the channel's board (in a DM the board across every chat), ephemeral,
  with the caller's own rank.
- The answer count on a question is edited at most once per `live_interval` (3 s).
- In a click storm commands go first: REST calls share a bounded pool of kept-alive
  connections, clicks' responses take a bounded share of it, and the follow-ups of deferred
  clicks and count edits wait in the outbox behind every response (`outbox`).
- `/daily set|off|status`: the core's scheduler posts the channel's question and closes it
  through the adapter's ChatPort (`send_question`, `close_question`); set/off pass
  `allowed=` Manage Server (the person themself in a DM). `/daily off` closes the open daily
  question with its summary.
- Languages: the core decides (the person's /lang, the channel's, the server's, the client's).
  Command descriptions and choice names are localised at sync from the gettext catalogs
  (Hindi; Discord has no Bengali locale). Names stay English.

Lifecycle (bot/adapters/__init__.py): a token refused at login or revoked later (gateway close
4004) is `CredentialsRejected`; a fatal close code or a dead gateway task is `ConnectionLost`,
returned by `wait_failed()`; network failures and resumable closes are discord.py's to retry.
`stop()` drains: no new interactions, the ones in flight commit and answer within 5 s.

Sharding: with QUIZBOT_DISCORD_SHARD_COUNT (and QUIZBOT_DISCORD_SHARDS, this process's share)
the bot is an AutoShardedBot on those shards, named in the log ("Discord (shards 0-1 of 4)");
the lifecycle above holds per process across its shards. Processes coordinate only through
the database (the core's claims), never with each other.

Modules: `adapter` (start/stop/wait_failed, the ChatPort), `client` (the commands.Bot, or the
AutoShardedBot, its cogs, and the command tree that answers every command's error), `intake`
(each interaction taken once, none while stopping, the ones in flight awaited), `noise`
(discord.py's voice warnings dropped, its reconnect tracebacks made one WARNING line), `quiz`
(the /quiz, /leaderboard, /stats, /review, /lang cog), `daily` (the /daily group cog),
`buttons` (the answer DynamicItem and what a click does), `kinds` (the other kinds'
components and the typed answers' form), `confidence` (the confidence tap), `publish`
(question messages, binding, live count, closing edit, Discord errors as the core's),
`replies` (answering within 3 s, errors as replies), `outbox` (the order of REST calls in a
storm), `embeds` (rendering), `localize` (the command Translator), `identity` (people, chats,
message references, who may manage a channel).
"""

from bot.adapters.discord.adapter import DiscordAdapter

__all__ = ["DiscordAdapter"]
