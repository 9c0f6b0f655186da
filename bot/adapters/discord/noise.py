"""discord.py's log lines that are noise for this bot, made quiet or short.

- "PyNaCl is not installed, voice will NOT be supported" and the same for davey, a WARNING
  at every start: this bot has no voice, so they are dropped (no other record is).
- "Attempting a reconnect in 1.23s", logged at ERROR with a traceback by `Client.connect`
  whenever the network fails, and its sharded forms ("Attempting a reconnect for shard ID 2
  in 1.23s", "Failed to connect for shard_id: 2. Retrying..."): discord.py then reconnects by
  itself, so each is a WARNING of one line that names the error. A connection that ends for
  good is not logged here: the adapter reports it (`DiscordAdapter.wait_failed`).

Filters on the `discord.client` and `discord.shard` loggers, where these records are made, so
they apply before any handler sees them, whatever the logging set-up.
"""

from __future__ import annotations

import logging

LOGGERS = ("discord.client", "discord.shard")
VOICE = "voice will NOT be supported"
RECONNECT = "Attempting a reconnect in"
SHARD_RECONNECT = "Attempting a reconnect for shard ID"  # args: shard id, delay
SHARD_CONNECT = "Failed to connect for shard_id"  # args: shard id; retried after 5 s
SHARD_RETRY = 5.0  # AutoShardedClient.launch_shard's fixed wait


class LibraryNoise(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.msg if isinstance(record.msg, str) else ""
        args = record.args if isinstance(record.args, tuple) else ()
        error = describe(record.exc_info[1] if record.exc_info else None)
        if message.endswith(VOICE):
            return False
        if message.startswith(RECONNECT) and len(args) == 1:
            one_line(record, "Discord connection lost (%s); reconnecting in %.2f s",
                     error, args[0])
        elif message.startswith(SHARD_RECONNECT) and len(args) == 2:
            one_line(record, "Discord connection of shard %s lost (%s); reconnecting in %.2f s",
                     args[0], error, args[1])
        elif message.startswith(SHARD_CONNECT) and len(args) == 1:
            one_line(record, "Discord shard %s could not connect (%s); retrying in %.2f s",
                     args[0], error, SHARD_RETRY)
        return True


def one_line(record: logging.LogRecord, text: str, *args: object) -> None:
    """The record as a WARNING line, without its traceback."""
    record.msg, record.args = text, args
    record.levelno, record.levelname = logging.WARNING, "WARNING"
    record.exc_info = record.exc_text = None


def describe(error: BaseException | None) -> str:
    """An error in a few words: its type and the first line of its text."""
    if error is None:
        return "no reason given"
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


def quiet_library_noise() -> None:
    """Install the filter once on each logger (idempotent)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, LibraryNoise) for f in logger.filters):
            logger.addFilter(LibraryNoise())
