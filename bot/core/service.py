"""QuizService: the one facade every adapter calls, built from small parts.

Each adapter turns a platform event into one call here and the result into platform messages.
The parts, each with its dependencies passed in:
- questions.py  choosing, posting, rendering and closing questions
- asking.py     /quiz in any chat: what replaces what, who a question is for
- answers.py    the hot path: an answer stored once and final
- runs.py       one person through a whole quiz
- boards.py     leaderboards, stats, review
- daily.py      a chat's daily question
- review.py     spaced review (FSRS cards, /review, /remind)
- locales.py    which language a person or a chat reads
- delivery.py   summaries and scheduled questions onto the platforms (ChatPort)
- rounds.py     N questions in a row in a shared chat
- chat_settings.py  a chat's question time, mode, chart and who asks (/settings)
- problem_reports.py  "⚑" and /report: what is wrong with a question; admins resolve
- item_analysis.py  /analysis for admins, and charts on close summaries
- authoring.py  quiz polls sent by an author become a draft pack, published
- privacy.py    /mydata: a person's data sent to them, or deleted everywhere
- dashboard.py  /dashboard: signed links to a chat's web dashboard (dashboard_reads.py: its pages)
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
from collections.abc import Awaitable, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import timedelta

from bot.content import Catalog
from bot.content.items import DEFAULT_LOCALE
from bot.core.answers import Answers, outcome_of, platform_of
from bot.core.asking import Asking
from bot.core.authoring import Added, Authoring, DraftView, PollQuestion, Published
from bot.core.boards import Boards
from bot.core.cards import Cards
from bot.core.chat_settings import ChatSettings, ChatSettingsRules
from bot.core.clock import Clock, SystemClock
from bot.core.daily import Daily
from bot.core.dashboard import DashboardAccess
from bot.core.dashboard_reads import DashboardReads
from bot.core.delivery import Delivery
from bot.core.errors import BadPeriod, DashboardOff, UnknownQuiz, may_not_change_language
from bot.core.item_analysis import Charts, ChatAnalysis, ItemAnalysis
from bot.core.leadership import Leadership
from bot.core.live import (
    LIVE_SECONDS,
    Asked,
    Live,
    LiveAnswer,
    Lobby,
    Paused,
    Podium,
    Revealed,
    Standing,
)
from bot.core.live_reports import LiveReports, SessionPage, SessionReport
from bot.core.locales import Locales
from bot.core.models import (
    AnswerResult,
    Chat,
    Leaderboard,
    MissedQuestion,
    Period,
    Person,
    PersonStats,
    QuizInfo,
    ScheduleStatus,
    ShownQuestion,
)
from bot.core.peer import PEER_SECONDS, Peer, PeerResult, Revoting, Split
from bot.core.ports import (
    KEEP_COMMAND_KEYS,
    CardRenderer,
    ChartRenderer,
    ChatPort,
    Meter,
    NoMeter,
    ProblemReportRecord,
    Storage,
    unclaimed_command,
)
from bot.core.privacy import MyData, Privacy
from bot.core.problem_reports import REPORT_USAGE, ProblemReports, ReportReceipt
from bot.core.questions import Questions
from bot.core.review import Review, ReviewStats
from bot.core.review_export import ReviewDeck, ReviewExport
from bot.core.rounds import Rounds
from bot.core.runs import Runs
from bot.core.schedule import Schedule

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
        self.rounds = Rounds(self.questions, storage, clock, self.chat_settings)
        self.delivery = Delivery(self.questions, storage, clock, self.holder,
                                 charts=self.charts, modes=self.rounds.mode)
        self.item_analysis = ItemAnalysis(self.questions, storage, self.charts)
        self.asking = Asking(self.questions, self.runs, self.locales, self.delivery,
                             storage, question_time, self.rounds)
        self.problem_reports = ProblemReports(catalog, storage, clock)
        self.authoring = Authoring(catalog, storage, clock, authors)
        self.answers.reload_packs = self.asking.reload_packs = self.authoring.refresh
        self.privacy = Privacy(storage, clock)
        self.dashboard = DashboardAccess(storage, clock, *(web or (None, None)))
        self.dashboard_reads = DashboardReads(catalog, storage, clock)
        self.live = Live(self.questions, storage, clock)
        self.peer = Peer(self.live, storage, clock, settings=self.chat_settings)
        self.live_reports = LiveReports(self.live, storage)

    # platforms ---------------------------------------------------------------------------
    def connect(self, port: ChatPort) -> None:
        """An adapter started: the scheduler and the use cases may post through it."""
        self.delivery.connect(port)

    def disconnect(self, port: ChatPort) -> None:
        self.delivery.disconnect(port)

    # languages ---------------------------------------------------------------------------
    async def locale_for(self, person: Person | None, chat: Chat | None = None) -> str:
        """For what one person reads."""
        return await self.locales.for_person(person, chat)

    async def locale_of_chat(self, chat: Chat, person: Person | None = None) -> str:
        """For what everyone in the chat reads (in a private chat: its person)."""
        return await self.locales.for_audience(chat, person)

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

    # quizzes and answers -----------------------------------------------------------------
    def quizzes(self, locale: str = DEFAULT_LOCALE) -> list[QuizInfo]:
        return self.questions.quizzes(locale)

    def names_quizzes(self, selector: str) -> bool:
        """Whether `selector` is a quiz id or a topic (to tell it from other words)."""
        try:
            self.questions.select(selector)
        except UnknownQuiz:
            return False
        return bool(selector.strip())

    def quiz(
        self, chat: Chat, person: Person | None, selector: str | None = None, *,
        run: bool | None = None, count: int | str | None = None, mode: str | None = None,
        is_admin: Callable[[], Awaitable[bool]] | None = None,
    ) -> AbstractAsyncContextManager[ShownQuestion]:
        """/quiz: `async with service.quiz(...) as question:` show it (see asking.py).
        `count`: a round of N questions in a shared chat (BadCount outside 1..20).
        `is_admin`: whether the person is one of the chat's admins, asked of the platform
        only when it matters (a member does not cut an open question short; /settings
        quiz admins); None: the caller has an admin's right."""
        return self.asking.quiz(chat, person, selector, run=run, count=count, mode=mode,
                                is_admin=is_admin)

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

    async def join_live(self, chat: Chat, person: Person, team: int | str | None = None) -> Lobby:
        """The Join button, or a team's (0-based) where people choose their team."""
        return await self.live.join(chat.key, person, team)

    async def live_next(
        self, chat: Chat, person: Person
    ) -> Asked | Podium | Split | Revoting | PeerResult | None:
        """/next: the host's next question (the podium after the last), or a peer round's
        next phase now."""
        record = await self.live.session(chat.key)
        if record is not None and record.kind == "peer":
            return await self.peer.next(chat.key, person)
        return await self.live.next(chat.key, person)

    async def live_pause(self, chat: Chat, person: Person) -> Paused:
        return await self.live.pause(chat.key, person)

    async def live_skip(self, chat: Chat, person: Person) -> Revealed:
        return await self.live.skip(chat.key, person)

    async def live_end(self, chat: Chat, person: Person) -> Podium:
        return await self.live.end(chat.key, person)

    async def live_place(self, session_id: int, person: Person) -> tuple[Standing, int] | None:
        """The person's standing in a session and how many played; None if they did not."""
        return await self.live.place(session_id, person.key)

    async def live_sessions(self, chat: Chat, before: int | None = None) -> SessionPage:
        """The chat's live sessions and peer rounds, newest first (the dashboard)."""
        return await self.live_reports.sessions(chat.key, before)

    async def live_report(self, chat: Chat, session_id: int,
                          locale: str = DEFAULT_LOCALE) -> SessionReport | None:
        """One of the chat's sessions: podium, teams, questions (None: not this chat's)."""
        return await self.live_reports.report(chat.key, session_id, locale)

    async def live_answer(self, post_id: int, person: Person, shown_option: int) -> LiveAnswer:
        """A click on a live question's option: a player's answer, or a peer round's vote."""
        post = await self.storage.get_post(post_id)
        record = None if post is None else await self.live.session(post.chat_key)
        if record is not None and record.kind == "peer":
            return await self.peer.vote(post_id, person, shown_option)
        return await self.live.answer(post_id, person, shown_option)

    # chat settings -----------------------------------------------------------------------
    async def settings(self, chat: Chat) -> ChatSettings:
        """The chat's settings (its own, or the defaults)."""
        return await self.chat_settings.get(chat.key)

    async def change_settings(
        self, chat: Chat, *, by: Person | None = None, allowed: bool,
        seconds: int | str | None = None, mode: str | None = None,
        chart: bool | str | None = None, admins_only: bool | str | None = None,
        peer_threshold: int | str | None = None, peer_discussion: int | str | None = None,
        words: Sequence[str] = (),
    ) -> ChatSettings:
        """/settings (admins: `allowed` is the platform's word). None leaves a setting as it
        is, "default" puts it back; `words` is the command as typed ("time 90 mode
        buttons chart on quiz admins"). A bad value raises a SettingsError, and nothing
        changes."""
        return await self.chat_settings.change(chat, by=by, allowed=allowed, seconds=seconds,
                                               mode=mode, chart=chart,
                                               admins_only=admins_only,
                                               peer_threshold=peer_threshold,
                                               peer_discussion=peer_discussion, words=words)

    async def analysis(
        self, chat: Chat, quiz: str | None = None, *, allowed: bool,
        locale: str = DEFAULT_LOCALE,
    ) -> ChatAnalysis:
        """/analysis [quiz]: the chat's item analysis with its chart, for its admins
        (`allowed`: the platform's word); UnknownQuiz for a name that is no quiz id."""
        return await self.item_analysis.for_chat(chat, quiz, locale, allowed=allowed)

    async def answer(
        self, post_id: int, person: Person, option: int, *, locale: str | None = None
    ) -> AnswerResult:
        started = time.perf_counter()
        result = await self.answers.answer(post_id, person, option, locale=locale)
        # returned once committed (or refused): the latency an adapter adds before its reply
        self.meter.answered(platform_of(person), outcome_of(result.status),
                            time.perf_counter() - started)
        return result

    async def show(self, post_id: int, locale: str | None = None) -> ShownQuestion | None:
        return await self.questions.show(post_id, locale)

    async def bind(self, post_id: int, *refs: str) -> None:
        await self.questions.bind(post_id, *refs)

    async def post_id_for(self, ref: str) -> int | None:
        return await self.questions.post_id_for(ref)

    async def live_count(self, post_id: int) -> int | None:
        return await self.questions.live_count(post_id)

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

    async def stats(self, person: Person, locale: str = DEFAULT_LOCALE) -> PersonStats:
        return await self.boards.stats(person, locale)

    async def review(self, person: Person, locale: str = DEFAULT_LOCALE) -> list[MissedQuestion]:
        return await self.boards.review(person, locale)

    # spaced review -----------------------------------------------------------------------
    async def start_review(
        self, person: Person, chat: Chat, locale: str = DEFAULT_LOCALE
    ) -> ShownQuestion | None:
        """/review: the first due card as `person`'s own question in `chat` (the adapter
        gives their private chat); each accepted answer brings the next. None: none due."""
        return await self.spaced.start(person, chat, locale)

    async def next_review(self, person: Person) -> timedelta | None:
        """When nothing is due: how long until the next card is (None: no card waits)."""
        return await self.spaced.next_due(person)

    async def review_stats(self, person: Person) -> ReviewStats:
        return await self.spaced.stats(person)

    async def review_export(
        self, person: Person, locale: str = DEFAULT_LOCALE
    ) -> ReviewDeck | None:
        """/review export: the person's due and missed cards as an Anki deck in `locale`;
        None when they have none."""
        return await self.review_deck.apkg(person, locale)

    async def set_reminder(self, person: Person, at: str, tz: str | None = None) -> Schedule:
        """/remind HH:MM [zone]: one private message a day when cards are due."""
        return await self.spaced.set_reminder(person, at, tz)

    async def reminder_off(self, person: Person) -> bool:
        return await self.spaced.reminder_off(person)

    async def reminder(self, person: Person) -> Schedule | None:
        return await self.spaced.reminder(person)

    # daily questions ---------------------------------------------------------------------
    async def set_schedule(
        self, chat: Chat, at: str, tz: str | None = None, selector: str | None = None, *,
        open_minutes: int | None = None, by: Person | None = None, allowed: bool,
    ) -> ScheduleStatus:
        return await self.daily.set(chat, at, tz, selector, open_minutes=open_minutes, by=by,
                                    allowed=allowed)

    async def daily_off(self, chat: Chat, *, allowed: bool) -> bool:
        """Turn the daily question off; its open question closes now with its summary.
        False if there was none."""
        removed, summaries = await self.daily.turn_off(chat, allowed=allowed)
        await self.delivery.summaries(summaries)
        return removed

    async def schedule_status(self, chat: Chat) -> ScheduleStatus | None:
        return await self.daily.status(chat)

    # problem reports ---------------------------------------------------------------------
    async def report_problem(
        self, person: Person, chat: Chat, question_id: str, text: str, *,
        usage: str = REPORT_USAGE, typed: bool = False,
    ) -> ReportReceipt:
        """⚑ or /report <question id> <text>: stored (or appended to the person's open
        report of it); a UserError (an unknown question, an empty or long text, too many
        reports today) stores nothing. `usage`: how /report is typed on this platform;
        `typed`: the person typed the id (an unknown one is refused with the nearest)."""
        return await self.problem_reports.report(person, chat, question_id, text,
                                                 usage=usage, typed=typed)

    async def report_last_answered(
        self, person: Person, chat: Chat, text: str, *, usage: str = REPORT_USAGE
    ) -> ReportReceipt:
        """/report <text>: about the last question the person answered in this chat."""
        return await self.problem_reports.report_last(person, chat, text, usage=usage)

    async def report_words(self, person: Person, chat: Chat, words: str) -> ReportReceipt:
        """/report typed as one line: "[question id] <text>" (problem_reports.py)."""
        return await self.problem_reports.report_words(person, chat, words)

    async def chat_reports(
        self, chat: Chat, *, allowed: bool
    ) -> Sequence[ProblemReportRecord]:
        """/reports: the open reports made in the chat, for its admins."""
        return await self.problem_reports.for_chat(chat, allowed=allowed)

    def report_titles(
        self, reports: Sequence[ProblemReportRecord], locale: str
    ) -> dict[str, str]:
        """question id -> prompt in `locale`, for listing `reports`."""
        return self.problem_reports.titles(reports, locale)

    async def resolve_chat_report(
        self, chat: Chat, report_id: int | str, note: str | None = None, *, allowed: bool
    ) -> int:
        """/reports resolve <id> [note]: a report made in this chat, by its admins."""
        return await self.problem_reports.resolve_in_chat(chat, report_id, note,
                                                          allowed=allowed)

    def is_question(self, word: str) -> bool:
        """Whether `word` is a question id (to tell /report's id from its text)."""
        return self.problem_reports.is_question(word)

    def question_title(self, question_id: str, locale: str = DEFAULT_LOCALE) -> str:
        """A question's prompt; UnknownQuestion for an id the catalog does not have."""
        return self.problem_reports.title(question_id, locale)

    async def problem_report_list(
        self, *, open_only: bool = True, quiz_id: str | None = None
    ) -> list[ProblemReportRecord]:
        return await self.problem_reports.list(open_only=open_only, quiz_id=quiz_id)

    async def resolve_problem_report(self, report_id: int, note: str | None = None) -> None:
        """UnknownReport or AlreadyResolved if there is no open report `report_id`."""
        await self.problem_reports.resolve(report_id, note)

    # the web dashboard (dashboard.py) ----------------------------------------------------
    async def dashboard_link(self, chat: Chat, *, allowed: bool, locale: str) -> str:
        """/dashboard: a signed link to the chat's dashboard, for its admins (`allowed`)."""
        return await self.dashboard.link(chat, allowed=allowed, locale=locale)

    async def revoke_dashboard(self, chat: Chat, *, allowed: bool) -> None:
        """/dashboard revoke: every link and session of the chat ends, in every process."""
        await self.dashboard.revoke(chat, allowed=allowed)

    def progress_app(self) -> str:
        """/progress: the Telegram Mini App's address (a learner's own page); DashboardOff
        unless the dashboard is on at an https address."""
        url = self.dashboard.app_url()
        if url is None:
            raise DashboardOff()
        return url

    # chats -------------------------------------------------------------------------------
    # exactly once (core/ports.py CommandKey) ----------------------------------------------
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

    async def question_sending(self, post_id: int) -> None:
        """A question's send starts now: should its process die, it is not sent again (it
        may be in its chat), while a round question whose send never started is."""
        await self.delivery.question_sending(post_id)

    async def summary_step(self, post_id: int, step: str) -> None:
        """A step of a summary's delivery (models.CHART_STEP, TEXT_STEP) is about to be
        sent: from now on it may have gone out, and a retry, after a failure or a crash,
        skips it (PostSummary.done)."""
        await self.delivery.step_started(post_id, step)

    async def summary_step_refused(self, post_id: int, step: str) -> None:
        """The platform refused that step: the next try sends it."""
        await self.delivery.step_refused(post_id, step)

    async def forget_commands(self) -> int:
        """Drop the keys of commands handled longer ago than any platform redelivers."""
        return await self.storage.forget_commands(self.clock.now() - KEEP_COMMAND_KEYS)

    async def migrate_chat(self, old_key: str, new_key: str) -> bool:
        """A chat changed its id (a Telegram group upgraded to a supergroup): its history,
        board, schedule and language move to the new key."""
        return await self.storage.migrate_chat(old_key, new_key)

    async def chat_gone(self, chat_key: str) -> None:
        """The bot was removed from the chat for good."""
        await self.delivery.chat_gone(chat_key)

    def leadership(self, name: str, holder: str) -> Leadership:
        """The election of the one process on this database that does `name` (long-polling
        Telegram), as `holder`."""
        return Leadership(self.storage, self.clock, name, holder)

    # authoring: quiz polls become a draft pack (authoring.py) ----------------------------
    async def load_published(self) -> int:
        """Add the packs authors published to the catalog (at start)."""
        return await self.authoring.load()

    def may_author(self, person: Person) -> bool:
        return self.authoring.may_author(person)

    async def new_draft(self, person: Person, locale: str) -> tuple[bool, int]:
        return await self.authoring.start(person, locale)

    async def add_to_draft(
        self, person: Person, locale: str, poll: PollQuestion, ref: str
    ) -> Added:
        return await self.authoring.add(person, locale, poll, ref)

    async def picture_for_draft(self, person: Person, locale: str, size: int | None,
                                fetch: Callable[[], Awaitable[bytes]]) -> None:
        await self.authoring.photo(person, locale, size, fetch)

    async def draft(self, person: Person) -> DraftView:
        return await self.authoring.view(person)

    async def undo_draft(self, person: Person) -> tuple[int | None, int]:
        return await self.authoring.undo(person)

    async def name_draft(self, person: Person, title: str) -> str:
        return await self.authoring.name(person, title)

    async def discard_draft(self, person: Person) -> bool:
        return await self.authoring.discard(person)

    async def publish_draft(self, person: Person, quiz_id: str | None = None) -> Published:
        return await self.authoring.publish(person, quiz_id)

    async def unpublish(self, person: Person, quiz_id: str) -> str:
        return await self.authoring.unpublish(person, quiz_id)

    # a person's own data (privacy.py) ----------------------------------------------------
    async def my_data(
        self, person: Person, chat: Chat | None, *, replies_privately: bool = False
    ) -> MyData:
        """/mydata: the person's data as a file, where only they see the reply."""
        self.privacy.check_private(chat, replies_privately)
        return await self.privacy.export(person.key)

    def my_data_wants_delete(self, words: str) -> bool:
        """/mydata's words: "" sends the data, "delete" asks to delete it; else refused."""
        return self.privacy.wants_delete(words)

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

    async def person_data(self, person_key: str) -> MyData:
        """An operator's export (quizbot privacy export)."""
        return await self.privacy.export(person_key)

    async def delete_person(self, person_key: str) -> bool:
        """An operator's deletion (quizbot privacy delete)."""
        return await self.privacy.delete(person_key)
