"""The slash commands: /quiz, /leaderboard, /stats, /review, /lang.

Each command turns the interaction into core values, calls QuizService, and answers through
`respond` (within Discord's 3 s). Personal answers are ephemeral and in the person's language;
a question posted in a channel is in the channel's language. QuizErrors raised here (unknown
quiz, nothing to resume, unsupported language) are explained by the tree's on_error.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING, cast

import discord
from discord import app_commands
from discord.app_commands import Choice

from bot.adapters.discord.buttons import answer_view
from bot.adapters.discord.embeds import clip, question_embed
from bot.adapters.discord.identity import (
    can_manage,
    chat_of,
    chat_wide_locale,
    person_of,
    personal_locale,
)
from bot.adapters.discord.replies import Reply, respond
from bot.content.limits import DC_CHOICE_NAME
from bot.core import render
from bot.core.models import Chat, Period, Person
from bot.i18n import LANGUAGE_NAMES, _, translator

if TYPE_CHECKING:
    from bot.adapters.discord.client import QuizClient

log = logging.getLogger(__name__)

AUTOCOMPLETE_MAX = 25  # Discord's limit on autocomplete results


def client_of(interaction: discord.Interaction) -> QuizClient:
    return cast("QuizClient", interaction.client)


def register(tree: app_commands.CommandTree[QuizClient]) -> None:
    """Add the commands to a fresh tree (one per client)."""

    # Descriptions and choice names are gettext msgids (marked with _ for extraction); the
    # tree's translator localises them when the commands are synced (localize.py).
    @tree.command(name="quiz", description=_("A question now, or a whole quiz just for you"))
    @app_commands.describe(
        quiz=_("A quiz or topic (empty: any)"),
        run=_("Take the whole quiz privately, one question after another"),
    )
    async def quiz_command(
        interaction: discord.Interaction, quiz: str | None = None, run: bool | None = None
    ) -> None:
        client = client_of(interaction)
        person, chat = person_of(interaction), chat_of(interaction)
        # A DM runs a named quiz (or resumes one) by default; a channel asks one question.
        private = run if run is not None else chat.is_private and (
            bool(quiz) or await client.service.active_run(person, chat) is not None
        )
        if private:
            await _private_run(interaction, person, chat, quiz)
        else:
            await _public_question(interaction, person, chat, quiz)

    quiz_command.autocomplete("quiz")(quiz_autocomplete)

    @tree.command(name="leaderboard", description=_("Who knows best, in this channel"))
    @app_commands.describe(period=_("Today, this week, or all time (default)"))
    @app_commands.choices(period=[
        Choice(name=_("today"), value=Period.DAY.value),
        Choice(name=_("this week"), value=Period.WEEK.value),
        Choice(name=_("all time"), value=Period.ALL.value),
    ])
    async def leaderboard_command(interaction: discord.Interaction, period: str = "all") -> None:
        await _leaderboard(interaction, period)

    @tree.command(name="stats", description=_("Your answers, accuracy and streaks"))
    async def stats_command(interaction: discord.Interaction) -> None:
        service = client_of(interaction).service

        async def work() -> Reply:
            t = translator(await personal_locale(service, interaction))
            stats = await service.stats(person_of(interaction), t.locale)
            return Reply.text(render.stats_text(stats, t))

        await respond(interaction, work(), ephemeral=True)

    @tree.command(name="review", description=_("The questions you missed, for a second look"))
    async def review_command(interaction: discord.Interaction) -> None:
        service = client_of(interaction).service

        async def work() -> Reply:
            t = translator(await personal_locale(service, interaction))
            missed = await service.review(person_of(interaction), t.locale)
            return Reply.text(render.review_text(missed, t))

        await respond(interaction, work(), ephemeral=True)

    @tree.command(name="lang", description=_("Choose your language, or the channel's"))
    @app_commands.describe(
        code=_("The language ('automatic' follows Discord's)"),
        scope=_("Just you (default), or the whole channel (needs Manage Server)"),
    )
    @app_commands.choices(
        code=[Choice(name=name, value=code) for code, name in LANGUAGE_NAMES.items()]
        + [Choice(name=_("automatic"), value="auto")],
        scope=[Choice(name=_("me"), value="me"), Choice(name=_("channel"), value="channel")],
    )
    async def lang_command(
        interaction: discord.Interaction, code: str, scope: str = "me"
    ) -> None:
        await _lang(interaction, code, scope)


async def quiz_autocomplete(
    interaction: discord.Interaction, current: str
) -> list[Choice[str]]:
    """Quizzes whose id or title (in the person's language) contains what was typed."""
    try:
        return await _quiz_choices(interaction, current)
    except Exception:  # discord.py only logs these; an empty list beats a spinner
        log.exception("autocomplete of a quiz failed for %r", current)
        return []


async def _quiz_choices(interaction: discord.Interaction, current: str) -> list[Choice[str]]:
    service = client_of(interaction).service
    locale = await personal_locale(service, interaction)
    needle = current.strip().lower()
    choices = []
    for info in service.quizzes(locale):
        if needle and needle not in info.id.lower() and needle not in info.title.lower():
            continue
        choices.append(Choice(name=clip(f"{info.title} ({info.id})", DC_CHOICE_NAME),
                              value=info.id))
    return choices[:AUTOCOMPLETE_MAX]


async def _public_question(
    interaction: discord.Interaction, person: Person, chat: Chat, selector: str | None
) -> None:
    client = client_of(interaction)
    service = client.service
    # refuse an unknown quiz before anything else happens (a new question closes the old one)
    service.check_selector(selector)

    async def work() -> Reply:
        locale = await chat_wide_locale(service, interaction)
        # a new question replaces the channel's last /quiz question; the daily question
        # stays open until the next day's (people keep their day streaks)
        for summary in await service.close_open(chat, kind="quiz"):
            try:
                await client.publisher.post_summary(summary)
            except discord.HTTPException as exc:  # the new question matters more
                log.warning("closing edit of post %s failed: %s", summary.post_id, exc)
        q = await service.ask(
            chat, selector, person=person if chat.is_private else None, locale=locale,
            open_for=timedelta(seconds=client.settings.quizbot_question_seconds),
        )
        return Reply(embed=question_embed(q, translator(locale), answered=0),
                     view=answer_view(q), post_id=q.post_id)

    await client.publisher.show(interaction, work(), ephemeral=False)


async def _private_run(
    interaction: discord.Interaction, person: Person, chat: Chat, selector: str | None
) -> None:
    """The whole quiz for one person: ephemeral in a channel, plain messages in a DM. Without
    a quiz, the person's unfinished run resumes (after a restart too)."""
    client = client_of(interaction)
    service = client.service

    async def work() -> Reply:
        locale = await personal_locale(service, interaction)
        q = await service.start_run(person, chat, selector, locale=locale)
        return Reply(embed=question_embed(q, translator(locale)), view=answer_view(q),
                     post_id=q.post_id)

    await client.publisher.show(interaction, work(), ephemeral=not chat.is_private)


async def _leaderboard(interaction: discord.Interaction, period: str) -> None:
    service = client_of(interaction).service
    person, chat = person_of(interaction), chat_of(interaction)

    async def work() -> Reply:
        t = translator(await personal_locale(service, interaction))
        try:
            chosen = Period(period.strip().lower())
        except ValueError:
            return Reply.text(t.gettext("Choose a period: day, week or all."))
        # A channel's board; in a DM, the board across every chat.
        chat_key = None if chat.is_private else chat.key
        scope = t.gettext("all chats") if chat_key is None else f"#{chat.title}"
        board = await service.leaderboard(chat_key, chosen, person_key=person.key)
        return Reply.text(render.leaderboard_text(board, t, scope=scope))

    await respond(interaction, work(), ephemeral=True)


async def _lang(interaction: discord.Interaction, code: str, scope: str) -> None:
    service = client_of(interaction).service
    person, chat = person_of(interaction), chat_of(interaction)

    async def work() -> Reply:
        if scope != "channel":
            chosen = await service.set_person_locale(person, code)
            t = translator(await personal_locale(service, interaction))
            return Reply.text(
                t.gettext("Your language is now {language}.", language=LANGUAGE_NAMES[chosen])
                if chosen else t.gettext("Your language now follows the channel or your "
                                         "Discord settings.")
            )
        if not can_manage(interaction):
            t = translator(await personal_locale(service, interaction))
            return Reply.text(t.gettext(
                "Only members with the Manage Server permission can change the channel's "
                "language. Use scope “me” to change yours."
            ))
        chosen = await service.set_chat_locale(chat, code)
        t = translator(await chat_wide_locale(service, interaction))
        return Reply.text(
            t.gettext("This channel's language is now {language}.",
                      language=LANGUAGE_NAMES[chosen])
            if chosen else t.gettext("This channel now follows the server's language.")
        )

    await respond(interaction, work(), ephemeral=True)
