"""Persistence: one interface (base.Storage) and its SQLite implementation."""

from bot.storage.base import AnswerRecord, PostRecord, RunRecord, Storage
from bot.storage.sqlite import SqliteStorage

__all__ = ["AnswerRecord", "PostRecord", "RunRecord", "SqliteStorage", "Storage"]
