"""QuizService: the one facade every adapter calls, built from small parts.

Each adapter turns a platform event into one call here and the result into platform messages.
The parts, each with its dependencies passed in:
- questions.py  choosing, posting, rendering and closing questions
- asking.py     /quiz in any chat: what replaces what, who a question is for
- answers.py    the hot path: an answer stored once and final
- quiz_runs.py       one person through a whole quiz
- boards.py     leaderboards, stats, missed questions
- daily.py      a chat's daily question
- review.py     spaced review (FSRS cards, /review, /remind)
- locales.py    which language a person or a chat reads
- delivery.py   summaries and scheduled questions onto the platforms (ChatPort)
- rounds.py     N questions in a row in a shared chat
- chat_settings.py  a chat's question time, mode, chart and who asks (/settings)
- confidence_ask.py  whether an answer waits for "How sure are you?"
- problem_reports.py  "⚑" and /report: what is wrong with a question; admins resolve
- chat_analysis.py  /analysis for admins, and charts on close summaries
- authoring.py  quiz polls sent by an author become a draft pack, published
- privacy.py    /mydata: a person's data sent to them, or deleted everywhere
- dashboard.py  /dashboard: signed links to a chat's web dashboard (dashboard_reads.py: its pages)
- assignments.py  /assign: a quiz a chat finishes privately by a deadline
- live.py       /host: a live session paced by its host; peer.py: /peer rounds;
                live_reports.py: the sessions on the dashboard
The loop that drives time (scheduler.py) calls into the same parts.
"""

from __future__ import annotations

import os
import random
import socket
import time
import uuid
from collections.abc import Collection, Sequence
from datetime import timedelta

from bot.content import Catalog
from bot.core.answers import Answers, outcome_of, platform_of
from bot.core.asking import Asking
from bot.core.assignments import Assignments
from bot.core.authoring import Authoring
from bot.core.boards import Boards
from bot.core.cards import Cards
from bot.core.chat_analysis import Charts, ItemAnalysis
from bot.core.chat_settings import ChatSettingsRules
from bot.core.clock import Clock, SystemClock
from bot.core.confidence_ask import ConfidenceAsk
from bot.core.daily import Daily
from bot.core.dashboard import DashboardAccess
from bot.core.dashboard_reads import DashboardReads
from bot.core.delivery import Delivery
from bot.core.errors import BadPeriod, DashboardOff, UnknownQuiz, may_not_change_language
from bot.core.leadership import Leadership
from bot.core.live import (
    LIVE_SECONDS,
    Asked,
    Live,
    LiveAnswer,
    Lobby,
    Podium,
)
from bot.core.live_reports import LiveReports
from bot.core.locales import Locales
from bot.core.misconceptions import Misconceptions
from bot.core.models import (
    AnswerResult,
    Chat,
    Confidence,
    Leaderboard,
    Period,
    Person,
    Response,
)
from bot.core.peer import PEER_SECONDS, Peer, PeerResult, Revoting, Split
from bot.core.peer_replay import PeerReplay
from bot.core.ports import (
    KEEP_COMMAND_KEYS,
    CardRenderer,
    ChartRenderer,
    Meter,
    NoMeter,
    Storage,
    unclaimed_command,
)
from bot.core.privacy import MyData, Privacy
from bot.core.problem_reports import ProblemReports
from bot.core.questions import Questions
from bot.core.quiz_runs import Runs
from bot.core.review import Review
from bot.core.review_export import ReviewExport
from bot.core.rounds import Rounds

DEFAULT_QUESTION_TIME = timedelta(minutes=10)


class QuizService:
    def __init__(
        self,
        catalog: Catalog,
        storage: Storage,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        *,
        question_time: timedelta = DEFAULT_QUESTION_TIME,
        charts: ChartRenderer | None = None,
        cards: CardRenderer | None = None,
        authors: Collection[str] = (),
        meter: Meter | None = None,
        web: tuple[str, str] | None = None,
        holder: str | None = None,
    ) -> None:
        """`question_time`: how long a /quiz question stays open in a shared chat;
        `charts`: draws the item-analysis charts (None: text only);
        `cards`: draws questions' cards (code, formulas, images; None: text only);
        `authors`: the person keys who may write quizzes in a chat (authoring.py);
        `meter`: counts answers and scheduler rounds for the operator (None: nothing);
        `web`: (secret, public base URL) of the web dashboard (None: /dashboard is off).
        `holder`: this process's name in the database's leases (None: host, pid and a
        random part)."""
        self.meter: Meter = meter or NoMeter()
        self.catalog = catalog
        self.storage = storage
        self.clock = clock = clock or SystemClock()
        rng = rng or random.Random()
        self.locales = Locales(storage)
        self.questions = Questions(catalog, storage, clock, rng)
        self.runs = Runs(self.questions, storage, clock)
        self.spaced = Review(self.questions, self.locales, storage, clock)
        self.review_deck = ReviewExport(catalog, storage, clock)
        self.answers = Answers(self.questions, self.runs, self.locales, storage, clock,
                               self.spaced)
        self.boards = Boards(catalog, storage, clock)
        self.daily = Daily(self.questions, self.locales, storage, clock, rng)
        # this process's name in the database's leases (shared by every process on it)
        # the same across restarts when the operator names the instance: a restarted process
        # takes up at once the deliveries its killed predecessor held (delivery.py)
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.charts = Charts(charts, storage)
        self.cards = Cards(cards, storage, clock, self.charts)
        self.chat_settings = ChatSettingsRules(storage, clock, question_time)
        # whether a press asks how sure first (/settings confidence): both adapters
        self.confidence = ConfidenceAsk(self.questions, self.chat_settings, storage, clock)
        self.rounds = Rounds(self.questions, storage, clock, self.chat_settings)
        self.delivery = Delivery(self.questions, storage, clock, self.holder,
                                 charts=self.charts, modes=self.rounds.mode)
        self.item_analysis = ItemAnalysis(self.questions, storage, self.charts)
        self.asking = Asking(self.questions, self.runs, self.locales, self.delivery,
                             storage, question_time, self.rounds)
        # which misconceptions a chat holds, and a follow-up round on one (the dashboard)
        self.misconceptions = Misconceptions(catalog, storage, self.asking, self.delivery)
        self.problem_reports = ProblemReports(catalog, storage, clock)
        self.authoring = Authoring(catalog, storage, clock, authors)
        self.answers.reload_packs = self.asking.reload_packs = self.authoring.refresh
        self.privacy = Privacy(storage, clock)
        self.dashboard = DashboardAccess(storage, clock, *(web or (None, None)))
        self.dashboard_reads = DashboardReads(catalog, storage, clock)
        # each live step shown through the durable deliveries; a step stored by a process
        # that died before showing it is shown by the next tick (peer_replay.py for /peer)
        self.live = Live(self.questions, storage, clock, self.delivery)
        self.peer = Peer(self.live, storage, clock, settings=self.chat_settings)
        PeerReplay(self.live)
        self.live_reports = LiveReports(self.live, storage)
        # a quiz given to a chat with a deadline, taken privately (assignments.py)
        self.assignments = Assignments(self.questions, self.runs, self.locales, self.delivery,
                                       storage, clock)

    # languages ---------------------------------------------------------------------------
    async def set_language(
        self, person: Person | None, code: str | None, *, chat: Chat | None = None,
        allowed: bool = True,
    ) -> str | None:
        """The person's language, or with `chat` the chat's (if `allowed`: its admins; a
        channel post speaks for the channel, with no person). Returns the locale chosen,
        None for "follow the default"."""
        if chat is None:
            if person is None:
                raise ValueError("a person's language needs the person")
            return await self.locales.set_for_person(person, code)
        if not allowed:
            raise may_not_change_language()
        return await self.locales.set_for_chat(chat, code)

    # quizzes -----------------------------------------------------------------------------
    def names_quizzes(self, selector: str) -> bool:
        """Whether `selector` is a quiz id or a topic (to tell it from other words)."""
        try:
            self.questions.select(selector)
        except UnknownQuiz:
            return False
        return bool(selector.strip())

    async def question_mode(self, chat: Chat | str) -> str | None:
        """How the chat's questions are shown: "polls", "buttons", or None (the platform's
        default): its running round's choice, else its /settings. (A question the core
        hands an adapter carries it already: ShownQuestion.mode.)"""
        return await self.rounds.mode(chat if isinstance(chat, str) else chat.key)

    # live sessions -----------------------------------------------------------------------
    async def host(
        self, chat: Chat, person: Person, selector: str | None = None, count: int | str = 5,
        *, allowed: bool, teams: int | str = 0, seconds: int | str = LIVE_SECONDS,
        speed: bool = False, choose: bool = False,
    ) -> Lobby:
        """/host (`allowed`: the platform says the person is an admin): a live session's
        lobby, or an admin taking over the running one (see live.py)."""
        locale = await self.locales.for_audience(chat, person)
        return await self.live.host(chat, person, selector, count, allowed=allowed,
                                    locale=locale, teams=teams, seconds=seconds, speed=speed,
                                    choose=choose)

    async def peer_round(
        self, chat: Chat, person: Person, selector: str | None = None, *, allowed: bool,
        seconds: int | str = PEER_SECONDS,
    ) -> Asked | Lobby:
        """/peer: a peer-instruction round's question, open for the first vote (peer.py)."""
        locale = await self.locales.for_audience(chat, person)
        return await self.peer.start(chat, person, selector, allowed=allowed, locale=locale,
                                     seconds=seconds)

    async def live_next(
        self, chat: Chat, person: Person
    ) -> Asked | Podium | Split | Revoting | PeerResult | None:
        """/next: the host's next question (the podium after the last), or a peer round's
        next phase now."""
        record = await self.live.session(chat.key)
        if record is not None and record.kind == "peer":
            return await self.peer.next(chat.key, person)
        return await self.live.next(chat.key, person)

    async def live_answer(self, post_id: int, person: Person, shown_option: int) -> LiveAnswer:
        """A click on a live question's option: a player's answer, or a peer round's vote."""
        post = await self.storage.get_post(post_id)
        record = None if post is None else await self.live.session(post.chat_key)
        if record is not None and record.kind == "peer":
            return await self.peer.vote(post_id, person, shown_option)
        return await self.live.answer(post_id, person, shown_option)

    # answers -----------------------------------------------------------------------------
    async def answer(
        self, post_id: int, person: Person, response: Response, *, locale: str | None = None,
        confidence: Confidence | None = None,
    ) -> AnswerResult:
        """An answer of any kind (a shown option's index, Picks, Typed, Ordered), with how
        sure the person said they were where the chat asks (/settings confidence on)."""
        started = time.perf_counter()
        result = await self.answers.answer(post_id, person, response, locale=locale,
                                           confidence=confidence)
        # returned once committed (or refused): the latency an adapter adds before its reply
        self.meter.answered(platform_of(person), outcome_of(result.status),
                            time.perf_counter() - started)
        return result

    # boards ------------------------------------------------------------------------------
    async def leaderboard(
        self, chat: Chat | None, period: Period | str = Period.ALL, *,
        person: Person | None = None, limit: int = 10,
    ) -> Leaderboard:
        """A shared chat's board; a private chat (or None) shows the board of every chat.
        `period` may be what a person typed ("Week"); BadPeriod if it names none."""
        try:
            chosen = Period(period.strip().lower())
        except ValueError:
            raise BadPeriod(period) from None
        chat_key = None if chat is None or chat.is_private else chat.key
        return await self.boards.leaderboard(
            chat_key, chosen, person_key=person.key if person else None, limit=limit
        )

    # daily questions ---------------------------------------------------------------------
    async def daily_off(self, chat: Chat, *, allowed: bool) -> bool:
        """Turn the daily question off; its open question closes now with its summary.
        False if there was none."""
        removed, summaries = await self.daily.turn_off(chat, allowed=allowed)
        await self.delivery.summaries(summaries)
        return removed

    # the web dashboard (dashboard.py) ----------------------------------------------------
    def progress_app(self) -> str:
        """/progress: the Telegram Mini App's address (a learner's own page); DashboardOff
        unless the dashboard is on at an https address."""
        url = self.dashboard.app_url()
        if url is None:
            raise DashboardOff()
        return url

    # chats, and exactly once (core/ports/ CommandKey) -----------------------------------
    async def claim_command(self) -> bool:
        """For a command whose effect is a platform send (a file, a prompt, a chart): store
        its key before sending; False if it was handled before (send nothing)."""
        command = unclaimed_command()
        if command is None:
            return True
        if not await self.storage.claim_command(command.key, command.at):
            return False
        command.claimed = True
        return True

    async def forget_commands(self) -> int:
        """Drop the keys of commands handled longer ago than any platform redelivers."""
        return await self.storage.forget_commands(self.clock.now() - KEEP_COMMAND_KEYS)

    async def migrate_chat(self, old_key: str, new_key: str) -> bool:
        """A chat changed its id (a Telegram group upgraded to a supergroup): its history,
        board, schedule and language move to the new key."""
        return await self.storage.migrate_chat(old_key, new_key)

    # a chat's kind as its platform said (issue 36: no lookup spends the send budget)
    async def chat_kind(self, chat_key: str) -> str | None:
        """What the platform last said the chat is ("channel", "supergroup", ...), if seen."""
        return await self.storage.chat_kind(chat_key)

    async def chat_seen_as(self, chat_key: str, kind: str) -> None:
        """Remember the chat's kind, seen in an update, for every process on the database."""
        await self.storage.set_chat_kind(chat_key, kind)

    async def lease_sends(self, name: str, now: float, count: int, interval: float) -> float:
        """A slice of a bot token's send budget, shared by every process on the database
        (the platform's limit is the token's): the first of `count` slots."""
        return await self.storage.lease_sends(name, now, count, interval)

    def leadership(self, name: str, holder: str) -> Leadership:
        """The election of the one process on this database that does `name` (long-polling
        Telegram), as `holder`."""
        return Leadership(self.storage, self.clock, name, holder)

    # a person's own data (privacy.py) ----------------------------------------------------
    async def my_data(
        self, person: Person, chat: Chat | None, *, replies_privately: bool = False
    ) -> MyData:
        """/mydata: the person's data as a file, where only they see the reply."""
        self.privacy.check_private(chat, replies_privately)
        return await self.privacy.export(person.key)

    def delete_confirmation(
        self, person: Person, chat: Chat | None, secret: str, *, replies_privately: bool = False
    ) -> str:
        """/mydata delete: what its confirmation button carries (`secret`: the same in
        every process, e.g. the bot token)."""
        self.privacy.check_private(chat, replies_privately)
        return self.privacy.confirmation(person, secret)

    async def delete_my_data(
        self, person: Person, token: str, secret: str, private_chats: Sequence[Chat] = ()
    ) -> bool:
        """The confirmation pressed: the person deleted everywhere, with their private chats
        with the bot the platform knows (False: nothing was stored); PrivacyError for a
        press that is not theirs, changed or expired."""
        return await self.privacy.delete_confirmed(
            person, token, secret, [chat.key for chat in private_chats if chat.is_private])

