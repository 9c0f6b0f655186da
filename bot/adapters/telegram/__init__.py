"""The Telegram adapter (python-telegram-bot 22.x).

- app.py: building the PTB Application (API URL, retries, rate limits, command menu)
- handlers.py: commands, poll answers, button presses, the error handler
- daily.py: reading /daily's arguments, its usage and error replies
- admins.py: who may change a chat's settings (getChatMember, briefly cached)
- publish.py: sending questions and summaries, binding poll and message references
- keyboards.py, callback_data.py: button mode
- identity.py: Telegram users and chats as core Person/Chat keys; reference formats
- text.py: fitting text into Telegram's limits
- concurrency.py: per-chat locks and the redelivery guard
- logs.py: keeping the token out of logs
"""

from bot.adapters.telegram.adapter import TelegramAdapter

__all__ = ["TelegramAdapter"]
