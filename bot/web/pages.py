"""The dashboard's pages and exports: each handler reads one chat through the core
(QuizService, DashboardReads) and renders a Jinja2 template in the reader's language.

Every route under /chat/<chat>/ passes `guarded`: no valid session for exactly that chat (a
tampered, expired or revoked one, or another chat's) gets the 403 page, in the reader's
language, saying to ask the bot again. Nothing here logs a token or a cookie.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import jinja2
from aiohttp import web

from bot.core.analysis_text import flags_text
from bot.core.dashboard import LINK_LIFETIME, Denied
from bot.core.dashboard_reads import CHART_DAYS
from bot.core.errors import UserError
from bot.core.misconceptions import option_tags
from bot.core.models import MIN_ANSWERS, Chat, Period, Person
from bot.core.render import SAID, error_text
from bot.core.service import QuizService
from bot.counted_log import CountedLog
from bot.i18n import LANGUAGE_NAMES, _, normalize, translator
from bot.web import charts, export_tables, exports
from bot.web.auth import (
    CHAT_PATH,
    CSRF_FIELD,
    LANGUAGE,
    PERSON,
    PERSON_PATH,
    Session,
    chat_path,
    csrf_checked,
    reader_locale,
    session_of,
    set_session,
)
from bot.web.miniapp import launch_of
from bot.web.missing import NotHere

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Page = Callable[["Pages", web.Request, "Reader"], Awaitable[web.StreamResponse]]

TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("bot.web", "templates"),
    autoescape=jinja2.select_autoescape(["html"]),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
# one path segment: a person key may hold "/" (a console player's --name), which urlencode keeps
TEMPLATES.filters["segment"] = lambda value: quote(str(value), safe=":")


class Reader:
    """Who is reading which chat: the session, the language, what every page shows."""

    def __init__(self, request: web.Request, session: Session, title: str | None) -> None:
        self.session = session
        self.chat_key = session.grant.chat_key
        self.chat_name = title or self.chat_key  # the key only for a chat the platform left unnamed
        self.locale = reader_locale(request, session.grant.locale)
        self.t = translator(self.locale)
        self.base = chat_path(self.chat_key)
        self.path = request.path

    def context(self, access_csrf: str, **values: Any) -> dict[str, Any]:
        return {"t": self.t.gettext, "n": self.t.number, "pct": self.t.percent,
                "locale": self.locale, "languages": LANGUAGE_NAMES, "chat_name": self.chat_name,
                "base": self.base, "path": self.path, "csrf": access_csrf,
                "csrf_field": CSRF_FIELD, **values}


def html(template: str, context: dict[str, Any], status: int = 200) -> web.Response:
    return web.Response(text=TEMPLATES.get_template(template).render(**context),
                        content_type="text/html", charset="utf-8", status=status,
                        headers={"Cache-Control": "no-store",
                                 "Content-Security-Policy": "default-src 'self'; "
                                 "style-src 'self'; img-src 'self' data:; form-action 'self'",
                                 "X-Content-Type-Options": "nosniff",
                                 "Referrer-Policy": "no-referrer"})


def denied_page(request: web.Request, locale: str | None) -> web.Response:
    t = translator(reader_locale(request, locale))
    return html("denied.html", {"t": t.gettext, "locale": t.locale}, status=403)


def _number(text: str, digits: int = 18) -> bool:
    """A cursor's number: ASCII digits only (str.isdigit takes "١٢" and "²"), short enough
    for a 64-bit column and a timestamp (a 20-digit one gave 500s)."""
    return 0 < len(text) <= digits and text.isascii() and text.isdigit()


def guarded(page: Page) -> Callable[[Pages, web.Request], Awaitable[web.StreamResponse]]:
    async def handler(self: Pages, request: web.Request) -> web.StreamResponse:
        chat_key = request.match_info["chat"]
        try:
            session = await session_of(request, self.access, chat_key)
            reader = Reader(request, session, await self.reads.storage.chat_title(chat_key))
            response = await page(self, request, reader)
        except Denied as denied:
            self.refusals.event(f"dashboard refused ({denied.reason})",
                                "dashboard of %s refused: %s", chat_key, denied.reason)
            return denied_page(request, denied.locale)
        if "lang" in request.query and not response.prepared:
            response.set_cookie(LANGUAGE, reader.locale, max_age=365 * 86400, path="/",
                                samesite="Lax", httponly=True, secure=self.secure)
        return response
    return handler


class Pages:
    def __init__(self, service: QuizService, secure: bool, bot_token: str | None = None
                 ) -> None:
        """`bot_token`: Telegram's, which signs Mini App launches (None: no Mini App)."""
        self.service = service
        self.bot_token = bot_token
        self.access = service.dashboard
        self.reads = service.dashboard_reads
        self.secure = secure
        # anyone can be refused as often as they like: the first refusal of a kind is
        # logged, the rest as a count per interval
        self.refusals = CountedLog(log)

    def routes(self) -> list[web.RouteDef]:
        chat = CHAT_PATH
        return [
            web.get("/open/{token}", self.open_link),
            web.get(chat + "/", self.overview),
            web.get(chat + "/people", self.people),
            # a console person's key holds their login name or --name (any character)
            web.get(chat + "/person/{person:[a-z]+:[^/]{1,80}}", self.person),
            web.get(chat + "/questions", self.questions),
            web.get(chat + "/reports", self.reports),
            web.post(chat + "/reports/{report:[0-9]{1,18}}/resolve", self.resolve),
            web.get(chat + "/settings", self.settings),
            web.get(chat + "/export/answers.{kind:csv|xlsx}", self.export_answers),
            web.get(chat + "/export/board.{kind:csv|xlsx}", self.export_board),
            web.get("/app", self.miniapp),
            web.post("/app/session", self.miniapp_session),
            web.get(PERSON_PATH + "progress", self.progress),
        ]

    def csrf(self, reader: Reader) -> str:
        return self.access.csrf(reader.session.token)

    # a link becomes a session ------------------------------------------------------------
    async def open_link(self, request: web.Request) -> web.StreamResponse:
        try:
            grant = await self.access.grant_of("link", request.match_info["token"])
        except Denied as denied:
            self.refusals.event(f"dashboard link refused ({denied.reason})",
                                "dashboard link refused: %s", denied.reason)
            return denied_page(request, denied.locale)
        response = web.HTTPSeeOther(chat_path(grant.chat_key))
        set_session(response, self.access, grant, self.secure)
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        log.info("dashboard of %s opened", grant.chat_key)
        raise response

    # the Telegram Mini App: a learner's own page ---------------------------------------------
    async def miniapp(self, request: web.Request) -> web.StreamResponse:
        t = translator(reader_locale(request))
        return html("miniapp.html", {"t": t.gettext, "locale": t.locale})

    async def miniapp_session(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        data = form.get("init_data")
        try:
            if self.bot_token is None or not isinstance(data, str):
                raise Denied("tampered")
            launch = launch_of(data, self.bot_token, self.access.clock.now())
        except Denied as denied:
            self.refusals.event(f"Mini App launch refused ({denied.reason})",
                                "Mini App launch refused: %s", denied.reason)
            return denied_page(request, denied.locale)
        locale = normalize(launch.language) or await self.service.locales.for_person(
            Person(launch.person_key, launch.name))
        token = await self.access.person_session(launch.person_key, locale)
        response = web.HTTPSeeOther(PERSON_PATH + "progress")
        response.set_cookie(PERSON, token, max_age=int(LINK_LIFETIME.total_seconds()),
                            path=PERSON_PATH, httponly=True, samesite="Lax",
                            secure=self.secure)
        log.info("Mini App opened by %s", launch.person_key)
        raise response

    async def progress(self, request: web.Request) -> web.StreamResponse:
        try:
            grant = await self.access.grant_of("person", request.cookies.get(PERSON, ""))
        except Denied as denied:
            return denied_page(request, denied.locale)
        t = translator(reader_locale(request, grant.locale))
        p = await self.reads.progress(grant.chat_key, t.locale)
        answered = sum(topic.answered for topic in p.topics)
        right = sum(topic.correct for topic in p.topics)
        response = html("progress.html", {
            "t": t.gettext, "n": t.number, "pct": t.percent, "locale": t.locale,
            "languages": LANGUAGE_NAMES, "path": request.path, "p": p, "answered": answered,
            "accuracy": right / answered if answered else 0.0})
        if "lang" in request.query:
            response.set_cookie(LANGUAGE, t.locale, max_age=365 * 86400, path="/",
                                samesite="Lax", httponly=True, secure=self.secure)
        return response

    # pages ---------------------------------------------------------------------------------
    @guarded
    async def overview(self, request: web.Request, reader: Reader) -> web.StreamResponse:
        o = await self.reads.overview(reader.chat_key)
        first = self.service.clock.now().astimezone(UTC).date() - timedelta(days=CHART_DAYS - 1)
        t = reader.t
        return html("overview.html", reader.context(
            self.csrf(reader), page="overview", o=o,
            answers_chart=charts.answers_per_day(o.days, first, CHART_DAYS,
                                                 t.gettext("Answers per day"), t),
            accuracy_chart=charts.accuracy_over_time(o.days, first, CHART_DAYS,
                                                     t.gettext("Accuracy over time"), t)))

    @guarded
    async def people(self, request: web.Request, reader: Reader) -> web.StreamResponse:
        after = None
        if (cursor := request.query.get("after")) is not None:
            correct, time_ms, key = [*cursor.split(".", 2), "", ""][:3]
            if not (_number(correct) and _number(time_ms) and key):
                raise web.HTTPBadRequest(text="bad cursor")
            after = (int(correct), int(time_ms), key)
        page = await self.reads.people(reader.chat_key, after, reader.locale)
        nxt = None if page.next is None else ".".join(str(v) for v in page.next)
        return html("people.html", reader.context(self.csrf(reader), page="people",
                                                  people=page.lines, next=nxt))

    @guarded
    async def person(self, request: web.Request, reader: Reader) -> web.StreamResponse:
        person_key = request.match_info["person"]
        after = None
        if (cursor := request.query.get("after")) is not None:
            stamp, _dot, row_id = cursor.partition(".")
            if not (_number(stamp, 17) and _number(row_id)):
                raise web.HTTPBadRequest(text="bad cursor")
            after = (person_key, datetime.fromtimestamp(int(stamp) / 1e6, UTC), int(row_id))
        found = await self.reads.person(reader.chat_key, person_key, after, reader.locale)
        if found is None:
            raise NotHere(_("No such person in this chat."))
        nxt = None if found.next is None else \
            f"{round(found.next[1].timestamp() * 1e6)}.{found.next[2]}"
        # how review is tuned to them (bot/core/review.py), over this chat's cards only
        shown = {c.question_id for c in found.cards}
        tuning = await self.service.spaced.tuning(person_key, lambda card: card[1] in shown)
        return html("person.html", reader.context(self.csrf(reader), page="people", p=found,
                                                  next=nxt, said=SAID, tuning=tuning))

    @guarded
    async def questions(self, request: web.Request, reader: Reader) -> web.StreamResponse:
        found = await self.reads.questions(reader.chat_key, reader.locale,
                                           request.query.get("quiz"))
        if found is None:
            raise NotHere(_("No answers to that quiz in this chat."))
        analysis = () if found.report is None else (found.report,)
        by_question = {} if found.quiz_id is None else \
            await self.reads.storage.open_reports_per_question(reader.chat_key, found.quiz_id)
        share = reader.t.percent
        bars = {
            (item.question_id, o.canonical): charts.share_bar(
                o.share or 0.0, o.correct, f"{o.letter}) {o.text}: {share(o.share or 0)}")
            for report in analysis for item in report.items if item.answered
            for o in item.shown_options()
        }
        flags = {item.question_id: flags_text(item, reader.t)
                 for report in analysis for item in report.items}
        # the misconception a distractor stands for, beside it (bot/core/misconceptions.py)
        quiz = self.service.catalog.quizzes.get(found.quiz_id or "")
        stands_for = {} if quiz is None else option_tags(quiz, reader.locale)
        return html("questions.html", reader.context(
            self.csrf(reader), page="questions", reports=analysis, bars=bars,
            quizzes=found.quizzes if len(found.quizzes) > 1 else (), shown=found.quiz_id,
            reported=by_question, flags=flags, min_answers=MIN_ANSWERS,
            stands_for=stands_for, predicted=found.predicted))

    @guarded
    async def reports(self, request: web.Request, reader: Reader) -> web.StreamResponse:
        after = request.query.get("after")
        if after is not None and not _number(after):
            raise web.HTTPBadRequest(text="bad cursor")
        found = await self.reads.reports(reader.chat_key, None if after is None else int(after))
        titles = self.service.problem_reports.titles(found.reports, reader.locale)
        return html("reports.html", reader.context(
            self.csrf(reader), page="reports", reports=found.reports, titles=titles,
            next=found.next, done=request.query.get("done"), error=None))

    @guarded
    async def resolve(self, request: web.Request, reader: Reader) -> web.StreamResponse:
        form = await csrf_checked(request, self.access, reader.session)
        note = form.get("note", "").strip()[:500] or None
        try:
            done = await self.service.problem_reports.resolve_in_chat(
                Chat(reader.chat_key), request.match_info["report"], note, allowed=True)
        except UserError as error:
            found = await self.reads.reports(reader.chat_key, None)
            return html("reports.html", reader.context(
                self.csrf(reader), page="reports", reports=found.reports, next=found.next,
                titles=self.service.problem_reports.titles(found.reports, reader.locale), done=None,
                error=error_text(error, reader.t, ())), status=400)
        raise web.HTTPSeeOther(f"{reader.base}reports?done={done}")

    @guarded
    async def settings(self, request: web.Request, reader: Reader) -> web.StreamResponse:
        chat = Chat(reader.chat_key)
        return html("settings.html", reader.context(
            self.csrf(reader), page="settings", s=await self.service.chat_settings.get(chat.key),
            schedule=await self.service.daily.status(chat),
            language=LANGUAGE_NAMES[await self.service.locales.for_chat(chat)],
            own_language=await self.reads.storage.chat_locale(chat.key) is not None,
            zone=(await self.reads.zone(chat.key)).key))

    # exports (their tables: export_tables.py) ----------------------------------------------
    @guarded
    async def export_answers(self, request: web.Request, reader: Reader
                             ) -> web.StreamResponse:
        return await self._send_tables(request, "answers", await export_tables.answer_tables(
            self.reads, reader.chat_key, reader.locale, reader.t))

    @guarded
    async def export_board(self, request: web.Request, reader: Reader) -> web.StreamResponse:
        try:
            period = Period(request.query.get("period", "all"))
        except ValueError:
            raise web.HTTPBadRequest(text="period: day, week or all") from None
        return await self._send_tables(request, f"board-{period.value}", [
            export_tables.board_table(self.reads, reader.chat_key, period, reader.t)])

    async def _send(self, request: web.Request, what: str, header: list[str],
                    rows: AsyncIterator[Sequence[exports.Cell]]) -> web.StreamResponse:
        """One table of untyped columns (its cells typed by their values)."""
        return await self._send_tables(request, what, [
            exports.Table(what, [exports.Column(h) for h in header], rows)])

    async def _send_tables(self, request: web.Request, what: str,
                           tables: Sequence[exports.Table]) -> web.StreamResponse:
        """A CSV holds the first table; an XLSX a sheet per table."""
        chat = request.match_info["chat"].replace(":", "_")
        kind = request.match_info["kind"]
        name = f"quizbot-{chat}-{what}.{kind}"
        if kind == "csv":
            return await exports.send_csv(request, name, tables[0])
        return await exports.send_xlsx(request, name, tables)
