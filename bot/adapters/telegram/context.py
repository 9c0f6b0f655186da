"""What every handler reaches through `context.bot_data` (PTB's ContextTypes; see
python-telegram-bot's examples/contexttypesbot.py): the core facade and Telegram's helpers."""

from __future__ import annotations

from typing import Any

from telegram.ext import Application, CallbackContext, ExtBot

from bot.adapters.telegram.admins import AdminCheck
from bot.adapters.telegram.publish import Poster
from bot.adapters.telegram.redelivery import FirstSeen, RecentKeys
from bot.core.service import QuizService

# Seconds a webhook update about a poll or message bound to nothing is asked for again (the
# process that sent it may bind it meanwhile), counted from its first arrival here.
UNBOUND_FOR = 120.0


class BotData:
    """One per Application; PTB creates it, the adapter fills in `service`, `poster` and
    `webhook`."""

    service: QuizService
    poster: Poster
    webhook: bool = False  # updates come through a webhook, maybe to several processes

    def __init__(self) -> None:
        self.admins = AdminCheck()
        self.seen = RecentKeys()  # (chat, message) of commands, ids of button presses
        self.apologised = RecentKeys(1024)  # update ids told "something went wrong"
        self.unbound = FirstSeen(UNBOUND_FOR)  # polls, messages bound to nothing (webhooks)


Context = CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], BotData]
# the bot and job queue types are whatever ApplicationBuilder gives (no job queue is used)
TelegramApp = Application[Any, Context, dict[Any, Any], dict[Any, Any], BotData, Any]
