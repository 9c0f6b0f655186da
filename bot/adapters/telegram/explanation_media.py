"""A question's explanation picture (a pack's `explanation_image`) sent with its quiz poll as
the explanation's media (Bot API 10.0's `explanation_media`, python-telegram-bot 22.8): the
voter sees it with the explanation as soon as they have answered.

Uploaded once per process, then sent by the file_id Telegram gave it (a daily question
reaching many chats uploads it once); a file_id Telegram refuses is forgotten and the file
uploaded again. A picture that cannot be read (gone since the pack loaded) leaves the poll
without it: the explanation's text still goes. Telegram's photos carry no alt text: the
explanation beside it is the text.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path

import telegram
from telegram.error import BadRequest

log = logging.getLogger(__name__)

KEPT = 256  # file_ids remembered, the oldest forgotten first
Send = Callable[[telegram.InputMediaPhoto | None], Awaitable[telegram.Message]]


class ExplanationPictures:
    def __init__(self) -> None:
        self._ids: OrderedDict[str, str] = OrderedDict()  # path -> file_id

    async def _media(self, path: str, uploaded: bool) -> telegram.InputMediaPhoto | None:
        if not uploaded and (file_id := self._ids.get(path)) is not None:
            return telegram.InputMediaPhoto(file_id)
        try:
            data = await asyncio.to_thread(Path(path).read_bytes)
        except OSError as exc:
            log.warning("the explanation picture %s cannot be read (%s); sent without it",
                        Path(path).name, exc)
            return None
        return telegram.InputMediaPhoto(data, filename=Path(path).name)

    async def send(self, path: str | None, send: Send) -> telegram.Message:
        """`send(media)` with the picture at `path` as the explanation's media (None: no
        picture)."""
        if path is None:
            return await send(None)
        by_id = path in self._ids
        try:
            message = await send(await self._media(path, uploaded=False))
        except BadRequest as exc:
            if not by_id:
                raise
            log.info("explanation picture %s refused by file id (%s); uploading it",
                     Path(path).name, exc)
            self._ids.pop(path, None)
            message = await send(await self._media(path, uploaded=True))
        self._remember(path, message)
        return message

    def _remember(self, path: str, message: telegram.Message) -> None:
        media = message.poll.explanation_media if message.poll is not None else None
        if media is None or not media.photo:
            return
        self._ids[path] = media.photo[-1].file_id
        self._ids.move_to_end(path)
        while len(self._ids) > KEPT:
            self._ids.popitem(last=False)
