"""Keep the bot token out of log records.

PTB logs the Bot API URL (which contains the token) at DEBUG, and httpx logs every request URL
at INFO. httpx is turned down to WARNING, and a filter on the loggers that can see a URL
replaces the token in whatever they still emit.
"""

from __future__ import annotations

import logging

REDACTED = "<token>"

# Loggers whose records may contain a request URL: filters apply where a record is created.
_URL_LOGGERS = (
    "httpx", "httpcore", "telegram", "telegram.Bot", "telegram.ext", "telegram.ext.ExtBot",
    "telegram.ext.Application", "telegram.ext.Updater", "telegram.ext.AIORateLimiter",
    "telegram.request.BaseRequest", "telegram.request.HTTPXRequest",
)


class TokenRedactor(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        if any(s in message for s in self.secrets):
            record.msg, record.args = self._redact(message), None
        if record.exc_info and not record.exc_text:
            text = logging.Formatter().formatException(record.exc_info)
            if any(s in text for s in self.secrets):
                record.exc_text = self._redact(text)
        return True

    def _redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return text


_redactor = TokenRedactor()


def protect_token(token: str) -> None:
    """Redact `token` from the Telegram and HTTP loggers from now on (idempotent)."""
    _redactor.secrets.add(token)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    for name in _URL_LOGGERS:
        logger = logging.getLogger(name)
        if _redactor not in logger.filters:
            logger.addFilter(_redactor)
