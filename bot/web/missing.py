"""A page that is not there for a reason the reader can act on; server.py's middleware shows
it (and any other 404) in the reader's language and the dashboard's look, instead of
aiohttp's bare English "404: Not Found"."""

from __future__ import annotations

from aiohttp import web


class NotHere(web.HTTPNotFound):
    """Not found, and why: `why` is a msgid, translated for the reader."""

    def __init__(self, why: str) -> None:
        super().__init__(text=why)
        self.why = why
