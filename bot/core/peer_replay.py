"""What a peer round's state shows its chat, built again from the database (live.py's
`replays`): for a phase a process stored and died before showing, so the round never goes
on through a phase nobody saw.

- "vote", "transfer": the question open for its vote, with its whole time again (nobody saw
  it); "revote": the question to vote on again, likewise.
- "discuss": the first vote's split and what is left of the discussion.
- The result ("over") is not replayed: a finished round leaves the tick's sessions, and its
  result is the one step a crash may lose (as a message in flight may be).
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from bot.core.live import Asked, Live
from bot.core.peer import Revoting, Split
from bot.core.ports import LiveRecord


class PeerReplay:
    def __init__(self, live: Live) -> None:
        self.live = live
        self.storage = live.storage
        self.questions = live.questions
        self.clock = live.clock
        live.replays["peer"] = self.replay

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
