"""discord.py's log lines that are noise for this bot, made quiet or short.

- "PyNaCl is not installed, voice will NOT be supported" and the same for davey, a WARNING
  at every start: this bot has no voice, so they are dropped (no other record is).
- "Attempting a reconnect in 1.23s", logged at ERROR with a traceback by `Client.connect`
  whenever the network fails: discord.py then reconnects by itself, so it is a WARNING of one
  line that names the error. A connection that ends for good is not logged here: the adapter
  reports it (`DiscordAdapter.wait_failed`).

A filter on the `discord.client` logger, where these records are made, so it applies to them
before any handler sees them, whatever the logging set-up.
"""

from __future__ import annotations

import logging

LOGGER = "discord.client"
VOICE = "voice will NOT be supported"
RECONNECT = "Attempting a reconnect in"


class LibraryNoise(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.msg if isinstance(record.msg, str) else ""
        if message.endswith(VOICE):
            return False
        if message.startswith(RECONNECT):
            error = record.exc_info[1] if record.exc_info else None
            delay = record.args[0] if isinstance(record.args, tuple) and record.args else 0.0
            record.msg = "Discord connection lost (%s); reconnecting in %.2f s"
            record.args = (describe(error), delay)
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info = record.exc_text = None
        return True


def describe(error: BaseException | None) -> str:
    """An error in a few words: its type and the first line of its text."""
    if error is None:
        return "no reason given"
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


def quiet_library_noise() -> None:
    """Install the filter once (idempotent)."""
    logger = logging.getLogger(LOGGER)
    if not any(isinstance(f, LibraryNoise) for f in logger.filters):
        logger.addFilter(LibraryNoise())
