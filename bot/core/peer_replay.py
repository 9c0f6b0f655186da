"""What a peer round's state shows its chat, built again from the database (live.py's
`replays`): for a phase a process stored and died before showing, so the round never goes
on through a phase nobody saw.

- "vote", "transfer": the question open for its vote, with its whole time again (nobody saw
  it); "revote": the question to vote on again, likewise.
- "discuss": the first vote's split and what is left of the discussion.
- The result ("over") is not replayed: a finished round leaves the tick's sessions, and its
  result is the one step a crash may lose (as a message in flight may be).

And the question message each phase closes (`closing`): the first vote's when the
discussion starts (or the round ends above the threshold), the revote's when the transfer
question or the result comes, the transfer question's at the result.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from bot.core.live import Asked, Closed, Live
from bot.core.peer import PeerResult, Revoting, Split
from bot.core.ports import LiveRecord


class PeerReplay:
    def __init__(self, live: Live) -> None:
        self.live = live
        self.storage = live.storage
        self.questions = live.questions
        self.clock = live.clock
        live.replays["peer"] = self.replay
        live.closings["peer"] = self.closing

    async def closing(self, event: object) -> Closed | None:
        """The question message the event closes (see above)."""
        if isinstance(event, Split):
            return Closed(event.question, event.refs)
        if isinstance(event, PeerResult):
            summary = event.transfer_summary or event.summary
            return Closed(summary.question, await self.storage.refs(summary.post_id))
        if isinstance(event, Revoting) and event.transfer and event.session.steps:
            post = await self.storage.get_post(event.session.steps[0].post_id)
            if post is None:
                return None
            return Closed(self.questions.render(post, event.session.locale, (1, 1)),
                          await self.storage.refs(post.id))
        return None

    async def replay(self, record: LiveRecord) -> Asked | Revoting | Split | None:
        """The event of the round's phase; None if it changed meanwhile."""
        post = await self.storage.get_post(record.steps[-1].post_id)
        if post is None:
            return None
        now = self.clock.now()
        if record.state == "discuss":
            summary = await self.questions.summary(post, record.locale)
            left = max(timedelta(0), (record.closes_at or now) - now)
            return Split(record, dataclasses.replace(summary.question, number=1, total=1),
                         summary.per_option, summary.answered, left,
                         await self.storage.refs(post.id))
        if record.state not in ("vote", "revote", "transfer"):
            return None
        saved = await self.storage.save_live(dataclasses.replace(
            record, closes_at=now + timedelta(seconds=record.seconds)))
        if saved is None:
            return None
        if record.state == "vote":
            shown = self.questions.render(post, saved.locale, (1, 1))
            return Asked(saved, dataclasses.replace(shown, closes_at=saved.closes_at))
        shown = self.questions.render(post, saved.locale,
                                      (1, 1) if record.state == "revote" else None)
        return Revoting(saved, dataclasses.replace(shown, closes_at=saved.closes_at),
                        transfer=record.state == "transfer")
