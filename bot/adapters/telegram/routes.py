"""Every update the bot answers, in the order PTB tries them (python-telegram-bot's pollbot.py).

PTB gives an update to the first handler of the group whose filter takes it, so the order
matters where two could take the same update: the answer buttons' handler (`button`) takes
any callback data, so the ⚑ press and the confirmations' buttons (a draft's, /mydata
delete's) come before it. The commands are the ones core/commands.py declares for Telegram,
in its order, each with the handler marked `handles(key)` in the module named for what it
does; a declared command with no handler, or a handler of an undeclared one, stops the start.

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
    analysis,
    assign,
    authoring,
    confidence,
    dashboard,
    handlers,
    help,
    keyboards,
    kinds,
    live,
    privacy,
    reports,
    review_export,
)
from bot.adapters.telegram.context import Context, TelegramApp
from bot.adapters.telegram.handlers import PRIVATE_MESSAGES, ROUTES
from bot.core import commands

# The modules whose handlers are marked `handles(key)`: importing one adds them to ROUTES.
FEATURES = (analysis, assign, authoring, dashboard, handlers, help, live, privacy, reports,
            review_export)


def command_handlers() -> list[CommandHandler[Context, None]]:
    """A CommandHandler per command core/commands.py declares for Telegram, in its order."""
    declared = [c.key for c in commands.COMMANDS if c.telegram is not None]
    if missing := [key for key in declared if key not in ROUTES]:
        raise LookupError(f"declared for Telegram with no handler: /{', /'.join(missing)}")
    if strays := sorted(set(ROUTES) - set(declared)):
        raise LookupError(f"handled on Telegram, not declared: /{', /'.join(strays)}")
    return [
        CommandHandler(name, ROUTES[key].callback, filters=ROUTES[key].updates)
        for key in declared
        if (name := commands.declared(key).name_on("telegram")) is not None
    ]


def register(app: TelegramApp) -> None:
    # problem reports: the ⚑ press before `button`
    app.add_handler(CallbackQueryHandler(reports.flag_pressed, pattern=r"^r:"))
    app.add_handler(MessageHandler(reports.PROMPT_REPLIES, reports.prompt_answered))
    # the welcome when the bot joins a group
    app.add_handler(ChatMemberHandler(help.joined, ChatMemberHandler.MY_CHAT_MEMBER))
    # authoring, in the private chat with the bot: the draft confirmation's buttons before
    # `button`
    app.add_handler(MessageHandler(PRIVATE_MESSAGES & filters.POLL, authoring.poll_sent))
    app.add_handler(MessageHandler(PRIVATE_MESSAGES & (filters.PHOTO | filters.Document.ALL),
                                   authoring.picture_sent))
    app.add_handler(CallbackQueryHandler(authoring.discard_pressed,
                                         pattern=authoring.DRAFT_BUTTONS))
    # a person's own data: the deletion's confirmation before `button`
    app.add_handler(CallbackQueryHandler(privacy.confirm_pressed, pattern=privacy.CONFIRM_PRESSES))
    # live sessions and peer rounds: their Join and answer buttons before `button`
    app.add_handler(CallbackQueryHandler(live.pressed, pattern=live.PRESSES))
    # the kinds of question: toggles, Submit, an order's presses, "Answer ✍", before `button`
    app.add_handler(CallbackQueryHandler(kinds.pressed, pattern=kinds.PRESSES))
    # a quiz's start button in the private chat (help.py), before `button`
    app.add_handler(CallbackQueryHandler(help.start_pressed, pattern=keyboards.START_PATTERN))
    # the confidence tap after an answer's press (/settings confidence on), before `button`
    app.add_handler(CallbackQueryHandler(confidence.tapped, pattern=confidence.TAPS))

    for handler in command_handlers():
        app.add_handler(handler)

    # answers
    app.add_handler(PollAnswerHandler(handlers.poll_answer))
    app.add_handler(PollHandler(handlers.poll_state))
    app.add_handler(CallbackQueryHandler(handlers.button))  # any callback data: last
    app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, handlers.migrated))
    # a typed answer: a reply to a question (groups), a plain message (private); after the
    # commands and the report prompt's replies, which a text could also be
    app.add_handler(MessageHandler(kinds.TEXTS, kinds.typed))

    # a refused command (the core's UserError) or a failure, for every handler above
    app.add_error_handler(handlers.on_error)
