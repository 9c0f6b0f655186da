"""What every handler reaches through `context.bot_data` (PTB's ContextTypes; see
python-telegram-bot's examples/contexttypesbot.py): the core facade and Telegram's helpers."""

from __future__ import annotations

from typing import Any

from telegram.ext import Application, CallbackContext, ExtBot

from bot.adapters.telegram.admins import AdminCheck
from bot.adapters.telegram.publish import Poster
from bot.adapters.telegram.redelivery import RecentKeys
from bot.core.service import QuizService


class BotData:
    """One per Application; PTB creates it, the adapter fills in `service` and `poster`."""

    service: QuizService
    poster: Poster

    def __init__(self) -> None:
        self.admins = AdminCheck()
        self.seen = RecentKeys()  # (chat, message) of commands, ids of button presses


Context = CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], BotData]
# the bot and job queue types are whatever ApplicationBuilder gives (no job queue is used)
TelegramApp = Application[Any, Context, dict[Any, Any], dict[Any, Any], BotData, Any]
