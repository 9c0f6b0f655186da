"""The one error vocabulary: every refusal the core raises, rendered by render.error_text in the
reader's language (en, bn, hi), whole (no {placeholder} left), with what to do instead.

The errors are the ones the core raises for real input, not hand-built ones, so a refusal
worded somewhere else would show up here as a missing sample.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

import pytest

from bot.content.schema import DEFAULT_LOCALE, LOCALES
from bot.core import render
from bot.core.assignments import AssignmentError
from bot.core.authoring import PollQuestion
from bot.core.errors import (
    AlreadyResolved,
    AuthoringError,
    BadAsker,
    BadChart,
    BadCount,
    BadDiscussion,
    BadMode,
    BadPeerThreshold,
    BadPeriod,
    BadQuestionTime,
    BadZone,
    DashboardOff,
    NoActiveRun,
    NotAllowed,
    ReportError,
    ScheduleError,
    SettingsError,
    StillOpen,
    UnknownQuestion,
    UnknownQuiz,
    UnknownReport,
    UnsupportedLocale,
    UserError,
)
from bot.core.live import LiveError
from bot.core.models import Chat, Person
from bot.core.privacy import PrivacyError
from bot.core.service import QuizService
from bot.i18n import translator

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database

GROUP = Chat("tg:-100", "Study group")
ADA = Person("tg:1", "Ada")
BEN = Person("tg:2", "Ben")
ALONE = Chat(ADA.key, "Ada", is_private=True)

SCRIPTS = {"bn": re.compile(r"[\u0980-\u09FF]"), "hi": re.compile(r"[\u0900-\u097F]")}
PLACEHOLDER = re.compile(r"\{\w*\}")

Raise = Callable[[QuizService], Awaitable[object]]


POLL = PollQuestion("Two and two?", ("Four", "Five"), (0,), "Counting.")


def as_author(service: QuizService) -> QuizService:
    service.authoring.authors = frozenset({ADA.key})
    return service


async def mydata_words(service: QuizService, words: str) -> bool:
    return service.privacy.wants_delete(words)


async def draft_then(service: QuizService, *, poll: bool = False, title: str = "") -> object:
    """Ada's draft (with a question, a title), then publishing it."""
    await as_author(service).authoring.start(ADA, "en")
    if poll:
        await service.authoring.add(ADA, "en", POLL, "tg-msg:1:1")
    if title:
        await service.authoring.name(ADA, title)
    return await service.authoring.publish(ADA)


# name -> (the class expected, what a person did that the core refuses)
REFUSALS: dict[str, tuple[type[UserError], Raise]] = {
    "unknown quiz": (UnknownQuiz, lambda s: s.asking.quiz(GROUP, ADA, "nope").__aenter__()),
    "unknown quiz to run": (UnknownQuiz, lambda s: s.asking.quiz(ALONE, ADA, "basics", run=True)
                            .__aenter__()),
    "unknown daily quiz": (UnknownQuiz, lambda s: s.daily.set(GROUP, "09:00", None, "nope",
                                                                  allowed=True)),
    "no run": (NoActiveRun, lambda s: s.asking.quiz(GROUP, ADA, run=True).__aenter__()),
    "unknown language": (UnsupportedLocale, lambda s: s.set_language(ADA, "fr")),
    "unknown chat language": (UnsupportedLocale, lambda s: s.set_language(
        ADA, "klingon", chat=GROUP, allowed=True)),
    "bad period": (BadPeriod, lambda s: s.leaderboard(GROUP, "year")),
    "daily not allowed": (NotAllowed, lambda s: s.daily.set(GROUP, "09:00", allowed=False)),
    "daily off not allowed": (NotAllowed, lambda s: s.daily_off(GROUP, allowed=False)),
    "language not allowed": (NotAllowed, lambda s: s.set_language(
        ADA, "bn", chat=GROUP, allowed=False)),
    "bad time": (ScheduleError, lambda s: s.daily.set(GROUP, "25:00", allowed=True)),
    "bad open time": (ScheduleError, lambda s: s.daily.set(
        GROUP, "09:00", open_minutes=0, allowed=True)),
    "zone with suggestions": (BadZone, lambda s: s.daily.set(
        GROUP, "09:00", "Kolkata", allowed=True)),
    "zone without suggestions": (BadZone, lambda s: s.daily.set(
        GROUP, "09:00", "Mars/Olympus", allowed=True)),
    "bad round size": (BadCount, lambda s: s.asking.quiz(GROUP, ADA, count=21).__aenter__()),
    "settings not allowed": (NotAllowed, lambda s: s.chat_settings.change(
        GROUP, seconds=30, allowed=False)),
    "bad question time": (BadQuestionTime, lambda s: s.chat_settings.change(
        GROUP, words=["time", "soon"], allowed=True)),
    "bad mode": (BadMode, lambda s: s.chat_settings.change(GROUP, mode="pigeon", allowed=True)),
    "bad peer threshold": (BadPeerThreshold, lambda s: s.chat_settings.change(
        GROUP, peer_threshold="150", allowed=True)),
    "bad discussion time": (BadDiscussion, lambda s: s.chat_settings.change(
        GROUP, peer_discussion="forever", allowed=True)),
    "not an author": (AuthoringError, lambda s: s.authoring.add(ADA, "en", POLL, "m")),
    "a regular poll": (AuthoringError, lambda s: as_author(s).authoring.add(
        ADA, "en", PollQuestion("Two?", ("a", "b"), (), quiz=False), "m")),
    "a forwarded quiz": (AuthoringError, lambda s: as_author(s).authoring.add(
        ADA, "en", PollQuestion("Two?", ("a", "b"), ()), "m")),
    "two right options": (AuthoringError, lambda s: as_author(s).authoring.add(
        ADA, "en", PollQuestion("Two?", ("a", "b"), (0, 1)), "m")),
    "no draft": (AuthoringError, lambda s: as_author(s).authoring.view(ADA)),
    "an empty draft": (AuthoringError, lambda s: draft_then(s)),
    "an untitled draft": (AuthoringError, lambda s: draft_then(s, poll=True)),
    "a quiz with that id": (AuthoringError, lambda s: draft_then(s, poll=True, title="Sample")),
    "unknown setting": (SettingsError, lambda s: s.chat_settings.change(
        GROUP, words=["colour", "red"], allowed=True)),
    "unknown question to report": (UnknownQuestion, lambda s: s.problem_reports.report(
        ADA, GROUP, "nope", "wrong")),
    "empty report": (ReportError, lambda s: s.problem_reports.report(ADA, GROUP, "s-one", "  ")),
    "long report": (ReportError,
                    lambda s: s.problem_reports.report(ADA, GROUP, "s-one", "x" * 1001)),
    "nothing answered to report": (ReportError, lambda s: s.problem_reports.report_last(
        ADA, GROUP, "wrong")),
    "too many reports": (ReportError, lambda s: reports_beyond_the_cap(s)),
    "unknown report": (UnknownReport, lambda s: s.problem_reports.resolve(99)),
    "typed id that is no question": (UnknownQuestion, lambda s: s.problem_reports.report_words(
        ADA, GROUP, "s-on the answer is wrong")),
    "reports not allowed": (NotAllowed, lambda s: s.problem_reports.for_chat(GROUP, allowed=False)),
    "another chat's report": (UnknownReport, lambda s: s.problem_reports.resolve_in_chat(
        GROUP, 99, allowed=True)),
    "report resolved already": (AlreadyResolved, lambda s: resolve_twice(s)),
    "bad chart": (BadChart, lambda s: s.chat_settings.change(
        GROUP, words=["chart", "maybe"], allowed=True)),
    "analysis not allowed": (NotAllowed, lambda s: s.item_analysis.for_chat(GROUP, allowed=False)),
    "unknown quiz to analyse": (UnknownQuiz, lambda s: s.item_analysis.for_chat(GROUP, "nope",
                                                                                allowed=True)),
    "bad asker": (BadAsker, lambda s: s.chat_settings.change(
        GROUP, words=["quiz", "cats"], allowed=True)),
    "a member cuts a question short": (StillOpen, lambda s: cut_short(s)),
    "a member asks where only admins ask": (NotAllowed, lambda s: cut_short(s, admins=True)),
    "mydata in a group": (PrivacyError, lambda s: s.my_data(ADA, GROUP)),
    "mydata with other words": (PrivacyError, lambda s: mydata_words(s, "everything")),
    "a made-up delete confirmation": (PrivacyError, lambda s: s.delete_my_data(
        ADA, "4102444800.0123456789abcdef0123", "the bot token")),
    "progress with the dashboard off": (DashboardOff, lambda s: progress(s)),
    "join with no live session": (LiveError, lambda s: s.live.join(GROUP.key, ADA)),
    "an assignment due in the past": (AssignmentError, lambda s: s.assignments.assign(
        GROUP, "basics", "2001-01-01", allowed=True)),
}


async def member() -> bool:
    return False


async def cut_short(service: QuizService, *, admins: bool = False) -> None:
    """Ada's question is open; Ben, a member, asks for another (with /settings quiz admins:
    asks at all). The setup is undone afterwards, once the refusal is seen to have left
    Ada's question open."""
    if admins:
        await service.chat_settings.change(GROUP, words=["quiz", "admins"], allowed=True)
    else:
        async with service.asking.quiz(GROUP, ADA):
            pass
    try:
        async with service.asking.quiz(GROUP, BEN, is_admin=member):
            pass
    finally:
        if admins:
            await service.chat_settings.change(GROUP, words=["quiz", "default"], allowed=True)
        else:
            [post] = await service.storage.open_posts(GROUP.key, kind="quiz")
            await service.questions.close(post.id, quiet=True)


async def reports_beyond_the_cap(service: QuizService) -> None:
    service.problem_reports.daily_cap = 1
    await service.problem_reports.report(ADA, GROUP, "s-one", "wrong")
    await service.problem_reports.report(ADA, GROUP, "s-two", "wrong")


async def resolve_twice(service: QuizService) -> None:
    receipt = await service.problem_reports.report(ADA, GROUP, "s-one", "wrong")
    await service.problem_reports.resolve(receipt.report.id)
    await service.problem_reports.resolve(receipt.report.id)


async def refusal(service: QuizService, name: str) -> UserError:
    expected, attempt = REFUSALS[name]
    with pytest.raises(UserError) as info:
        await attempt(service)
    assert type(info.value) is expected, (name, type(info.value))
    return info.value


def subclasses(cls: type[UserError]) -> set[type[UserError]]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *subclasses(sub)}
    return found


def text_of(service: QuizService, error: UserError, locale: str) -> str:
    t = translator(locale)
    return render.error_text(error, t, service.questions.quizzes(t.locale))


async def progress(service: QuizService) -> None:
    service.progress_app()


def test_every_kind_of_refusal_has_a_sample() -> None:
    assert subclasses(UserError) == {cls for cls, _ in REFUSALS.values()}


@pytest.mark.parametrize("name", sorted(REFUSALS))
async def test_every_refusal_reads_whole_in_every_language(
    service: QuizService, name: str
) -> None:
    error = await refusal(service, name)
    english = text_of(service, error, DEFAULT_LOCALE)
    assert english.splitlines()[0] == str(error)  # the msgid with its values
    for locale in LOCALES:
        text = text_of(service, error, locale)
        assert text.strip(), (name, locale)
        assert not PLACEHOLDER.search(text), (name, locale, text)
        for value in error.values.values():
            if isinstance(value, str) and value.isascii():
                assert value in text, (name, locale, value)  # what was typed is quoted back
        if locale in SCRIPTS:  # said in that language, not English
            first = text.splitlines()[0]
            assert first != english.splitlines()[0], (name, locale)
            assert SCRIPTS[locale].search(first), (name, locale, first)


@pytest.mark.parametrize("locale", LOCALES)
async def test_a_bad_zone_lists_suggestions(service: QuizService, locale: str) -> None:
    error = await refusal(service, "zone with suggestions")
    assert isinstance(error, BadZone) and "Asia/Kolkata" in error.suggestions
    lines = text_of(service, error, locale).splitlines()
    t = translator(locale)
    assert t.gettext("Did you mean: {zones}?", zones=", ".join(error.suggestions)) in lines
    assert "Asia/Kolkata" in lines[1]
    none = await refusal(service, "zone without suggestions")
    assert isinstance(none, BadZone) and none.suggestions == ()
    assert len(text_of(service, none, locale).splitlines()) == 2  # the refusal, nothing changed


@pytest.mark.parametrize("locale", LOCALES)
async def test_schedule_errors_end_with_nothing_was_changed(
    service: QuizService, locale: str
) -> None:
    said = translator(locale).gettext("Nothing was changed.")
    if locale != DEFAULT_LOCALE:
        assert said != "Nothing was changed."
    for name, (cls, _) in REFUSALS.items():
        text = text_of(service, await refusal(service, name), locale)
        if issubclass(cls, ScheduleError):
            assert text.splitlines()[-1] == said, (name, text)
        else:
            assert said not in text, (name, text)


@pytest.mark.parametrize("locale", LOCALES)
async def test_an_unknown_name_lists_what_there_is(service: QuizService, locale: str) -> None:
    t = translator(locale)
    title = service.catalog.quizzes["sample"].title.get(t.locale)
    for name in ("unknown quiz", "unknown quiz to run", "no run"):
        text = text_of(service, await refusal(service, name), locale)
        assert t.gettext("Available quizzes:") in text, (name, locale)
        assert f"• sample — {title}" in text, (name, locale)


async def test_a_refusal_changes_nothing(service: QuizService) -> None:
    await service.daily.set(GROUP, "08:00", "Asia/Dhaka", "sample", allowed=True)
    await service.set_language(ADA, "hi")
    for name in REFUSALS:
        await refusal(service, name)
    status = await service.daily.status(GROUP)
    assert status is not None
    assert (f"{status.schedule.at:%H:%M}", status.schedule.tz, status.schedule.selector) == (
        "08:00", "Asia/Dhaka", "sample")
    assert status.schedule.open_minutes is None
    assert await service.locales.for_person(ADA, GROUP) == "hi"
    assert await service.locales.for_audience(GROUP) == "en"
    assert await service.runs.active(ADA, ALONE) is None
    assert await service.runs.active(ADA, GROUP) is None
    assert await service.storage.open_posts() == []
