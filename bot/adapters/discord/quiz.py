"""The quiz cog: /quiz, /leaderboard, /stats, /lang (/review and /remind: review.py).

Each command turns the interaction into core values, makes one QuizService call and shows the
result within Discord's 3 s (`Responder`). What happens is the core's to decide: /quiz in a
channel replaces the channel's previous question; in a DM (or with run:True) a quiz id runs
the whole quiz, a topic gives one question, no quiz resumes the unfinished run. Personal
replies are ephemeral and in the person's language. UserErrors raised here (an unknown quiz,
nothing to resume, a language refused) are rendered by the tree's `on_error`
(client.py).
"""

from __future__ import annotations

import logging

import discord
from discord import app_commands
from discord.app_commands import Choice
from discord.ext import commands

from bot.adapters.discord.embeds import clip
from bot.adapters.discord.identity import can_manage, chat_of, person_of
from bot.adapters.discord.publish import ChannelPublisher
from bot.adapters.discord.replies import Reply, Responder, reader
from bot.content.limits import DC_CHOICE_NAME
from bot.core import render
from bot.core.models import Period
from bot.core.service import QuizService
from bot.i18n import LANGUAGE_NAMES, _, translator

log = logging.getLogger(__name__)

AUTOCOMPLETE_MAX = 25  # Discord's limit on autocomplete results


async def quiz_choices(
    service: QuizService, interaction: discord.Interaction, current: str
) -> list[Choice[str]]:
    """Quizzes whose id or title (in the person's language) contains what was typed."""
    try:
        t = await reader(service, interaction)
    except Exception:  # discord.py only logs these; an empty list beats a spinner
        log.exception("autocomplete of a quiz failed for %r", current)
        return []
    needle = current.strip().lower()
    return [
        Choice(name=clip(f"{info.title} ({info.id})", DC_CHOICE_NAME), value=info.id)
        for info in service.questions.quizzes(t.locale)
        if not needle or needle in info.id.lower() or needle in info.title.lower()
    ][:AUTOCOMPLETE_MAX]


class QuizCog(commands.Cog):
    def __init__(self, service: QuizService, publisher: ChannelPublisher) -> None:
        self.service = service
        self.publisher = publisher

    # Descriptions and choice names are gettext msgids (marked with _ for extraction); the
    # tree's translator localises them when the commands are synced (localize.py).
    @app_commands.command(name="quiz",
                          description=_("A question now, or a whole quiz just for you"))
    @app_commands.describe(
        quiz=_("A quiz or topic (empty: any)"),
        run=_("Take the whole quiz privately, one question after another"),
        questions=_("How many questions in a row in this channel (1 to 20)"),
    )
    async def quiz_command(
        self, interaction: discord.Interaction, quiz: str | None = None,
        run: bool | None = None, questions: int | None = None,
    ) -> None:
        person, chat = person_of(interaction), chat_of(interaction)

        async def is_admin() -> bool:
            return can_manage(interaction)

        # One person's question in a channel is shown to them alone; a DM is private
        # already, and its messages stay readable. (A slow start defers with the visibility
        # asked for: in a channel, run:True is what makes a question one person's.)
        async with (
            Responder(interaction, ephemeral=bool(run) and not chat.is_private) as responder,
            self.service.asking.quiz(chat, person, quiz, run=run, count=questions,
                                     is_admin=is_admin) as question,
        ):
            await self.publisher.reply_with(
                responder, question, ephemeral=question.personal and not chat.is_private
            )

    @quiz_command.autocomplete("quiz")
    async def quiz_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[Choice[str]]:
        return await quiz_choices(self.service, interaction, current)

    @app_commands.command(name="leaderboard", description=_("Who knows best, in this channel"))
    @app_commands.describe(period=_("Today, this week, or all time (default)"))
    @app_commands.choices(period=[
        Choice(name=_("today"), value=Period.DAY.value),
        Choice(name=_("this week"), value=Period.WEEK.value),
        Choice(name=_("all time"), value=Period.ALL.value),
    ])
    async def leaderboard_command(
        self, interaction: discord.Interaction, period: str = Period.ALL.value
    ) -> None:
        """A channel's board; in a DM, the board across every chat. Ephemeral, with the
        caller's own rank."""
        person, chat = person_of(interaction), chat_of(interaction)
        async with Responder(interaction, ephemeral=True) as responder:
            t = await reader(self.service, interaction)
            board = await self.service.leaderboard(chat, period, person=person)
            channel = getattr(interaction.channel, "name", None)  # the server is known here
            scope = (t.gettext("all chats") if chat.is_private
                     else f"#{channel}" if channel else chat.title)
            await responder.send(Reply.text(render.leaderboard_text(board, t, scope=scope)))

    @app_commands.command(name="stats", description=_("Your answers, accuracy and streaks"))
    async def stats_command(self, interaction: discord.Interaction) -> None:
        async with Responder(interaction, ephemeral=True) as responder:
            t = await reader(self.service, interaction)
            person = person_of(interaction)
            stats = await self.service.boards.stats(person, t.locale)
            review_stats = await self.service.spaced.stats(person)
            await responder.send(Reply.text(
                render.stats_text(stats, t) + "\n" + render.review_stats_text(review_stats, t)))

    @app_commands.command(name="settings",
                          description=_("This channel's question time and who asks (admins)"))
    @app_commands.describe(
        time=_("How long a question stays open: 90 (seconds), 10m, 2h or 3d (10 s to 30 "
               "days)"),
        chart=_("A chart of the answers when a question closes"),
        quiz=_("Who starts questions and rounds"),
        peer=_("Peer rounds: percent right at the first vote that skips the discussion"),
        discussion=_("Peer rounds: discussion time, in minutes (1 to 15) or seconds (90s)"),
        confidence=_("Ask how sure with each answer (sure, think so, guessing)"),
        target=_("How often someone alone should be right, in percent (50 to 95)"),
    )
    @app_commands.choices(quiz=[
        Choice(name=_("admins only"), value="admins"), Choice(name=_("anyone"), value="anyone"),
    ])
    async def settings_command(
        self, interaction: discord.Interaction, time: str | None = None,
        chart: bool | None = None, quiz: str | None = None,
        peer: int | None = None, discussion: str | None = None,
        confidence: bool | None = None, target: int | None = None,
    ) -> None:
        """Shows the channel's settings (anyone); with an option, changes them (Manage
        Server, checked on every use: the core refuses anyone else). No mode: Discord's
        questions always come with buttons, so the confidence tap works with all of them."""
        person, chat = person_of(interaction), chat_of(interaction)
        async with Responder(interaction, ephemeral=True) as responder:
            if time is None and chart is None and quiz is None and peer is None \
                    and discussion is None and confidence is None and target is None:
                settings = await self.service.chat_settings.get(chat.key)
            else:  # a time as typed ("90", "10m", "2h", "3d"): the core reads it
                settings = await self.service.chat_settings.change(
                    chat, by=person, allowed=can_manage(interaction), seconds=time,
                    chart=chart, admins_only=quiz, peer_threshold=peer,
                    peer_discussion=discussion, confidence=confidence, target=target,
                )
            t = translator(await self.service.locales.for_audience(chat, person))
            await responder.send(Reply.text(
                render.settings_text(settings, t, modes=False) + "\n" + t.gettext(
                    "Admins (Manage Server) change them with /settings time, chart, quiz, "
                    "peer, discussion and confidence.") + "\n" + render.target_help(t)))

    @app_commands.command(name="lang", description=_("Choose your language, or the channel's"))
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
        self, interaction: discord.Interaction, code: str, scope: str = "me"
    ) -> None:
        person, chat = person_of(interaction), chat_of(interaction)
        async with Responder(interaction, ephemeral=True) as responder:
            if scope == "channel":
                chosen = await self.service.set_language(
                    person, code, chat=chat, allowed=can_manage(interaction)
                )
                t = translator(await self.service.locales.for_audience(chat, person))
                text = t.gettext("This channel's language is now {language}.",
                                 language=LANGUAGE_NAMES[chosen]) if chosen \
                    else t.gettext("This channel now follows the server's language.")
            else:
                chosen = await self.service.set_language(person, code)
                t = await reader(self.service, interaction)
                text = t.gettext("Your language is now {language}.",
                                 language=LANGUAGE_NAMES[chosen]) if chosen \
                    else t.gettext("Your language now follows the channel or your Discord "
                                   "settings.")
            await responder.send(Reply.text(text))
