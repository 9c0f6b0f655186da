"""The answer buttons: a DynamicItem whose custom_id names the post and the option, and what a
click does.

All the state a click needs is in the custom_id (`qz:<post>:<option>`) and the database, so
buttons on messages sent before a restart keep working (discord.py's
examples/views/dynamic_counter.py). The clicked message must also be the one bound to that
post, so a custom_id edited by a modified client cannot answer some other question.

The path of one answer: `AnswerClicks.click` → `QuizService.answer` (counted) →
`Answers.answer` (bot/core/answers.py) → `Store.record_answer` (bot/storage/store.py) →
`SqliteStorage._record` (sqlite/storage.py) → the writer thread (sqlite/writer.py) → the SQL,
`record_answer` (sqlite/ops.py); the reply is sent only after the answer committed.
The other kinds' components (kinds.py: a select, a form, an order picker) end in the same
`AnswerClicks.answer`, with their response (Picks, Typed, Ordered) instead of an option.
A question of one of those kinds has its own component instead of a button per option;
true/false buttons say their option's text (True, False) rather than a letter.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, ClassVar

import discord

from bot.adapters.discord.confidence import ConfidenceTaps, step_of
from bot.adapters.discord.embeds import message_text, run_summary_embed
from bot.adapters.discord.identity import chat_of, person_of
from bot.adapters.discord.replies import ErrorReplies, Reply, Responder
from bot.content.items import Kind
from bot.content.limits import DC_CUSTOM_ID
from bot.core import render
from bot.core.models import (
    AnswerResult,
    AnswerStatus,
    Confidence,
    PostSummary,
    Response,
    ShownQuestion,
)
from bot.core.render import LETTERS, letter
from bot.core.service import QuizService
from bot.i18n import translator

if TYPE_CHECKING:
    from bot.adapters.discord.intake import Intake
    from bot.adapters.discord.kinds import KindItems
    from bot.adapters.discord.publish import ChannelPublisher
    from bot.adapters.discord.reports import ReportFlag

log = logging.getLogger(__name__)

# Wide enough that a forged number still reaches the handler and gets a polite refusal
# (a custom_id that does not match is dropped by discord.py without any reply).
TEMPLATE = r"qz:(?P<post>[0-9]{1,20}):(?P<opt>[0-9]{1,9})"
ROW = 5  # buttons in a row
BOUND_MESSAGES = 1024  # (message, post) bindings a bot remembers having checked
SHARED_REPLIES = 1024  # replies to accepted answers remembered: (post, option, language) each
# refusals after which a confidence prompt has nothing left to ask
FINAL_REFUSALS = frozenset({AnswerStatus.ALREADY_ANSWERED, AnswerStatus.CLOSED})


def custom_id(post_id: int, option: int) -> str:
    value = f"qz:{post_id}:{option}"
    assert len(value) <= DC_CUSTOM_ID
    return value


class AnswerButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=TEMPLATE):
    """One option's button. Clicks are taken through `intake` and go to `clicks`, both set on
    the subclass each bot registers (`answer_buttons`), so two bots in one process never
    share state."""

    clicks: ClassVar[AnswerClicks | None] = None
    intake: ClassVar[Intake | None] = None
    flag: ClassVar[type[ReportFlag] | None] = None  # ⚑ under each question (reports.py)
    # the other kinds' components (kinds.py): a select, an Answer button, Put in order
    kinds: ClassVar[KindItems | None] = None

    def __init__(
        self,
        post_id: int,
        option: int,
        *,
        style: discord.ButtonStyle = discord.ButtonStyle.primary,
        disabled: bool = False,
        label: str | None = None,
    ) -> None:
        # a forged option number still needs a label: building this item must not fail, or
        # discord.py drops the click without a reply
        if label is None:
            label = letter(option) if option < len(LETTERS) else "?"
        super().__init__(discord.ui.Button(
            label=label[:80], style=style, disabled=disabled,
            custom_id=custom_id(post_id, option),
        ))
        self.post_id = post_id
        self.option = option

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction,
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> AnswerButton:
        return cls(int(match["post"]), int(match["opt"]))

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        # runs in the task that handles the click (discord.py's dynamic item dispatch)
        return self.intake is None or self.intake.admit(interaction)

    async def callback(self, interaction: discord.Interaction) -> None:
        if self.clicks is not None:
            await self.clicks.click(interaction, self.post_id, self.option)

    # Messages are built from the registered subclass: discord.py registers the class of the
    # DynamicItems in every view it sends, replacing what add_dynamic_items registered.
    @staticmethod
    def _label(q: ShownQuestion, i: int) -> str | None:
        """True/false buttons say True and False; other options are their letters."""
        return q.options[i] if q.kind is Kind.TRUEFALSE else None

    @classmethod
    def question_view(cls, q: ShownQuestion) -> discord.ui.View:
        view = discord.ui.View(timeout=None)
        if cls.kinds is not None and cls.kinds.add_to(view, q):
            items = ROW  # its one component fills the first row
        else:
            items = len(q.options)
            for i in range(items):
                view.add_item(cls(q.post_id, i, label=cls._label(q, i)))
        if cls.flag is not None:
            cls.flag.add_to(view, q.question_id, items)
        return view

    @classmethod
    def closed_view(cls, summary: PostSummary) -> discord.ui.View:
        """Disabled buttons, the correct one green (a select disabled, saying the right
        options; an Answer or Put in order button disabled)."""
        view = discord.ui.View(timeout=None)
        q = summary.question
        if cls.kinds is not None and cls.kinds.add_to(view, q, closed=True):
            items = ROW
        else:
            items = len(q.options)
            for i in range(items):
                style = discord.ButtonStyle.success if i == q.correct \
                    else discord.ButtonStyle.secondary
                view.add_item(cls(q.post_id, i, style=style, disabled=True,
                                  label=cls._label(q, i)))
        if cls.flag is not None:  # stays open: the summary is where a wrong key shows
            cls.flag.add_to(view, q.question_id, items)
        return view


def answer_buttons(clicks: AnswerClicks, intake: Intake | None = None,
                   flag: type[ReportFlag] | None = None) -> type[AnswerButton]:
    """The button class one bot registers with `add_dynamic_items` and builds its messages
    with: its clicks are taken through `intake` and go to `clicks`; `flag`: the ⚑."""

    class BoundAnswerButton(AnswerButton, template=TEMPLATE):
        pass

    BoundAnswerButton.clicks = clicks
    BoundAnswerButton.intake = intake
    BoundAnswerButton.flag = flag
    return BoundAnswerButton


class AnswerClicks:
    """A click becomes one `service.answer` call; the result becomes the clicker's reply."""

    def __init__(self, service: QuizService, publisher: ChannelPublisher,
                 errors: ErrorReplies, remember: int = BOUND_MESSAGES,
                 taps: ConfidenceTaps | None = None) -> None:
        self.service = service
        self.publisher = publisher
        self.errors = errors
        self.taps = taps  # "How sure are you?" where the chat asks (confidence.py)
        if taps is not None:
            taps.clicks = self
        # messages seen bound to their post: a message is bound once, right after it is sent,
        # and never to another post, so in a storm on one question only the first click
        # reads the binding from the database (a bounded LRU)
        self.remember = remember
        self._bound: OrderedDict[int, int] = OrderedDict()
        # id(result) -> (result, its reply); the result is held, so its id is not reused
        self._replies: OrderedDict[int, tuple[AnswerResult, Reply]] = OrderedDict()

    async def shows(self, message_id: int, post_id: int) -> bool:
        """Is the clicked message the one bound to `post_id` (`ChannelPublisher.shows`)?"""
        if self._bound.get(message_id) == post_id:
            self._bound.move_to_end(message_id)
            return True
        if not await self.publisher.shows(message_id, post_id):
            return False
        self._bound[message_id] = post_id
        if len(self._bound) > self.remember:
            self._bound.popitem(last=False)
        return True

    def _shared_reply(self, result: AnswerResult) -> Reply:
        """The reply to an accepted answer on a question shown to everyone. The core hands
        out one result per (post, option, language) (bot/core/answers.py), so its text is
        rendered and escaped once per result, not once per click."""
        found = self._replies.get(id(result))
        if found is not None and found[0] is result:
            self._replies.move_to_end(id(result))
            return found[1]
        text = render.result_text(result, translator(result.locale), details=True)
        reply = Reply.text(text)
        self._replies[id(result)] = (result, reply)
        if len(self._replies) > SHARED_REPLIES:
            self._replies.popitem(last=False)
        return reply

    async def click(self, interaction: discord.Interaction, post_id: int, option: int) -> None:
        try:
            await self.answer(interaction, post_id, option)
        except Exception as exc:
            # handled here with context; discord.py would only log it and leave the click
            # unanswered ("This interaction failed")
            message = interaction.message.id if interaction.message else None
            await self.errors.failed(
                interaction, exc, f"answer click (post {post_id} option {option} message "
                                  f"{message})",
            )

    async def answer(self, interaction: discord.Interaction, post_id: int, response: Response,
                     *, message_id: int | None = None, confidence: Confidence | None = None,
                     tapped: bool = False) -> None:
        """Answer `post_id` with `response` (a shown option, several, a typed text, an
        order), made on `message_id` (by default the interaction's message), which must be
        the post's; the reply once it committed. Where the chat asks how sure, a press is
        answered with the question instead (confidence.py) and `tapped` is its answer: the
        reply then replaces that question."""
        person, chat = person_of(interaction), chat_of(interaction)
        if message_id is None and interaction.message is not None:
            message_id = interaction.message.id
        # feedback is the clicker's alone in a channel; a DM is private already, and a run
        # there stays readable as plain messages (a refusal is only ever the clicker's)
        ephemeral = not chat.is_private
        async with Responder(interaction, ephemeral=ephemeral, update=tapped) as responder:
            if message_id is None or not await self.shows(message_id, post_id):
                log.info("refused click on post %s from message %s (not its message)",
                         post_id, message_id)
                locale = await self.service.locales.for_person(person, chat)
                refusal = AnswerResult(AnswerStatus.UNKNOWN_POST, post_id)
                await responder.send(
                    Reply.text(render.result_text(refusal, translator(locale))), ephemeral=True
                )
                return
            if not tapped and self.taps is not None \
                    and (step := step_of(response)) is not None \
                    and await self.taps.asks(chat.key, post_id, person, response):
                await self.taps.prompt(responder, interaction, post_id, message_id, step,
                                       ephemeral=ephemeral)
                return

            async def show(reply: Reply, *, refused: bool = False) -> None:
                # the "How sure are you?" becomes the result, or a refusal that is final (a
                # forged tap's leaves it for a real one)
                if tapped and (not refused or result.status in FINAL_REFUSALS):
                    await responder.edit(reply)
                else:
                    await responder.send(reply, ephemeral=True if refused else None)

            # the core reads the clicker's language after the answer's write, which caches
            # it: one database round trip fewer per click than asking for it first
            result = await self.service.answer(post_id, person, response,
                                               confidence=confidence)
            if result.accepted and not result.personal and result.next_question is None \
                    and result.run_summary is None:
                await show(self._shared_reply(result))
                self.publisher.answered(post_id, chat.key, message_id)
                return
            t = translator(result.locale)
            text = render.result_text(result, t, details=True)
            if not result.accepted:
                await show(Reply.text(text), refused=True)
            elif result.next_question is not None:
                if tapped:
                    await show(Reply.text(text))
                    await self.publisher.reply_with(responder, result.next_question,
                                                    ephemeral=ephemeral)
                else:
                    await self.publisher.reply_with(responder, result.next_question,
                                                    ephemeral=ephemeral, lead=text)
            elif result.run_summary is not None:
                await show(Reply(content=message_text(text),
                                 embed=run_summary_embed(result.run_summary, t)))
            else:
                await show(Reply.text(text))
