"""Logging for `quizbot`: one format, and no token in any record, whatever a library puts there.

Libraries put tokens in places we do not control (python-telegram-bot's request URLs, an
InvalidToken message that quotes the token), so the filter sits on the root handlers and
redacts every record that reaches them, message and traceback alike.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

REDACTED = "<token>"
# a web dashboard link carries a signed key (bot/web); the libraries log the messages that send
# one (python-telegram-bot and discord.py log request bodies at DEBUG)
DASHBOARD_LINK = re.compile(r"(/open/)[A-Za-z0-9_.%-]+")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class Redactor(logging.Filter):
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = {s for s in secrets if s}

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        if "/open/" in text:
            text = DASHBOARD_LINK.sub(rf"\1{REDACTED}", text)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "/open/" in message or any(s in message for s in self.secrets):
            record.msg, record.args = self.redact(message), None
        if not self.secrets:
            return True
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text and any(s in record.exc_text for s in self.secrets):
            record.exc_text = self.redact(record.exc_text)
        return True


def setup(level: str, secrets: Iterable[str] = ()) -> Redactor:
    """Log to stderr at `level`, redacting `secrets` everywhere; returns the redactor (the
    CLI redacts its own one-line errors with it too)."""
    logging.basicConfig(level=level, format=FORMAT, force=True)
    redactor = Redactor(secrets)
    for handler in logging.getLogger().handlers:
        handler.addFilter(redactor)
    # httpx logs every request URL at INFO, and Telegram's URLs carry the token
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return redactor
