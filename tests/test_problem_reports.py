"""Problem reports in the core: a report names a question the catalog has (a forged id is
refused and stores nothing), its text is stripped and 1..MAX_REPORT_CHARS long, a second
report of the same open question is appended, a person makes at most DAILY_REPORTS a day,
/report <text> means the last question answered in the chat, and admins list and resolve."""

from __future__ import annotations

import pytest

from bot.core import render
from bot.core.errors import (
    DAILY_REPORTS,
    MAX_REPORT_CHARS,
    AlreadyResolved,
    NotAllowed,
    ReportError,
    UnknownQuestion,
    UnknownReport,
)
from bot.core.models import Chat, Person
from bot.core.problem_reports import REPORT_USAGE
from bot.core.service import QuizService
from bot.i18n import translator
from tests.clock import FakeClock

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database

GROUP = Chat("tg:-100", "Study group")
ADA = Person("tg:1", "Ada")
BO = Person("dc:2", "Bo")


async def test_a_report_is_stored_with_the_person_and_text(service: QuizService) -> None:
    receipt = await service.problem_reports.report(ADA, GROUP, "s-two",
                                                   "  Seven is a colour too?  ")
    assert not receipt.appended
    [stored] = await service.problem_reports.list()
    assert stored == receipt.report
    assert (stored.quiz_id, stored.question_id, stored.person_key, stored.person_name,
            stored.chat_key, stored.text) == (
        "sample", "s-two", "tg:1", "Ada", GROUP.key, "Seven is a colour too?")


@pytest.mark.parametrize("question_id", ["nope", "", "s-one:1", "x" * 500, "S-ONE'--"])
async def test_an_unknown_question_is_refused_and_nothing_stored(
    service: QuizService, question_id: str
) -> None:
    with pytest.raises(UnknownQuestion):
        await service.problem_reports.report(ADA, GROUP, question_id, "wrong")
    assert await service.problem_reports.list(open_only=False) == []


@pytest.mark.parametrize("text", ["", "   \n ", "x" * (MAX_REPORT_CHARS + 1)])
async def test_an_empty_or_long_text_is_refused(service: QuizService, text: str) -> None:
    with pytest.raises(ReportError):
        await service.problem_reports.report(ADA, GROUP, "s-one", text)
    assert await service.problem_reports.list(open_only=False) == []


async def test_the_longest_text_is_kept_whole(service: QuizService) -> None:
    receipt = await service.problem_reports.report(ADA, GROUP, "s-one", "y" * MAX_REPORT_CHARS)
    assert receipt.report.text == "y" * MAX_REPORT_CHARS


async def test_a_second_report_while_open_is_appended(service: QuizService) -> None:
    first = await service.problem_reports.report(ADA, GROUP, "s-one", "typo in the prompt")
    again = await service.problem_reports.report(ADA, GROUP, "S-One", "and option 3")
    assert again.appended and again.report.id == first.report.id
    assert again.report.text == "typo in the prompt\nand option 3"
    other = await service.problem_reports.report(BO, GROUP, "s-one", "typo")  # another person
    assert not other.appended
    assert len(await service.problem_reports.list()) == 2


async def test_a_person_makes_a_few_reports_a_day(
    service: QuizService, clock: FakeClock
) -> None:
    assert service.problem_reports.daily_cap == DAILY_REPORTS
    service.problem_reports.daily_cap = 2
    await service.problem_reports.report(ADA, GROUP, "s-one", "a")
    await service.problem_reports.report(ADA, GROUP, "s-two", "b")
    with pytest.raises(ReportError) as refused:
        await service.problem_reports.report(ADA, GROUP, "s-three", "c")
    assert refused.value.values["most"] == 2
    await service.problem_reports.report(BO, GROUP, "s-three", "c")  # someone else may
    clock.advance(hours=24)
    await service.problem_reports.report(ADA, GROUP, "s-three", "c")  # a day later
    assert len(await service.problem_reports.list()) == 4


async def test_report_without_an_id_means_the_last_answered_question(
    service: QuizService, clock: FakeClock
) -> None:
    with pytest.raises(ReportError):
        await service.problem_reports.report_last(ADA, GROUP, "wrong")
    async with service.asking.quiz(GROUP, ADA, "sample") as question:
        pass
    await service.answer(question.post_id, ADA, 0)
    receipt = await service.problem_reports.report_last(ADA, GROUP, "the answer is wrong")
    assert receipt.report.question_id == question.question_id
    with pytest.raises(ReportError):  # elsewhere, nothing answered
        await service.problem_reports.report_last(ADA, Chat("tg:-200", "Other"), "wrong")


async def test_admins_list_and_resolve(service: QuizService, clock: FakeClock) -> None:
    first = (await service.problem_reports.report(ADA, GROUP, "s-one", "typo")).report
    await service.problem_reports.report(BO, GROUP, "s-two", "unclear")
    clock.advance(60)
    await service.problem_reports.resolve(first.id, "  fixed the typo ")
    assert [r.question_id for r in await service.problem_reports.list()] == ["s-two"]
    everything = await service.problem_reports.list(open_only=False, quiz_id="sample")
    assert [(r.id, r.resolution, r.resolved_at) for r in everything] == [
        (first.id, "fixed the typo", clock.now()), (first.id + 1, None, None)]
    assert await service.problem_reports.list(open_only=False, quiz_id="other") == []
    with pytest.raises(AlreadyResolved):
        await service.problem_reports.resolve(first.id)
    with pytest.raises(UnknownReport):
        await service.problem_reports.resolve(first.id + 100)


def test_question_titles_follow_the_locale(service: QuizService) -> None:
    assert service.problem_reports.title("s-one", "bn") == "এক যোগ এক কত?"
    assert service.problem_reports.title("s-two", "bn") == "Which is a colour?"
    assert service.problem_reports.is_question("s-three")
    assert not service.problem_reports.is_question("sample")


# /report typed as one line, and admins in their chat -----------------------------------------
async def test_a_typed_id_that_is_no_question_is_refused_with_the_nearest(
    service: QuizService,
) -> None:
    with pytest.raises(UnknownQuestion) as refused:
        await service.problem_reports.report_words(ADA, GROUP, "s-on the prompt has a typo")
    assert refused.value.nearest[0] == "s-one" and refused.value.last is None
    text = render.error_text(refused.value, translator("en"), service.questions.quizzes())
    assert "s-one" in text and "Did you mean" in text
    assert await service.problem_reports.list(open_only=False) == []


async def test_a_typed_id_with_nothing_near_offers_the_last_answered_question(
    service: QuizService,
) -> None:
    async with service.asking.quiz(GROUP, ADA, "sample") as question:
        pass
    await service.answer(question.post_id, ADA, 0)
    with pytest.raises(UnknownQuestion) as refused:
        await service.problem_reports.report_words(ADA, GROUP, "no-such-q the answer is wrong")
    assert refused.value.nearest == () and refused.value.last == question.question_id
    text = render.error_text(refused.value, translator("en"), service.questions.quizzes())
    assert question.question_id in text
    with pytest.raises(UnknownQuestion):  # an id alone, with no text: still the id
        await service.problem_reports.report_words(ADA, GROUP, "no-such-q")
    assert await service.problem_reports.list(open_only=False) == []
    # an id the catalog has, or plain words, still report as before
    receipt = await service.problem_reports.report_words(ADA, GROUP, "s-two   not a colour\nreally")
    assert (receipt.report.question_id, receipt.report.text) == ("s-two", "not a colour\nreally")
    receipt = await service.problem_reports.report_words(ADA, GROUP, "the option text is cut")
    assert receipt.report.question_id == question.question_id


@pytest.mark.parametrize("usage", [REPORT_USAGE, "/report question: text:"])
async def test_an_empty_report_shows_the_platforms_syntax(
    service: QuizService, usage: str
) -> None:
    with pytest.raises(ReportError) as refused:
        await service.problem_reports.report_last(ADA, GROUP, " ", usage=usage)
    for locale in ("en", "bn"):
        shown = render.error_text(refused.value, translator(locale),
                                  service.questions.quizzes(locale))
        assert "/report" in shown
    assert usage in render.error_text(refused.value, translator("en"), service.questions.quizzes())


async def test_a_chats_admins_see_and_resolve_only_its_reports(service: QuizService) -> None:
    other = Chat("dc:55", "general")
    here = (await service.problem_reports.report(ADA, GROUP, "s-one", "typo")).report
    there = (await service.problem_reports.report(BO, other, "s-two", "unclear")).report
    with pytest.raises(NotAllowed):
        await service.problem_reports.for_chat(GROUP, allowed=False)
    assert [r.id for r in await service.problem_reports.for_chat(GROUP, allowed=True)] == [here.id]
    with pytest.raises(NotAllowed):
        await service.problem_reports.resolve_in_chat(GROUP, here.id, allowed=False)
    with pytest.raises(UnknownReport):  # another chat's report is none of this chat's
        await service.problem_reports.resolve_in_chat(GROUP, there.id, allowed=True)
    with pytest.raises(UnknownReport):
        await service.problem_reports.resolve_in_chat(GROUP, "seven", allowed=True)
    assert await service.problem_reports.resolve_in_chat(GROUP, f"#{here.id}", "fixed",
                                                         allowed=True) == here.id
    assert await service.problem_reports.for_chat(GROUP, allowed=True) == []
    with pytest.raises(AlreadyResolved):
        await service.problem_reports.resolve_in_chat(GROUP, here.id, allowed=True)
    assert [r.id for r in await service.problem_reports.list()] == [there.id]
