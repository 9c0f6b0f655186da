"""Question messages: showing one, binding it to its post, its live answer count, and the
closing edit. `send_question` and `close_question` are the adapter's ChatPort.

The live count is coalesced: however many people click, a message is edited at most once per
`live_interval` seconds (Discord rate-limits edits per channel, and an edit per click would
queue behind them), and a count edit waits its turn in the outbox behind the follow-ups of a
storm (outbox.py). The closing edit waits for an edit in flight and cancels a pending one, so
it is always the last.

Failures reach the core as its two errors: ChatGone when the bot can never post in the
channel again (Unknown Channel, Forbidden), TryLater for anything that may work later (other
HTTP errors, a long rate limit, the network). A single deleted message is not an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
from collections.abc import Awaitable, Callable, Iterator
from datetime import timedelta
from pathlib import Path

import aiohttp
import discord

from bot import metrics
from bot.adapters.discord.buttons import AnswerButton
from bot.adapters.discord.embeds import (
    card_alt,
    closed_embed,
    explanation_embed,
    message_text,
    question_embed,
)
from bot.adapters.discord.identity import channel_id_of, message_ids, message_ref
from bot.adapters.discord.outbox import Kind, outbox
from bot.adapters.discord.replies import Reply, Responder
from bot.core import render
from bot.core.models import PostSummary, ShownQuestion
from bot.core.ports import ChatGone, RoundSummary, TryLater
from bot.core.service import QuizService
from bot.i18n import translator

log = logging.getLogger(__name__)

UNKNOWN_CHANNEL = 10003  # Discord's JSON error codes
UNKNOWN_MESSAGE = 10008
SUMMARY_CHART = "answers.png"
CARD = "question.png"  # a question's card, the embed's image (bot/core/cards.py)
EXPLANATION = "explanation"  # the explanation's picture, with its file's extension


@contextlib.contextmanager
def as_port_errors(chat_key: str) -> Iterator[None]:
    """Discord's failures as the core's: ChatGone or TryLater."""
    try:
        yield
    except discord.Forbidden as exc:
        raise ChatGone(f"{chat_key}: {exc}") from exc
    except discord.NotFound as exc:
        if exc.code == UNKNOWN_CHANNEL:  # deleted; channel ids are never reused
            raise ChatGone(f"{chat_key}: {exc}") from exc
        raise TryLater(str(exc)) from exc
    except discord.RateLimited as exc:  # longer than discord.py is willing to wait
        metrics.rate_limited("discord", exc.retry_after)
        raise TryLater(str(exc), timedelta(seconds=exc.retry_after)) from exc
    except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
        metrics.api_error("discord", "publish")
        raise TryLater(str(exc) or type(exc).__name__) from exc


class ChannelPublisher:
    def __init__(self, service: QuizService, *, live_interval: float = 3.0) -> None:
        self.service = service
        self.live_interval = live_interval
        # set by the adapter on each start: the bot, and the button class it registered
        self.client: discord.Client | None = None
        self.buttons: type[AnswerButton] = AnswerButton
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

    async def shows(self, message_id: int, post_id: int, within: float = 2.0) -> bool:
        """Is this message the one showing `post_id`? A click's custom_id names the post;
        the message it was made on must be that post's own."""
        ref = message_ref(message_id)
        # Looked up before the read: a binding that commits while the read runs (the read
        # finds nothing, and by its end the binding is done and forgotten) is read again.
        event = self._binding.get(post_id)
        bound = await self.service.questions.post_id_for(ref)
        if bound is None and event is not None:
            with contextlib.suppress(TimeoutError):  # posted a moment ago, not yet bound
                await asyncio.wait_for(event.wait(), within)
            bound = await self.service.questions.post_id_for(ref)
        return bound == post_id

    # showing questions ---------------------------------------------------------------------
    async def question_reply(self, q: ShownQuestion, lead: str | None = None) -> Reply:
        """Title, question, options and a button each, and its card as the embed's image when
        it has one; a question for the whole channel shows its live answer count, one
        person's question does not. The card is attached every time: Discord's attachment
        URLs are signed and expire, so they cannot be re-sent like Telegram's file_id (the
        bytes come from the card cache, drawn once)."""
        embed = question_embed(q, translator(q.locale), answered=None if q.personal else 0)
        file = None
        if q.has_card:
            found = await self._card_file(q)
            if found:
                file = found[0]
                embed.set_image(url=f"attachment://{CARD}")
        return Reply(content=message_text(lead) if lead else None, embed=embed,
                     view=self.buttons.question_view(q), file=file)

    async def reply_with(self, responder: Responder, q: ShownQuestion, *, ephemeral: bool,
                         lead: str | None = None) -> None:
        """Show `q` as the answer to an interaction and bind the message to its post."""
        with self._shown(q.post_id):
            reply = await self.question_reply(q, lead)
            message_id = await responder.send(reply, ephemeral=ephemeral)
            if message_id is not None:
                await self.service.questions.bind(q.post_id, message_ref(message_id))

    def _channel(self, chat_key: str) -> discord.PartialMessageable:
        if self.client is None:
            raise TryLater("the Discord adapter is not running")
        return self.client.get_partial_messageable(channel_id_of(chat_key))

    async def send_question(self, question: ShownQuestion) -> None:
        """A question the core created (the daily one): the same message as /quiz's."""
        channel = self._channel(question.chat_key)
        with self._shown(question.post_id):
            with as_port_errors(question.chat_key):
                message = await channel.send(**(await self.question_reply(question)).kwargs())
            await self.service.questions.bind(question.post_id, message_ref(message.id))

    # the live count ----------------------------------------------------------------------
    def answered(self, post_id: int, chat_key: str, message_id: int) -> None:
        """Someone answered: show the new count soon, together with any others."""
        self._dirty.add(post_id)
        if post_id not in self._live:
            self._live[post_id] = asyncio.create_task(
                self._live_loop(post_id, chat_key, message_id), name=f"discord-count-{post_id}"
            )

    @property
    def idle(self) -> bool:
        """No answer count waiting to be shown or being edited."""
        return not self._live

    async def _live_loop(self, post_id: int, chat_key: str, message_id: int) -> None:
        try:
            while post_id in self._dirty:
                await asyncio.sleep(self.live_interval)
                self._dirty.discard(post_id)  # answers from now on need another edit
                await self._edit_count(post_id, chat_key, message_id)
        except discord.HTTPException as exc:
            log.warning("live count of post %s not updated: %s", post_id, exc)
        except Exception:
            log.exception("live count of post %s failed", post_id)
        finally:
            self._live.pop(post_id, None)

    @contextlib.contextmanager
    def _in_flight(self, post_id: int) -> Iterator[None]:
        """The closing edit waits for what is done in here rather than cancelling it."""
        self._editing.add(post_id)
        try:
            yield
        finally:
            self._editing.discard(post_id)

    async def _edit_count(self, post_id: int, chat_key: str, message_id: int) -> None:
        with self._in_flight(post_id):
            answered = await self.service.questions.live_count(post_id)
            question = await self.service.questions.show(post_id) if answered is not None else None
        if answered is None or question is None:
            return  # closed: the closing edit shows the final numbers
        embed = question_embed(question, translator(question.locale), answered=answered)
        if question.has_card:  # the attachment stays; the new embed shows it again
            embed.set_image(url=f"attachment://{CARD}")
        message = self._channel(chat_key).get_partial_message(message_id)

        async def edit() -> None:
            with self._in_flight(post_id):
                await message.edit(embed=embed)

        await outbox().send(Kind.EDIT, edit)  # while it waits for a lane, closing cancels it

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
    async def close_question(self, summary: PostSummary) -> None:
        """Edit the question message once: buttons disabled, the correct one green, the share
        of answers per option and the fastest correct answerers. A question that never
        reached Discord gets its summary as a new message."""
        await self._stop_live(summary.post_id)
        channel = self._channel(summary.chat_key)
        embed = closed_embed(summary, translator(summary.question.locale))
        card = f"attachment://{CARD}" if summary.question.has_card else None
        if card is not None:  # the question's attachment stays: the closed embed shows it
            embed.set_image(url=card)
        # a picture that explains: an embed of its own under the result, with its alt text
        explained = await self._explanation_file(summary.question)
        embeds = [embed, *(explanation_embed(f.filename) for f in explained)]
        ids = message_ids(summary.refs)
        with as_port_errors(summary.chat_key):
            if not ids:
                async def post(files: list[discord.File]) -> object:
                    files = [*files, *await self._card_file(summary.question),
                             *await self._explanation_file(summary.question)]
                    return await (channel.send(embeds=embeds, files=files) if files
                                  else channel.send(embeds=embeds))

                await self._with_chart(summary, embed, post, card)
            for message_id in ids:
                message = channel.get_partial_message(message_id)
                view = self.buttons.closed_view(summary)

                async def edit(files: list[discord.File],
                               message: discord.PartialMessage = message,
                               view: discord.ui.View = view) -> object:
                    extra = await self._explanation_file(summary.question)
                    if not files and not extra:
                        return await message.edit(embeds=embeds, view=view)
                    # new files replace the message's: the card goes again, beside the chart
                    # and the explanation's picture
                    kept = await self._card_file(summary.question)
                    return await message.edit(embeds=embeds, view=view,
                                              attachments=[*files, *kept, *extra])

                try:
                    await self._with_chart(summary, embed, edit, card)
                except discord.NotFound as exc:
                    if exc.code != UNKNOWN_MESSAGE:
                        raise
                    # deleted by a moderator: nothing left to correct
                    log.info("closing edit of post %s skipped: message %s is gone (%s)",
                             summary.post_id, message_id, exc)

    async def _card_file(self, question: ShownQuestion) -> list[discord.File]:
        """The question's card as a file to attach (none when it has none), with its alt
        text: what the picture, the code and the formula say, for screen readers."""
        if not question.has_card:
            return []
        card = await self.service.cards.card(question, "dc", upload=True)
        if card is None or card.png is None:
            return []
        alt = card_alt(question, translator(question.locale))
        return [discord.File(io.BytesIO(card.png), CARD, description=alt)]

    @staticmethod
    async def _explanation_file(question: ShownQuestion) -> list[discord.File]:
        """The explanation's picture as a file to attach, with its alt text (none when the
        question has none, or its file is gone since the pack loaded). A file is read each
        time it is sent: discord.py consumes it."""
        path = question.explanation_image
        if path is None:
            return []
        try:
            data = await asyncio.to_thread(Path(path).read_bytes)
        except OSError as exc:
            log.warning("the explanation picture %s cannot be read (%s); sent without it",
                        Path(path).name, exc)
            return []
        return [discord.File(io.BytesIO(data), EXPLANATION + Path(path).suffix.lower(),
                             description=question.explanation_image_alt)]

    async def _with_chart(self, summary: PostSummary, embed: discord.Embed,
                          send: Callable[[list[discord.File]], Awaitable[object]],
                          image: str | None = None) -> None:
        """`send(files)` with the summary's chart as the embed's image (/settings chart on),
        or with no file. A chart Discord refuses (400, too large) leaves the text (and
        `image`, the embed's image before the chart, as it was)."""
        if summary.chart is None:
            await send([])
            return
        embed.set_image(url=f"attachment://{SUMMARY_CHART}")
        try:
            await send([discord.File(io.BytesIO(summary.chart), SUMMARY_CHART)])
        except discord.HTTPException as exc:
            if exc.status not in (400, 413):
                raise
            log.warning("the chart of post %s was refused (%s); text only",
                        summary.post_id, exc)
            embed.set_image(url=image)
            await send([])

    async def round_over(self, summary: RoundSummary) -> None:
        """A round's short summary: a message of its own, after its last question's."""
        channel = self._channel(summary.chat_key)
        with as_port_errors(summary.chat_key):
            await channel.send(render.round_summary_text(summary, translator(summary.locale)))

    async def stop(self) -> None:
        for task in list(self._live.values()):
            task.cancel()
        for task in list(self._live.values()):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._live.clear()
        self._dirty.clear()
