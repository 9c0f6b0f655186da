"""Access on the web side: a `/dashboard` link becomes a session cookie, every page checks the
session against the chat in its URL (and the chat's current generation), every POST its CSRF
token. The signing and the rules are the core's (bot/core/dashboard.py).

The session cookie is HttpOnly, SameSite=Lax, Secure on https, and scoped to the chat's path
(`/chat/<chat>/`), so the sessions of two chats live side by side in one browser and a page
of one chat is never even sent the other's cookie. It lasts as long as the link it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from aiohttp import web

from bot.core.dashboard import DashboardAccess, Denied, Grant
from bot.i18n import normalize

SESSION = "quizbot_session"
PERSON = "quizbot_me"  # a learner's own pages (the Telegram Mini App)
PERSON_PATH = "/me/"
LANGUAGE = "quizbot_lang"
CSRF_FIELD = "csrf"


# a platform's chat ("tg:-100123", "dc:123") or the console quiz's ("console")
CHAT_PATH = "/chat/{chat:(?:[a-z]+:)?[-0-9a-z]{1,40}}"


def chat_path(chat_key: str) -> str:
    return f"/chat/{quote(chat_key, safe=':')}/"


@dataclass(frozen=True, slots=True)
class Session:
    grant: Grant
    token: str  # the cookie's value (CSRF tokens are derived from it)


def set_session(response: web.StreamResponse, access: DashboardAccess, grant: Grant,
                secure: bool) -> None:
    lifetime = int((grant.expires - access.clock.now()).total_seconds())
    response.set_cookie(SESSION, access.sign("session", grant), max_age=max(lifetime, 0),
                        path=chat_path(grant.chat_key), httponly=True, samesite="Lax",
                        secure=secure)


async def session_of(request: web.Request, access: DashboardAccess, chat_key: str) -> Session:
    """The request's session for `chat_key`; Denied if it has none that is valid now."""
    token = request.cookies.get(SESSION, "")
    if not token:
        raise Denied("tampered", reader_locale(request))
    grant = await access.grant_of("session", token, chat_key)
    return Session(grant, token)


def reader_locale(request: web.Request, default: str | None = None) -> str:
    """?lang=, else the language cookie, else `default` (the person's or the chat's, carried
    by the link), else the browser's first language we speak, else English."""
    for tag in (request.query.get("lang"), request.cookies.get(LANGUAGE), default):
        if (chosen := normalize(tag)) is not None:
            return chosen
    for part in request.headers.get("Accept-Language", "").split(","):
        if (chosen := normalize(part.split(";")[0].strip())) is not None:
            return chosen
    return "en"


async def csrf_checked(request: web.Request, access: DashboardAccess, session: Session
                       ) -> dict[str, str]:
    """The POSTed form if its CSRF token is the session's; Denied otherwise."""
    form = await request.post()
    token = form.get(CSRF_FIELD)
    if not isinstance(token, str) or not access.csrf_ok(session.token, token):
        raise Denied("tampered", session.grant.locale)
    return {k: v for k, v in form.items() if isinstance(v, str)}
