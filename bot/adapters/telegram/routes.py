"""Every update the bot answers, in the order PTB tries them (python-telegram-bot's pollbot.py).

PTB gives an update to the first handler of the group whose filter takes it, so the order
matters where two could take the same update: the answer buttons' handler (`button`) takes
any callback data, so the ⚑ press and the confirmations' buttons (a draft's, /mydata
delete's) come before it. The commands have one name each and could stand in any order; they
are listed as /help shows them. The handler functions live in the modules named for what they do.

Every update's id is its idempotency key (updates.handle): a command that changes state stores
it with its effect and runs once, in whichever process; `send_once` marks the commands whose
effect is a send (a file, a prompt, a chart), which store the key before sending.
"""

from __future__ import annotations

from telegram.ext import (
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    MessageHandler,
    PollAnswerHandler,
    PollHandler,
    filters,
)

from bot.adapters.telegram import (
    authoring,
    dashboard,
    handlers,
    help,
    live,
    privacy,
    reports,
    review_export,
)
from bot.adapters.telegram.analysis import analysis_command
from bot.adapters.telegram.context import TelegramApp
from bot.adapters.telegram.handlers import COMMAND_UPDATES, Handler, send_once

# Authoring happens in the private chat with the bot, from messages (never edits).
PRIVATE_MESSAGES = filters.ChatType.PRIVATE & filters.UpdateType.MESSAGE


def register(app: TelegramApp) -> None:
    # problem reports: the ⚑ press before `button`
    app.add_handler(CallbackQueryHandler(reports.flag_pressed, pattern=r"^r:"))
    app.add_handler(MessageHandler(reports.PROMPT_REPLIES, reports.prompt_answered))
    app.add_handler(CommandHandler("report", reports.report_command, filters=COMMAND_UPDATES))
    app.add_handler(CommandHandler("reports", reports.reports_command, filters=COMMAND_UPDATES))

    # help, and the welcome when the bot joins a group
    app.add_handler(CommandHandler("help", help.help_command, filters=COMMAND_UPDATES))
    app.add_handler(CommandHandler("start", help.start_command, filters=COMMAND_UPDATES))
    app.add_handler(ChatMemberHandler(help.joined, ChatMemberHandler.MY_CHAT_MEMBER))

    # authoring: the draft confirmation's buttons before `button`
    authoring_commands: dict[str, Handler] = {
        "newpack": authoring.new_pack, "draft": authoring.show_draft, "undo": authoring.undo,
        "name": authoring.name, "publish": authoring.publish, "discard": authoring.discard,
        "unpublish": authoring.unpublish,
    }
    for name, callback in authoring_commands.items():
        app.add_handler(CommandHandler(name, callback, filters=PRIVATE_MESSAGES))
    # anywhere: an operator asks people for the id QUIZBOT_AUTHORS needs
    app.add_handler(CommandHandler("whoami", authoring.whoami,
                                   filters=filters.UpdateType.MESSAGE))
    app.add_handler(MessageHandler(PRIVATE_MESSAGES & filters.POLL, authoring.poll_sent))
    app.add_handler(MessageHandler(PRIVATE_MESSAGES & (filters.PHOTO | filters.Document.ALL),
                                   authoring.picture_sent))
    app.add_handler(CallbackQueryHandler(authoring.discard_pressed,
                                         pattern=authoring.DRAFT_BUTTONS))

    # a person's own data: the deletion's confirmation before `button`
    app.add_handler(CommandHandler("mydata", send_once(privacy.mydata), filters=COMMAND_UPDATES))
    app.add_handler(CallbackQueryHandler(privacy.confirm_pressed, pattern=privacy.CONFIRM_PRESSES))

    # live sessions and peer rounds: their Join and answer buttons before `button`
    live_commands = {
        "host": live.host, "peer": live.peer, "next": live.next_step, "pause": live.pause,
        "skip": live.skip, "end": live.end,
    }
    for name, callback in live_commands.items():
        app.add_handler(CommandHandler(name, callback, filters=COMMAND_UPDATES))
    app.add_handler(CallbackQueryHandler(live.pressed, pattern=live.PRESSES))

    # the quiz; `/review export` (a deck file) before /review
    app.add_handler(CommandHandler("review", review_export.review_export,
                                   filters=COMMAND_UPDATES & review_export.EXPORT))
    quiz_commands: dict[str, Handler] = {
        "quiz": handlers.quiz, "leaderboard": handlers.leaderboard, "stats": handlers.stats,
        "review": handlers.review, "remind": handlers.remind, "lang": handlers.lang,
        "daily": handlers.daily_command, "settings": handlers.settings_command,
        "analysis": send_once(analysis_command), "dashboard": dashboard.dashboard_command,
        "progress": dashboard.progress_command,
    }
    for name, callback in quiz_commands.items():
        app.add_handler(CommandHandler(name, callback, filters=COMMAND_UPDATES))
    app.add_handler(PollAnswerHandler(handlers.poll_answer))
    app.add_handler(PollHandler(handlers.poll_state))
    app.add_handler(CallbackQueryHandler(handlers.button))  # any callback data: last
    app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, handlers.migrated))

    # a refused command (the core's UserError) or a failure, for every handler above
    app.add_error_handler(handlers.on_error)
