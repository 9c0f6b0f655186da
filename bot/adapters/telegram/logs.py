"""Keep the bot token out of log records.

PTB logs the Bot API URL (which contains the token) at DEBUG, and httpx logs every request URL
at INFO. httpx is turned down to WARNING, and a filter on the loggers that can see a URL
replaces the token in whatever they still emit.
"""

from __future__ import annotations

import logging

from bot.logs import Redactor

# Loggers whose records may contain a request URL: filters apply where a record is created.
_URL_LOGGERS = (
    "httpx", "httpcore", "telegram", "telegram.Bot", "telegram.ext", "telegram.ext.ExtBot",
    "telegram.ext.Application", "telegram.ext.Updater", "telegram.ext.AIORateLimiter",
    "telegram.request.BaseRequest", "telegram.request.HTTPXRequest",
)


class LibraryNoise(logging.Filter):
    """PTB logs an unreadable reply (a proxy's or a wrong path's HTML/text 404) at ERROR with a
    traceback, then raises; the raised error becomes quizbot's one line, so the log record is
    only DEBUG detail."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("Can not load invalid JSON data"):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            record.exc_info = record.exc_text = None
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


_redactor = Redactor()
_noise = LibraryNoise()


def protect_token(token: str) -> None:
    """Redact `token` from the Telegram and HTTP loggers from now on (idempotent), wherever
    their records go (the root handlers of `quizbot run` redact too: bot/logs.py)."""
    _redactor.secrets.add(token)
    request_logger = logging.getLogger("telegram.request.BaseRequest")
    if _noise not in request_logger.filters:
        request_logger.addFilter(_noise)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    for name in _URL_LOGGERS:
        logger = logging.getLogger(name)
        if _redactor not in logger.filters:
            logger.addFilter(_redactor)
