"""The dashboard's Misconceptions page: which misconceptions the chat's latest answers chose
(the core's figures, bot/core/misconceptions.py: how many chose each of those who answered,
how many of them were sure, who) and a button that starts a follow-up round on one in the chat
(a POST with the CSRF token, through the same round path as an admin's /quiz). Same guard as
every chat page (pages.py)."""

from __future__ import annotations

from aiohttp import web

from bot.core.errors import UserError
from bot.core.models import Chat
from bot.core.ports import TryLater
from bot.core.render import error_text
from bot.i18n import _
from bot.web import charts
from bot.web.auth import CHAT_PATH, csrf_checked
from bot.web.pages import Pages, Reader, guarded, html

# the words misconceptions.html shows (words.py has the rest; the extractor reads Python only)
WORDS = (
    _("Misconceptions"),
    _("What the distractors chosen in this chat stand for, as the packs name them. Each "
      "person's latest answer to a question counts, so a follow-up round answered right "
      "clears it."),
    _("No one here has chosen a distractor that stands for a misconception yet."),
    _("Chose it"), _("Of those who answered"), _("Sure of it"), _("Who"),
    _("Questions carrying it"), _("Start a follow-up round in the chat"), _("sure"),
    _("The follow-up round has started in the chat."), _("Misconception"),
)
# i18n: the dashboard's follow-up round could not reach the chat's platform from this process
NOT_NOW = _("The chat cannot be reached from here right now; the round's first question is "
            "sent as soon as it can be.")


class MisconceptionPages(Pages):
    """Only the Misconceptions routes; the rest is Pages' (the same service and guard)."""

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get(CHAT_PATH + "/misconceptions", self.misconceptions),
            web.post(CHAT_PATH + "/misconceptions/follow-up", self.follow_up),
        ]

    async def _page(self, reader: Reader, *, started: bool = False, error: str | None = None,
                    status: int = 200) -> web.Response:
        found = await self.service.misconceptions.for_chat(
            Chat(reader.chat_key), reader.locale, allowed=True)
        catalog = self.service.misconceptions.catalog
        prompts = {(m.quiz_id, q): catalog.quizzes[m.quiz_id].question(q).prompt.get(
            reader.locale) for m in found for q in m.questions}
        bars = {(m.quiz_id, m.id): charts.share_bar(
            m.share, False, f"{m.statement}: {reader.t.percent(m.share)}") for m in found}
        return html("misconceptions.html", reader.context(
            self.csrf(reader), page="misconceptions", found=found, prompts=prompts,
            bars=bars, started=started, error=error), status=status)

    # `self: Pages`: what `guarded` wraps (it needs no more)
    @guarded
    async def misconceptions(self: Pages, request: web.Request, reader: Reader
                             ) -> web.StreamResponse:
        assert isinstance(self, MisconceptionPages)
        return await self._page(reader, started="started" in request.query)

    @guarded
    async def follow_up(self: Pages, request: web.Request, reader: Reader
                        ) -> web.StreamResponse:
        assert isinstance(self, MisconceptionPages)
        form = await csrf_checked(request, self.access, reader.session)
        # the chat as stored: asking upserts it, and an empty title would overwrite its name
        chat = Chat(reader.chat_key, await self.reads.storage.chat_title(reader.chat_key) or "")
        try:
            await self.service.misconceptions.start_follow_up(
                chat, str(form.get("quiz", ""))[:60],
                str(form.get("misconception", ""))[:60], allowed=True)
        except UserError as error:
            return await self._page(reader, error=error_text(error, reader.t, ()), status=400)
        except TryLater:  # a round's question is sent by the scheduler once it can be
            return await self._page(reader, error=reader.t.gettext(NOT_NOW), status=503)
        raise web.HTTPSeeOther(f"{reader.base}misconceptions?started=1")
