"""The SQLite implementation of the core's storage ports: one file, one machine.

`SqliteStorage` (storage.py) is the class; the other modules are its parts (see there).
"""

from bot.storage.sqlite.storage import APPLICATION_ID, PRAGMAS, SqliteStorage, _split_sql

__all__ = ["APPLICATION_ID", "PRAGMAS", "SqliteStorage", "_split_sql"]
