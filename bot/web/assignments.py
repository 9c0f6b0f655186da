"""The dashboard's Assignments page: the chat's assignments (core/assignments.py), latest
deadline first, each with its members' progress (questions of its set answered, right, the
last answer) and its export as CSV. Same guard as every chat page (pages.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from aiohttp import web

from bot.core.assignment_text import when
from bot.i18n import Translator, _
from bot.web import charts, exports
from bot.web.auth import CHAT_PATH
from bot.web.missing import NotHere
from bot.web.pages import Pages, Reader, guarded, html

# the words assignments.html shows (words.py has the rest; the extractor reads Python only)
WORDS = (
    _("Assignments"),
    _("Quizzes given with /assign, to take privately by a deadline, latest first; progress "
      "is the questions of the assignment answered."),
    _("No assignment here yet: an admin gives one with /assign in the chat."),
    _("Deadline"), _("over"), _("running"), _("Answered"), _("Right"), _("Last answer"),
    _("Nobody has started it yet."), _("Progress (CSV)"), _("Started"), _("Person"),
)


def progress_header(t: Translator) -> list[str]:
    return [t.gettext("Person"), t.gettext("Name"), t.gettext("Answered"), t.gettext("Right"),
            t.gettext("Questions"), t.gettext("Started"), t.gettext("Last answer")]


class AssignmentPages(Pages):
    """Only the Assignments routes; the rest is Pages' (the same service and guard)."""

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get(CHAT_PATH + "/assignments", self.assignments),
            web.get(CHAT_PATH + "/export/assignment-{number:[0-9]{1,18}}.{kind:csv}",
                    self.export_assignment),
        ]

    # `self: Pages`: what `guarded` wraps (it needs no more)
    @guarded
    async def assignments(self: Pages, request: web.Request, reader: Reader
                          ) -> web.StreamResponse:
        views = await self.service.assignments.for_dashboard(reader.chat_key, reader.locale)
        deadlines = {v.record.id: when(v.record.new.deadline, v.record.new.tz) for v in views}
        bars = {(v.record.id, p.person_key): charts.share_bar(
            p.answered / max(1, v.record.new.total), p.answered >= v.record.new.total,
            f"{p.name}: {reader.t.number(p.answered)} / {reader.t.number(v.record.new.total)}")
            for v in views for p in v.people}
        return html("assignments.html", reader.context(
            self.csrf(reader), page="assignments", views=views, deadlines=deadlines,
            bars=bars))

    @guarded
    async def export_assignment(self: Pages, request: web.Request, reader: Reader
                                ) -> web.StreamResponse:
        number = int(request.match_info["number"])
        view = await self.service.assignments.viewed(reader.chat_key, number, reader.locale)
        if view is None:
            raise NotHere(_("No such assignment in this chat."))

        async def rows() -> AsyncIterator[Sequence[exports.Cell]]:
            for p in view.people:
                yield (p.person_key, p.name, p.answered, p.right, view.record.new.total,
                       p.started_at.strftime("%Y-%m-%d %H:%M UTC"),
                       None if p.last_answer_at is None
                       else p.last_answer_at.strftime("%Y-%m-%d %H:%M UTC"))

        return await self._send(request, f"assignment-{number}", progress_header(reader.t),
                                rows())
