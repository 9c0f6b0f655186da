"""Authoring on both backends: one draft per author, its questions numbered in order and each
message added once, undo, naming, discarding; publishing stores the pack and ends the draft in
one transaction, and a pack id is published once; a withdrawn pack is kept, its id taken;
everything survives a reopen."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.core.ports import AuthoredPackRecord
from tests.storage_contract.backends import Backend, Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
AUTHOR = "tg:1001"


async def test_questions_are_numbered_and_each_message_added_once(store: Store) -> None:
    assert await store.get_draft(AUTHOR) is None
    assert await store.add_draft_question(AUTHOR, "bn", '{"q": 1}', "tg-msg:1:10", NOW) == 1
    assert await store.add_draft_question(AUTHOR, "en", '{"q": 2}', "tg-msg:1:11", NOW) == 2
    # the same message again (a redelivered update): nothing added
    assert await store.add_draft_question(AUTHOR, "en", '{"q": 2}', "tg-msg:1:11", NOW) == 2
    draft = await store.get_draft(AUTHOR)
    assert draft is not None
    assert (draft.locale, draft.title, draft.created_at, draft.questions) == (
        "bn", None, NOW, ('{"q": 1}', '{"q": 2}'))  # the draft keeps its first language
    assert not await store.create_draft(AUTHOR, "hi", NOW)  # one draft each: kept
    assert await store.get_draft("tg:1002") is None


async def test_undo_name_and_discard(store: Store) -> None:
    assert await store.undo_draft_question(AUTHOR) is None
    assert not await store.name_draft(AUTHOR, "Nothing")
    assert await store.create_draft(AUTHOR, "en", NOW)
    assert await store.undo_draft_question(AUTHOR) is None
    for n in range(3):
        await store.add_draft_question(AUTHOR, "en", f'"{n}"', f"m{n}", NOW)
    assert await store.undo_draft_question(AUTHOR) == 3
    assert await store.add_draft_question(AUTHOR, "en", '"again"', "m9", NOW) == 3
    assert await store.name_draft(AUTHOR, "Cats")
    draft = await store.get_draft(AUTHOR)
    assert draft is not None and draft.title == "Cats"
    assert draft.questions == ('"0"', '"1"', '"again"')
    assert await store.delete_draft(AUTHOR)
    assert not await store.delete_draft(AUTHOR)
    assert await store.get_draft(AUTHOR) is None
    assert await store.add_draft_question(AUTHOR, "en", '"new"', "m0", NOW) == 1


async def test_publishing_ends_the_draft_and_an_id_is_published_once(
    backend: Backend,
) -> None:
    pack = AuthoredPackRecord("cats", AUTHOR, "id: cats\n", NOW)
    async with backend.opened() as store:
        await store.add_draft_question(AUTHOR, "en", '"q"', "m1", NOW)
        await store.add_draft_question("tg:1002", "en", '"q"', "m1", NOW)
        assert await store.publish_draft(pack)
        assert await store.get_draft(AUTHOR) is None
        # another author's pack with the same id: refused, their draft kept
        later = AuthoredPackRecord("cats", "tg:1002", "id: cats\n# 2\n", NOW + timedelta(1))
        assert not await store.publish_draft(later)
        assert await store.get_draft("tg:1002") is not None
        other = AuthoredPackRecord("dogs", "tg:1002", "id: dogs\n", NOW + timedelta(1))
        assert await store.publish_draft(other)
    async with backend.opened() as store:
        assert await store.authored_packs() == [pack, other]


async def test_a_withdrawn_pack_is_kept_and_its_id_stays_taken(backend: Backend) -> None:
    pack = AuthoredPackRecord("cats", AUTHOR, "id: cats\n", NOW)
    async with backend.opened() as store:
        assert not await store.withdraw_pack("cats", NOW)  # nothing published yet
        assert await store.publish_draft(pack)
        assert await store.withdraw_pack("cats", NOW + timedelta(1))
        assert not await store.withdraw_pack("cats", NOW + timedelta(2))  # once
        assert not await store.publish_draft(AuthoredPackRecord("cats", AUTHOR, "id: cats\n",
                                                                NOW + timedelta(3)))
    async with backend.opened() as store:
        [kept] = await store.authored_packs()
        assert kept == AuthoredPackRecord("cats", AUTHOR, "id: cats\n", NOW, NOW + timedelta(1))


async def test_racing_additions_get_distinct_numbers(backend: Backend) -> None:
    async with backend.opened() as first, backend.opened() as second:
        numbers = await asyncio.gather(*(
            (first if n % 2 else second).add_draft_question(AUTHOR, "en", f'"{n}"', f"m{n}", NOW)
            for n in range(8)
        ))
        assert sorted(numbers) == list(range(1, 9))
        draft = await first.get_draft(AUTHOR)
        assert draft is not None and len(draft.questions) == 8


async def test_the_packs_version_changes_with_every_publish_and_withdrawal_seen_by_others(
    backend: Backend,
) -> None:
    async with backend.opened() as first, backend.opened() as second:
        seen = {await second.authored_packs_version()}
        assert await first.authored_packs_version() in seen
        assert await first.publish_draft(AuthoredPackRecord("cats", AUTHOR, "id: cats\n", NOW))
        published = await second.authored_packs_version()
        assert published not in seen
        seen.add(published)
        assert not await first.withdraw_pack("dogs", NOW)  # nothing changed
        assert await second.authored_packs_version() == published
        assert await first.withdraw_pack("cats", NOW + timedelta(1))
        assert await second.authored_packs_version() not in seen


async def test_a_photo_waits_for_the_next_question_which_takes_it(backend: Backend) -> None:
    async with backend.opened() as store:
        await store.set_draft_photo(AUTHOR, "bn", b"\x89PNG one", NOW)  # starts a draft
        await store.set_draft_photo(AUTHOR, "en", b"\xff\xd8 two", NOW)  # replaces it
        draft = await store.get_draft(AUTHOR)
        assert draft is not None and (draft.locale, draft.photo) == ("bn", b"\xff\xd8 two")
    async with backend.opened() as store:  # kept across a restart
        draft = await store.get_draft(AUTHOR)
        assert draft is not None and draft.photo == b"\xff\xd8 two"
        assert await store.add_draft_question(AUTHOR, "bn", '"q"', "m1", NOW) == 1
        draft = await store.get_draft(AUTHOR)
        assert draft is not None and draft.photo is None and draft.questions == ('"q"',)
        await store.set_draft_photo(AUTHOR, "bn", b"three", NOW)
        # the same message again adds nothing, and leaves the waiting photo
        assert await store.add_draft_question(AUTHOR, "bn", '"q"', "m1", NOW) == 1
        draft = await store.get_draft(AUTHOR)
        assert draft is not None and draft.photo == b"three"
        assert await store.delete_draft(AUTHOR)
        assert await store.get_draft(AUTHOR) is None


async def test_a_published_pack_keeps_its_files(backend: Backend) -> None:
    image = bytes(range(256)) * 40  # every byte value, NUL included
    files = (("images/cats-1.png", image), ("images/cats-3.jpg", b"\xff\xd8\xff"))
    pack = AuthoredPackRecord("cats", AUTHOR, "id: cats\n", NOW, files=files)
    plain = AuthoredPackRecord("dogs", AUTHOR, "id: dogs\n", NOW + timedelta(1))
    async with backend.opened() as store:
        assert await store.publish_draft(pack)
        assert await store.publish_draft(plain)
        # refused: the files of the pack already published stay as they were
        assert not await store.publish_draft(AuthoredPackRecord(
            "cats", AUTHOR, "id: cats\n", NOW, files=(("images/cats-1.png", b"other"),)))
    async with backend.opened() as store:
        assert await store.authored_packs() == [pack, plain]
