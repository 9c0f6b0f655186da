"""The Telegram Mini App: a learner's own progress page inside Telegram.

Telegram opens `/app` in its web view with the launch data (`initData`) in the address's
fragment; /static/miniapp.js posts it to `/app/session`, where it is checked as Telegram
documents it (https://core.telegram.org/bots/webapps#validating-data-received-via-the-mini-app):
the fields but `hash`, sorted, `key=value` per line, HMAC-SHA256 with the key
HMAC-SHA256("WebAppData", bot token), compared with `hash`; and `auth_date` no older than
MAX_AGE. A valid launch becomes a session cookie for that person's pages (`/me/…`), signed
like the dashboard's (bot/core/dashboard.py), never a chat's.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qsl

from bot.core.dashboard import Denied

MAX_AGE = timedelta(hours=1)  # how old a launch may be when it is turned into a session


@dataclass(frozen=True, slots=True)
class Launch:
    person_key: str  # "tg:<user id>"
    name: str
    language: str | None


def launch_of(init_data: str, bot_token: str, now: datetime,
              max_age: timedelta = MAX_AGE) -> Launch:
    """The person a Mini App launch is for; Denied if it is not Telegram's, or too old."""
    fields = dict(parse_qsl(init_data, keep_blank_values=True))
    given = fields.pop("hash", "")
    check = "\n".join(f"{k}={v}" for k, v in sorted(fields.items()))
    key = hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()
    expected = hmac.new(key, check.encode(), hashlib.sha256).hexdigest()
    if not given or not hmac.compare_digest(given.encode(), expected.encode()):
        raise Denied("tampered")
    try:
        user = json.loads(fields.get("user", ""))
        when = datetime.fromtimestamp(int(fields["auth_date"]), UTC)
        person = Launch(f"tg:{int(user['id'])}",
                        " ".join(str(user.get(k) or "") for k in ("first_name", "last_name"))
                        .strip(), user.get("language_code"))
    except (ValueError, KeyError, TypeError):
        raise Denied("tampered") from None
    if now - when > max_age:
        raise Denied("expired", person.language)
    return person
