"""/analysis [quiz]: the chat's item analysis for its admins, as text and a chart, in the
admin's private chat when asked in a group (in_private.py: it marks every right answer).

The text comes in as many messages as it needs (4096 UTF-16 units each), the chart after it
as a photo. Anyone else is refused by the core (a UserError, shown by handlers.on_error in
their language). The chart is drawn by the core off the event loop; a photo Telegram refuses
leaves the text, which was sent already.
"""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import BadRequest

from bot.adapters.telegram import in_private
from bot.adapters.telegram.context import Context
from bot.adapters.telegram.handlers import command, handles, send_once
from bot.content.limits import TG_MESSAGE, tg_len
from bot.core.analysis_text import analysis_blocks, chunks

log = logging.getLogger(__name__)

CHART_FILE = "analysis.png"


@handles("analysis")
@send_once
async def analysis_command(update: Update, context: Context) -> None:
    if (cmd := command(update, context)) is None:
        return
    t = await cmd.for_person()
    analysis = await cmd.data.service.item_analysis.for_chat(
        cmd.chat, " ".join(cmd.args) or None, allowed=await cmd.may_manage(), locale=t.locale,
    )
    bot = cmd.message.get_bot()

    async def send(chat_id: int, elsewhere: bool) -> None:
        blocks = analysis_blocks(analysis, t)
        if elsewhere:
            blocks = [in_private.about(cmd, t), *blocks]
        for text in chunks(blocks, TG_MESSAGE, tg_len):
            await bot.send_message(chat_id, text)
        if analysis.chart is not None:
            try:
                await bot.send_photo(chat_id, analysis.chart, filename=CHART_FILE)
            except BadRequest as exc:
                log.warning("the item-analysis chart for tg:%s was refused: %s",
                            cmd.tg_chat.id, exc)

    await in_private.send_to_admin(cmd, "analysis", send, t)
