"""An assignment's life, written once and checked on Telegram and on Discord (harness.py): an
admin assigns a quiz with a deadline (a member may not), members take it privately at their
own pace, those who started and have not finished are reminded once, and at the deadline the
chat gets one summary. Time moves only through the clock and tick()."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.behaviour.harness import AssignmentHarness, Seen

# the conftest clock starts 2026-03-01 12:00 UTC; the deadline is two days later
DEADLINE = datetime(2026, 3, 3, 12, tzinfo=UTC)
REMINDER = datetime(2026, 3, 2, 12, tzinfo=UTC)  # a day before


async def answer_all(h: AssignmentHarness, first: Seen, who: object, place: object,
                     count: int) -> None:
    """Answer `count` questions of the run, each right, from the first one shown."""
    [post] = first.post_ids
    for n in range(count):
        question = await h.service.questions.show(post)
        assert question is not None
        seen = await h.answer(place, who, post, question.correct)
        if n + 1 < count:
            [post] = seen.post_ids  # the run's next question


async def test_an_assignment_is_taken_privately_reminded_once_and_summed_up_once(
    h: AssignmentHarness,
) -> None:
    group, admin, ada, bo, cy = h.group(), h.person(1), h.person(2), h.person(3), h.person(4)
    h.make_admin(admin)
    refused = await h.assign(group, ada, "sample", "2026-03-03", "12:00", "UTC")
    assert "Only this chat's admins can give or cancel assignments." in refused.text
    assert "no assignments running" in (await h.assign(group, ada)).text  # nothing changed
    bad = await h.assign(group, admin, "sample", "2026-02-30", "12:00", "UTC")
    assert "is not a date" in bad.text
    past = await h.assign(group, admin, "sample", "2026-03-01", "11:00", "UTC")
    assert "That deadline has passed" in past.text

    announced = await h.assign(group, admin, "sample", "2026-03-03", "12:00", "UTC")
    assert "“Sample Quiz”, 3 questions, to finish by 2026-03-03 12:00 (UTC)" in announced.text
    listed = (await h.assign(group, bo)).text
    assert "“Sample Quiz”: by 2026-03-03 12:00 (UTC)" in listed

    # Ada finishes it; Bo answers one question and stops; Cy never starts
    taken = await h.take_assignment(group, ada)
    assert h.shown_privately(taken.post_ids[0])
    await answer_all(h, taken, ada, h.run_place(group, ada), 3)
    await answer_all(h, await h.take_assignment(group, bo), bo, h.run_place(group, bo), 1)

    h.clock.set(REMINDER)
    for _ in range(3):
        await h.tick()
    [reminder] = h.private_texts(bo)
    assert "“Sample Quiz” is due by 2026-03-03 12:00 (UTC)" in reminder
    assert "1 of its 3 questions" in reminder
    assert h.private_texts(ada) == [] and h.private_texts(cy) == []

    h.clock.set(DEADLINE)
    for _ in range(3):
        await h.tick()
    summaries = [t for t in h.posted_texts(group) if "is over" in t]
    assert len(summaries) == 1
    assert "1 of 2 who started it finished" in summaries[0]
    assert "Finished: Bob\n" in summaries[0]  # person 2
    assert "100%" in summaries[0]  # Ada, the one who finished, got them all right
    assert len(h.private_texts(bo)) == 1  # still once
    assert "no assignments running" in (await h.assign(group, bo)).text
    late = await h.take_assignment(group, cy)
    assert "This assignment is over" in late.text and late.post_ids == []


async def test_an_admin_cancels_an_assignment_and_a_member_may_not(
    h: AssignmentHarness,
) -> None:
    group, admin, ada = h.group(), h.person(1), h.person(2)
    h.make_admin(admin)
    await h.assign(group, admin, "sample", "2026-03-05")
    refused = await h.unassign(group, ada, "1")
    assert "Only this chat's admins can give or cancel assignments." in refused.text
    assert "Sample Quiz" in (await h.assign(group, ada)).text
    done = await h.unassign(group, admin, "1")
    assert "is cancelled" in done.text
    assert "no assignments running" in (await h.assign(group, ada)).text
    stale = await h.take_assignment(group, ada)  # the announcement's button, afterwards
    assert "not there any more" in stale.text and stale.post_ids == []
