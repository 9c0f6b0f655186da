"""Assignments: an admin gives a chat a quiz (or a topic's quizzes) to finish by a deadline;
members take it privately at their own pace; before the deadline those who started and have
not finished are reminded; at the deadline the chat gets one summary.

- A member takes it in a quiz run of their own (quiz_runs.py: Telegram's private chat, a
  Discord channel's ephemeral messages), tied to the assignment (assignment_runs); progress is
  the questions of its set answered in those runs. A topic's quizzes are taken one run after
  another, each start going on with the first quiz not yet done; an interrupted run is taken
  up again with the questions left.
- The announcement's link or button carries the assignment's token, so a guessed id starts
  nothing.
- Exactly once across processes, as the daily question: each member's reminder is a row the
  database inserts once (claim_assignment_reminder), the deadline's summary a column it sets
  once (claim_assignment_summary); both are then sent through the durable deliveries
  (delivery.py: a lease, stored as started before the send, retried, never sent twice), and
  one claimed by a process that died is offered again by any process after SUMMARY_GRACE.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Protocol, runtime_checkable
from zoneinfo import ZoneInfo

from babel.dates import parse_date

from bot.core import assignment_text
from bot.core.clock import Clock
from bot.core.delivery import REMINDER_WINDOW, SUMMARY_GRACE, SUMMARY_WINDOW, Delivery, fan_out
from bot.core.errors import NotAllowed, UserError
from bot.core.locales import Locales
from bot.core.models import Chat, Person, ShownQuestion
from bot.core.ports import (
    AssignmentProgress,
    AssignmentRecord,
    AssignmentStore,
    ChatPort,
    ChatStore,
    NewAssignment,
    PeopleStore,
    RunStore,
    TryLater,
)
from bot.core.questions import Questions
from bot.core.quiz_runs import Runs
from bot.core.schedule import parse_time, parse_zone
from bot.i18n import _, translator

log = logging.getLogger(__name__)

REMIND_BEFORE = timedelta(hours=24)  # or half the time given, if that is shorter
END_OF_DAY = time(23, 59)  # a deadline given as a day alone
MAX_AHEAD = timedelta(days=366)
LINK_PREFIX = "assign-"  # Telegram's /start payload: assign-<id>-<token>
EVER = datetime(2000, 1, 1, tzinfo=UTC)  # before every deadline


class AssignmentStorage(AssignmentStore, RunStore, ChatStore, PeopleStore, Protocol):
    """What Assignments reads and writes."""


@runtime_checkable
class NoticePort(Protocol):
    """What a platform offers for the deadline's summary: a plain message in a chat."""

    async def send_notice(self, chat_key: str, text: str) -> None: ...


class AssignmentError(UserError):
    """A bad date, a deadline past, an assignment that is not there (any more)."""


def may_not_assign() -> NotAllowed:
    return NotAllowed(_("Only this chat's admins can give or cancel assignments."))


def unknown_assignment(text: object) -> AssignmentError:
    return AssignmentError(_("There is no assignment {id} in this chat."), id=text)


def bad_link() -> AssignmentError:
    return AssignmentError(_("That assignment is not there any more."))


@dataclass(frozen=True, slots=True)
class Taken:
    """What a member's start gave: the run's question, and the quiz of the set it is in."""

    question: ShownQuestion
    quiz_number: int  # 1-based, of `quizzes`
    quizzes: int


@dataclass(frozen=True, slots=True)
class AssignmentView:
    """An assignment as the dashboard shows it."""

    record: AssignmentRecord
    title: str
    over: bool
    people: tuple[AssignmentProgress, ...]


def parse_day(text: str, locale: str) -> date:
    """YYYY-MM-DD, or the date as the reader's language writes it (Babel: 24/12/2026 in bn,
    12/24/2026 in en)."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        pass
    try:
        return parse_date(text.strip(), locale=locale)
    except (ValueError, IndexError, LookupError) as exc:  # babel's ParseError is a ValueError
        raise AssignmentError(
            _("“{text}” is not a date: use YYYY-MM-DD, e.g. 2026-12-24"), text=text) from exc


def deadline_of(day: date, at: time, zone: str) -> datetime:
    """The moment `at` on `day` in `zone`, in UTC. A time a clock change skips (02:30 on the
    spring-forward night) is read with the offset before it (zoneinfo's fold=0), so it is
    the moment after the change; one that happens twice (autumn) is its first."""
    return datetime.combine(day, at, tzinfo=ZoneInfo(zone)).astimezone(UTC)


def remind_at(deadline: datetime, now: datetime) -> datetime:
    return deadline - min(REMIND_BEFORE, (deadline - now) / 2)


def link_payload(record: AssignmentRecord) -> str:
    return f"{LINK_PREFIX}{record.id}-{record.new.token}"


def read_payload(payload: str) -> tuple[int, str] | None:
    """(id, token) of a link's payload; None if it is not an assignment's."""
    if not payload.startswith(LINK_PREFIX):
        return None
    number, _dash, token = payload.removeprefix(LINK_PREFIX).partition("-")
    return (int(number), token) if number.isdigit() and token else None


class Assignments:
    def __init__(self, questions: Questions, runs: Runs, locales: Locales, delivery: Delivery,
                 storage: AssignmentStorage, clock: Clock) -> None:
        self.questions = questions
        self.runs = runs
        self.locales = locales
        self.delivery = delivery
        self.storage = storage
        self.clock = clock
        # (assignment, person) whose reminder this process claimed or saw claimed: a claim
        # costs no write per tick (the database decides between processes)
        self._claimed: set[tuple[int, str]] = set()

    # an admin's commands ---------------------------------------------------------------------
    async def assign(
        self, chat: Chat, selector: str, day: str, at: str | None = None,
        zone: str | None = None, *, by: Person | None = None, allowed: bool,
    ) -> AssignmentRecord:
        """Give the chat `selector` (a quiz id or a topic) to finish by `day` [`at`, default
        23:59] in `zone` (default UTC). Everything is checked first: a refusal, an unknown
        quiz, a bad date, time or zone, or a deadline past changes nothing."""
        if not allowed:
            raise may_not_assign()
        if chat.is_private:
            raise AssignmentError(_("Assignments are given in a group or a channel."))
        quizzes = self.questions.select(selector)  # raises UnknownQuiz
        locale = await self.locales.for_chat(chat)
        tz = parse_zone(zone)
        deadline = deadline_of(parse_day(day, locale), parse_time(at) if at else END_OF_DAY, tz)
        now = self.clock.now()
        if deadline <= now:
            raise AssignmentError(_("That deadline has passed: give a later date or time."))
        if deadline - now > MAX_AHEAD:
            raise AssignmentError(_("A deadline can be at most a year away."))
        await self.storage.upsert_chat(chat.key, chat.title, chat.platform_locale)
        new = NewAssignment(
            chat.key, selector.strip().lower(), tuple(q.id for q in quizzes),
            sum(len(q.questions) for q in quizzes), secrets.token_urlsafe(6).replace("-", "x"),
            locale, tz, deadline, remind_at(deadline, now), now, by.key if by else None)
        record = await self.storage.assignment(await self.storage.create_assignment(new))
        assert record is not None
        return record

    async def listed(self, chat: Chat) -> list[AssignmentRecord]:
        """The chat's assignments still running, soonest deadline first."""
        return await self.storage.chat_assignments(chat.key, self.clock.now())

    async def cancel(self, chat: Chat, number: str, *, allowed: bool) -> AssignmentRecord:
        """Cancel the chat's running assignment `number`: no reminder, no summary."""
        if not allowed:
            raise may_not_assign()
        record = await self._of_chat(chat, number)
        if record.new.deadline <= self.clock.now() or not await self.storage.cancel_assignment(
                record.id, chat.key, self.clock.now()):
            raise unknown_assignment(number)
        return record

    async def _of_chat(self, chat: Chat, number: str) -> AssignmentRecord:
        text = number.strip().removeprefix("#")
        record = await self.storage.assignment(int(text)) if text.isdigit() else None
        if record is None or record.new.chat_key != chat.key or record.cancelled_at:
            raise unknown_assignment(number)
        return record

    def title(self, record: AssignmentRecord, locale: str) -> str:
        """The quiz's title, or the topic as named, for what the chat reads."""
        quizzes = [self.questions.catalog.quizzes[q] for q in record.new.quizzes
                   if q in self.questions.catalog.quizzes]
        if len(record.new.quizzes) == 1 and quizzes:
            return quizzes[0].title.get(locale)
        return record.new.selector

    # a member takes it ----------------------------------------------------------------------
    async def take(
        self, assignment_id: int, person: Person, chat: Chat, *, token: str | None = None,
        from_chat: str | None = None,
    ) -> Taken:
        """Start (or go on with) `person`'s run of the assignment in `chat` (their private
        chat, or where the platform shows them alone). The link's `token` or the chat the
        button was pressed in (`from_chat`) must be the assignment's."""
        record = await self.storage.assignment(assignment_id)
        if record is None or record.cancelled_at is not None \
                or (token is not None and not secrets.compare_digest(token, record.new.token)) \
                or (from_chat is not None and from_chat != record.new.chat_key):
            raise bad_link()
        if self.clock.now() >= record.new.deadline:
            raise AssignmentError(_("This assignment is over: its deadline has passed."))
        done = await self.storage.answered_in_assignment(record.id, person.key)
        catalog = self.questions.catalog.quizzes
        quizzes = [q for q in record.new.quizzes if q in catalog]
        for number, quiz_id in enumerate(quizzes, start=1):
            left = tuple(q.id for q in catalog[quiz_id].questions if (quiz_id, q.id) not in done)
            if left:
                question = await self._run(record, person, chat, quiz_id, left)
                return Taken(question, number, len(quizzes))
        raise AssignmentError(_("You have finished this assignment. Well done!"))

    async def _run(self, record: AssignmentRecord, person: Person, chat: Chat, quiz_id: str,
                   left: tuple[str, ...]) -> ShownQuestion:
        locale = await self.locales.for_person(person, chat)
        now = self.clock.now()
        ours = {run_id for run_id, quiz in await self.storage.assignment_runs(
            record.id, person.key) if quiz == quiz_id}
        active = await self.storage.active_run(person.key, chat.key)
        if active is not None and active.id in ours:
            question = await self.runs.current(active, chat, locale, person)
            if question is not None:
                return question
        if active is not None:  # another quiz, or this one's run with nothing left to ask
            await self.storage.finish_run(active.id, now)
        await self.storage.upsert_person(person.key, person.known_name)
        await self.storage.upsert_chat(chat.key, chat.title, chat.platform_locale)
        run = await self.storage.create_run(person.key, chat.key, quiz_id, left, locale, now)
        await self.storage.add_assignment_run(record.id, run.id, person.key, quiz_id)
        question = await self.runs.current(run, chat, locale, person)
        assert question is not None
        return question

    async def progress(self, assignment_id: int) -> list[AssignmentProgress]:
        return await self.storage.assignment_progress(assignment_id)

    async def for_dashboard(self, chat_key: str, locale: str) -> list[AssignmentView]:
        """The chat's assignments (but those cancelled), latest deadline first, each with its
        members' progress (the dashboard's Assignments page and its exports)."""
        records = await self.storage.chat_assignments(chat_key, EVER)
        return [AssignmentView(r, self.title(r, locale), r.new.deadline <= self.clock.now(),
                               tuple(await self.storage.assignment_progress(r.id)))
                for r in reversed(records)]

    async def viewed(self, chat_key: str, assignment_id: int, locale: str
                     ) -> AssignmentView | None:
        """One of the chat's assignments for the dashboard; None if it is not the chat's."""
        record = await self.storage.assignment(assignment_id)
        if record is None or record.new.chat_key != chat_key or record.cancelled_at:
            return None
        return AssignmentView(record, self.title(record, locale),
                              record.new.deadline <= self.clock.now(),
                              tuple(await self.storage.assignment_progress(record.id)))

    # the scheduler's tick -------------------------------------------------------------------
    async def tick(self) -> tuple[int, int]:
        """Reminders due and summaries due, then those claimed and left unsent (a failure, a
        process that died); (reminders sent, summaries posted). Each part fails alone."""
        reminded = summarised = 0
        try:
            reminded = await self._remind()
            await self._pending_reminders()
        except Exception:
            log.exception("assignment reminders failed")
        try:
            summarised = await self._summarise()
            await self._pending_summaries()
        except Exception:
            log.exception("assignment summaries failed")
        return reminded, summarised

    def _here(self, key: str) -> bool:
        return self.delivery.port_for(key) is not None

    async def _remind(self) -> int:
        now = self.clock.now()
        due = [r for r in await self.storage.assignments_to_remind(now)
               if self._here(r.new.chat_key)]
        self._claimed = {c for c in self._claimed if c[0] in {r.id for r in due}}
        todo: list[tuple[AssignmentRecord, str]] = []
        for record in due:
            for person in await self.storage.assignment_progress(record.id):
                claim = (record.id, person.person_key)
                if person.answered >= record.new.total or claim in self._claimed:
                    continue
                self._claimed.add(claim)
                todo.append((record, person.person_key))

        async def remind(record: AssignmentRecord, person_key: str) -> int:
            if await self.storage.claim_assignment_reminder(record.id, person_key, now):
                return await self._send_reminder(record, person_key)
            return 0

        return await fan_out(todo, lambda item: remind(*item), "assignment reminder",
                             lambda item: reminder_name(item[0].id, item[1]))

    async def _pending_reminders(self) -> None:
        now = self.clock.now()
        due = [c for c in await self.storage.unsent_assignment_reminders(
            now - REMINDER_WINDOW, now - SUMMARY_GRACE) if self._here(c[1])]

        async def again(assignment_id: int, person_key: str) -> int:
            record = await self.storage.assignment(assignment_id)
            if record is None or record.cancelled_at or record.new.deadline <= now:
                await self.storage.mark_assignment_reminder_sent(assignment_id, person_key, now)
                return 0  # too late to be of use: given up
            return await self._send_reminder(record, person_key)

        await fan_out(due, lambda item: again(*item), "assignment reminder",
                      lambda item: reminder_name(*item))
        self.delivery.settle("assignment-reminder:", (reminder_name(*c) for c in due))

    async def _send_reminder(self, record: AssignmentRecord, person_key: str) -> int:
        locale = await self.locales.for_person(Person(person_key, ""), Chat(person_key))
        t = translator(locale)
        answered = len(await self.storage.answered_in_assignment(record.id, person_key))
        text = assignment_text.reminder(self.title(record, locale), answered, record.new.total,
                                        record.new.deadline, record.new.tz, t)

        async def sent() -> None:
            await self.storage.mark_assignment_reminder_sent(record.id, person_key,
                                                             self.clock.now())

        async def send(port: ChatPort) -> None:
            await port.send_private(person_key, text)

        return int(await self.delivery.once(reminder_name(record.id, person_key), person_key,
                                            send, sent))

    async def _summarise(self) -> int:
        now = self.clock.now()

        async def summarise(record: AssignmentRecord) -> int:
            if await self.storage.claim_assignment_summary(record.id, now):
                return await self._send_summary(record)
            return 0

        return await fan_out([r for r in await self.storage.assignments_due(now)
                              if self._here(r.new.chat_key)], summarise,
                             "assignment summary", lambda r: summary_name(r.id))

    async def _pending_summaries(self) -> None:
        now = self.clock.now()
        due = [r for r in await self.storage.unposted_assignment_summaries(
            now - SUMMARY_WINDOW, now - SUMMARY_GRACE) if self._here(r.new.chat_key)]
        await fan_out(due, self._send_summary, "assignment summary",
                      lambda r: summary_name(r.id))
        self.delivery.settle("assignment:", (summary_name(r.id) for r in due))

    async def summary_text(self, record: AssignmentRecord) -> str:
        """The deadline's summary: who finished, their average, the hardest question."""
        locale = await self.locales.for_chat(Chat(record.new.chat_key))
        t = translator(locale)
        people = await self.storage.assignment_progress(record.id)
        hardest = None
        figures = [q for q in await self.storage.assignment_questions(record.id)
                   if q.quiz_id in self.questions.catalog.quizzes]
        if figures:
            worst = min(figures, key=lambda q: (q.right / q.answered, -q.answered))
            try:
                prompt = self.questions.catalog.question(worst.quiz_id, worst.question_id)
                hardest = (prompt.prompt.get(locale), worst.right / worst.answered)
            except KeyError:  # the pack changed since
                hardest = None
        return assignment_text.summary(self.title(record, locale), record.new.total, people,
                                       hardest, t)

    async def _send_summary(self, record: AssignmentRecord) -> int:
        text = await self.summary_text(record)

        async def posted() -> None:
            await self.storage.mark_assignment_summary_posted(record.id, self.clock.now())

        async def send(port: ChatPort) -> None:
            if not isinstance(port, NoticePort):
                raise TryLater(f"{port.prefix} cannot post an assignment's summary")
            await port.send_notice(record.new.chat_key, text)

        return int(await self.delivery.once(summary_name(record.id), record.new.chat_key,
                                            send, posted))


def reminder_name(assignment_id: int, person_key: str) -> str:
    return f"assignment-reminder:{assignment_id}:{person_key}"


def summary_name(assignment_id: int) -> str:
    return f"assignment:{assignment_id}"

