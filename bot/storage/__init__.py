"""Persistence: the SQLite implementation of the core's Storage port (bot/core/ports.py)."""

from bot.storage.sqlite import SqliteStorage

__all__ = ["SqliteStorage"]
