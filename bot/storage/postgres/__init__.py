"""The PostgreSQL implementation of the core's Storage port: many processes, one database.

`bot.storage.postgres.storage.PostgresStorage` is the class; this package's own import loads
no driver, so settings can tell a URL from a path (url.py) without asyncpg.
"""
