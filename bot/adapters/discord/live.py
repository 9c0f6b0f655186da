"""Live sessions and peer rounds on Discord: /host, /peer, /next, /pause, /skip, /end, and
the Join, answer and "My place" buttons. The rules are the core's (live.py, peer.py).

- Buttons are DynamicItems whose custom_id carries what a click needs (`lv:join`,
  `lv:<post>:<option>`, `lv:place:<session>`), so they work after a restart. Each click is
  answered ephemerally, after the core stored it: nobody sees another's choice, which keeps a
  peer round's first vote hidden.
- The countdown is the question message edited by the scheduler's tick at most once per
  COUNTDOWN_EVERY; discord.py keeps to the per-route limits Discord sends (it waits on 429).
- The podium carries a "My place" button: each person's rank, ephemeral.
- A peer round's discussion opens in a thread started from the question's message where the
  bot may create one (Create Public Threads); else it stays in the channel.
"""

from __future__ import annotations

import asyncio
import logging
import re
from datetime import timedelta
from typing import Any, ClassVar

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.embeds import message_text
from bot.adapters.discord.identity import (
    can_manage,
    channel_id_of,
    chat_of,
    message_ids,
    message_ref,
    person_of,
)
from bot.adapters.discord.intake import Intake
from bot.adapters.discord.replies import ErrorReplies, Reply, Responder, reader
from bot.core import live_text
from bot.core.live import (
    Asked,
    Closed,
    Countdown,
    EditPacer,
    Lobby,
    Paused,
    Podium,
    Revealed,
)
from bot.core.models import ShownQuestion
from bot.core.peer import PeerResult, Revoting, Split
from bot.core.render import LETTERS, letter
from bot.core.service import QuizService
from bot.i18n import Translator, _, translator

log = logging.getLogger(__name__)

COUNTDOWN_EVERY = timedelta(seconds=3)


# wide enough that a forged number still reaches the core, which refuses it politely
TEMPLATE = r"lv:(?P<what>join|place|[0-9]{1,20}):?(?P<arg>[0-9]{0,20})"


def _id(digits: str) -> int | None:
    """A custom_id's number (the template allows 20 digits), None past a 64-bit id: a forged
    button, which the database would refuse with an overflow."""
    return int(digits) if len(digits) <= 18 else None


class LiveButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=TEMPLATE):
    """Join (`lv:join`), an answer (`lv:<post>:<option>`) or "My place" (`lv:place:<id>`);
    `cog` is set on the subclass each bot registers, so two bots never share it."""

    cog: ClassVar[LiveCog | None] = None

    def __init__(self, what: str, arg: str = "", *, label: str = "",
                 style: discord.ButtonStyle = discord.ButtonStyle.primary) -> None:
        custom_id = f"lv:{what}" + (f":{arg}" if arg else "")
        super().__init__(discord.ui.Button(label=label or "?", style=style,
                                           custom_id=custom_id))
        self.what, self.arg = what, arg

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
        match: re.Match[str], /,
    ) -> LiveButton:
        return cls(match["what"], match["arg"], label=getattr(item, "label", "") or "?")

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        # runs in the task that handles the click: a copy is dropped, a stop waits for it
        return self.cog is None or self.cog.intake is None or self.cog.intake.admit(interaction)

    async def callback(self, interaction: discord.Interaction) -> None:
        if self.cog is not None:
            await self.cog.clicked(interaction, self.what, self.arg)


class LiveCog(commands.Cog):
    def __init__(self, service: QuizService, intake: Intake | None = None,
                 errors: ErrorReplies | None = None) -> None:
        self.service = service
        self.intake = intake
        self.errors = errors or ErrorReplies(service)
        # the joined count on the lobby: per bot, never shared by two bots in one process
        self.lobby_edits = EditPacer(COUNTDOWN_EVERY.total_seconds())

        class BoundLiveButton(LiveButton, template=TEMPLATE):
            pass

        BoundLiveButton.cog = self
        self.button = BoundLiveButton
        self.dynamic_items = (BoundLiveButton,)  # registered by the bot's setup_hook
        self.client: discord.Client | None = None  # set by build_bot

    # views -------------------------------------------------------------------------------
    def join_view(self, lobby: Lobby, t: Translator) -> discord.ui.View:
        """Join, or one button per team where people choose theirs."""
        view = discord.ui.View(timeout=None)
        if not lobby.session.choose:
            view.add_item(self.button("join", label=t.gettext("Join"),
                                      style=discord.ButtonStyle.success))
        for k in range(lobby.session.teams if lobby.session.choose else 0):
            view.add_item(self.button("join", str(k), label=live_text.team_label(k, t),
                                      style=discord.ButtonStyle.success))
        return view

    def answer_view(self, question: ShownQuestion) -> discord.ui.View:
        view = discord.ui.View(timeout=None)
        for i in range(min(len(question.options), len(LETTERS))):
            view.add_item(self.button(str(question.post_id), str(i), label=letter(i)))
        return view

    def place_view(self, session_id: int, label: str) -> discord.ui.View:
        view = discord.ui.View(timeout=None)
        view.add_item(self.button("place", str(session_id), label=label,
                                  style=discord.ButtonStyle.secondary))
        return view

    # commands ----------------------------------------------------------------------------
    @app_commands.command(name="host", description=_("Host a live quiz in this channel"))
    @app_commands.describe(
        quiz=_("A quiz or topic (empty: any)"),
        questions=_("How many questions (1 to 20)"),
        teams=_("Teams (2 to 6; empty: everyone for themselves)"),
        speed=_("Faster right answers score more"),
        seconds=_("Seconds per question (5 to 600)"),
        choose=_("People choose their team on joining (with teams)"),
    )
    async def host_command(
        self, interaction: discord.Interaction, quiz: str | None = None, questions: int = 5,
        teams: int = 0, speed: bool = False, seconds: int = 30, choose: bool = False,
    ) -> None:
        async with Responder(interaction, ephemeral=False) as responder:
            lobby = await self.service.host(
                chat_of(interaction), person_of(interaction), quiz, questions,
                allowed=can_manage(interaction), teams=teams, speed=speed, seconds=seconds,
                choose=choose)
            t = translator(lobby.session.locale)
            if lobby.took_over:
                await responder.send(Reply.text(live_text.took_over_text(t)))
                return
            message_id = await responder.send(Reply(
                content=message_text(live_text.lobby_text(lobby, t)),
                view=self.join_view(lobby, t)))
            if message_id is not None:  # edited when the session ends
                await self.service.live.lobby_shown(lobby.session.id, message_ref(message_id))

    @app_commands.command(name="peer", description=_("A peer-instruction round: vote, "
                                                     "discuss, vote again"))
    @app_commands.describe(quiz=_("A quiz or topic (empty: any)"))
    async def peer_command(self, interaction: discord.Interaction,
                           quiz: str | None = None) -> None:
        async with Responder(interaction, ephemeral=False) as responder:
            shown = await self.service.peer_round(chat_of(interaction), person_of(interaction),
                                                  quiz, allowed=can_manage(interaction))
            if isinstance(shown, Lobby):
                t = translator(shown.session.locale)
                await responder.send(Reply.text(live_text.took_over_text(t)))
                return
            await self._reply(responder, shown)

    @app_commands.command(name="next", description=_("The live session's next step (host)"))
    async def next_command(self, interaction: discord.Interaction) -> None:
        async with Responder(interaction, ephemeral=False) as responder:
            event = await self.service.live_next(chat_of(interaction), person_of(interaction))
            await self._reply(responder, event)

    @app_commands.command(name="pause", description=_("Pause or resume the countdown (host)"))
    async def pause_command(self, interaction: discord.Interaction) -> None:
        async with Responder(interaction, ephemeral=False) as responder:
            await self._reply(responder, await self.service.live.pause(
                chat_of(interaction).key, person_of(interaction)))

    @app_commands.command(name="skip", description=_("Skip the open question (host)"))
    async def skip_command(self, interaction: discord.Interaction) -> None:
        async with Responder(interaction, ephemeral=False) as responder:
            await self._reply(responder, await self.service.live.skip(
                chat_of(interaction).key, person_of(interaction)))

    @app_commands.command(name="end", description=_("End the live session: the podium (host)"))
    async def end_command(self, interaction: discord.Interaction) -> None:
        async with Responder(interaction, ephemeral=False) as responder:
            await self._reply(responder, await self.service.live.end(
                chat_of(interaction).key, person_of(interaction)))

    # clicks ------------------------------------------------------------------------------
    async def clicked(self, interaction: discord.Interaction, what: str, arg: str) -> None:
        try:
            await self._clicked(interaction, what, arg)
        except Exception as exc:
            # explained here (a refusal, ephemeral); discord.py would only log it and leave
            # the click unanswered ("This interaction failed")
            await self.errors.failed(interaction, exc, f"live click lv:{what}:{arg}")

    async def _clicked(self, interaction: discord.Interaction, what: str, arg: str) -> None:
        person, chat = person_of(interaction), chat_of(interaction)
        async with Responder(interaction, ephemeral=True) as responder:
            t = await reader(self.service, interaction)
            if what == "join":
                lobby = await self.service.live.join(chat.key, person, arg or None)
                await responder.send(Reply.text(live_text.joined_text(lobby, t)))
                if interaction.message is not None and self.lobby_edits.due(
                        interaction.message.id, asyncio.get_running_loop().time()):
                    shown = translator(lobby.session.locale)
                    everyone = await self.service.live.lobby(chat.key)  # who joined
                    await interaction.message.edit(content=message_text(
                        live_text.lobby_text(everyone, shown)))
                return
            if what == "place":
                session_id = _id(arg or "0")
                place = None if session_id is None else \
                    await self.service.live.place(session_id, person.key)
                text = t.gettext("You did not play in this session.") if place is None \
                    else live_text.rank_text(place[0], place[1], t)
                await responder.send(Reply.text(text))
                return
            post_id, option = _id(what), _id(arg or "0")
            if post_id is None or option is None:  # forged: no post has such an id
                await responder.send(Reply.text(t.gettext("This question is closed.")))
                return
            result = await self.service.live_answer(post_id, person, option)
            notice = {"accepted": t.gettext("Your answer is in."),
                      "duplicate": t.gettext("Your first answer stands."),
                      "closed": t.gettext("This question is closed.")}[result.status]
            await responder.send(Reply.text(notice))
            if result.closed is not None:  # everyone joined has answered
                await self.show(result.closed)

    # what the channel sees -----------------------------------------------------------------
    async def _reply(self, responder: Responder, event: object) -> None:
        """A command's event as its reply: a step of the session through the durable
        deliveries (once, whoever tries it: live.py `show`), a pause plainly."""
        session = getattr(event, "session", None)
        if session is None:
            return
        if isinstance(event, Paused):
            await responder.send(Reply.text(self.text_of(event, translator(session.locale))))
            return
        if not await self.service.live.show(
                event, lambda closed: self._send_reply(responder, event, closed)):
            # shown by another process, or refused (the tick shows it again): the command
            # is still answered
            t = translator(session.locale)
            await responder.send(Reply.text(t.gettext("This step is shown in the chat.")))

    async def _send_reply(self, responder: Responder, event: object,
                          closed: Closed | None) -> None:
        await self._close_messages(event, closed)
        if isinstance(event, Asked | Revoting):
            await self._send_question(responder, event)
            return
        session = getattr(event, "session", None)
        if session is None:
            return
        t = translator(session.locale)
        text = live_text.split_text(event, t, await self._discussion(event, t)) \
            if isinstance(event, Split) else self.text_of(event, t)
        view = self.place_view(session.id, t.gettext("My place")) \
            if isinstance(event, Podium) else None
        await responder.send(Reply(content=message_text(text), view=view)
                             if view is not None else Reply.text(text))

    async def _send_question(self, responder: Responder, event: Asked | Revoting) -> None:
        t = translator(event.session.locale)
        message_id = await responder.send(Reply(
            content=message_text(self.question_text(event, t)),
            view=self.answer_view(event.question)))
        if message_id is not None:
            await self.service.questions.bind(event.question.post_id, message_ref(message_id))

    @staticmethod
    def question_text(event: Asked | Revoting, t: Any) -> str:
        text = live_text.question_text(event.question, event.session.seconds, t)
        return text if isinstance(event, Asked) else \
            live_text.revote_text(event, t) + "\n\n" + text

    @staticmethod
    def text_of(event: object, t: Any) -> str:
        if isinstance(event, Revealed):
            return live_text.revealed_text(event, t)
        if isinstance(event, Paused):
            return live_text.paused_text(event, t)
        if isinstance(event, Split):
            return live_text.split_text(event, t)
        if isinstance(event, PeerResult):
            return live_text.peer_result_text(event, t)
        if isinstance(event, Podium):
            return live_text.podium_text(event, t)
        return ""

    def _channel(self, chat_key: str) -> discord.PartialMessageable | None:
        if self.client is None:
            return None
        return self.client.get_partial_messageable(channel_id_of(chat_key))

    async def show(self, event: object) -> None:
        """An event the tick decided, or a close an answer caused, as a channel message: a
        step of the session through the durable deliveries (live.py `show`)."""
        session = getattr(event, "session", None)
        if session is None or self._channel(session.chat_key) is None:
            return
        if isinstance(event, Paused):
            await self._post(event)
            return
        await self.service.live.show(event, lambda closed: self._post(event, closed))

    async def _close_messages(self, event: object, closed: Closed | None) -> None:
        """The question message the step closed (no buttons, no countdown); the lobby
        message once the session ended."""
        session = getattr(event, "session", None)
        if session is None or (channel := self._channel(session.chat_key)) is None:
            return
        t = translator(session.locale)
        edits: list[tuple[int, str]] = []
        if closed is not None and (ids := message_ids(closed.refs)):
            edits.append((max(ids), live_text.closed_question_text(closed.question, t)))
        if isinstance(event, Podium) and session.lobby_ref \
                and (lobby := message_ids((session.lobby_ref,))):
            edits.append((lobby[0], live_text.lobby_over_text(event, t)))
        for message_id, text in edits:
            try:
                await channel.get_partial_message(message_id).edit(
                    content=message_text(text), view=None)
            except discord.NotFound:  # deleted by a moderator
                log.info("live message %s is gone", message_id)

    async def _post(self, event: object, closed: Closed | None = None) -> None:
        session = getattr(event, "session", None)
        if session is None or (channel := self._channel(session.chat_key)) is None:
            return
        await self._close_messages(event, closed)
        t = translator(session.locale)
        if isinstance(event, Asked | Revoting):
            message = await channel.send(content=message_text(self.question_text(event, t)),
                                         view=self.answer_view(event.question))
            await self.service.questions.bind(event.question.post_id, message_ref(message.id))
            return
        if isinstance(event, Podium):
            await channel.send(content=message_text(self.text_of(event, t)),
                               view=self.place_view(session.id, t.gettext("My place")))
            return
        if isinstance(event, Split):
            text = live_text.split_text(event, t, await self._discussion(event, t))
            await channel.send(content=message_text(text))
            return
        await channel.send(content=message_text(self.text_of(event, t)))

    async def _discussion(self, split: Split, t: Translator) -> str | None:
        """A thread started from the question's message, opened by the discussion's prompt:
        its name; None where the bot may not start one (the discussion is in the channel)."""
        ids = message_ids(split.refs)
        if self.client is None or not ids:
            return None
        name = live_text.discussion_name(split, t)
        try:
            thread = await self.client.http.start_thread_with_message(
                channel_id_of(split.session.chat_key), ids[0], name=name,
                auto_archive_duration=60)
            await self.client.get_partial_messageable(int(thread["id"])).send(
                content=message_text(live_text.discussion_text(split, t)))
        except discord.HTTPException as exc:  # no Create Public Threads, or not a text channel
            log.info("the discussion in %s stays in the channel: %s", split.session.chat_key,
                     exc)
            return None
        return str(thread.get("name") or name)

    async def edit_countdown(self, countdown: Countdown) -> None:
        if countdown.question is None or (
                channel := self._channel(countdown.session.chat_key)) is None:
            return
        t = translator(countdown.session.locale)
        if not (ids := message_ids(countdown.refs)):
            return
        try:  # the newest: a revote's, not the first vote's
            await channel.get_partial_message(max(ids)).edit(
                content=message_text(live_text.countdown_text(
                    countdown, countdown.question, t)))
        except discord.NotFound:  # deleted by a moderator
            log.info("countdown message %s is gone", max(ids))
