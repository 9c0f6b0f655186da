"""The dashboard's reads on every store: a chat's totals and days, its people in board order
paged by keyset (every page joined gives the whole board, once), their activity, its
answers paged by (person, time, id) with their round, another chat never mixed in; and the
revocation generation, shared by every storage on the database."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta

from bot.core.ports import AnswerRecord, DayCount, ItemFigures, NewPost, NewProblemReport
from bot.storage.item_figures import figures_of
from tests.storage_contract.backends import Backend, Store

DAY0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


async def fill(store: Store, chat: str = "tg:-1", people: int = 7, seed: int = 1) -> None:
    rng = random.Random(seed)
    for n in range(6):
        when = DAY0 + timedelta(days=n % 3, minutes=n)
        post = await store.create_post(chat, "sample", f"s-{n % 3}", (0, 1, 2), "en", when)
        for p in range(people):
            if rng.random() < 0.7:
                await store.record_answer(AnswerRecord(
                    post.id, f"tg:{p}", rng.randrange(3), rng.random() < 0.5,
                    when + timedelta(seconds=p), rng.randrange(1, 9) * 1000, name=f"P{p}"))
    await store.materialize()


async def test_totals_and_days_count_one_chat(store: Store) -> None:
    await fill(store)
    await fill(store, "tg:-2", seed=2)
    answers = await store.chat_answers("tg:-1", None, 1000)
    people, answered, correct = await store.chat_totals("tg:-1")
    assert (people, answered, correct) == (
        len({a.person_key for a in answers}), len(answers), sum(a.correct for a in answers))
    days = await store.chat_days("tg:-1", date(2026, 3, 2))
    assert [d.day for d in days] == [date(2026, 3, 2), date(2026, 3, 3)]
    for d in days:
        mine = [a for a in answers if a.answered_at.date() == d.day]
        assert (d.answered, d.correct) == (len(mine), sum(a.correct for a in mine))
    assert await store.chat_totals("tg:-9") == (0, 0, 0)
    assert await store.chat_days("tg:-9", date(2026, 1, 1)) == []


async def test_people_pages_walk_the_board_once(store: Store) -> None:
    await fill(store, people=11)
    await fill(store, "tg:-2", seed=3)
    whole = await store.chat_people("tg:-1", None, 100)
    assert [p.person_key for p in whole] == [
        p.person_key for p in sorted(whole, key=lambda p: (-p.correct, p.time_ms, p.person_key))]
    paged, after = [], None
    while page := await store.chat_people("tg:-1", after, 3):
        paged += page
        last = page[-1]
        after = (last.correct, last.time_ms, last.person_key)
    assert paged == whole
    assert all(p.name == f"P{p.person_key[3:]}" for p in whole)
    answers = await store.chat_answers("tg:-1", None, 1000)
    for p in whole:
        mine = [a for a in answers if a.person_key == p.person_key]
        assert (p.answered, p.correct) == (len(mine), sum(a.correct for a in mine))


async def test_activity_is_the_last_answer_and_each_quiz(store: Store) -> None:
    await fill(store)
    answers = await store.chat_answers("tg:-1", None, 1000)
    keys = sorted({a.person_key for a in answers})
    activity = await store.people_activity("tg:-1", [*keys, "tg:404"])
    assert set(activity) == set(keys)
    for key in keys:
        mine = [a for a in answers if a.person_key == key]
        last, quizzes = activity[key]
        assert last == max(a.answered_at for a in mine)
        assert quizzes == {"sample": (len(mine), sum(a.correct for a in mine))}


async def test_answers_are_paged_by_person_and_time_with_their_round(store: Store) -> None:
    await fill(store)
    await fill(store, "tg:-2", seed=5)
    rnd = await store.create_round("tg:-1", None, 2, None, "en", DAY0)
    post = await store.add_round_post(rnd.id, 0, NewPost("tg:-1", "sample", "s-9", (1, 0, 2),
                                                         "en", DAY0 + timedelta(days=5)))
    assert post is not None
    await store.record_answer(AnswerRecord(post.id, "tg:1", 1, True,
                                           DAY0 + timedelta(days=5, seconds=3), 3000, "P1"))
    whole = await store.chat_answers("tg:-1", None, 1000)
    assert [(a.person_key, a.answered_at, a.id) for a in whole] == sorted(
        (a.person_key, a.answered_at, a.id) for a in whole)
    assert {a.round_id for a in whole} == {None, rnd.id}
    [in_round] = [a for a in whole if a.round_id is not None]
    assert (in_round.question_id, in_round.option, in_round.correct, in_round.elapsed_ms,
            in_round.name) == ("s-9", 1, True, 3000, "P1")
    paged, after = [], None
    while page := await store.chat_answers("tg:-1", after, 4):
        paged += page
        after = (page[-1].person_key, page[-1].answered_at, page[-1].id)
    assert paged == whole
    # one person's, the newest first (what an organiser looks for on their page), paged too
    mine = await store.chat_answers("tg:-1", None, 1000, person_key="tg:1")
    assert mine == [a for a in whole if a.person_key == "tg:1"][::-1] and len(mine) > 2
    paged, after = [], None
    while page := await store.chat_answers("tg:-1", after, 2, person_key="tg:1"):
        paged += page
        after = (page[-1].person_key, page[-1].answered_at, page[-1].id)
    assert paged == mine
    assert await store.chat_answers("tg:-9", None, 10) == []


async def test_revoking_bumps_a_generation_every_storage_sees(
    backend: Backend, store: Store
) -> None:
    assert await store.dashboard_generation("tg:-1") == 0
    assert await store.revoke_dashboard("tg:-1") == 1
    assert await store.revoke_dashboard("tg:-1") == 2
    async with backend.opened() as other:  # another process on the same database
        assert await other.dashboard_generation("tg:-1") == 2
        assert await other.dashboard_generation("tg:-2") == 0


async def recount(store: Store, chat: str) -> tuple[tuple[int, int, int], list[DayCount]]:
    """A chat's totals and days from its answers alone."""
    answers = await store.chat_answers(chat, None, 10_000)
    days: dict[date, list[int]] = {}
    for a in answers:
        day = days.setdefault(a.answered_at.date(), [0, 0])
        day[0] += 1
        day[1] += int(a.correct)
    totals = (len({a.person_key for a in answers}), len(answers),
              sum(a.correct for a in answers))
    return totals, [DayCount(d, *days[d]) for d in sorted(days)]


async def figures(store: Store, chat: str) -> tuple[tuple[int, int, int], list[DayCount]]:
    return await store.chat_totals(chat), await store.chat_days(chat, date(2000, 1, 1))


async def test_the_figures_follow_a_moved_chat_and_a_deleted_person(store: Store) -> None:
    await fill(store, "tg:-1", people=9)
    await fill(store, "tg:-2", seed=4)
    assert await figures(store, "tg:-1") == await recount(store, "tg:-1")
    assert await store.migrate_chat("tg:-1", "tg:-3")
    await store.materialize()
    assert await figures(store, "tg:-1") == ((0, 0, 0), [])
    assert await figures(store, "tg:-3") == await recount(store, "tg:-3")
    assert await store.delete_person("tg:2")
    await fill(store, "tg:-2", seed=6)  # later answers are added to what is left
    for chat in ("tg:-3", "tg:-2"):
        assert await figures(store, chat) == await recount(store, chat)


async def expected_items(store: Store, chat: str) -> ItemFigures:
    """A chat's item figures from its first answers alone."""
    return figures_of((r.quiz_id, r.question_id, r.person_key, r.option, r.correct,
                       r.response) for r in await store.item_responses(None, chat))


async def test_item_figures_are_the_first_answers_through_a_move_and_a_deletion(
    backend: Backend, store: Store
) -> None:
    await fill(store, "tg:-1", people=9)  # each question asked twice: repeats are no firsts
    await fill(store, "tg:-2", seed=4)
    kept = await store.item_figures("tg:-1")
    assert kept == await expected_items(store, "tg:-1") and kept.groups
    assert {o[1] for o in kept.options} == {"s-0", "s-1", "s-2"}
    assert await store.item_figures("tg:-1", "other") == ItemFigures((), ())
    assert await store.item_figures("tg:-1", "sample") == kept
    assert await store.item_quizzes("tg:-1") == ["sample"]
    assert await store.migrate_chat("tg:-1", "tg:-3")
    await store.materialize()
    assert await store.item_figures("tg:-1") == ItemFigures((), ())
    assert await store.item_quizzes("tg:-1") == []
    assert await store.item_figures("tg:-3") == await expected_items(store, "tg:-3")
    assert await store.delete_person("tg:2")
    await fill(store, "tg:-2", seed=6)  # later answers join what is left
    await fill(store, "tg:-3", seed=7)
    for chat in ("tg:-3", "tg:-2"):
        assert await store.item_figures(chat) == await expected_items(store, chat)
    await backend.check_aggregates()


async def test_board_pages_walk_each_board_in_its_ranks(store: Store) -> None:
    await fill(store, people=13)
    await fill(store, "tg:-2", seed=8)
    last = DAY0 + timedelta(days=2)  # the newest answers' day: the week window ends on it
    for since in (None, last, last - timedelta(days=6), last - timedelta(days=1)):
        board, _ = await store.leaderboard("tg:-1", since, 1000, None)
        day = None if since is None else since.date()
        paged: list[tuple[str, int, int, int]] = []
        after = None
        while True:
            page = await store.board_people("tg:-1", day, after, 4)
            if page is None:  # a board no one table holds (a day before the newest)
                assert since == last - timedelta(days=1) and not paged
                break
            paged += [(p.person_key, p.correct, p.answered, p.time_ms) for p in page]
            if len(page) < 4:
                break
            after = (page[-1].correct, page[-1].time_ms, page[-1].person_key)
        if page is not None:
            assert paged == [(r.person_key, r.correct, r.answered, r.time_ms) for r in board]
            assert len(paged) > 4


async def daily(store: Store, chat: str, day: int, right: set[int], wrong: set[int]) -> None:
    """The daily question of DAY0 + `day` in `chat`, answered right by `right`."""
    when = DAY0 + timedelta(days=day)
    post = await store.claim_daily(chat, when.date(), NewPost(
        chat, "sample", f"s-{day % 3}", (0, 1, 2), "en", when, kind="daily"), when)
    assert post is not None
    for p in sorted(right | wrong):
        await store.record_answer(AnswerRecord(post.id, f"tg:{p}", 0, p in right,
                                               when + timedelta(seconds=p), 1000, f"P{p}"))


async def test_daily_streaks_are_counted_per_chat_through_a_move_and_a_deletion(
    backend: Backend, store: Store
) -> None:
    assert await store.chat_streaks("tg:-1") == (0, 0, 0)
    for day, right, wrong in ((0, {1, 2, 3}, {4}), (1, {1, 2, 4}, {3}), (2, {1, 2}, {3}),
                              (4, {2, 3}, set()), (5, {2, 3, 5}, set())):
        await daily(store, "tg:-1", day, right, wrong)
    await daily(store, "tg:-2", 5, {1}, set())
    await store.materialize()
    # tg:1 ran days 0-2 and stopped (3 best); tg:2 ran 0-2, missed 3, then 4-5; tg:3 4-5
    assert await store.chat_streaks("tg:-1") == (3, 2, 3)
    assert await store.chat_streaks("tg:-2") == (1, 1, 1)
    everyone = [f"tg:{p}" for p in range(1, 7)]
    # each person's current run in the chat (tg:1's stopped; tg:4 never ran here long)
    assert await store.chat_day_streaks("tg:-1", everyone) == {"tg:2": 2, "tg:3": 2, "tg:5": 1}
    assert await store.chat_day_streaks("tg:-2", everyone) == {"tg:1": 1}
    assert await store.chat_day_streaks("tg:-9", everyone) == {}
    assert await store.chat_day_streaks("tg:-1", []) == {}
    assert await store.migrate_chat("tg:-1", "tg:-3")
    await store.materialize()
    assert await store.chat_streaks("tg:-3") == (3, 2, 3)
    assert await store.chat_day_streaks("tg:-3", ["tg:2", "tg:5"]) == {"tg:2": 2, "tg:5": 1}
    assert await store.delete_person("tg:2")
    await daily(store, "tg:-3", 6, {3}, set())
    await store.materialize()
    # tg:3 ran days 4-6; tg:5's day 5 still counts (day 6's question may be open)
    assert await store.chat_streaks("tg:-3") == (2, 3, 3)
    await backend.check_aggregates()


async def test_open_reports_are_paged_by_id_in_their_chat(store: Store) -> None:
    made = []
    for n in range(7):
        outcome, report = await store.add_problem_report(NewProblemReport(
            "sample", f"s-{n}", f"tg:{n}", f"P{n}", "tg:-1" if n != 3 else "tg:-2", f"typo {n}",
            DAY0 + timedelta(minutes=n)), since=DAY0 - timedelta(days=1), daily_cap=5,
            max_chars=500)
        assert outcome == "inserted" and report is not None
        made.append(report)
    assert await store.resolve_problem_report(made[5].id, DAY0 + timedelta(hours=1)) == \
        "resolved"
    paged, after = [], None
    while page := await store.open_reports("tg:-1", after, 2):
        paged += page
        after = page[-1].id
    assert paged == await store.problem_reports(chat_key="tg:-1")
    assert [r.question_id for r in paged] == ["s-0", "s-1", "s-2", "s-4", "s-6"]
    assert await store.open_report_count("tg:-1") == 5
    assert await store.open_report_count("tg:-9") == 0
    # the Questions page's counts: open reports of one quiz's questions in one chat
    assert await store.open_reports_per_question("tg:-1", "sample") == {
        "s-0": 1, "s-1": 1, "s-2": 1, "s-4": 1, "s-6": 1}
    assert await store.open_reports_per_question("tg:-1", "other") == {}
    assert await store.open_reports_per_question("tg:-2", "sample") == {"s-3": 1}
