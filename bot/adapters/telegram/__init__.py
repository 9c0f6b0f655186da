"""The Telegram adapter (python-telegram-bot 22.x).

- adapter.py: start/stop, and the core's ChatPort (send_question, close_question)
- app.py: building the PTB Application (API URL, retries, rate limits, command menu)
- handlers.py: one small function per update kind, each one core call; the error handler
- context.py: what the handlers share (context.bot_data)
- publish.py: sending questions and summaries, binding poll and message references;
  Telegram's failures as the core's ChatGone/TryLater
- daily.py: telling /daily's time, zone and quiz words apart; its usage line
- admins.py: who may change a chat's settings (getChatMember, briefly cached)
- keyboards.py, callback_data.py: button mode
- identity.py: Telegram users and chats as core Person/Chat keys; reference formats
- text.py: fitting text into Telegram's limits
- redelivery.py: commands and presses delivered twice run once
- logs.py: keeping the token out of logs
"""

from bot.adapters.telegram.adapter import TelegramAdapter

__all__ = ["TelegramAdapter"]
