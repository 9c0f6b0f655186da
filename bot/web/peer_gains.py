"""The dashboard's Peer rounds page: the chat's finished peer rounds, newest first, a page at a
time, each with its first vote, revote and transfer question (the shares right, each with a
bar), Hake's normalised gain and the weighted learning gain, and their means over the page's
rounds (the core's figures, bot/core/peer_gains.py). Same guard as every chat page
(pages.py)."""

from __future__ import annotations

from aiohttp import web

from bot.core.peer_gains import PeerGains, PeerGainsPage
from bot.i18n import Translator, _
from bot.web import charts
from bot.web.auth import CHAT_PATH
from bot.web.pages import Pages, Reader, guarded, html

# the words peer_gains.html shows (the extractor reads Python only)
WORDS = (
    _("Peer rounds"),
    _("Each finished peer round (/peer) of this chat, newest first: the share right at the "
      "first vote, after the discussion, and on the transfer question, a question on the "
      "same idea asked alone after the revote."),
    _("Normalised gain (Hake): what the revote gained of what the first vote left to gain. "
      "Weighted learning gain (Porter et al. 2011): of those wrong at the first vote, the "
      "share right on the transfer question, over that share among those right at the first "
      "vote. Only people who voted first count on the transfer question."),
    _("No peer round has finished here yet."), _("Over these rounds"), _("Rounds"),
    _("First vote"), _("Transfer question"), _("Normalised gain"),
    _("Weighted learning gain"), _("none asked"), _("Mean"), _("Started"),
    _("Right after the discussion"), _("no discussion"), _("Figure"),
)


def bars(found: PeerGainsPage, t: Translator) -> dict[tuple[int, str], str]:
    """Each round's shares as bars, keyed (session id, which); the transfer's is green, the
    share that shows learning rather than copying."""
    drawn = {}
    for r in found.rounds:
        shares = {"first": r.gains.first_right, "second": r.gains.second_right,
                  "transfer": r.gains.transfer_right}
        for which, share in shares.items():
            if share is not None:
                drawn[(r.session.id, which)] = charts.share_bar(
                    share, which == "transfer", t.percent(share))
    return drawn


class PeerGainPages(Pages):
    """Only the Peer rounds route; the rest is Pages' (the same service and guard)."""

    def routes(self) -> list[web.RouteDef]:
        return [web.get(CHAT_PATH + "/peer-rounds", self.peer_rounds)]

    # `self: Pages`: what `guarded` wraps (it needs no more)
    @guarded
    async def peer_rounds(self: Pages, request: web.Request, reader: Reader
                          ) -> web.StreamResponse:
        before = request.query.get("before")
        if before is not None and not (before.isdigit() and len(before) <= 18):
            raise web.HTTPBadRequest(text="bad cursor")
        service = self.service
        found = await PeerGains(service.live.questions, service.storage).page(
            reader.chat_key, reader.locale, None if before is None else int(before))
        return html("peer_gains.html", reader.context(
            self.csrf(reader), page="peer-rounds", found=found, bars=bars(found, reader.t),
            gain=lambda value: "" if value is None else f"{value:+.2f}",
            ratio=lambda value: "" if value is None else f"{value:.2f}"))
