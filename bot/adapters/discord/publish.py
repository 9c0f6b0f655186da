"""The public question messages: posting one, its live answer count, and the closing edit.

The live count is coalesced: however many people click, a message is edited at most once per
`live_interval` seconds (Discord rate-limits edits per channel, and an edit per click would
queue behind them). The closing edit waits for an edit in flight and cancels a pending one, so
it is always the last.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Iterator

import discord

from bot.adapters.discord.buttons import answer_view, closed_view
from bot.adapters.discord.embeds import closed_embed, question_embed
from bot.adapters.discord.identity import channel_id_of, message_ids, message_ref
from bot.adapters.discord.replies import Reply, respond
from bot.core.models import PostSummary, ShownQuestion
from bot.core.service import QuizService
from bot.i18n import translator

log = logging.getLogger(__name__)


class ChannelPublisher:
    def __init__(self, service: QuizService, *, live_interval: float = 3.0) -> None:
        self.service = service
        self.live_interval = live_interval
        self.client: discord.Client | None = None  # set by the adapter on each start
        self._live: dict[int, asyncio.Task[None]] = {}  # post id -> its live-count task
        self._dirty: set[int] = set()  # posts with answers not yet shown in the count
        self._editing: set[int] = set()  # posts whose count edit is in flight
        self._binding: dict[int, asyncio.Event] = {}  # posts shown but not yet bound

    # binding messages to posts -------------------------------------------------------------
    # The message id is known only once the message is visible, so a very quick click can
    # arrive before the binding; it waits for it instead of being refused.
    @contextlib.contextmanager
    def _shown(self, post_id: int) -> Iterator[None]:
        self._binding[post_id] = event = asyncio.Event()
        try:
            yield
        finally:
            self._binding.pop(post_id, None)
            event.set()

    async def wait_bound(self, post_id: int, within: float = 2.0) -> None:
        if (event := self._binding.get(post_id)) is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), within)

    async def show(
        self, interaction: discord.Interaction, work: Awaitable[Reply], *, ephemeral: bool
    ) -> None:
        """Answer `interaction` with the question `work` produces and bind the message to it."""
        with contextlib.ExitStack() as stack:

            async def shown() -> Reply:
                reply = await work
                if reply.post_id is not None:
                    stack.enter_context(self._shown(reply.post_id))
                return reply

            message_id, reply = await respond(interaction, shown(), ephemeral=ephemeral)
            if message_id is not None and reply.post_id is not None:
                await self.service.bind(reply.post_id, message_ref(message_id))

    def _channel(self, chat_key: str) -> discord.PartialMessageable:
        if self.client is None:
            raise RuntimeError("the Discord adapter is not started")
        return self.client.get_partial_messageable(channel_id_of(chat_key))

    async def post_question(self, question: ShownQuestion) -> int:
        """Send a question created by the core to its channel and bind the message to it."""
        t = translator(question.locale)
        with self._shown(question.post_id):
            message = await self._channel(question.chat_key).send(
                embed=question_embed(question, t, answered=0), view=answer_view(question)
            )
            await self.service.bind(question.post_id, message_ref(message.id))
        return message.id

    # the live count ----------------------------------------------------------------------
    def answered(self, post_id: int, chat_key: str, message_id: int) -> None:
        """Someone answered: show the new count soon, together with any others."""
        self._dirty.add(post_id)
        if post_id not in self._live:
            self._live[post_id] = asyncio.create_task(
                self._live_loop(post_id, chat_key, message_id), name=f"discord-count-{post_id}"
            )

    async def _live_loop(self, post_id: int, chat_key: str, message_id: int) -> None:
        try:
            while post_id in self._dirty:
                await asyncio.sleep(self.live_interval)
                self._dirty.discard(post_id)  # answers from now on need another edit
                self._editing.add(post_id)
                try:
                    await self._edit_count(post_id, chat_key, message_id)
                finally:
                    self._editing.discard(post_id)
        except discord.HTTPException as exc:
            log.warning("live count of post %s not updated: %s", post_id, exc)
        except Exception:
            log.exception("live count of post %s failed", post_id)
        finally:
            self._live.pop(post_id, None)

    async def _edit_count(self, post_id: int, chat_key: str, message_id: int) -> None:
        answered = await self.service.live_count(post_id)
        question = await self.service.show(post_id) if answered is not None else None
        if answered is None or question is None:
            return  # closed: the closing edit shows the final numbers
        embed = question_embed(question, translator(question.locale), answered=answered)
        await self._channel(chat_key).get_partial_message(message_id).edit(embed=embed)

    async def _stop_live(self, post_id: int) -> None:
        self._dirty.discard(post_id)
        task = self._live.get(post_id)
        if task is None:
            return
        if post_id not in self._editing:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    # closing -----------------------------------------------------------------------------
    async def post_summary(self, summary: PostSummary) -> None:
        """Edit the question message once: buttons disabled, the correct one green, the share
        of answers per option and the fastest correct answerers. A question that never
        reached Discord gets its summary as a new message.

        Once done (or impossible: the message or channel was deleted, the bot lost access)
        the summary is confirmed to the core; any other failure raises, and the core offers
        the summary again later (service.unposted_summaries)."""
        await self._stop_live(summary.post_id)
        t = translator(summary.question.locale)
        channel = self._channel(summary.chat_key)
        embed = closed_embed(summary, t)
        ids = message_ids(summary.refs)
        try:
            if not ids:
                await channel.send(embed=embed)
            for message_id in ids:
                try:
                    await channel.get_partial_message(message_id).edit(
                        embed=embed, view=closed_view(summary)
                    )
                except discord.NotFound as exc:  # deleted by a moderator
                    log.warning("closing edit of post %s (message %s) skipped: %s",
                                summary.post_id, message_id, exc)
        except (discord.NotFound, discord.Forbidden) as exc:
            # the channel is gone or closed to the bot: nothing to correct later
            log.warning("closing edit of post %s in %s skipped: %s",
                        summary.post_id, summary.chat_key, exc)
        await self.service.summary_posted(summary.post_id)

    async def stop(self) -> None:
        for task in list(self._live.values()):
            task.cancel()
        for task in list(self._live.values()):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._live.clear()
        self._dirty.clear()
