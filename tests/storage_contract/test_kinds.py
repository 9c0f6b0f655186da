"""Answers of every kind of question on both backends: a multi's picks, an order, a number
and a text stored as their canonical response (option -1), with how sure the person said they
were; the first answer final (a second one returns the first, response and all), on the
single path and in a batch; boards equal a recount; item analysis reads the responses; the
calibration read and the chat's confidence setting."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.core.ports import AnswerRecord, ChatSettingsRecord
from tests.storage_contract.backends import Backend, Store
from tests.storage_contract.test_boards import as_tuples, expected_board

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
# (option, response, right) of one answer per kind: choice, true/false, multi, order, number,
# text (the kinds of tests/data/kinds/kinds.yaml)
Given = tuple[int, str | None, bool]
KINDS: dict[str, list[Given]] = {
    "k-choice": [(0, None, True), (2, None, False)],
    "k-tf": [(1, None, True), (0, None, False)],
    "k-multi": [(-1, "0,1,3", True), (-1, "0,2", False)],
    "k-order": [(-1, "0,1,2,3", True), (-1, "1,0,2,3", False)],
    "k-num": [(-1, "0.4", True), (-1, "4", False)],
    "k-text": [(-1, "পুনর্গণনা", True), (-1, "gradient accumulation", False)],
}
ORDERS: dict[str, tuple[int, ...]] = {
    "k-choice": (0, 1, 2, 3), "k-tf": (0, 1), "k-multi": (3, 1, 0, 2), "k-order": (2, 0, 3, 1),
    "k-num": (), "k-text": (),
}


def answer(post: int, person: int, option: int, response: str | None, right: bool,
           confidence: int | None = None, seconds: int = 0) -> AnswerRecord:
    return AnswerRecord(post, f"tg:{person}", option, right, NOW + timedelta(seconds=seconds),
                        1000 + person, name=f"p{person}", response=response,
                        confidence=confidence)


async def posts(store: Store, chat: str = "tg:-1") -> dict[str, int]:
    return {q: (await store.create_post(chat, "kinds", q, order, "en", NOW)).id
            for q, order in ORDERS.items()}


async def test_every_kind_is_stored_with_its_response_and_confidence(store: Store) -> None:
    ids = await posts(store)
    for question, post in ids.items():
        for person, (option, response, right) in enumerate(KINDS[question], start=1):
            outcome, earlier = await store.record_answer(
                answer(post, person, option, response, right, confidence=person % 3))
            assert (outcome, earlier) == ("inserted", None), question
    for question, post in ids.items():
        for person, (option, response, right) in enumerate(KINDS[question], start=1):
            stored = await store.answer_of(post, f"tg:{person}")
            assert stored is not None
            assert (stored.option, stored.response, stored.correct, stored.confidence) == (
                option, response, right, person % 3), question
        listed = await store.answers_for_post(post)
        assert [(a.person_key, a.response, a.name) for a in listed] == [
            (f"tg:{p}", r, f"p{p}") for p, (_, r, _) in enumerate(KINDS[question], start=1)]


async def test_the_first_answer_of_every_kind_is_final(store: Store) -> None:
    ids = await posts(store)
    for question, post in ids.items():
        (option, response, right), (o2, r2, right2) = KINDS[question]
        assert (await store.record_answer(answer(post, 1, option, response, right, 2)))[0] \
            == "inserted"
        outcome, earlier = await store.record_answer(answer(post, 1, o2, r2, right2, 0, 5))
        assert outcome == "duplicate" and earlier is not None
        assert (earlier.option, earlier.response, earlier.correct, earlier.confidence) == (
            option, response, right, 2), question


async def test_a_batch_of_every_kind_keeps_each_first_answer(store: Store) -> None:
    """Answers arriving together (the writer's one statement per batch): each person's first
    one of each post stands, with its response; the second in the batch is a duplicate."""
    ids = await posts(store)
    calls = []
    for question, post in ids.items():
        for person in range(1, 6):
            for option, response, right in KINDS[question]:
                calls.append(answer(post, person, option, response, right, person % 3))
    results = await asyncio.gather(*(store.record_answer(a) for a in calls))
    outcomes = [outcome for outcome, _ in results]
    assert outcomes.count("inserted") == len(ids) * 5
    for question, post in ids.items():
        first_option, first_response, first_right = KINDS[question][0]
        for person in range(1, 6):
            stored = await store.answer_of(post, f"tg:{person}")
            assert stored is not None
            assert (stored.option, stored.response, stored.correct) == (
                first_option, first_response, first_right), question


async def test_boards_of_every_kind_equal_a_recount(backend: Backend) -> None:
    async with backend.opened() as store:
        for chat in ("tg:-1", "tg:-2"):
            ids = await posts(store, chat)
            for person in range(1, 9):
                for question, post in ids.items():
                    option, response, right = KINDS[question][(person + len(question)) % 2]
                    await store.record_answer(answer(post, person, option, response, right))
        await store.materialize()
        for chat_key in (None, "tg:-1", "tg:-2"):
            top, _ = await store.leaderboard(chat_key, None, 10, None)
            assert as_tuples(top) == (await expected_board(backend, chat_key, None))[:10]
    await backend.check_aggregates()


async def test_item_responses_and_calibration_read_the_kinds(store: Store) -> None:
    ids = await posts(store)
    for question, post in ids.items():
        for person, (option, response, right) in enumerate(KINDS[question], start=1):
            # person 1 is sure (and right), person 2 guesses (and is wrong)
            await store.record_answer(answer(post, person, option, response, right,
                                             confidence=2 if person == 1 else 0))
    extra = await store.create_post("tg:-1", "kinds", "k-choice", (0, 1, 2, 3), "en", NOW)
    await store.record_answer(answer(extra.id, 3, 1, None, False))  # not asked how sure
    responses = await store.item_responses("kinds", "tg:-1")
    got = {(r.question_id, r.person_key): (r.option, r.response) for r in responses}
    for question in ids:
        for person, (option, response, _) in enumerate(KINDS[question], start=1):
            assert got[(question, f"tg:{person}")] == (option, response)
    assert await store.person_calibration("tg:1") == {2: (6, 6)}
    assert await store.person_calibration("tg:2") == {0: (6, 0)}
    assert await store.person_calibration("tg:3") == {}


async def test_the_confidence_setting_is_kept(store: Store) -> None:
    await store.upsert_chat("tg:-1", "Group")
    assert await store.get_chat_settings("tg:-1") is None
    await store.set_chat_settings(ChatSettingsRecord("tg:-1", confidence=True), NOW)
    kept = await store.get_chat_settings("tg:-1")
    assert kept is not None and kept.confidence is True
    await store.set_chat_settings(ChatSettingsRecord("tg:-1", chart=True), NOW)
    kept = await store.get_chat_settings("tg:-1")
    assert kept is not None and kept.confidence is None and kept.chart is True


async def test_missed_answers_are_the_latest_wrong_ones_with_their_order(store: Store) -> None:
    ids = await posts(store)
    for question in ("k-multi", "k-num", "k-choice"):
        option, response, right = KINDS[question][1]  # wrong
        await store.record_answer(answer(ids[question], 1, option, response, right))
    later = await store.create_post("tg:-1", "kinds", "k-choice", (3, 2, 1, 0), "en",
                                    NOW + timedelta(minutes=1))
    # answered right later: no longer missed
    await store.record_answer(answer(later.id, 1, 0, None, True, seconds=90))
    missed = await store.missed_answers("tg:1", 10)
    assert [(q, a.response, order) for a, _, q, order in missed] == [
        ("k-multi", "0,2", (3, 1, 0, 2)), ("k-num", "4", ())]
    assert len(await store.missed_answers("tg:1", 1)) == 1


async def test_item_figures_count_the_responses_through_a_move_and_a_deletion(
    backend: Backend, store: Store,
) -> None:
    from tests.storage_contract.test_dashboard import expected_items

    ids = await posts(store)
    for person in range(1, 7):
        for question, post in ids.items():
            option, response, right = KINDS[question][person % 2]
            await store.record_answer(answer(post, person, option, response, right))
    await store.materialize()
    kept = await store.item_figures("tg:-1")
    assert kept == await expected_items(store, "tg:-1")
    assert ("kinds", "k-num", "0.4", 3) in kept.responses
    assert ("kinds", "k-multi", "0,1,3", 3) in kept.responses
    assert ("kinds", "k-multi", -1, 6) in kept.options
    assert await store.migrate_chat("tg:-1", "tg:-3")
    await store.materialize()
    assert await store.item_figures("tg:-3") == await expected_items(store, "tg:-3")
    assert await store.delete_person("tg:2")
    await store.materialize()
    after = await store.item_figures("tg:-3")
    assert after == await expected_items(store, "tg:-3")
    assert ("kinds", "k-num", "0.4", 2) in after.responses
    await backend.check_aggregates()
