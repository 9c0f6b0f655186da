"""A person's data on every store (bot/storage/privacy.py): exported whole, and after deletion
nothing with their key or name remains in any table (every column of every table in the
schema is searched), the boards equal a recount without them, other people keep theirs, and
another process's caches forget them."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, time, timedelta
from typing import Any

from fsrs.scheduler import DEFAULT_PARAMETERS

from bot.core.assignments import reminder_name
from bot.core.ports import (
    AnswerRecord,
    AuthoredPackRecord,
    ChatSettingsRecord,
    NewAssignment,
    NewLive,
    NewPost,
    NewProblemReport,
    ReviewFit,
    Revote,
)
from bot.core.schedule import Schedule
from tests.storage_contract.backends import Backend, Store

KEY = "tg:4242"  # the person; their private chat with the bot has the same key
NAME = "Vera Secretname"
OTHER = "tg:1002"
GROUP = "tg:-1"
DM, DM_TITLE = "dc:777", "@vera.s"  # a Discord DM: its key is not the person's
WHEN = datetime(2026, 3, 1, 12, tzinfo=UTC)
TRACES = (KEY, NAME, DM, DM_TITLE, "dc-msg:31337")
# as packs published before their first line lost the author's key carry it
PACK = (f"# Written in a chat by {KEY} (quiz polls, published with /publish).\n"
        "id: vera-pack\n")


async def populate(store: Store) -> None:
    """The person everywhere a person can be, beside someone else in a group."""
    await store.upsert_chat(GROUP, "The group")
    await store.upsert_chat(KEY, NAME)
    await store.set_person_locale(KEY, "bn")
    for n, when in enumerate((WHEN, WHEN + timedelta(days=1))):
        post = await store.create_post(GROUP, "sample", "s-one", (0, 1, 2), "en", when)
        await store.bind_ref(post.id, f"tg-poll:{n}")
        for person, name, correct in ((KEY, NAME, True), (OTHER, "Olga Other", n == 0)):
            await store.record_answer(AnswerRecord(
                post.id, person, 0, correct, when, 1000 + n, name=name))
    run = await store.create_run(KEY, KEY, "sample", ("s-one",), "en", WHEN)
    mine = await store.create_post(KEY, "sample", "s-one", (2, 1, 0), "en", WHEN, run_id=run.id,
                                   owner_key=KEY)
    await store.bind_ref(mine.id, f"tg-msg:4242:{mine.id}")
    await store.record_answer(AnswerRecord(mine.id, KEY, 1, False, WHEN, 900, name=NAME))
    group_private = await store.create_post(GROUP, "sample", "s-one", (0, 1, 2), "en", WHEN,
                                            owner_key=KEY)
    await store.record_answer(AnswerRecord(group_private.id, KEY, 0, True, WHEN, 800))
    await store.upsert_chat(DM, DM_TITLE)
    in_dm = await store.create_post(DM, "sample", "s-two", (0, 1, 2), "en", WHEN)
    await store.bind_ref(in_dm.id, "dc-msg:31337")
    await store.record_answer(AnswerRecord(in_dm.id, KEY, 0, True, WHEN, 700))
    await store.set_schedule(Schedule(KEY, time(9), "UTC", updated_at=WHEN), updated_by=KEY)
    await store.set_schedule(Schedule(GROUP, time(10), "UTC", updated_at=WHEN), updated_by=KEY)
    await store.set_chat_settings(ChatSettingsRecord(GROUP, question_seconds=60), WHEN,
                                  updated_by=KEY)
    await store.set_reminder(Schedule(KEY, time(8), "UTC", updated_at=WHEN))
    await store.claim_reminder(KEY, WHEN.date(), WHEN)
    chat_round = await store.create_round(KEY, None, 2, None, "en", WHEN)
    await store.add_round_post(chat_round.id, 1, NewPost(
        KEY, "sample", "s-one", (0, 1, 2), "en", WHEN))
    await store.add_problem_report(
        NewProblemReport("sample", "s-one", KEY, NAME, GROUP, "typo in option 2", WHEN),
        since=WHEN - timedelta(days=1), daily_cap=10, max_chars=500)
    await store.publish_draft(AuthoredPackRecord("vera-pack", KEY, PACK, WHEN,
                                                 files=(("images/vera-pack-1.png", b"\x89P"),)))
    await store.add_draft_question(KEY, "bn", '{"question": "2 + 2?"}', "m1", WHEN)
    await store.set_draft_photo(KEY, "bn", b"\xff\xd8\xff", WHEN)  # for the next question
    await store.take_lease(f"chat:{KEY}", "a process", WHEN + timedelta(hours=1), WHEN)
    await store.revoke_dashboard(KEY)  # /dashboard revoke in their private chat (bot/web)
    # an assignment they gave the group, and took in a run, with its reminder to them
    assignment = await store.create_assignment(NewAssignment(
        GROUP, "sample", ("sample",), 1, "tok", "en", "UTC", WHEN + timedelta(days=2),
        WHEN + timedelta(days=1), WHEN, KEY))
    await store.add_assignment_run(assignment, run.id, KEY, "sample")
    await store.claim_assignment_reminder(assignment, KEY, WHEN + timedelta(days=1))
    await store.mark_assignment_reminder_sent(assignment, KEY, WHEN + timedelta(days=1))
    reminder = reminder_name(assignment, KEY)  # sent through the durable deliveries
    await store.take_lease(reminder, "a process", WHEN + timedelta(days=1, minutes=1), WHEN)
    await store.delivery_step_done(reminder, "sent", WHEN + timedelta(days=1))
    # a peer round in the group they joined (in a team) and revoted in
    live = await store.create_live(NewLive(GROUP, "peer", OTHER, "sample", 1, 20, False, 2,
                                           "en", WHEN))
    assert live is not None
    await store.join_live(live.id, KEY, NAME, 2, WHEN)
    voted = await store.create_post(GROUP, "sample", "s-two", (0, 1, 2), "en", WHEN,
                                    kind="live")
    await store.record_revote(voted.id, Revote(KEY, 1, False, WHEN + timedelta(minutes=1)))
    # FSRS parameters fitted to them
    await store.save_fit(KEY, ReviewFit(tuple(DEFAULT_PARAMETERS), 320, 300), WHEN)
    await store.materialize()


async def traces(backend: Backend, store: Store) -> list[str]:
    """Every place (table.column) that still holds the
    person's key or name, or their DM's."""
    if backend.name == "sqlite":
        tables = [r[0] for r in await backend.fetch(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        columns = [(t, r[1]) for t in tables
                   for r in await backend.fetch(f"SELECT * FROM pragma_table_info('{t}')")]
        cast = "CAST({} AS TEXT)"
    else:
        columns = [(r[0], r[1]) for r in await backend.fetch(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema()")]
        cast = "CAST({} AS text)"
    assert len({t for t, _ in columns}) > 20  # the whole schema, not a few tables
    found = []
    for table, column in columns:
        where = cast.format(f'"{column}"')
        if await backend.scalar(
            f'SELECT count(*) FROM "{table}" WHERE '
            + " OR ".join(f"{where} LIKE ${n}" for n in range(1, len(TRACES) + 1)),
            *(f"%{trace}%" for trace in TRACES),
        ):
            found.append(f"{table}.{column}")
    return found


def _values(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, (set, list, tuple)):
        return list(value)
    return [value]


async def test_export_holds_everything_stored(store: Store) -> None:
    await populate(store)
    data = await store.person_data(KEY)
    assert data["person"] == {"key": KEY, "name": NAME, "language": "bn"}
    assert [(a["quiz"], a["question"], a["chat"], a["correct"]) for a in data["answers"]] == [
        ("sample", "s-one", GROUP, True), ("sample", "s-one", KEY, False),
        ("sample", "s-one", GROUP, True), ("sample", "s-two", DM, True),
        ("sample", "s-one", GROUP, True),
    ]
    assert data["answers"][0]["chat_title"] == "The group"
    assert {"response", "confidence"} <= set(data["answers"][0])
    # what is derived from their answers and kept about them alone
    assert {(c["quiz"], c["question"]) for c in data["review_cards"]} == {
        ("sample", "s-one"), ("sample", "s-two")}
    assert data["ability"]["answers"] >= 1
    assert data["review_parameters"]["reviews"] == 320
    assert [(s["chat"], s["name"], s["team"]) for s in data["live_sessions"]] == [
        (GROUP, NAME, 0)]
    assert [(v["question"], v["option"], v["correct"]) for v in data["peer_revotes"]] == [
        ("s-two", 1, False)]
    assert data["answers"][0]["answered_at"] == WHEN.isoformat()
    assert data["review_reminder"]["time"] == "08:00"
    assert data["review_reminder"]["sent_on"] == [WHEN.date().isoformat()]
    assert [r["quiz"] for r in data["quiz_runs"]] == ["sample"]
    deadline = (WHEN + timedelta(days=2)).isoformat()
    assert [(r["chat"], r["selector"], r["deadline"], r["quiz"], r["finished_at"])
            for r in data["assignment_runs"]] == [(GROUP, "sample", deadline, "sample", None)]
    reminded = (WHEN + timedelta(days=1)).isoformat()
    assert [(r["chat"], r["deadline"], r["claimed_at"], r["sent_at"])
            for r in data["assignment_reminders"]] == [(GROUP, deadline, reminded, reminded)]
    assert [(r["chat"], r["selector"], r["created_at"], r["cancelled_at"])
            for r in data["assignments_given"]] == [(GROUP, "sample", WHEN.isoformat(), None)]
    assert [r["text"] for r in data["problem_reports"]] == ["typo in option 2"]
    assert data["draft"]["questions"] == ['{"question": "2 + 2?"}']
    assert [p["quiz"] for p in data["published_packs"]] == ["vera-pack"]
    # their pictures too, as base64
    assert data["draft"]["photo"] == "/9j/"
    assert data["published_packs"][0]["pictures"] == {"images/vera-pack-1.png": "iVA="}
    nobody = await store.person_data("tg:999")
    assert nobody["person"]["name"] is None and nobody["answers"] == []
    assert nobody["assignment_runs"] == nobody["assignment_reminders"] == []
    assert nobody["assignments_given"] == nobody["review_cards"] == nobody["live_sessions"] == []
    assert nobody["ability"] is None and nobody["review_parameters"] is None


async def test_delete_leaves_no_trace_and_boards_equal_a_recount(
    backend: Backend, store: Store
) -> None:
    await populate(store)
    assert await traces(backend, store)  # the search finds what is there
    assert await store.delete_person(KEY, [DM]) is True
    await store.materialize()
    assert await traces(backend, store) == []
    await backend.check_aggregates()
    board, _ = await store.leaderboard(GROUP, None, 10, None)
    assert [(r.person_key, r.name, r.correct, r.answered) for r in board] == [
        (OTHER, "Olga Other", 1, 2)]
    everywhere, _ = await store.leaderboard(None, None, 10, None)
    assert [r.person_key for r in everywhere] == [OTHER]
    assert await store.person_name(KEY) is None
    assert await store.person_locale(KEY) is None
    assert [p.quiz_id for p in await store.authored_packs()] == ["vera-pack"]
    assert await store.get_schedule(GROUP) is not None  # the group keeps its settings
    settings = await store.get_chat_settings(GROUP)
    assert settings is not None and settings.question_seconds == 60
    assert await store.delete_person(KEY) is False  # nothing left: a second request is a no-op


async def test_delete_before_the_boards_caught_up(backend: Backend, store: Store) -> None:
    """Answers not yet applied to the boards never reach them after the deletion."""
    post = await store.create_post(GROUP, "sample", "s-one", (0, 1, 2), "en", WHEN)
    for person, name in ((KEY, NAME), (OTHER, "Olga Other")):
        await store.record_answer(AnswerRecord(post.id, person, 0, True, WHEN, 500, name=name))
    await store.delete_person(KEY)
    await store.materialize()
    await backend.check_aggregates()
    assert await traces(backend, store) == []


async def test_another_process_forgets_the_person(backend: Backend, store: Store) -> None:
    """A second process on the same database had the person cached; after the deletion it
    stores their next answer (their row comes back because they answered again) and, where
    it hears of changes (PostgreSQL's NOTIFY), forgets their language at once."""
    await populate(store)
    async with backend.opened() as other:
        assert await other.person_locale(KEY) == "bn"
        post = await other.create_post(GROUP, "sample", "s-two", (0, 1, 2), "en", WHEN)
        await other.record_answer(AnswerRecord(post.id, KEY, 0, True, WHEN, 500, name=NAME))
        await store.delete_person(KEY)
        if backend.name != "sqlite":  # SQLite's cached languages expire (cache.LOCALE_TTL)
            for _ in range(100):
                if await other.person_locale(KEY) is None:
                    break
                await asyncio.sleep(0.02)
            assert await other.person_locale(KEY) is None
        later = await other.create_post(GROUP, "sample", "s-one", (0, 1, 2), "en", WHEN)
        outcome, _ = await other.record_answer(
            AnswerRecord(later.id, KEY, 0, True, WHEN, 500, name=NAME))
        assert outcome == "inserted"
        assert await other.person_name(KEY) == NAME
        await other.materialize()
        await backend.check_aggregates()
