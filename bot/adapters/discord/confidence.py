"""The confidence tap (/settings confidence on): "How sure are you?" between a press and its
answer.

Where the chat asks, an option's press (a multi's select, an order's Submit) records nothing:
it is answered with "How sure are you?" and four buttons, Sure, Think so, Guessing and Skip,
ephemeral in a channel (a plain message in a DM, like the rest of a private run). The tap
records the answer with its confidence in one `QuizService.answer` call (the review card and
the boards are computed from the stored answer, so a confidence stored later would miss them)
and edits the prompt into the result. Each button's custom_id carries the first step: the
post, the question's message (which must still be the post's), the response (`o<option>`,
`m<picks>`, `s<order>`) and the confidence (`0`-`2`, `n` for Skip), so a restart between
press and tap loses nothing and nothing is held in memory. A tap naming another post, an
option outside the question or a confidence outside 0-2 is refused and records nothing.
Whether a press asks is the core's to say (bot/core/confidence_ask.py, Telegram's rule too):
a closed question, a second answer (the first is final) or an option the question has not is
answered at once, so the core's refusal says why.

Typed kinds ask in their form instead (kinds.py): a select under the answer, left empty to skip.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, ClassVar

import discord

from bot.adapters.discord.replies import Reply, Responder, reader
from bot.content.limits import DC_CUSTOM_ID
from bot.core import render
from bot.core.models import (
    AnswerResult,
    AnswerStatus,
    Confidence,
    Ordered,
    Person,
    Picks,
    Response,
)
from bot.core.service import QuizService
from bot.i18n import _

if TYPE_CHECKING:
    from bot.adapters.discord.buttons import AnswerClicks
    from bot.adapters.discord.intake import Intake

log = logging.getLogger(__name__)

# Wide enough that a forged value reaches the handler and is refused politely.
TEMPLATE = (r"qc:(?P<post>[0-9]{1,20}):(?P<message>[0-9]{1,20}):(?P<step>[oms][0-9]{0,12}):"
            r"(?P<conf>[0-9]|n)")
SKIP = "n"
# the buttons in the order shown, with what each stores
CHOICES = (
    (_("Sure"), str(int(Confidence.SURE)), discord.ButtonStyle.success),
    (_("Think so"), str(int(Confidence.THINK_SO)), discord.ButtonStyle.primary),
    (_("Guessing"), str(int(Confidence.GUESSING)), discord.ButtonStyle.secondary),
    (_("Skip"), SKIP, discord.ButtonStyle.secondary),
)


def step_of(response: Response) -> str | None:
    """The first step as a custom_id carries it; None for a response no button carries (a
    typed one)."""
    if isinstance(response, int):
        return f"o{response}"
    if isinstance(response, Picks):
        return "m" + "".join(str(i) for i in sorted(response.shown))
    if isinstance(response, Ordered):
        return "s" + "".join(str(i) for i in response.shown)
    return None


def response_of(step: str) -> Response | None:
    """The response a custom_id's step names; None when it names none (an empty option, a
    pick given twice). Whether it fits the question is the core's to say."""
    kind, digits = step[0], step[1:]
    if not digits:
        return None
    if kind == "o":
        return int(digits)
    if kind == "m":
        picks = frozenset(int(c) for c in digits)
        return Picks(picks) if len(picks) == len(digits) else None
    return Ordered(tuple(int(c) for c in digits))


def confidence_of(value: str) -> Confidence | None:
    """What a tap stores: a confidence, or None for Skip. ValueError for anything else."""
    return None if value == SKIP else Confidence(int(value))  # the enum refuses 3 to 9


def tap_id(post_id: int, message_id: int, step: str, conf: str) -> str:
    value = f"qc:{post_id}:{message_id}:{step}:{conf}"
    assert len(value) <= DC_CUSTOM_ID
    return value


class ConfidenceButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=TEMPLATE):
    """One of the four answers to "How sure are you?"."""

    taps: ClassVar[ConfidenceTaps | None] = None
    intake: ClassVar[Intake | None] = None

    def __init__(self, post_id: int, message_id: int, step: str, conf: str,
                 label: str = "…", style: discord.ButtonStyle = discord.ButtonStyle.primary,
                 ) -> None:
        super().__init__(discord.ui.Button(
            label=label[:80], style=style, custom_id=tap_id(post_id, message_id, step, conf)))
        self.post_id, self.message_id, self.step, self.conf = post_id, message_id, step, conf

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> ConfidenceButton:
        return cls(int(match["post"]), int(match["message"]), match["step"], match["conf"])

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return self.intake is None or self.intake.admit(interaction)

    async def callback(self, interaction: discord.Interaction) -> None:
        if self.taps is not None:
            await self.taps.tap(interaction, self.post_id, self.message_id, self.step,
                                self.conf)


class ConfidenceTaps:
    """Whether a chat asks, the prompt, and the tap that answers."""

    def __init__(self, service: QuizService, intake: Intake | None = None) -> None:
        self.service = service
        self.clicks: AnswerClicks | None = None  # set by AnswerClicks

        class Bound(ConfidenceButton, template=TEMPLATE):
            pass

        Bound.taps, Bound.intake = self, intake
        self.button: type[ConfidenceButton] = Bound

    async def asks(self, chat_key: str, post_id: int, person: Person,
                   response: Response | None = None) -> bool:
        """Ask how sure before recording `response` (None: a typed answer's form, which
        asks in itself)? The core's rule, as Telegram's (bot/core/confidence_ask.py): the
        chat's setting, an open post not yet answered, an answer it offers."""
        return await self.service.confidence.asks(post_id, person, response,
                                                  chat_key=chat_key, in_form=response is None)

    async def prompt(self, responder: Responder, interaction: discord.Interaction,
                     post_id: int, message_id: int, step: str, *, ephemeral: bool) -> None:
        """"How sure are you?" with its four buttons, each carrying the first step."""
        t = await reader(self.service, interaction)
        view = discord.ui.View(timeout=None)
        for label, conf, style in CHOICES:
            view.add_item(self.button(post_id, message_id, step, conf, t.gettext(label),
                                      style))
        await responder.send(Reply(content=t.gettext("How sure are you?"), view=view),
                             ephemeral=ephemeral)

    async def tap(self, interaction: discord.Interaction, post_id: int, message_id: int,
                  step: str, conf: str) -> None:
        assert self.clicks is not None
        try:
            response = response_of(step)
            try:
                confidence = confidence_of(conf)
            except ValueError:
                response = None
            if response is None:
                log.info("refused a confidence tap %r %r on post %s", step, conf, post_id)
                await self.refuse(interaction, post_id)
                return
            await self.clicks.answer(interaction, post_id, response, message_id=message_id,
                                     confidence=confidence, tapped=True)
        except Exception as exc:
            await self.clicks.errors.failed(
                interaction, exc, f"confidence tap {step}:{conf} on post {post_id}")

    async def refuse(self, interaction: discord.Interaction, post_id: int) -> None:
        t = await reader(self.service, interaction)
        text = render.result_text(AnswerResult(AnswerStatus.INVALID_OPTION, post_id), t)
        async with Responder(interaction, ephemeral=True) as responder:
            await responder.send(Reply.text(text), ephemeral=True)
