"""The answer buttons: a DynamicItem whose custom_id names the post and the option.

All the state a click needs is in the custom_id (`qz:<post>:<option>`) and the database, so
buttons on messages sent before a restart keep working (discord.py's
examples/views/dynamic_counter.py). The clicked message must also be the one bound to that post,
so a custom_id edited by a modified client cannot answer some other question.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, cast

import discord

from bot.adapters.discord.embeds import message_text, question_embed, run_summary_embed
from bot.adapters.discord.identity import chat_of, message_ref, person_of, personal_locale
from bot.adapters.discord.replies import Reply, apologize
from bot.content.limits import DC_CUSTOM_ID
from bot.core import render
from bot.core.models import AnswerResult, AnswerStatus, PostSummary, ShownQuestion
from bot.core.render import LETTERS, letter
from bot.i18n import translator

if TYPE_CHECKING:
    from bot.adapters.discord.client import QuizClient

log = logging.getLogger(__name__)

# Wide enough that a forged number still reaches the handler and gets a polite refusal
# (a custom_id that does not match is dropped by discord.py without any reply).
TEMPLATE = r"qz:(?P<post>[0-9]{1,20}):(?P<opt>[0-9]{1,9})"


def custom_id(post_id: int, option: int) -> str:
    value = f"qz:{post_id}:{option}"
    assert len(value) <= DC_CUSTOM_ID
    return value


class AnswerButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=TEMPLATE):
    def __init__(
        self,
        post_id: int,
        option: int,
        *,
        style: discord.ButtonStyle = discord.ButtonStyle.primary,
        disabled: bool = False,
    ) -> None:
        # a forged option number still needs a label: building this item must not fail, or
        # discord.py drops the click without a reply
        label = letter(option) if option < len(LETTERS) else "?"
        super().__init__(discord.ui.Button(
            label=label, style=style, disabled=disabled, custom_id=custom_id(post_id, option),
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

    async def callback(self, interaction: discord.Interaction) -> None:
        client = cast("QuizClient", interaction.client)
        try:
            await answer_click(client, interaction, self.post_id, self.option)
        except Exception:
            # logged here with context; discord.py would log it without and leave the click
            # unanswered ("This interaction failed")
            log.exception(
                "answer click failed: post %s option %s user %s channel %s message %s",
                self.post_id, self.option, interaction.user.id, interaction.channel_id,
                interaction.message.id if interaction.message else None,
            )
            await apologize(interaction, client.service)


def answer_view(q: ShownQuestion) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for i in range(len(q.options)):
        view.add_item(AnswerButton(q.post_id, i))
    return view


def closed_view(summary: PostSummary) -> discord.ui.View:
    """Disabled buttons, the correct one green."""
    view = discord.ui.View(timeout=None)
    q = summary.question
    for i in range(len(q.options)):
        style = discord.ButtonStyle.success if i == q.correct else discord.ButtonStyle.secondary
        view.add_item(AnswerButton(q.post_id, i, style=style, disabled=True))
    return view


async def answer_click(
    client: QuizClient, interaction: discord.Interaction, post_id: int, option: int
) -> None:
    service = client.service
    person, chat = person_of(interaction), chat_of(interaction)
    message = interaction.message

    async def work() -> Reply:
        locale = await personal_locale(service, interaction)
        ref = message_ref(message.id) if message else None
        bound = await service.post_id_for(ref) if ref else None
        if bound is None and ref:
            await client.publisher.wait_bound(post_id)  # posted a moment ago, not yet bound
            bound = await service.post_id_for(ref)
        if bound != post_id:
            log.info("refused click on post %s from message %s (bound to %s)",
                     post_id, message.id if message else None, bound)
            refusal = AnswerResult(AnswerStatus.UNKNOWN_POST, post_id)
            return Reply.text(render.result_text(refusal, translator(locale)))
        result = await service.answer(post_id, person, option, locale=locale)
        return _after_answer(client, chat.key, message, result)

    # everything inside `work` counts against Discord's 3 s; a run's next question arrives
    # with the reply and is bound like any other question
    await client.publisher.show(interaction, work(), ephemeral=True)


def _after_answer(
    client: QuizClient, chat_key: str, message: discord.Message | None, result: AnswerResult
) -> Reply:
    t = translator(result.locale)
    text = render.result_text(result, t, details=True)
    if result.status is not AnswerStatus.ACCEPTED:
        return Reply.text(text)
    if result.next_question is not None:
        q = result.next_question
        return Reply(content=message_text(text), embed=question_embed(q, t), view=answer_view(q),
                     post_id=q.post_id)
    if result.run_summary is not None:
        return Reply(content=message_text(text), embed=run_summary_embed(result.run_summary, t))
    if message is not None:
        client.publisher.answered(result.post_id, chat_key, message.id)
    return Reply.text(text)
