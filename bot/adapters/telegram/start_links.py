"""t.me links that open the private chat with the bot and send it `/start <payload>`.

Telegram takes a payload of up to 64 characters of [A-Za-z0-9_-]. A quiz's id is a slug
([a-z0-9-], at most 48), so it is its own payload (`/start <quiz id>` runs that quiz); the
payloads this module makes for anything else hold an underscore, which no quiz id has, so the
two never meet. Nothing in a payload is trusted: help.py checks what it names.
"""

from __future__ import annotations

import re

PAYLOAD = re.compile(r"[A-Za-z0-9_-]{1,64}")  # Telegram's limit for a /start payload
DETAILS = "why_"  # why_<post id>: a closed question in full (render.details_text)
HELLO = "hi_"  # hi_<what>: only opens the chat, so the bot may write to the person
_DETAILS = re.compile(rf"{DETAILS}(\d{{1,18}})")


def link(username: str, payload: str) -> str:
    """The link that starts the bot with `payload`."""
    if PAYLOAD.fullmatch(payload) is None:
        raise ValueError(f"not a /start payload: {payload!r}")
    return f"https://t.me/{username}?start={payload}"


def quiz_payload(quiz_id: str) -> str | None:
    """A quiz's id as a payload; None when it cannot be one (a pack's id outside the slug
    rules, from an older version)."""
    return quiz_id if PAYLOAD.fullmatch(quiz_id) and "_" not in quiz_id else None


def details_payload(post_id: int) -> str:
    return f"{DETAILS}{post_id}"


def read_details(payload: str) -> int | None:
    """The post a details payload names, else None."""
    match = _DETAILS.fullmatch(payload)
    return int(match.group(1)) if match else None


def hello_payload(what: str) -> str:
    """A payload that only opens the chat; `what` says what for (in the logs)."""
    return f"{HELLO}{what}"


def is_hello(payload: str) -> bool:
    return payload.startswith(HELLO)
