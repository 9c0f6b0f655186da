"""The Telegram adapter (python-telegram-bot 22.x).

- adapter.py: start/stop (the Adapter lifecycle), and the core's ChatPort (send_question,
  close_question)
- polling.py: our getUpdates loop: a batch handled concurrently, then confirmed; an update
  PTB cannot read skipped once
- webhook.py: our webhook endpoint (QUIZBOT_TELEGRAM_WEBHOOK_URL): an update answered 200 only
  once handled, for any number of processes behind a load balancer
- updates.py: reading one update (poison ones skipped once) and handling it, with its outcome
- app.py: building the PTB Application (API URL, timeouts, retries, rate limits, command menu)
- routes.py: every handler registered in one list, in the order PTB tries them
- handlers.py: one small function per update kind, each one core call; the error handler
- context.py: what the handlers share (context.bot_data)
- publish.py: sending questions and summaries, binding poll and message references;
  Telegram's failures as the core's ChatGone/TryLater
- unconfirmed.py: questions sent with no reply (they may be there): bound when they show up
- daily.py: telling /daily's time, zone and quiz words apart; its usage line
- admins.py: who may change a chat's settings (getChatMember, briefly cached)
- keyboards.py, callback_data.py: button mode
- identity.py: Telegram users and chats as core Person/Chat keys; reference formats
- text.py: fitting text into Telegram's limits
- redelivery.py: commands and presses delivered twice in one process run once; how long a
  webhook update bound to nothing is asked for again
- logs.py: keeping the token out of logs
"""

from bot.adapters.telegram.adapter import TelegramAdapter

__all__ = ["TelegramAdapter"]
