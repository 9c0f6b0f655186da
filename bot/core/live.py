"""Live sessions: a host paces a quiz in a shared chat (/host), or runs a peer-instruction
round (/peer, peer.py).

The rules, written once for every platform:
- Only someone the platform calls an admin (`allowed`) opens a session; one unfinished
  session per chat (the database decides). An admin's /host while one runs takes it over
  (the host left); nobody else paces it: /next, /pause, /skip and /end are the host's.
- People join (a Join button) until it is over; only joined people answer, once per
  question. A question closes at zero, when everyone joined has answered, or on /skip (it
  then counts for nobody). After each: the distribution and the explanation.
- The podium: the top 3 by score (then the least total answer time); each person's rank.
  A right answer scores 1000; with speed points on, 1000 × (1 − t / 2T) for an answer after
  t seconds of T (500..1000). Teams (2..6) fill in turn as people join, or (`choose`) each
  person picks one, while it has fewer than TEAM_GAP players more than the smallest; a team
  scores its members' average, so its size does not decide.
- Every state change is saved with compare-and-set on the session's version, so a second
  process or a restart never runs a step twice; the countdown's end is a time in the
  database, paused as the milliseconds left. The scheduler's tick (`Live.tick`) closes what
  is due and paces the countdown edits, so a restarted bot carries on where it was.
- What each state shows goes out once (`show`, through the durable deliveries); a step
  stored by a process that died before its send started is shown by the next tick (its
  question with the whole countdown again: nobody saw it) and never closes unseen.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from bot.content.items import Kind
from bot.core import selection
from bot.core.clock import Clock
from bot.core.errors import NotAllowed, UserError
from bot.core.models import Chat, Person, PostSummary, ShownQuestion
from bot.core.ports import (
    AnswerRecord,
    AnswerStore,
    ChatStore,
    ClosingStore,
    DeliveryStore,
    LivePlayer,
    LiveRecord,
    LiveStore,
    NewLive,
    NewPost,
    PostStore,
)
from bot.core.questions import Questions, option_order
from bot.core.rounds import check_count
from bot.i18n import _

log = logging.getLogger(__name__)

LIVE_SECONDS = 30  # a question's countdown unless /host says otherwise
MIN_LIVE_SECONDS, MAX_LIVE_SECONDS = 5, 600
MAX_TEAMS = 6
TEAM_GAP = 2  # a chosen team is full while it has this many players more than the smallest
FULL_POINTS = 1000
PODIUM = 3
# a step stored but not yet being sent is left to the process that stored it this long (its
# send starts within moments), then shown by whichever process's tick finds it
SHOW_GRACE = timedelta(seconds=5)


class LiveStorage(LiveStore, PostStore, ClosingStore, AnswerStore, ChatStore, DeliveryStore,
                  Protocol):
    """What Live reads and writes."""


# refusals -----------------------------------------------------------------------------------
class LiveError(UserError):
    """A live-session command refused; nothing changed."""


# what a live session or a peer round asks: a question answered by tapping one option (a
# typed answer, several picks or an order would need a step of their own on every platform,
# against a countdown, and a peer round's vote is a share per option)
LIVE_KINDS = frozenset({Kind.CHOICE, Kind.TRUEFALSE})
# the states in which a question takes answers against its countdown (a peer round's
# discussion runs out too, but its question's message no longer counts down)
ASKING = frozenset({"open", "vote", "revote", "transfer"})


def no_live_questions(selector: str) -> LiveError:
    return LiveError(_("“{name}” has no question with options to tap: live sessions and peer "
                       "rounds ask those only (choice and true/false), not typed answers, "
                       "several picks or an order."), name=selector)


def may_not_host() -> NotAllowed:
    return NotAllowed(_("Only this chat's admins can host a live session."))


def not_the_host() -> NotAllowed:
    return NotAllowed(_("Only the host runs this session. An admin can take it over with "
                        "/host."))


def no_session() -> LiveError:
    return LiveError(_("No live session is running here. An admin starts one with /host."))


def session_running() -> LiveError:
    return LiveError(_("A live session is running in this chat: join it with the Join button "
                       "on its message. /quiz is back when it ends."))


def not_in_a_group() -> LiveError:
    return LiveError(_("Live sessions run in groups and channels, not in a private chat."))


def bad_teams(text: str) -> LiveError:
    return LiveError(_("“{text}” is not a number of teams: choose 2 to 6."), text=text)


def bad_seconds(text: str) -> LiveError:
    return LiveError(_("“{text}” is not a countdown: choose 5 to 600 seconds."), text=text)


def choose_needs_teams() -> LiveError:
    return LiveError(_("People choose among teams: say how many, e.g. /host teams 3 choose."))


def choose_a_team() -> LiveError:
    return LiveError(_("Choose a team: press its button on the session's message."))


def not_a_team(text: str) -> LiveError:
    return LiveError(_("“{text}” is not one of this session's teams."), text=text)


def team_full(team: int) -> LiveError:
    return LiveError(_("Team {team} is full for now: choose a smaller team."), team=team)


def still_open() -> LiveError:
    return LiveError(_("The question is still open: wait for it to close, or /skip it."))


def nothing_to_pause() -> LiveError:
    return LiveError(_("Nothing to pause: no question is open."))


def nothing_to_skip() -> LiveError:
    return LiveError(_("Nothing to skip: no question is open."))


def changed_meanwhile() -> LiveError:
    return LiveError(_("The session changed at the same moment; try again."))


def join_first() -> LiveError:
    return LiveError(_("Join the session first (the Join button), then answer."))


def _whole(value: int | str, ok: Callable[[int], bool], error: Callable[[str], LiveError]) -> int:
    """A whole number from a number or what a person typed; `error(text)` unless `ok`."""
    text = str(value)
    try:
        number = int(text.strip())
    except ValueError:
        raise error(text) from None
    if not ok(number):
        raise error(text)
    return number


def _not_a_team_counted(text: str) -> LiveError:
    """A team number that is not one, from a button (0-based): shown as people count teams."""
    try:
        return not_a_team(str(int(text.strip()) + 1))
    except ValueError:
        return not_a_team(text)


def check_teams(teams: int | str) -> int:
    return _whole(teams, lambda n: n == 0 or 2 <= n <= MAX_TEAMS, bad_teams)


def check_seconds(seconds: int | str) -> int:
    return _whole(seconds, lambda n: MIN_LIVE_SECONDS <= n <= MAX_LIVE_SECONDS, bad_seconds)


class EditPacer:
    """At most one edit per `every` seconds per chat (a lobby's joined count): a crowd
    joining at once would otherwise meet the platform's edit limits (the count shown then
    lags a few joins)."""

    def __init__(self, every: float, kept: int = 1024) -> None:
        self.every, self.kept = every, kept
        self._last: OrderedDict[object, float] = OrderedDict()

    def due(self, chat_id: object, now: float) -> bool:
        last = self._last.get(chat_id)
        if last is not None and now - last < self.every:
            return False
        self._last[chat_id] = now
        self._last.move_to_end(chat_id)
        while len(self._last) > self.kept:
            self._last.popitem(last=False)
        return True


def points(correct: bool, elapsed_ms: int, seconds: int, speed: bool) -> int:
    """What one answer scores (the formula in the README)."""
    if not correct:
        return 0
    if not speed:
        return FULL_POINTS
    share = min(max(elapsed_ms, 0), seconds * 1000) / (seconds * 1000)
    return round(FULL_POINTS * (1 - share / 2))


# what the chat is shown ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Lobby:
    session: LiveRecord
    joined: int  # how many people joined
    took_over: bool = False  # an admin became the host of a running session
    sizes: tuple[int, ...] = ()  # players per team, when people choose their team
    team: int | None = None  # the team (0-based) the person who joined is in
    players: tuple[LivePlayer, ...] = ()  # who joined, as the lobby message lists them


@dataclass(frozen=True, slots=True)
class Asked:
    session: LiveRecord
    question: ShownQuestion  # number/total: its place in the session; closes_at: the countdown


@dataclass(frozen=True, slots=True)
class Revealed:
    session: LiveRecord
    summary: PostSummary  # the distribution and the explanation
    skipped: bool
    last: bool  # the session's last question: /next shows the podium


@dataclass(frozen=True, slots=True)
class Paused:
    session: LiveRecord
    remaining_ms: int | None  # None: it resumed (session.closes_at is the new end)


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int
    person_key: str
    name: str
    team: int | None
    score: int
    right: int
    time_ms: int  # total answer time over the questions answered
    locale: str | None = None  # the platform's language for the person (their rank's)


@dataclass(frozen=True, slots=True)
class TeamStanding:
    rank: int
    team: int  # 0-based
    score: float  # the members' average
    members: int


@dataclass(frozen=True, slots=True)
class Podium:
    session: LiveRecord
    standings: tuple[Standing, ...]  # everyone, best first: the top PODIUM are the podium
    teams: tuple[TeamStanding, ...]
    asked: int
    ended_open: int | None = None  # the post of a question /end closed while it was open

    @property
    def top(self) -> tuple[Standing, ...]:
        return self.standings[:PODIUM]


@dataclass(frozen=True, slots=True)
class Countdown:
    session: LiveRecord
    post_id: int
    remaining_s: int
    question: ShownQuestion | None = None  # as the chat sees it (its refs: where)
    refs: tuple[str, ...] = ()  # the platform's references to the question's message


@dataclass(frozen=True, slots=True)
class Closed:
    """The message of a question a step closed (a live question at its reveal, a peer
    round's vote when the discussion starts or the round ends), shown closed: no buttons,
    no countdown."""

    question: ShownQuestion
    refs: tuple[str, ...]  # the platform's references to the post's messages: the newest


@dataclass(frozen=True, slots=True)
class LiveAnswer:
    status: str  # "accepted", "duplicate" (the first answer stands), "closed"
    correct: bool = False
    points: int = 0
    closed: Revealed | None = None  # everyone joined has answered: it closed now


Event = Lobby | Asked | Revealed | Paused | Podium


@runtime_checkable
class LivePort(Protocol):
    """What a chat adapter implements to show what the scheduler's tick decided: a closed
    question, the countdown edits, the peer round's phases (peer.py)."""

    countdown_every: timedelta  # the least time between two edits of one countdown

    async def live_event(self, event: object) -> None: ...
    async def live_countdown(self, countdown: Countdown) -> None: ...


class Deliveries(Protocol):
    """The durable deliveries (delivery.py `once`): a send stored as started before it goes,
    under a lease, so it goes out once whichever process or restart tries it."""

    async def once(self, name: str, chat_key: str, send: Callable[[Any], Awaitable[None]],
                   delivered: Callable[[], Awaitable[None]]) -> bool: ...


def shown_name(record: LiveRecord) -> str:
    """The delivery of what a session's state shows its chat (a question, its reveal, a
    peer round's phase, the end): one per state reached, so each is shown once. A pause
    and its resume show the question's state again: its own delivery stands."""
    state = "open" if record.state == "paused" else record.state
    return f"live:{record.id}:{len(record.steps)}:{state}"


async def _nothing() -> None:
    """A live step needs no mark once shown: its delivery's step is the mark."""


class Live:
    def __init__(self, questions: Questions, storage: LiveStorage, clock: Clock,
                 deliveries: Deliveries | None = None) -> None:
        self.questions = questions
        self.storage = storage
        self.clock = clock
        self.deliveries = deliveries
        self._edited: dict[int, tuple[datetime, int]] = {}  # post -> last countdown edit
        # what a session's countdown running out means, by kind (peer.py adds "peer")
        self.phases: dict[str, Callable[[LiveRecord], Awaitable[object | None]]] = {
            "host": self._close}
        # what a session's state shows, built again from the database for a step a process
        # stored and died before showing (peer_replay.py adds "peer")
        self.replays: dict[str, Callable[[LiveRecord], Awaitable[object | None]]] = {
            "host": self._replay}
        # the question message an event closes, by kind (peer_replay.py adds "peer")
        self.closings: dict[str, Callable[[Any], Awaitable[Closed | None]]] = {
            "host": self._closing}
        # steps shown, being shown, or made here for a caller that shows them
        self._showing: OrderedDict[str, None] = OrderedDict()
        self._unshown: dict[str, datetime] = {}  # name -> when this process first saw it so

    # what the chat is shown, once -------------------------------------------------------------
    async def show(self, event: Event | Any,
                   send: Callable[[Closed | None], Awaitable[None]]) -> bool:
        """`send` the event (an adapter's messages) through the durable deliveries: stored
        as started first, so neither a redelivered command nor a restart shows it twice,
        and the tick shows again a step whose process died before its send started. False
        if it was not sent now (shown already, by another process, or refused: retried)."""
        name = shown_name(event.session)
        self._remember(name)
        closing = self.closings.get(event.session.kind)
        closed = None if closing is None else await closing(event)
        if self.deliveries is None:
            await send(closed)
            return True
        sent = await self.deliveries.once(name, event.session.chat_key,
                                          lambda port: send(closed), _nothing)
        if not sent:  # the tick looks again: shown by another process, or refused
            self._showing.pop(name, None)
        return sent

    def _remember(self, name: str) -> None:
        self._showing[name] = None
        self._unshown.pop(name, None)
        while len(self._showing) > 4096:
            self._showing.popitem(last=False)

    def _made(self, event: object) -> None:
        """A step made here, which its caller shows."""
        if isinstance(session := getattr(event, "session", None), LiveRecord):
            self._remember(shown_name(session))

    async def _unshown_since(self, record: LiveRecord, now: datetime) -> datetime | None:
        """When this process first found the session's step not shown (no send stored as
        started); None once it is, or may be, in its chat."""
        if record.state == "lobby" or not record.steps:
            return None
        name = shown_name(record)
        if name in self._showing:
            return None
        if await self.storage.delivery_steps(name):
            self._remember(name)
            return None
        return self._unshown.setdefault(name, now)

    # the host -------------------------------------------------------------------------------
    async def host(
        self, chat: Chat, person: Person, selector: str | None = None,
        count: int | str = 5, *, allowed: bool, locale: str, teams: int | str = 0,
        seconds: int | str = LIVE_SECONDS, speed: bool = False, kind: str = "host",
        choose: bool = False,
    ) -> Lobby:
        """Open a session in the lobby, or (an admin, while one runs) take it over."""
        if chat.is_private:
            raise not_in_a_group()
        if not allowed:
            raise may_not_host()
        running = await self.storage.live_in_chat(chat.key)
        if running is not None:
            record = await self._change(running, host_key=person.key)
            return Lobby(record, await self.storage.live_player_count(record.id),
                         took_over=True)
        total = check_count(count)
        team_count = check_teams(teams)
        if choose and not team_count:
            raise choose_needs_teams()
        limit = check_seconds(seconds)
        if selector:  # UnknownQuiz, or a quiz with nothing to ask, before anything is stored
            if not selection.candidates(self.questions.select(selector), LIVE_KINDS):
                raise no_live_questions(selector)
        await self.storage.upsert_chat(chat.key, chat.title, chat.platform_locale)
        created = await self.storage.create_live(NewLive(
            chat.key, kind, person.key, selector or None, total, limit, speed, team_count,
            locale, self.clock.now(), choose))
        if created is None:  # another admin opened one a moment ago
            raise session_running()
        return Lobby(created, 0, sizes=(0,) * team_count if choose else ())

    async def join(self, chat_key: str, person: Person, team: int | str | None = None) -> Lobby:
        """Join once (again: nothing changes); where people choose, `team` (0-based) is
        theirs while it is not full."""
        record = await self._session(chat_key)
        chosen = None
        if record.choose:
            if team is None:
                raise choose_a_team()
            chosen = _whole(team, lambda n: 0 <= n < record.teams, _not_a_team_counted)
        joined = await self.storage.join_live(
            record.id, person.key, person.known_name, record.teams, self.clock.now(), chosen,
            TEAM_GAP, person.platform_locale)
        if not record.teams:  # one count, not every player (a crowd joins at once)
            return Lobby(record, await self.storage.live_player_count(record.id))
        players = await self._players(record)
        if not joined and chosen is not None and all(p.person_key != person.key
                                                      for p in players):
            raise team_full(chosen + 1)
        mine = next((p.team for p in players if p.person_key == person.key), None)
        sizes = tuple(sum(p.team == k for p in players) for k in range(record.teams)) \
            if record.choose else ()
        return Lobby(record, len(players), sizes=sizes, team=mine)

    async def lobby(self, chat_key: str) -> Lobby:
        """The running session's lobby with everyone who joined (its message, edited at the
        pace the platform allows; a join alone reads only the count)."""
        record = await self._session(chat_key)
        players = await self._players(record)
        sizes = tuple(sum(p.team == k for p in players) for k in range(record.teams)) \
            if record.choose else ()
        return Lobby(record, len(players), sizes=sizes, players=players)

    async def lobby_shown(self, session_id: int, ref: str) -> None:
        """The lobby's message (the platform's reference), edited when the session ends."""
        await self.storage.set_live_lobby(session_id, ref)

    async def next(self, chat_key: str, person: Person) -> Asked | Podium:
        """The next question, or the podium after the last one."""
        record = self._hosted(await self._session(chat_key), person)
        if record.state in ("open", "paused"):
            raise still_open()
        if len(record.steps) >= record.total:
            return await self._finish(record)
        return await self.ask(record)

    async def pause(self, chat_key: str, person: Person) -> Paused:
        """Freeze the countdown; again: it goes on with the time it had."""
        record = self._hosted(await self._session(chat_key), person)
        now = self.clock.now()
        if record.state == "open" and record.closes_at is not None:
            left = max(0, int((record.closes_at - now).total_seconds() * 1000))
            saved = await self._change(record, state="paused", closes_at=None, paused_ms=left)
            return Paused(saved, left)
        if record.state == "paused":
            closes = now + timedelta(milliseconds=record.paused_ms or 0)
            saved = await self._change(record, state="open", closes_at=closes, paused_ms=None)
            return Paused(saved, None)
        raise nothing_to_pause()

    async def skip(self, chat_key: str, person: Person) -> Revealed:
        record = self._hosted(await self._session(chat_key), person)
        if record.state not in ("open", "paused") or not record.steps:
            raise nothing_to_skip()
        await self.storage.skip_live_step(record.id, record.steps[-1].step)
        revealed = await self._close(record)
        if revealed is None:
            raise nothing_to_skip()  # it closed a moment ago
        return revealed

    async def end(self, chat_key: str, person: Person) -> Podium:
        return await self._finish(self._hosted(await self._session(chat_key), person))

    async def place(self, session_id: int, person_key: str) -> tuple[Standing, int] | None:
        """A person's standing in a session and how many played (their rank, privately)."""
        record = await self.storage.get_live(session_id)
        if record is None:
            return None
        podium = await self.podium(record)
        mine = next((s for s in podium.standings if s.person_key == person_key), None)
        return None if mine is None else (mine, len(podium.standings))

    async def session(self, chat_key: str) -> LiveRecord | None:
        """The chat's running session."""
        return await self.storage.live_in_chat(chat_key)

    # the players ----------------------------------------------------------------------------
    async def answer(self, post_id: int, person: Person, shown_option: int) -> LiveAnswer:
        """A joined person's answer to the open question; the first one stands."""
        post = await self.storage.get_post(post_id)
        question = self.questions.question_of(post)
        record = None if post is None else await self.storage.live_in_chat(post.chat_key)
        if (post is None or question is None or record is None or not record.steps
                or record.steps[-1].post_id != post_id or record.state != "open"
                or not 0 <= shown_option < len(post.order)):
            return LiveAnswer("closed")
        if not await self.storage.is_live_player(record.id, person.key):
            raise join_first()
        now = self.clock.now()
        canonical = post.order[shown_option]
        # time on the countdown, so a pause costs nobody speed points
        left = (record.closes_at - now) if record.closes_at else timedelta(0)
        elapsed = max(0, record.seconds * 1000 - int(left.total_seconds() * 1000))
        outcome, earlier = await self.storage.record_answer(AnswerRecord(
            post.id, person.key, canonical, canonical == question.answer, now, elapsed,
            person.known_name))
        if outcome != "inserted":
            return LiveAnswer("closed" if earlier is None else "duplicate",
                              bool(earlier and earlier.correct))
        correct = canonical == question.answer
        scored = points(correct, elapsed, record.seconds, record.speed)
        closed = None
        if await self.storage.answer_count(post.id) >= await self.storage.live_player_count(
                record.id):
            closed = await self._close(record)
        return LiveAnswer("accepted", correct, scored, closed)

    # the clock ------------------------------------------------------------------------------
    async def tick(
        self, serves: Callable[[str], bool] = lambda chat_key: True,
        every: Callable[[str], timedelta | None] = lambda chat_key: None,
    ) -> tuple[list[object], list[Countdown]]:
        """For the scheduler: close the questions whose countdown ran out (in chats this
        process `serves`), and the countdowns due an edit (`every`: the platform's least
        time between two edits of one message; None: no edits)."""
        events: list[object] = []
        countdowns: list[Countdown] = []
        now = self.clock.now()
        for record in await self.storage.active_lives():
            if not serves(record.chat_key):
                continue
            try:
                if (since := await self._unshown_since(record, now)) is not None:
                    # stored by a process that died before its send started (or is about
                    # to start it: SHOW_GRACE): shown now, and it does not close unseen
                    if now - since >= SHOW_GRACE and (
                            event := await self.replays[record.kind](record)) is not None:
                        events.append(event)
                        self._made(event)
                elif record.closes_at is not None and record.closes_at <= now:
                    if (event := await self.phases[record.kind](record)) is not None:
                        events.append(event)
                        self._made(event)  # the scheduler shows it
                elif record.state in ASKING and record.closes_at is not None and (
                    countdown := self._countdown(record, now, every(record.chat_key))
                ) is not None:
                    countdowns.append(await self._shown(countdown))
            except Exception:
                log.exception("live session %s in %s: tick failed", record.id,
                              record.chat_key)
        return events, countdowns

    def _countdown(
        self, record: LiveRecord, now: datetime, every: timedelta | None
    ) -> Countdown | None:
        """At most one edit per `every`, and none that would show the same second again."""
        if every is None or record.closes_at is None:
            return None
        post_id = record.steps[-1].post_id
        remaining = max(0, int((record.closes_at - now).total_seconds()))
        last = self._edited.get(post_id)
        if last is not None and (now - last[0] < every or last[1] == remaining):
            return None
        self._edited[post_id] = (now, remaining)
        if len(self._edited) > 1000:  # sessions long over
            del self._edited[next(iter(self._edited))]
        return Countdown(record, post_id, remaining)

    async def _shown(self, countdown: Countdown) -> Countdown:
        post = await self.storage.get_post(countdown.post_id)
        record = countdown.session
        if post is None or self.questions.question_of(post) is None:
            return countdown
        step = len(record.steps)
        return dataclasses.replace(
            countdown, question=self.questions.render(post, record.locale, (step, record.total)),
            refs=await self.storage.refs(post.id))

    # inside -------------------------------------------------------------------------------
    async def _session(self, chat_key: str) -> LiveRecord:
        record = await self.storage.live_in_chat(chat_key)
        if record is None:
            raise no_session()
        return record

    @staticmethod
    def _hosted(record: LiveRecord, person: Person) -> LiveRecord:
        if record.host_key != person.key:
            raise not_the_host()
        return record

    async def _players(self, record: LiveRecord) -> tuple[LivePlayer, ...]:
        return tuple(await self.storage.live_players(record.id))

    async def _change(self, record: LiveRecord, **changes: Any) -> LiveRecord:
        """Save a change over the version read; a concurrent change wins, and this one is
        refused (nothing changed: the person tries again on the state now)."""
        saved = await self.storage.save_live(dataclasses.replace(record, **changes))
        if saved is None:
            raise changed_meanwhile()
        return saved

    async def ask(self, record: LiveRecord, state: str = "open") -> Asked:
        """The session's next question, open in `state` for its countdown."""
        chat = Chat(record.chat_key)
        quiz_id, question_id = await self.questions.choose(chat, record.selector, None,
                                                           kinds=LIVE_KINDS)
        question = self.questions.catalog.question(quiz_id, question_id)
        now = self.clock.now()
        step = len(record.steps)
        # the step and the state it opens in one write: a crash leaves both or neither
        then = dataclasses.replace(record, state=state, paused_ms=None,
                                   closes_at=now + timedelta(seconds=record.seconds))
        post = await self.storage.add_live_step(record.id, step, NewPost(
            record.chat_key, quiz_id, question_id, option_order(question, self.questions.rng),
            record.locale, now, kind="live"), then)
        if post is None:
            raise still_open()  # another /next a moment ago
        saved = await self.storage.get_live(record.id)
        assert saved is not None
        self._remember(shown_name(saved))  # its caller shows it (a crash: the next process)
        shown = self.questions.render(post, record.locale, (step + 1, record.total))
        return Asked(saved, dataclasses.replace(shown, closes_at=saved.closes_at))

    async def _closing(self, event: object) -> Closed | None:
        """A reveal closes its question's message; so does an /end while it was open."""
        if isinstance(event, Revealed):
            return Closed(event.summary.question,
                          await self.storage.refs(event.summary.post_id))
        if isinstance(event, Podium) and event.ended_open is not None:
            post = await self.storage.get_post(event.ended_open)
            if post is None or self.questions.question_of(post) is None:
                return None
            s = event.session
            shown = self.questions.render(post, s.locale, (len(s.steps), s.total))
            return Closed(shown, await self.storage.refs(post.id))
        return None

    async def _replay(self, record: LiveRecord) -> Asked | Revealed | None:
        """What a host's session shows in its state, for a step its process stored and died
        before showing: its question with the whole countdown again (nobody saw it), or its
        reveal. None if the session changed meanwhile."""
        if record.state == "shown":  # its process may have died before closing the post
            await self.questions.close(record.steps[-1].post_id, quiet=True)
            return await self._revealed(record)
        if record.state not in ("open", "paused"):
            return None
        saved: LiveRecord | None = record
        if record.state == "open":
            saved = await self.storage.save_live(dataclasses.replace(
                record, closes_at=self.clock.now() + timedelta(seconds=record.seconds)))
        if saved is None:
            return None
        post = await self.storage.get_post(saved.steps[-1].post_id)
        if post is None:
            return None
        shown = self.questions.render(post, saved.locale, (len(saved.steps), saved.total))
        return Asked(saved, dataclasses.replace(shown, closes_at=saved.closes_at))

    async def _close(self, record: LiveRecord) -> Revealed | None:
        """Close the session's open question; None if another call closed it."""
        fresh = await self.storage.get_live(record.id)
        if fresh is None or fresh.state not in ("open", "paused") or not fresh.steps:
            return None
        saved = await self.storage.save_live(dataclasses.replace(
            fresh, state="shown", closes_at=None, paused_ms=None))
        if saved is None:
            return None
        step = saved.steps[-1]
        await self.questions.close(step.post_id, quiet=True)
        self._edited.pop(step.post_id, None)
        self._remember(shown_name(saved))
        return await self._revealed(saved)

    async def _revealed(self, saved: LiveRecord) -> Revealed:
        """The closed question's distribution and explanation."""
        step = saved.steps[-1]
        post = await self.storage.get_post(step.post_id)
        assert post is not None
        summary = await self.questions.summary(post, saved.locale)
        summary = dataclasses.replace(summary, question=dataclasses.replace(
            summary.question, number=step.step + 1, total=saved.total))
        return Revealed(saved, summary, step.skipped, len(saved.steps) >= saved.total)

    async def _finish(self, record: LiveRecord) -> Podium:
        if record.steps:  # an open question ends with the session, counted as it stands
            await self.questions.close(record.steps[-1].post_id, quiet=True)
        saved = await self.storage.save_live(dataclasses.replace(
            record, state="over", closes_at=None, paused_ms=None,
            finished_at=self.clock.now()))
        if saved is None:
            raise no_session()  # another /end a moment ago
        podium = await self.podium(saved)
        if record.state in ("open", "paused") and record.steps:
            podium = dataclasses.replace(podium, ended_open=record.steps[-1].post_id)
        return podium

    async def podium(self, record: LiveRecord) -> Podium:
        players = {p.person_key: p for p in await self._players(record)}
        totals: dict[str, list[int]] = {key: [0, 0, 0] for key in players}  # score, right, ms
        names = {key: p.name for key, p in players.items()}
        asked = 0
        for step in record.steps:
            if step.skipped:
                continue
            asked += 1
            for a in await self.storage.answers_for_post(step.post_id):
                if a.person_key not in totals:
                    continue  # only joined people play
                row = totals[a.person_key]
                row[0] += points(a.correct, a.elapsed_ms, record.seconds, record.speed)
                row[1] += a.correct
                row[2] += a.elapsed_ms
                names[a.person_key] = a.name or names[a.person_key]
        order = sorted(totals, key=lambda k: (-totals[k][0], totals[k][2], names[k], k))
        standings = tuple(_ranked(
            [Standing(0, k, names[k], players[k].team, totals[k][0], totals[k][1],
                      totals[k][2], players[k].locale) for k in order],
            key=lambda s: (s.score, s.time_ms)))
        return Podium(record, standings, _teams(record.teams, standings), asked)


def _ranked(rows: Sequence[Standing], key: Callable[[Standing], object]) -> list[Standing]:
    """Competition ranks (1, 2, 2, 4): level rows share a rank."""
    ranked: list[Standing] = []
    for i, row in enumerate(rows):
        rank = ranked[-1].rank if ranked and key(ranked[-1]) == key(row) else i + 1
        ranked.append(dataclasses.replace(row, rank=rank))
    return ranked


def _teams(count: int, standings: Sequence[Standing]) -> tuple[TeamStanding, ...]:
    if count == 0:
        return ()
    members: dict[int, list[int]] = {team: [] for team in range(count)}
    for s in standings:
        if s.team is not None:
            members[s.team].append(s.score)
    rows = sorted(((sum(v) / len(v) if v else 0.0, team, len(v))
                   for team, v in members.items()), key=lambda r: (-r[0], r[1]))
    result: list[TeamStanding] = []
    for i, (score, team, size) in enumerate(rows):
        rank = result[-1].rank if result and result[-1].score == score else i + 1
        result.append(TeamStanding(rank, team, score, size))
    return tuple(result)


async def refuse_quiz(
    storage: LiveStore, chat: Chat, is_admin: Callable[[], Awaitable[bool]] | None
) -> None:
    """A member's /quiz while the chat's live session runs: refused with a pointer to it."""
    if chat.is_private or await storage.live_in_chat(chat.key) is None:
        return
    if is_admin is None or await is_admin():
        return
    raise session_running()
