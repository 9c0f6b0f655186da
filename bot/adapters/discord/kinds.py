"""The kinds of question beyond one choice, answered on Discord.

Each is a DynamicItem whose custom_id holds all the state it needs, so every component keeps
working after a restart and nothing is kept in memory:

- several right answers (Kind.MULTI): a select menu on the question message (`qm:<post>`),
  one option per shown option, min 1 and max all of them. A select rather than toggle
  buttons and a Submit: the person's choice stays in their own client until they close the
  menu, so an answer is one interaction (the first answer is final: a toggle would be an
  interaction, and a state to keep, per option), and Discord itself holds the count to the
  range. Ten options, the packs' limit, fit the select's 25.
- a typed number or text (Kind.NUMERIC, Kind.TEXT): an "Answer" button (`qt:<post>`) opens a
  modal (`qtm:<post>`) with one text input under a label in the person's language, the
  question as its description and, for a number, its unit in the placeholder. The submission
  is taken by `KindsCog.on_interaction`, not by a Modal object in memory, so a form opened
  before a restart is still answered. Discord sends the question's message with it, and that
  message must be the post's.
- an order (Kind.ORDER): "Put in order" (`qo:<post>:::n`) opens an ephemeral picker, a
  Components V2 message: one container with the question, its items, the order so far and
  a button per item left. Each button's custom_id carries the question's message and the
  sequence so far (`qo:<post>:<message>:<sequence>:<item>`), so a press edits the picker
  to the longer sequence; Submit (`…:s`) answers with the whole order, Start over (`…:n`)
  empties it. V2 here because the picker is edited at each press and reads as one block
  (question, items, order so far, buttons), which an embed and a row of buttons apart do
  not; question messages stay embeds: their live count and closing edits, the summary chart
  and every client showing them are built on embeds, and V2 would add nothing a reader sees.

A component that names a post its message does not show, a pick outside the options or a
sequence that is not part of a permutation is refused with an ephemeral message and changes
nothing; the answer itself goes through `AnswerClicks` (buttons.py), the path every click
takes.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, ClassVar

import discord
from discord.ext import commands

from bot.adapters.discord.confidence import CHOICES, SKIP, confidence_of
from bot.adapters.discord.embeds import clip, plain
from bot.adapters.discord.identity import chat_of, person_of
from bot.adapters.discord.replies import ErrorReplies, Reply, Responder, reader
from bot.content.items import Kind
from bot.content.limits import DC_CUSTOM_ID
from bot.core import render
from bot.core.models import AnswerResult, AnswerStatus, Ordered, Picks, ShownQuestion, Typed
from bot.core.render import LETTERS, letter
from bot.core.service import QuizService
from bot.i18n import Translator, translator

if TYPE_CHECKING:
    from bot.adapters.discord.buttons import AnswerClicks
    from bot.adapters.discord.intake import Intake

log = logging.getLogger(__name__)

# Wide enough that a forged value still reaches the handler and gets a polite refusal.
PICKS_TEMPLATE = r"qm:(?P<post>[0-9]{1,20})"
TYPED_TEMPLATE = r"qt:(?P<post>[0-9]{1,20})"
ORDER_TEMPLATE = (r"qo:(?P<post>[0-9]{1,20}):(?P<message>[0-9]{0,20}):(?P<seq>[0-9]{0,12}):"
                  r"(?P<act>[0-9]{1,2}|s|n)")
TYPED_MODAL = re.compile(r"qtm:(?P<post>[0-9]{1,20})")
ANSWER_INPUT = "answer"
CONFIDENCE_INPUT = "confidence"
SAID = frozenset(value for _, value, _ in CHOICES if value != SKIP)  # the form's choices
LABEL = 45  # Discord's limit on a modal's title and a label's text
DESCRIPTION = 100  # a label's description, a select option's label, a placeholder
PLACEHOLDER = 150  # a select's placeholder
TYPED_MAX = 200  # characters a typed answer may have
ROW = 5  # buttons in a row
PICKER_TEXT = 3800  # of the 4,000 characters a V2 message's text displays may have


def menu_id(post_id: int) -> str:
    return f"qm:{post_id}"


def typed_id(post_id: int) -> str:
    return f"qt:{post_id}"


def order_id(post_id: int, message_id: int | None, seq: str, act: str) -> str:
    value = f"qo:{post_id}:{message_id or ''}:{seq}:{act}"
    assert len(value) <= DC_CUSTOM_ID
    return value


def parse_sequence(seq: str, size: int) -> tuple[int, ...] | None:
    """The shown indexes of an order so far, or None when it is not the start of a
    permutation of `size` items (a repeated item, one outside them: forged)."""
    picks = tuple(int(c) for c in seq)
    if len(set(picks)) != len(picks) or any(p >= size for p in picks):
        return None
    return picks


class PicksMenu(discord.ui.DynamicItem[discord.ui.Select[Any]], template=PICKS_TEMPLATE):
    """Several options at once: the select menu of a Kind.MULTI question."""

    answers: ClassVar[KindAnswers | None] = None
    intake: ClassVar[Intake | None] = None

    def __init__(self, post_id: int, options: tuple[str, ...] = ("?",), *,
                 placeholder: str | None = None, disabled: bool = False) -> None:
        super().__init__(discord.ui.Select(
            custom_id=menu_id(post_id), min_values=1, max_values=len(options),
            placeholder=clip(placeholder, PLACEHOLDER) if placeholder else None,
            disabled=disabled, options=[
                discord.SelectOption(label=clip(f"{letter(i)}) {text}", DESCRIPTION),
                                     value=str(i))
                for i, text in enumerate(options[:len(LETTERS)])],
        ))
        self.post_id = post_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> PicksMenu:
        return cls(int(match["post"]))

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return self.intake is None or self.intake.admit(interaction)

    async def callback(self, interaction: discord.Interaction) -> None:
        if self.answers is not None:
            data: Any = interaction.data or {}
            await self.answers.picks(interaction, self.post_id,
                                     [str(v) for v in data.get("values") or []])


class TypedButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=TYPED_TEMPLATE):
    """"Answer" under a question answered by typing: opens the form."""

    answers: ClassVar[KindAnswers | None] = None
    intake: ClassVar[Intake | None] = None

    def __init__(self, post_id: int, label: str = "…", *, disabled: bool = False) -> None:
        super().__init__(discord.ui.Button(
            label=clip(label, 80), style=discord.ButtonStyle.primary, disabled=disabled,
            custom_id=typed_id(post_id), emoji="✍️",
        ))
        self.post_id = post_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> TypedButton:
        return cls(int(match["post"]))

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return self.intake is None or self.intake.admit(interaction)

    async def callback(self, interaction: discord.Interaction) -> None:
        if self.answers is not None:
            await self.answers.open_form(interaction, self.post_id)


class OrderButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=ORDER_TEMPLATE):
    """A step of putting a question's items in order: open the picker, add an item, submit,
    start over. The sequence so far is in the custom_id."""

    answers: ClassVar[KindAnswers | None] = None
    intake: ClassVar[Intake | None] = None

    def __init__(self, post_id: int, message_id: int | None, seq: str, act: str,
                 label: str = "…", *, style: discord.ButtonStyle = discord.ButtonStyle.primary,
                 disabled: bool = False) -> None:
        super().__init__(discord.ui.Button(
            label=clip(label, 80), style=style, disabled=disabled,
            custom_id=order_id(post_id, message_id, seq, act),
        ))
        self.post_id, self.message_id, self.seq, self.act = post_id, message_id, seq, act

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> OrderButton:
        message = int(match["message"]) if match["message"] else None
        return cls(int(match["post"]), message, match["seq"], match["act"])

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return self.intake is None or self.intake.admit(interaction)

    async def callback(self, interaction: discord.Interaction) -> None:
        if self.answers is not None:
            await self.answers.order_step(interaction, self.post_id, self.message_id,
                                          self.seq, self.act)


class KindItems:
    """The component classes one bot registers and builds its question messages with."""

    def __init__(self, answers: KindAnswers | None, intake: Intake | None) -> None:
        class BoundPicks(PicksMenu, template=PICKS_TEMPLATE):
            pass

        class BoundTyped(TypedButton, template=TYPED_TEMPLATE):
            pass

        class BoundOrder(OrderButton, template=ORDER_TEMPLATE):
            pass

        for cls in (BoundPicks, BoundTyped, BoundOrder):
            cls.answers, cls.intake = answers, intake
        self.picks: type[PicksMenu] = BoundPicks
        self.typed: type[TypedButton] = BoundTyped
        self.order: type[OrderButton] = BoundOrder

    @property
    def all(self) -> tuple[type[discord.ui.DynamicItem[Any]], ...]:
        return self.picks, self.typed, self.order

    def add_to(self, view: discord.ui.View, q: ShownQuestion, *, closed: bool = False) -> bool:
        """The question's own component on `view` (row 0), for the kinds that are not
        buttons per option; False for those that are."""
        t = translator(q.locale)
        if q.kind is Kind.MULTI:
            right = ", ".join(letter(i) for i in q.correct_set)
            placeholder = ("✅ " + right) if closed else t.gettext("Choose every right answer")
            view.add_item(self.picks(q.post_id, q.options, placeholder=placeholder,
                                     disabled=closed))
        elif q.kind.typed:
            view.add_item(self.typed(q.post_id, t.gettext("Answer"), disabled=closed))
        elif q.kind is Kind.ORDER:
            view.add_item(self.order(q.post_id, None, "", "n", t.gettext("Put in order"),
                                     disabled=closed))
        else:
            return False
        return True

    def picker(self, q: ShownQuestion, message_id: int, picks: tuple[int, ...],
               t: Translator) -> discord.ui.LayoutView:
        """The ephemeral order picker (Components V2): the question, its items, the order so
        far, a button per item left, Submit once all are placed, and Start over."""
        seq = "".join(str(p) for p in picks)
        items = "\n".join(f"**{letter(i)})** {plain(text)}" for i, text in enumerate(q.options))
        so_far = " → ".join(letter(p) for p in picks) if picks else "—"
        texts = [clip(f"**{plain(q.prompt)}**", 1000), clip(items, 2400),
                 clip(t.gettext("Your order so far: {order}", order=so_far), 300)]
        assert sum(map(len, texts)) <= PICKER_TEXT
        container: discord.ui.Container[Any] = discord.ui.Container(accent_colour=0x5865F2)
        for text in texts:
            container.add_item(discord.ui.TextDisplay(text))
        left = [i for i in range(len(q.options)) if i not in picks]
        for start in range(0, len(left), ROW):
            row: discord.ui.ActionRow[Any] = discord.ui.ActionRow()
            for i in left[start:start + ROW]:
                row.add_item(self.order(q.post_id, message_id, seq, str(i), letter(i)))
            container.add_item(row)
        actions: discord.ui.ActionRow[Any] = discord.ui.ActionRow()
        actions.add_item(self.order(q.post_id, message_id, seq, "s", t.gettext("Submit"),
                                    style=discord.ButtonStyle.success, disabled=bool(left)))
        actions.add_item(self.order(q.post_id, message_id, "", "n", t.gettext("Start over"),
                                    style=discord.ButtonStyle.secondary,
                                    disabled=not picks))
        container.add_item(actions)
        view = discord.ui.LayoutView(timeout=None)
        view.add_item(container)
        return view


class TypedForm(discord.ui.Modal):
    """One text input for a typed answer, and where the chat asks (confidence.py) how sure,
    a select under it (Sure, Think so, Guessing; left empty, it skips): a typed answer is one
    submission, so the form asks rather than a second step. A select because the fake
    Discord of the tests takes selects in a form's labels, not 2026's radio groups.
    Its submission is read by KindsCog.on_interaction."""

    def __init__(self, q: ShownQuestion, t: Translator, *, ask: bool = False) -> None:
        super().__init__(title=clip(t.gettext("Your answer"), LABEL),
                         custom_id=f"qtm:{q.post_id}", timeout=None)
        if q.kind is Kind.NUMERIC:
            hint = t.gettext("A number in {unit}", unit=q.unit) if q.unit \
                else t.gettext("A number")
        else:
            hint = t.gettext("A word or a few")
        self.add_item(discord.ui.Label(
            text=clip(t.gettext("Your answer"), LABEL),
            description=clip(q.prompt, DESCRIPTION),
            component=discord.ui.TextInput(
                custom_id=ANSWER_INPUT, style=discord.TextStyle.short, min_length=1,
                max_length=TYPED_MAX, placeholder=clip(hint, DESCRIPTION),
            ),
        ))
        if ask:
            self.add_item(discord.ui.Label(
                text=clip(t.gettext("How sure are you?"), LABEL),
                component=discord.ui.Select(
                    custom_id=CONFIDENCE_INPUT, min_values=0, max_values=1, required=False,
                    placeholder=clip(t.gettext("Skip"), PLACEHOLDER),
                    options=[discord.SelectOption(label=t.gettext(label), value=value)
                             for label, value, _ in CHOICES if value != SKIP],
                ),
            ))


class KindAnswers:
    """What the kinds' components do: checks, the picker, the form; answers go to `clicks`."""

    def __init__(self, service: QuizService, clicks: AnswerClicks,
                 errors: ErrorReplies) -> None:
        self.service = service
        self.clicks = clicks
        self.errors = errors
        self.items: KindItems | None = None  # set by KindsCog

    async def refuse(self, interaction: discord.Interaction, post_id: int,
                     status: AnswerStatus = AnswerStatus.INVALID_OPTION) -> None:
        """An ephemeral refusal of a component the bot never offered; nothing changes."""
        t = await reader(self.service, interaction)
        text = render.result_text(AnswerResult(status, post_id), t)
        async with Responder(interaction, ephemeral=True) as responder:
            await responder.send(Reply.text(text), ephemeral=True)

    async def _question(self, interaction: discord.Interaction, post_id: int,
                        message_id: int | None, *kinds: Kind) -> ShownQuestion | None:
        """The question in the person's language if the message is the post's and the post
        is of one of `kinds`; refused (and None) otherwise."""
        if message_id is None or not await self.clicks.shows(message_id, post_id):
            log.info("refused a component of post %s from message %s (not its message)",
                     post_id, message_id)
            await self.refuse(interaction, post_id, AnswerStatus.UNKNOWN_POST)
            return None
        t = await reader(self.service, interaction)
        q = await self.service.questions.show(post_id, t.locale)
        if q is None or q.kind not in kinds:
            await self.refuse(interaction, post_id)
            return None
        return q

    async def picks(self, interaction: discord.Interaction, post_id: int,
                    values: list[str]) -> None:
        try:
            if not values or not all(v.isdigit() and len(v) <= 2 for v in values):
                await self.refuse(interaction, post_id)
                return
            picked = Picks(frozenset(int(v) for v in values))
            await self.clicks.answer(interaction, post_id, picked)
        except Exception as exc:
            await self.errors.failed(interaction, exc, f"picks {values} on post {post_id}")

    async def open_form(self, interaction: discord.Interaction, post_id: int) -> None:
        try:
            message = interaction.message
            q = await self._question(interaction, post_id, message.id if message else None,
                                     Kind.NUMERIC, Kind.TEXT)
            if q is None:
                return
            taps = self.clicks.taps
            ask = taps is not None and await taps.asks(chat_of(interaction).key, post_id,
                                                       person_of(interaction))
            await interaction.response.send_modal(
                TypedForm(q, await reader(self.service, interaction), ask=ask))
        except Exception as exc:
            await self.errors.failed(interaction, exc, f"answer form of post {post_id}")

    async def typed(self, interaction: discord.Interaction, post_id: int, text: str,
                    said: list[str] | None = None) -> None:
        """A submitted form: the message it was opened from must be the post's. `said`: the
        confidence chosen in it (none: skipped, or not asked); anything but one of 0-2 is
        refused and records nothing."""
        try:
            if said and (len(said) > 1 or said[0] not in SAID):
                log.info("refused a typed answer's confidence %r on post %s", said, post_id)
                await self.refuse(interaction, post_id)
                return
            confidence = confidence_of(said[0]) if said else None
            await self.clicks.answer(interaction, post_id, Typed(text), confidence=confidence)
        except Exception as exc:
            await self.errors.failed(interaction, exc, f"typed answer on post {post_id}")

    async def order_step(self, interaction: discord.Interaction, post_id: int,
                         message_id: int | None, seq: str, act: str) -> None:
        try:
            await self._order_step(interaction, post_id, message_id, seq, act)
        except Exception as exc:
            await self.errors.failed(interaction, exc,
                                     f"order step {seq!r}+{act!r} on post {post_id}")

    async def _order_step(self, interaction: discord.Interaction, post_id: int,
                          message_id: int | None, seq: str, act: str) -> None:
        opening = message_id is None  # the button on the question message itself
        if opening:
            message_id = interaction.message.id if interaction.message else None
        q = await self._question(interaction, post_id, message_id, Kind.ORDER)
        if q is None:
            return
        assert message_id is not None and self.items is not None
        picks = parse_sequence(seq, len(q.options))
        if act == "n":
            picks = ()
        elif act != "s" and picks is not None:
            picks = parse_sequence(seq + act, len(q.options))
        if picks is None or (act == "s" and len(picks) != len(q.options)):
            await self.refuse(interaction, post_id)
            return
        if act == "s":
            await self.clicks.answer(interaction, post_id, Ordered(picks), message_id=message_id)
            return
        t = await reader(self.service, interaction)
        picker = self.items.picker(q, message_id, picks, t)
        if opening:  # a new ephemeral message, deferred like any reply if it is slow
            async with Responder(interaction, ephemeral=True) as responder:
                await responder.send(Reply(view=picker), ephemeral=True)
        else:  # the picker itself becomes the longer order
            await interaction.response.edit_message(view=picker)


class KindsCog(commands.Cog):
    """The kinds' components and the typed answers' form submissions."""

    def __init__(self, answers: KindAnswers, intake: Intake | None = None) -> None:
        self.answers = answers
        self.intake = intake
        self.items = KindItems(answers, intake)
        answers.items = self.items
        self.dynamic_items = self.items.all  # registered by the bot's setup_hook

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """A submitted answer form (whichever process or run of the bot opened it)."""
        if interaction.type is not discord.InteractionType.modal_submit:
            return
        data: Any = interaction.data or {}
        match = TYPED_MODAL.fullmatch(str(data.get("custom_id", "")))
        if match is None or (self.intake is not None and not self.intake.admit(interaction)):
            return
        await self.answers.typed(interaction, int(match["post"]), submitted(data),
                                 chosen(data, CONFIDENCE_INPUT))


def _inputs(data: Any) -> list[Any]:
    """A modal submission's inputs (each in a label, or an action row)."""
    found: list[Any] = []
    for component in data.get("components") or []:
        found += [component["component"]] if "component" in component \
            else component.get("components") or []
    return found


def submitted(data: Any) -> str:
    """The answer input's value in a modal submission."""
    for c in _inputs(data):
        if c.get("custom_id") == ANSWER_INPUT:
            return str(c.get("value") or "")
    return ""


def chosen(data: Any, custom_id: str) -> list[str] | None:
    """What a select in a modal submission has chosen; None when there is no such select."""
    for c in _inputs(data):
        if c.get("custom_id") == custom_id:
            return [str(v) for v in c.get("values") or []]
    return None
