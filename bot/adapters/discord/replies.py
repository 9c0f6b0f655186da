"""Answering an interaction in time, and the one place errors become replies.

Discord drops an interaction that is not answered within 3 seconds of its creation
("This interaction failed"). A `Responder` is opened when the work starts. Work done within
DEADLINE_BUDGET of when the interaction was made (its snowflake's time: in a click storm the
handler may start a second or more after the click) is answered directly, one REST call. If
nothing was sent by then it defers (the person sees "thinking…") and what is sent later
becomes the follow-up, a second call; an interaction already past the budget when its work
starts is deferred at once, beside the work. The budget covers everything inside the
`async with`: waiting for the chat's lock, closing the previous question, the database.
A click's first response takes a lane and its follow-up waits its turn in the outbox
(outbox.py); a command's response and follow-up are sent at once.

Errors: a core `UserError` is rendered with `render.error_text` in the person's language; a
storage that cannot be used now (core/storage_faults.py) is said as it is: nothing was saved,
and Discord never sends an interaction again, so the person is asked to click or send it again
in a moment; anything else is logged with its context and apologised for (`ErrorReplies`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

import discord
from discord import app_commands

from bot.adapters.discord.embeds import info_embed, message_text
from bot.adapters.discord.identity import chat_of, message_ids, person_of
from bot.adapters.discord.outbox import Kind, Unanswered, outbox
from bot.core import render
from bot.core.errors import StillOpen, UserError
from bot.core.ports import AlreadyHandled
from bot.core.service import QuizService
from bot.core.storage_faults import storage_unavailable
from bot.i18n import Translator, normalize, translator

log = logging.getLogger(__name__)
T = TypeVar("T")

# Seconds after the click by which the response is sent, or else a deferral. Discord's limit
# is 3 s; the rest is for the event loop running the deferral late in a storm and the network.
DEADLINE_BUDGET = 2.5
ALREADY_ACKNOWLEDGED = 40060  # the same interaction delivered twice: answered the first time


@dataclass
class Reply:
    content: str | None = None
    embed: discord.Embed | None = None
    view: discord.ui.View | discord.ui.LayoutView | None = None  # a LayoutView: Components V2
    file: discord.File | None = None  # an attachment (e.g. /mydata's JSON)

    @classmethod
    def text(cls, text: str) -> Reply:
        """Plain text; long text goes into an embed (4096 characters rather than 2000)."""
        if len(text) <= 2000:
            return cls(content=message_text(text))
        return cls(embed=info_embed(text))

    def kwargs(self) -> dict[str, Any]:
        # discord.py treats a passed None differently from an omitted argument
        return {k: v for k, v in (("content", self.content), ("embed", self.embed),
                                  ("view", self.view), ("file", self.file))
                if v is not None}


def budget_left(interaction: discord.Interaction, now: float | None = None) -> float:
    """Seconds left of DEADLINE_BUDGET for this interaction, counted from when it was made
    (its snowflake's time, which Discord's 3 s are counted from), not from when its handler
    started: in a storm handlers start late. Clamped to [0, DEADLINE_BUDGET], so a local clock
    behind Discord's (a negative age) never puts a deferral past the budget, and one far
    ahead defers at once rather than never."""
    age = (time.time() if now is None else now) - interaction.created_at.timestamp()
    return min(max(DEADLINE_BUDGET - age, 0.0), DEADLINE_BUDGET)


class Responder:
    """`async with Responder(interaction, ephemeral=...) as responder:` do the work, then
    `await responder.send(reply)`; deferred in time if the work is slow. `ephemeral` is the
    visibility of the deferral (Discord fixes it there for the follow-up).

    The follow-up of a deferred click goes through the outbox (after every first response
    pending, in a bounded number of lanes): a click not acknowledged within 3 s is lost,
    while a follow-up has 15 minutes. A command's follow-up is sent at once."""

    def __init__(self, interaction: discord.Interaction, *, ephemeral: bool,
                 update: bool = False) -> None:
        """`update`: the response edits the message the component is on (`edit`); a slow
        one defers without "thinking…", and then edits it."""
        self.interaction = interaction
        self.ephemeral = ephemeral
        self.update = update
        self._lock = asyncio.Lock()  # a deferral and a send never race
        # a plain timer, not a sleeping task: most work ends well before it and cancels it
        self._timer: asyncio.TimerHandle | None = None
        self._deferral: asyncio.Task[None] | None = None
        self._waiting: Unanswered | None = None  # counted among the unanswered

    async def __aenter__(self) -> Responder:
        if not self.interaction.response.is_done():
            self._waiting = outbox().unanswered
            self._waiting.add()
        left = budget_left(self.interaction)
        if left <= 0:  # already late: acknowledge it now, beside the work
            self._start_deferral()
        else:
            self._timer = asyncio.get_running_loop().call_later(left, self._start_deferral)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._deferral is not None:
            async with self._lock:  # a deferral in flight finishes first
                self._deferral.cancel()
        self._answered()

    def _answered(self) -> None:
        if self._waiting is not None:
            self._waiting.remove()
            self._waiting = None

    def _start_deferral(self) -> None:
        self._timer = None
        self._deferral = asyncio.get_running_loop().create_task(self._defer())

    def _first_response_lane(self) -> contextlib.AbstractAsyncContextManager[Any]:
        """A click's first response takes one of the lanes clicks may use, leaving the pool's
        other connections to commands (outbox.py); a command's goes at once."""
        if self.interaction.type is discord.InteractionType.component:
            return outbox().click_responses
        return contextlib.nullcontext()

    async def _defer(self) -> None:
        async with self._lock:
            if self.interaction.response.is_done():
                return
            try:
                async with self._first_response_lane():
                    await acknowledged_once(
                        self.interaction.response.defer(ephemeral=self.ephemeral,
                                                        thinking=not self.update),
                        self.interaction,
                    )
            except discord.HTTPException as exc:  # the reply will say what went wrong
                log.warning("could not defer interaction %s: %s", self.interaction.id, exc)
            finally:
                self._answered()

    async def send(self, reply: Reply, *, ephemeral: bool | None = None) -> int | None:
        """The response, or the follow-up once deferred; the message id (None if this
        interaction was answered by an earlier delivery of it)."""
        visible = self.ephemeral if ephemeral is None else ephemeral
        async with self._lock:
            if not self.interaction.response.is_done():
                try:
                    async with self._first_response_lane():
                        return await send(self.interaction, reply, ephemeral=visible)
                finally:
                    self._answered()

        async def follow_up() -> int | None:
            async with self._lock:
                return await send(self.interaction, reply, ephemeral=visible)

        if self.interaction.type is discord.InteractionType.component:
            return await outbox().send(Kind.FOLLOW_UP, follow_up)
        return await follow_up()

    async def edit(self, reply: Reply) -> None:
        """The component's own message becomes `reply` (its buttons gone), as the response
        or, once deferred, as an edit of it."""
        kwargs: dict[str, Any] = {"content": reply.content, "embed": reply.embed,
                                  "view": reply.view}
        async with self._lock:
            if not self.interaction.response.is_done():
                try:
                    async with self._first_response_lane():
                        await acknowledged_once(
                            self.interaction.response.edit_message(**kwargs), self.interaction)
                        return
                finally:
                    self._answered()

        async def edit_later() -> None:
            async with self._lock:
                await self.interaction.edit_original_response(**kwargs)

        await outbox().send(Kind.FOLLOW_UP, edit_later)


async def send(interaction: discord.Interaction, reply: Reply, *, ephemeral: bool) -> int | None:
    """The response if none was sent yet, else a follow-up; returns the message id."""
    if not interaction.response.is_done():
        response = await acknowledged_once(
            interaction.response.send_message(ephemeral=ephemeral, **reply.kwargs()), interaction
        )
        return response.message_id if response is not None else None
    message = await interaction.followup.send(ephemeral=ephemeral, wait=True, **reply.kwargs())
    return message.id


async def acknowledged_once(call: Awaitable[T], interaction: discord.Interaction) -> T | None:
    """Await the first response to an interaction. Discord may deliver an interaction twice
    (a gateway resume); the first delivery answered it, so the second gets None."""
    try:
        return await call
    except discord.HTTPException as exc:
        if exc.code != ALREADY_ACKNOWLEDGED:
            raise
        log.info("interaction %s was delivered again; answered already", interaction.id)
        return None


async def reader(service: QuizService, interaction: discord.Interaction) -> Translator:
    """The language of what one person reads (an ephemeral reply, a DM)."""
    return translator(await service.locales.for_person(person_of(interaction),
                                                       chat_of(interaction)))


class ErrorReplies:
    """What a person sees when their command or click failed."""

    def __init__(self, service: QuizService) -> None:
        self.service = service

    async def command_failed(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        """For the command tree's `on_error` (client.py): every slash command's error."""
        original = error.original if isinstance(error, app_commands.CommandInvokeError) \
            else error
        command = interaction.command.qualified_name if interaction.command else "?"
        await self.failed(interaction, original,
                          f"/{command} {interaction.namespace.__dict__}")

    async def failed(self, interaction: discord.Interaction, error: BaseException,
                     what: str) -> None:
        """`what` names the command or click for the log."""
        if isinstance(error, AlreadyHandled):  # a copy of an interaction handled before:
            log.info("%s: %s", what, error)  # its effect and reply exist; nothing to say
            return
        try:
            if isinstance(error, UserError):
                t = await reader(self.service, interaction)
                text = render.error_text(error, t, self.service.questions.quizzes(t.locale))
                if isinstance(error, StillOpen) and (link := jump_link(interaction, error)):
                    text += "\n" + link  # Discord shows it as a link to the open question
                await send(interaction, Reply.text(text), ephemeral=True)
                return
        except discord.HTTPException as exc:  # e.g. the 3 s or 15 min window has passed
            log.warning("could not explain an error to interaction %s: %s", interaction.id, exc)
            return
        if storage_unavailable(error):
            log.warning("%s not stored: the storage cannot be used now (%s: %s)", what,
                        type(error).__name__, error)
            await self.not_saved(interaction)
            return
        log.error("%s failed: user %s channel %s guild %s", what, interaction.user.id,
                  interaction.channel_id, interaction.guild_id, exc_info=error)
        await self.apologize(interaction)

    async def _translator(self, interaction: discord.Interaction) -> Translator:
        try:
            return await asyncio.wait_for(reader(self.service, interaction), 1.0)
        except Exception:  # the database may be what failed: the client's language
            return translator(normalize(str(interaction.locale)) or "en")

    async def not_saved(self, interaction: discord.Interaction) -> None:
        """Nothing of the interaction was stored: never "recorded", and it is not retried."""
        t = await self._translator(interaction)
        if interaction.type is discord.InteractionType.component:
            text = t.gettext("Your answer was not saved: I cannot save anything right now. "
                             "Please click again in a moment.")
        else:
            text = t.gettext("Nothing was saved: I cannot save anything right now. Please "
                             "try again in a moment.")
        await self._send_error(interaction, text)

    async def apologize(self, interaction: discord.Interaction) -> None:
        """After an unexpected error: a short ephemeral apology, never "This interaction
        failed"."""
        t = await self._translator(interaction)
        await self._send_error(interaction, t.gettext(
            "Sorry, something went wrong on our side. Please try again in a moment."))

    async def _send_error(self, interaction: discord.Interaction, text: str) -> None:
        try:
            await send(interaction, Reply(content=text), ephemeral=True)
        except discord.HTTPException as exc:
            log.warning("could not apologise for interaction %s: %s", interaction.id, exc)


def jump_link(interaction: discord.Interaction, error: StillOpen) -> str | None:
    """A link to the open question's message in this channel, if it is known."""
    ids = message_ids(error.refs)
    if not ids or interaction.guild_id is None:
        return None
    return f"https://discord.com/channels/{interaction.guild_id}/{interaction.channel_id}/{ids[0]}"
