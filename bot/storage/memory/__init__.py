"""The core's storage ports in memory: no database, no I/O, for the core's unit tests.

It passes the same storage contract suite (tests/storage_contract) as SQLite and PostgreSQL,
so it cannot drift from them. Several MemoryStorage objects on one MemoryDatabase behave like
processes sharing a database.
"""

from bot.storage.memory.storage import MemoryDatabase, MemoryStorage

__all__ = ["MemoryDatabase", "MemoryStorage"]
