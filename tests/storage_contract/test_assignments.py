"""Assignments on every store (bot/storage/assignments.py): one is stored and listed until its
deadline or its cancellation; progress counts each question of its set once per member, from
the answers in their runs of it; a member's reminder and the deadline's summary are claimed
once, and due until marked sent; a person's deletion leaves nothing of theirs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.core.ports import AnswerRecord, NewAssignment
from tests.storage_contract.backends import Backend, Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
HOUR = timedelta(hours=1)
CHAT = "tg:-1"


def new(deadline: datetime, chat: str = CHAT) -> NewAssignment:
    return NewAssignment(chat, "sample", ("sample", "more"), 3, "tok", "en", "Asia/Kolkata",
                         deadline, deadline - HOUR, NOW, "tg:9")


async def answer(store: Store, run_id: int, person: str, question: str, correct: bool,
                 at: datetime) -> None:
    post = await store.create_post(person, "sample", question, (0, 1, 2), "en", at,
                                   run_id=run_id, kind="run", owner_key=person)
    outcome, _earlier = await store.record_answer(AnswerRecord(post.id, person, 1, correct, at,
                                                               1000))
    assert outcome == "inserted"


async def test_an_assignment_is_listed_until_its_deadline_or_cancelled(backend: Backend) -> None:
    async with backend.opened() as store:
        soon = await store.create_assignment(new(NOW + HOUR))
        later = await store.create_assignment(new(NOW + 5 * HOUR))
        elsewhere = await store.create_assignment(new(NOW + HOUR, "tg:-2"))
        record = await store.assignment(later)
        assert record is not None
        assert (record.new, record.cancelled_at, record.summary_claimed_at) == (
            new(NOW + 5 * HOUR), None, None)
        assert [r.id for r in await store.chat_assignments(CHAT, NOW)] == [soon, later]
        assert [r.id for r in await store.chat_assignments(CHAT, NOW + HOUR)] == [later]
        assert not await store.cancel_assignment(later, "tg:-2", NOW)  # not that chat's
        assert await store.cancel_assignment(later, CHAT, NOW)
        assert not await store.cancel_assignment(later, CHAT, NOW)  # once
    async with backend.opened() as store:  # stored
        assert [r.id for r in await store.chat_assignments(CHAT, NOW)] == [soon]
        assert [r.id for r in await store.chat_assignments("tg:-2", NOW)] == [elsewhere]
        assert await store.assignment(10_000) is None


async def test_progress_counts_each_question_of_the_set_once(store: Store) -> None:
    assignment = await store.create_assignment(new(NOW + 5 * HOUR))
    await store.upsert_person("tg:1", "Ada")
    first = await store.create_run("tg:1", "tg:1", "sample", ("a", "b", "c"), "en", NOW)
    await store.add_assignment_run(assignment, first.id, "tg:1", "sample")
    await store.add_assignment_run(assignment, first.id, "tg:1", "sample")  # once
    await answer(store, first.id, "tg:1", "a", True, NOW + timedelta(minutes=1))
    await store.finish_run(first.id, NOW + timedelta(minutes=2))
    # taken up again: "a" asked again counts once, with its first answer
    second = await store.create_run("tg:1", "tg:1", "sample", ("a", "b"), "en", NOW + HOUR)
    await store.add_assignment_run(assignment, second.id, "tg:1", "sample")
    await answer(store, second.id, "tg:1", "a", False, NOW + HOUR)
    await answer(store, second.id, "tg:1", "b", False, NOW + HOUR + timedelta(minutes=1))
    # an answer outside the assignment's runs does not count
    other = await store.create_run("tg:2", "tg:2", "sample", ("a",), "en", NOW)
    await answer(store, other.id, "tg:2", "a", True, NOW)
    await store.add_assignment_run(assignment, other.id, "tg:2", "sample")  # started, answered
    loose = await store.create_run("tg:3", "tg:3", "sample", ("a",), "en", NOW)
    await answer(store, loose.id, "tg:3", "c", True, NOW)
    assert await store.assignment_runs(assignment, "tg:1") == [
        (first.id, "sample"), (second.id, "sample")]
    assert await store.answered_in_assignment(assignment, "tg:1") == {
        ("sample", "a"), ("sample", "b")}
    ada, bo = await store.assignment_progress(assignment)
    assert (ada.person_key, ada.name, ada.answered, ada.right) == ("tg:1", "Ada", 2, 1)
    assert ada.last_answer_at == NOW + HOUR + timedelta(minutes=1)
    assert (bo.person_key, bo.answered, bo.right) == ("tg:2", 1, 1)
    figures = {(q.question_id, q.answered, q.right)
               for q in await store.assignment_questions(assignment)}
    assert figures == {("a", 2, 2), ("b", 1, 0)}  # Ada's first answer to "a" was right


async def test_a_reminder_and_a_summary_are_claimed_once_and_due_until_sent(
    backend: Backend,
) -> None:
    async with backend.opened() as store:
        assignment = await store.create_assignment(new(NOW + 2 * HOUR))
        cancelled = await store.create_assignment(new(NOW + 2 * HOUR))
        await store.cancel_assignment(cancelled, CHAT, NOW)
        assert await store.assignments_to_remind(NOW) == []
        assert [r.id for r in await store.assignments_to_remind(NOW + HOUR)] == [assignment]
        assert await store.assignments_to_remind(NOW + 2 * HOUR) == []  # past its deadline
        assert await store.claim_assignment_reminder(assignment, "tg:1", NOW + HOUR)
        assert not await store.claim_assignment_reminder(assignment, "tg:1", NOW + HOUR)
        assert await store.unsent_assignment_reminders(NOW, NOW + 2 * HOUR) == [
            (assignment, "tg:1")]
        assert await store.unsent_assignment_reminders(NOW + 2 * HOUR, NOW + 3 * HOUR) == []
        await store.mark_assignment_reminder_sent(assignment, "tg:1", NOW + HOUR)
        assert await store.unsent_assignment_reminders(NOW, NOW + 2 * HOUR) == []

        assert await store.assignments_due(NOW + HOUR) == []
        assert [r.id for r in await store.assignments_due(NOW + 2 * HOUR)] == [assignment]
        assert not await store.claim_assignment_summary(cancelled, NOW + 2 * HOUR)
        assert await store.claim_assignment_summary(assignment, NOW + 2 * HOUR)
        assert not await store.claim_assignment_summary(assignment, NOW + 2 * HOUR)
        assert await store.assignments_due(NOW + 3 * HOUR) == []
        assert not await store.cancel_assignment(assignment, CHAT, NOW)  # its summary is due
    async with backend.opened() as store:
        assert [r.id for r in await store.unposted_assignment_summaries(
            NOW, NOW + 3 * HOUR)] == [assignment]
        await store.mark_assignment_summary_posted(assignment, NOW + 3 * HOUR)
        assert await store.unposted_assignment_summaries(NOW, NOW + 3 * HOUR) == []
        record = await store.assignment(assignment)
        assert record is not None and record.summary_posted_at == NOW + 3 * HOUR


async def test_deleting_a_person_leaves_the_assignment_and_nothing_of_theirs(
    store: Store,
) -> None:
    assignment = await store.create_assignment(new(NOW + 2 * HOUR))
    run = await store.create_run("tg:9", "tg:9", "sample", ("a",), "en", NOW)
    await store.add_assignment_run(assignment, run.id, "tg:9", "sample")
    await answer(store, run.id, "tg:9", "a", True, NOW)
    assert await store.claim_assignment_reminder(assignment, "tg:9", NOW)
    assert await store.delete_person("tg:9")
    record = await store.assignment(assignment)
    assert record is not None and record.new.created_by is None
    assert await store.assignment_progress(assignment) == []
    assert await store.unsent_assignment_reminders(NOW - HOUR, NOW + HOUR) == []


async def test_a_chat_move_takes_its_assignments_along(backend: Backend) -> None:
    # a Telegram group that became a supergroup: its assignments are listed, cancelled and
    # summed up in the new chat, and the old key holds none
    async with backend.opened() as store:
        await store.upsert_chat(CHAT, "Group")
        assignment = await store.create_assignment(new(NOW + 2 * HOUR))
        elsewhere = await store.create_assignment(new(NOW + 2 * HOUR, "tg:-2"))
        assert await store.migrate_chat(CHAT, "tg:-1009")
    async with backend.opened() as store:  # stored
        assert await store.chat_assignments(CHAT, NOW) == []
        assert [r.id for r in await store.chat_assignments("tg:-1009", NOW)] == [assignment]
        assert [r.id for r in await store.chat_assignments("tg:-2", NOW)] == [elsewhere]
        record = await store.assignment(assignment)
        assert record is not None and record.new.chat_key == "tg:-1009"
        assert not await store.cancel_assignment(assignment, CHAT, NOW)
        assert await store.cancel_assignment(assignment, "tg:-1009", NOW)
