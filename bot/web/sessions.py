"""The dashboard's Sessions pages: a chat's live sessions and peer rounds, newest first, a
page at a time; one session's podium, teams and questions (a peer round's shift from the
first vote to the revote); its standings as CSV or Excel. Same guard as every chat page
(pages.py): a session of another chat is not found here."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from aiohttp import web

from bot.i18n import Translator, _
from bot.web import exports
from bot.web.auth import CHAT_PATH
from bot.web.missing import NotHere
from bot.web.pages import Pages, Reader, guarded, html

# the words sessions.html, session.html and the settings page's peer rows show (words.py
# has the rest; the extractor reads Python only)
WORDS = (
    _("Sessions"), _("Live sessions (/host) and peer rounds (/peer) in this chat, newest first."),
    _("No live session or peer round here yet."), _("Started"), _("Kind"), _("Players"),
    _("State"), _("Peer round"), _("Live session"), _("any"), _("over"), _("running"),
    _("Podium"), _("Standings (CSV)"), _("Standings (Excel)"), _("Teams"),
    _("Right after the discussion"), _("skipped"), _("no discussion"),
    _("Peer rounds: right at the first vote that skips the discussion"),
    _("Peer rounds: discussion (seconds)"),
)


def standings_header(t: Translator) -> list[str]:
    return [t.gettext("Rank"), t.gettext("Person"), t.gettext("Name"), t.gettext("Team"),
            t.gettext("Points"), t.gettext("Right"), t.gettext("Seconds")]


class SessionPages(Pages):
    """Only the Sessions routes; the rest is Pages' (the same service and guard)."""

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get(CHAT_PATH + "/sessions", self.sessions),
            web.get(CHAT_PATH + "/sessions/{session:[0-9]{1,18}}", self.session),
            web.get(CHAT_PATH + "/export/session-{session:[0-9]{1,18}}.{kind:csv|xlsx}",
                    self.export_session),
        ]

    # `self: Pages`: what `guarded` wraps (it needs no more)
    @guarded
    async def sessions(self: Pages, request: web.Request, reader: Reader) -> web.StreamResponse:
        before = request.query.get("before")
        if before is not None and not before.isdigit():
            raise web.HTTPBadRequest(text="bad cursor")
        page = await self.service.live_reports.sessions(reader.chat_key,
                                                        None if before is None else int(before))
        return html("sessions.html", reader.context(
            self.csrf(reader), page="sessions", lines=page.lines, next=page.next))

    @guarded
    async def session(self: Pages, request: web.Request, reader: Reader) -> web.StreamResponse:
        report = await self.service.live_reports.report(
            reader.chat_key, int(request.match_info["session"]), reader.locale)
        if report is None:
            raise NotHere(_("No such session in this chat."))
        return html("session.html", reader.context(
            self.csrf(reader), page="sessions", r=report, s=report.podium.session))

    @guarded
    async def export_session(self: Pages, request: web.Request, reader: Reader
                             ) -> web.StreamResponse:
        session_id = int(request.match_info["session"])
        report = await self.service.live_reports.report(reader.chat_key, session_id,
                                                        reader.locale)
        if report is None:
            raise NotHere(_("No such session in this chat."))

        async def rows() -> AsyncIterator[Sequence[exports.Cell]]:
            for s in report.podium.standings:
                yield (s.rank, s.person_key, s.name, None if s.team is None else s.team + 1,
                       s.score, s.right, s.time_ms / 1000)

        return await self._send(request, f"session-{session_id}",
                                standings_header(reader.t), rows())
