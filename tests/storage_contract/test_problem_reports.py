"""Problem reports on both backends: stored with the person and text, listed open or all and
by quiz, one open report per person and question (a second is appended), a daily cap,
resolved once; they follow a chat that moved."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.core.ports import AnswerRecord, NewProblemReport, ProblemReportRecord, ReportOutcome
from tests.storage_contract.backends import Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
DAY_AGO = NOW - timedelta(hours=24)


def report(question: str = "s-one", text: str = "typo", person: str = "tg:1",
           quiz: str = "sample", chat: str = "tg:-1", at: datetime = NOW) -> NewProblemReport:
    return NewProblemReport(quiz, question, person, "Ada", chat, text, at)


async def add(
    store: Store, new: NewProblemReport, cap: int = 10, max_chars: int = 100
) -> tuple[ReportOutcome, ProblemReportRecord | None]:
    return await store.add_problem_report(new, since=DAY_AGO, daily_cap=cap, max_chars=max_chars)


async def test_reports_are_stored_and_listed(store: Store) -> None:
    outcome, first = await add(store, report())
    assert outcome == "inserted" and first is not None
    assert (first.quiz_id, first.question_id, first.person_key, first.person_name,
            first.chat_key, first.text, first.created_at, first.resolved_at) == (
        "sample", "s-one", "tg:1", "Ada", "tg:-1", "typo", NOW, None)
    _, second = await add(store, report("q-two", "wrong answer", quiz="other", person="dc:2"))
    assert second is not None and second.id != first.id
    listed = await store.problem_reports()
    assert [r.id for r in listed] == [first.id, second.id]
    assert [r.text for r in await store.problem_reports(quiz_id="other")] == ["wrong answer"]


async def test_reports_are_listed_by_the_chat_they_were_made_in(store: Store) -> None:
    await add(store, report(chat="tg:-1"))
    await add(store, report("s-two", "unclear", chat="dc:77"))
    await add(store, report("s-three", "done", chat="dc:77"))
    [done] = [r for r in await store.problem_reports(chat_key="dc:77") if r.text == "done"]
    assert await store.resolve_problem_report(done.id, NOW) == "resolved"
    assert [r.text for r in await store.problem_reports(chat_key="dc:77")] == ["unclear"]
    assert [r.text for r in await store.problem_reports(chat_key="dc:77", open_only=False)] \
        == ["unclear", "done"]
    assert [r.chat_key for r in await store.problem_reports(chat_key="tg:-1")] == ["tg:-1"]
    assert await store.problem_reports(chat_key="tg:-9") == []


async def test_a_second_report_of_the_same_question_is_appended(store: Store) -> None:
    _, first = await add(store, report(text="typo"))
    outcome, again = await add(store, report(text="and option B", at=NOW + timedelta(1)))
    assert outcome == "appended" and again is not None and first is not None
    assert again.id == first.id and again.text == "typo\nand option B"
    assert again.updated_at == NOW + timedelta(1) and again.created_at == NOW
    assert len(await store.problem_reports(open_only=False)) == 1
    outcome, cut = await add(store, report(text="x" * 200))
    assert outcome == "appended" and cut is not None and len(cut.text) == 100


async def test_a_person_is_capped_per_day(store: Store) -> None:
    for question in ("a", "b"):
        assert (await add(store, report(question), cap=2))[0] == "inserted"
    assert await add(store, report("c"), cap=2) == ("capped", None)
    assert (await add(store, report("a", "more"), cap=2))[0] == "appended"  # not a new one
    assert (await add(store, report("c", person="tg:2"), cap=2))[0] == "inserted"
    old = report("d", person="tg:3", at=DAY_AGO)  # 24 hours ago: no longer counted
    await add(store, old, cap=1)
    assert (await add(store, report("e", person="tg:3"), cap=1))[0] == "inserted"
    assert len(await store.problem_reports()) == 5


async def test_a_report_is_resolved_once(store: Store) -> None:
    _, first = await add(store, report())
    assert first is not None
    assert await store.resolve_problem_report(first.id, NOW, "fixed in v2") == "resolved"
    assert await store.resolve_problem_report(first.id, NOW, "again") == "already"
    assert await store.resolve_problem_report(first.id + 99, NOW) == "unknown"
    assert await store.problem_reports() == []
    [done] = await store.problem_reports(open_only=False)
    assert (done.resolved_at, done.resolution) == (NOW, "fixed in v2")
    # resolved: the same person's next report of it is a new one
    outcome, fresh = await add(store, report(text="still wrong"))
    assert outcome == "inserted" and fresh is not None and fresh.id != first.id


async def test_last_answered_and_a_moved_chat(store: Store) -> None:
    assert await store.last_answered("tg:1", "tg:-1") is None
    await store.upsert_chat("tg:-1", "Group")
    for i, question in enumerate(("s-one", "s-two")):
        post = await store.create_post("tg:-1", "sample", question, (0, 1, 2), "en",
                                       NOW + timedelta(seconds=i))
        await store.record_answer(AnswerRecord(post.id, "tg:1", 0, True,
                                               NOW + timedelta(seconds=i), 10))
    assert await store.last_answered("tg:1", "tg:-1") == ("sample", "s-two")
    assert await store.last_answered("tg:1", "tg:-9") is None
    await add(store, report())
    assert await store.migrate_chat("tg:-1", "tg:-100")
    assert [r.chat_key for r in await store.problem_reports()] == ["tg:-100"]
    assert await store.last_answered("tg:1", "tg:-100") == ("sample", "s-two")


