"""A question's card (code, a formula, an image): drawn off the event loop, and uploaded once
per platform, whose reference to the file (Telegram's file_id) is kept in the database so
every later post, also after a restart, re-sends it without drawing or uploading again."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.core.chat_analysis import Charts
from bot.core.clock import Clock
from bot.core.models import ShownQuestion
from bot.core.ports import CardRenderer, UploadStore

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Card:
    """A card to send: by the platform's reference to it when it was uploaded before
    (`ref`), else as `png` bytes; `key` names it on that platform."""

    key: str
    ref: str | None
    png: bytes | None


class Cards:
    def __init__(self, renderer: CardRenderer | None, storage: UploadStore, clock: Clock,
                 charts: Charts) -> None:
        self.renderer = renderer
        self.storage = storage
        self.clock = clock
        self.charts = charts  # its worker threads, shared with the charts

    async def card(self, question: ShownQuestion, platform: str,
                   *, upload: bool = False) -> Card | None:
        """The card of `question` for `platform` ("tg", "dc"), None when it has none or it
        cannot be drawn (logged once; the question goes out without it). `upload`: the
        bytes even if the platform has the file (its reference was refused)."""
        renderer = self.renderer
        if renderer is None or not question.has_card:
            return None
        try:
            key = f"{platform}:card:" + await self.charts.off_loop(
                lambda: renderer.card_key(question))
        except OSError as exc:  # the image went missing since the pack loaded
            log.warning("no card for question %s (%s)", question.question_id, exc)
            return None
        ref = None if upload else await self.storage.get_upload(key)
        if ref is not None:
            return Card(key, ref, None)
        png = await self.charts.draw("a question card", lambda: renderer.question_card(question))
        return None if png is None else Card(key, None, png)

    async def uploaded(self, card: Card, ref: str) -> None:
        """The platform took the card's bytes and calls them `ref` from now on."""
        await self.storage.set_upload(card.key, ref, self.clock.now())
