"""Authoring through the core, without a platform: who may write, a draft built, named and
published into the catalog (validated like any pack), problems named by question and field in
the author's language, published packs loaded again by a new process."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from bot.content import Catalog, load_catalog
from bot.core.authoring import (
    PollQuestion,
    author_keys,
    pack_id,
    problem_text,
    published_text,
)
from bot.core.errors import AuthoringError, UnknownQuiz
from bot.core.models import Chat, Person
from bot.core.ports import Storage
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from bot.i18n import translator
from bot.storage import SqliteStorage
from tests.clock import FakeClock
from tests.conftest import SAMPLE_PACKS
from tests.ports import FakePort
from tests.test_cli import clean_env, quizbot

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database

AUTHOR = Person("tg:1001", "Alice")
STRANGER = Person("tg:1002", "Bob")


def poll(n: int, **changes: Any) -> PollQuestion:
    fields: dict[str, Any] = {
        "prompt": f"Which number is {n}?", "options": (str(n), str(n + 1), str(n + 2)),
        "correct": (0,), "explanation": f"{n} is {n}.",
    }
    fields.update(changes)
    return PollQuestion(**fields)


@pytest.fixture
def authoring_service(
    sample_catalog: Catalog, storage: Storage, clock: FakeClock
) -> QuizService:
    return QuizService(sample_catalog, storage, clock, random.Random(7),
                       authors={AUTHOR.key})


async def test_a_draft_is_built_named_and_published_into_the_catalog(
    authoring_service: QuizService,
) -> None:
    service = authoring_service
    for n in range(1, 4):
        added = await service.authoring.add(AUTHOR, "en", poll(n), f"tg-msg:1:{n}")
        assert (added.number, added.problems) == (n, ())
    # the same message again adds nothing
    assert (await service.authoring.add(AUTHOR, "en", poll(3), "tg-msg:1:3")).number == 3
    assert await service.authoring.undo(AUTHOR) == (3, 2)
    await service.authoring.add(AUTHOR, "en", poll(3), "tg-msg:1:4")
    assert await service.authoring.name(AUTHOR, "  Counting   to three ") == "Counting to three"
    view = await service.authoring.view(AUTHOR)
    assert view.title == "Counting to three" and len(view.prompts) == 3

    result = await service.authoring.publish(AUTHOR)
    assert (result.quiz_id, result.questions, result.problems) == ("counting-to-three", 3, ())
    quiz = service.catalog.get("counting-to-three")
    assert quiz is not None and quiz.language == "en"
    assert [q.id for q in quiz.questions] == [f"counting-to-three-{n}" for n in (1, 2, 3)]
    assert quiz.questions[2].options[quiz.questions[2].answer].text.get("en") == "3"
    with pytest.raises(AuthoringError):
        await service.authoring.view(AUTHOR)  # published: the draft is gone

    # asked like any quiz
    async with service.asking.quiz(Chat("tg:-1", "Group"), None, "counting-to-three") as shown:
        assert shown.quiz_id == "counting-to-three"


async def test_a_new_process_loads_the_published_packs(
    authoring_service: QuizService, storage: Storage, clock: FakeClock,
) -> None:
    await authoring_service.authoring.add(AUTHOR, "bn", poll(1, prompt="এক কোনটি?"), "m1")
    await authoring_service.authoring.name(AUTHOR, "সংখ্যা")  # spelled in Latin letters
    published = await authoring_service.authoring.publish(AUTHOR)
    assert published.quiz_id == pack_id("সংখ্যা") == "samkhya"

    fresh = QuizService(load_catalog(SAMPLE_PACKS), storage, clock)
    assert fresh.catalog.get(published.quiz_id) is None
    assert await fresh.authoring.load() == 1
    quiz = fresh.catalog.get(published.quiz_id)
    assert quiz is not None and quiz.language == "bn"
    # a single-language pack: every reader sees its language
    assert quiz.questions[0].prompt.get("en") == quiz.questions[0].prompt.get("hi") == "এক কোনটি?"
    assert quiz.title.get("hi") == "সংখ্যা"


async def test_only_authors_write_and_nothing_is_stored_for_others(
    authoring_service: QuizService, storage: Storage,
) -> None:
    with pytest.raises(AuthoringError) as refused:
        await authoring_service.authoring.add(STRANGER, "en", poll(1), "m1")
    assert "Only the bot's authors" in str(refused.value)
    assert "add your id 1002 to QUIZBOT_AUTHORS" in str(refused.value)
    assert await storage.get_draft(STRANGER.key) is None
    assert not authoring_service.authoring.may_author(STRANGER)
    assert author_keys("1001, 1002 tg:7") == {"tg:1001", "tg:1002", "tg:7"}
    assert author_keys("") == frozenset()


@pytest.mark.parametrize(
    ("sent", "words"),
    [
        (poll(1, quiz=False), "regular poll"),
        (poll(1, correct=()), "forwarded poll"),
        (poll(1, correct=(0, 1)), "exactly one right option"),
    ],
)
async def test_polls_that_cannot_be_questions_are_refused(
    authoring_service: QuizService, storage: Storage, sent: PollQuestion, words: str,
) -> None:
    with pytest.raises(AuthoringError) as refused:
        await authoring_service.authoring.add(AUTHOR, "en", sent, "m1")
    assert words in str(refused.value)
    assert await storage.get_draft(AUTHOR.key) is None


async def test_an_invalid_draft_is_not_published_and_says_where_and_why(
    authoring_service: QuizService, storage: Storage,
) -> None:
    service = authoring_service
    await service.authoring.add(AUTHOR, "hi", poll(1), "m1")
    no_explanation = await service.authoring.add(AUTHOR, "hi", poll(2, explanation=None), "m2")
    # told at once, and again when publishing
    assert [(p.question, p.part, p.template) for p in no_explanation.problems] == [
        (2, "explanation", "missing")]
    many = tuple(f"option {i}" for i in range(11))
    await service.authoring.add(AUTHOR, "hi", poll(3, options=many), "m3")
    await service.authoring.add(AUTHOR, "hi", poll(4, options=("x" * 101, "y")), "m4")
    await service.authoring.name(AUTHOR, "Broken")

    result = await service.authoring.publish(AUTHOR)
    assert result.quiz_id is None
    assert service.catalog.get("broken") is None
    assert await storage.authored_packs() == []
    assert await storage.get_draft(AUTHOR.key) is not None  # kept, to be fixed
    en = [problem_text(p, translator("en")) for p in result.problems]
    assert en == [
        "Question 2, explanation: missing",
        "Question 3, options: 11 options, at most 10",
        "Question 4, option 1: 101 characters, at most 100",
    ]
    assert "Question 4" in published_text(result, translator("en"))


async def test_a_title_a_bundled_pack_has_is_refused(
    authoring_service: QuizService, storage: Storage,
) -> None:
    await authoring_service.authoring.add(AUTHOR, "en", poll(1), "m1")
    await authoring_service.authoring.name(AUTHOR, "Sample")
    with pytest.raises(AuthoringError) as refused:
        await authoring_service.authoring.publish(AUTHOR)
    assert "already a quiz “sample”" in str(refused.value)
    assert await storage.authored_packs() == []


async def test_draft_commands_without_a_draft(authoring_service: QuizService) -> None:
    for call in (authoring_service.authoring.view, authoring_service.authoring.undo,
                 authoring_service.authoring.publish):
        with pytest.raises(AuthoringError):
            await call(AUTHOR)
    assert await authoring_service.authoring.start(AUTHOR, "en") == (True, 0)
    assert await authoring_service.authoring.start(AUTHOR, "en") == (False, 0)
    with pytest.raises(AuthoringError, match="no questions"):
        await authoring_service.authoring.publish(AUTHOR)
    await authoring_service.authoring.add(AUTHOR, "en", poll(1), "m1")
    with pytest.raises(AuthoringError, match="Name your draft"):
        await authoring_service.authoring.publish(AUTHOR)
    assert await authoring_service.authoring.discard(AUTHOR)
    assert not await authoring_service.authoring.discard(AUTHOR)


@pytest.mark.sqlite_only(reason="the command is given the SQLite file")
async def test_published_packs_export_as_yaml_that_loads_as_the_same_quiz(
    authoring_service: QuizService, storage: Storage, tmp_path: Path,
) -> None:
    if not isinstance(storage, SqliteStorage):
        pytest.skip("the command is given the SQLite file")
    await authoring_service.authoring.add(AUTHOR, "hi", poll(1, prompt="एक कौन-सा है?"), "m1")
    await authoring_service.authoring.add(AUTHOR, "hi", poll(2), "m2")
    await authoring_service.authoring.name(AUTHOR, "Ginti: numbers")
    published = await authoring_service.authoring.publish(AUTHOR)
    assert published.quiz_id == "ginti-numbers"

    out = tmp_path / "exported"
    proc = quizbot(tmp_path, "content", "export", "--authored", str(out),
                   env=clean_env(tmp_path, QUIZBOT_DATABASE=str(storage.path)))
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out / 'ginti-numbers.yaml'}: quiz ginti-numbers" in proc.stdout
    exported = load_catalog(out)
    assert exported.quizzes["ginti-numbers"] == authoring_service.catalog.get("ginti-numbers")
    assert quizbot(tmp_path, "content", "validate", str(out)).returncode == 0


@pytest.mark.parametrize(("title", "quiz_id"), [
    ("মিশ্র নির্ভুলতা প্রশিক্ষণ", "misra-nirbhulata-prasiksana"),
    ("ग्रेडिएंट संचय", "grediemta-samcaya"),
    ("পাইপলাইন ও ZeRO", "paipalaina-o-zero"),
    ("Mixed precision: FP16 & BF16", "mixed-precision-fp16-bf16"),
    ("数字", None), ("★ ☆", None), ("ab", None),
])
def test_ids_spell_bengali_and_devanagari_titles_in_latin_letters(
    title: str, quiz_id: str | None
) -> None:
    assert pack_id(title) == quiz_id


async def test_a_title_without_an_id_asks_for_one_and_takes_the_one_given(
    authoring_service: QuizService, storage: Storage,
) -> None:
    await authoring_service.authoring.add(AUTHOR, "en", poll(1), "m1")
    await authoring_service.authoring.name(AUTHOR, "数字")
    with pytest.raises(AuthoringError, match="/publish followed by the id"):
        await authoring_service.authoring.publish(AUTHOR)
    for bad in ("My Quiz", "x", "-dash", "ক-খ"):
        with pytest.raises(AuthoringError, match="cannot be a quiz id"):
            await authoring_service.authoring.publish(AUTHOR, bad)
    assert await storage.authored_packs() == []
    published = await authoring_service.authoring.publish(AUTHOR, "Shuzi-1")
    assert published.quiz_id == "shuzi-1"
    assert [q.id for q in authoring_service.catalog.quizzes["shuzi-1"].questions] == ["shuzi-1-1"]


@pytest.mark.parametrize("title", ["sample  QUIZ", "Sample Quiz", "নমুনা কুইজ"])
async def test_a_title_another_quiz_has_is_refused_in_any_case_or_language(
    authoring_service: QuizService, storage: Storage, title: str,
) -> None:
    await authoring_service.authoring.add(AUTHOR, "en", poll(1), "m1")
    with pytest.raises(AuthoringError, match="already a quiz called") as refused:
        await authoring_service.authoring.name(AUTHOR, title)
    assert "(sample)" in str(refused.value)
    draft = await storage.get_draft(AUTHOR.key)
    assert draft is not None and draft.title is None  # nothing changed


async def test_a_title_published_meanwhile_is_refused_at_publishing(
    authoring_service: QuizService, storage: Storage,
) -> None:
    other = Person("tg:1003", "Carol")
    service = QuizService(authoring_service.catalog, storage, authoring_service.clock,
                          authors={AUTHOR.key, other.key})
    for person in (AUTHOR, other):
        await service.authoring.add(person, "en", poll(1), f"m-{person.key}")
        await service.authoring.name(person, "Counting")
    assert (await service.authoring.publish(AUTHOR)).quiz_id == "counting"
    with pytest.raises(AuthoringError, match="already a quiz called “Counting” \\(counting\\)"):
        await service.authoring.publish(other)
    assert await storage.get_draft(other.key) is not None


async def test_unpublish_withdraws_the_pack_and_keeps_its_answers(
    authoring_service: QuizService, storage: Storage, clock: FakeClock,
) -> None:
    service = authoring_service
    await service.authoring.add(AUTHOR, "en", poll(1), "m1")
    await service.authoring.name(AUTHOR, "Counting")
    await service.authoring.publish(AUTHOR)
    group = Chat("tg:-5", "Group")
    async with service.asking.quiz(group, None, "counting") as shown:
        pass
    await service.answer(shown.post_id, STRANGER, shown.correct)
    late = Person("tg:1004", "Dan")

    with pytest.raises(AuthoringError, match="Only the bot's authors"):
        await service.authoring.unpublish(STRANGER, "counting")
    with pytest.raises(AuthoringError, match="not a quiz published in a chat"):
        await service.authoring.unpublish(AUTHOR, "sample")  # bundled
    assert await service.authoring.unpublish(AUTHOR, " Counting ") == "Counting"
    assert service.catalog.get("counting") is None
    assert "counting" not in [q.id for q in service.questions.quizzes()]
    with pytest.raises(UnknownQuiz):
        async with service.asking.quiz(group, None, "counting"):
            pass
    with pytest.raises(AuthoringError, match="not a quiz published in a chat"):
        await service.authoring.unpublish(AUTHOR, "counting")  # once
    # the question already open runs its time; answers and boards stay, titles too
    assert (await service.answer(shown.post_id, late, shown.correct)).accepted
    board = await service.boards.leaderboard(group.key)
    assert {(r.person_key, r.correct) for r in board.rows} == {(STRANGER.key, 1), (late.key, 1)}
    stats = await service.boards.stats(STRANGER)
    assert [(q.quiz_id, q.title) for q in stats.per_quiz] == [("counting", "Counting")]

    # a new process keeps it withdrawn, and its id taken
    fresh = QuizService(load_catalog(SAMPLE_PACKS), storage, clock, authors={AUTHOR.key})
    assert await fresh.authoring.load() == 0
    assert fresh.catalog.get("counting") is None and "counting" in fresh.catalog.quizzes
    await fresh.authoring.add(AUTHOR, "en", poll(2), "m2")
    await fresh.authoring.name(AUTHOR, "Counting")  # the title is free again
    with pytest.raises(AuthoringError, match="already a quiz “counting”"):
        await fresh.authoring.publish(AUTHOR)
    assert (await fresh.authoring.publish(AUTHOR, "counting-again")).quiz_id == "counting-again"


async def test_only_the_author_who_published_a_pack_withdraws_it(
    authoring_service: QuizService, storage: Storage,
) -> None:
    other = Person("tg:1003", "Carol")
    service = QuizService(authoring_service.catalog, storage, authoring_service.clock,
                          authors={AUTHOR.key, other.key})
    await service.authoring.add(AUTHOR, "en", poll(1), "m1")
    await service.authoring.name(AUTHOR, "Counting")
    await service.authoring.publish(AUTHOR)
    with pytest.raises(AuthoringError, match="Only the author who published"):
        await service.authoring.unpublish(other, "counting")
    assert service.catalog.get("counting") is not None


async def test_a_round_of_a_withdrawn_quiz_ends_and_other_rounds_go_on(
    authoring_service: QuizService, clock: FakeClock,
) -> None:
    service = authoring_service
    for n in (1, 2, 3):
        await service.authoring.add(AUTHOR, "en", poll(n), f"m{n}")
    await service.authoring.name(AUTHOR, "Counting")
    await service.authoring.publish(AUTHOR)
    port = FakePort("tg:", clock).attach(service)
    group, other = Chat("tg:-5", "Group"), Chat("tg:-6", "Other")
    for chat, quiz_id in ((group, "counting"), (other, "sample")):
        async with service.asking.quiz(chat, AUTHOR, quiz_id, count=3) as shown:
            await port.send_question(shown)
    await service.authoring.unpublish(AUTHOR, "counting")
    clock.advance((await service.chat_settings.get(group.key)).question_seconds + 1)
    await Scheduler(service).tick()
    [summary] = port.rounds  # the withdrawn quiz's round ends with what it asked
    assert (summary.chat_key, summary.asked, summary.total) == (group.key, 1, 3)
    assert [q.chat_key for q in port.sent] == [group.key, other.key, other.key]


def _png(size: tuple[int, int] = (40, 30)) -> bytes:
    from io import BytesIO

    from PIL import Image

    out = BytesIO()
    Image.new("RGB", size, (200, 40, 40)).save(out, "PNG")
    return out.getvalue()


@pytest.mark.sqlite_only(reason="the command is given the SQLite file")
async def test_a_published_picture_is_exported_beside_its_pack(
    authoring_service: QuizService, storage: Storage, tmp_path: Path,
) -> None:
    if not isinstance(storage, SqliteStorage):
        pytest.skip("the command is given the SQLite file")
    png = _png()

    async def fetch() -> bytes:
        return png

    await authoring_service.authoring.photo(AUTHOR, "en", None, fetch)
    await authoring_service.authoring.add(AUTHOR, "en", poll(1), "m1")
    await authoring_service.authoring.add(AUTHOR, "en", poll(2), "m2")
    await authoring_service.authoring.name(AUTHOR, "Pictured")
    assert (await authoring_service.authoring.publish(AUTHOR)).quiz_id == "pictured"

    out = tmp_path / "exported"
    proc = quizbot(tmp_path, "content", "export", "--authored", str(out),
                   env=clean_env(tmp_path, QUIZBOT_DATABASE=str(storage.path)))
    assert proc.returncode == 0, proc.stderr
    assert (out / "images" / "pictured-1.png").read_bytes() == png
    exported = load_catalog(out).quizzes["pictured"]
    first, second = exported.questions
    assert exported.image_path(first, "en") == str(out / "images" / "pictured-1.png")
    assert second.image is None
    assert quizbot(tmp_path, "content", "validate", str(out)).returncode == 0


async def test_a_picture_is_fetched_only_for_an_author_and_within_the_cap(
    authoring_service: QuizService, storage: Storage,
) -> None:
    fetched = []

    async def fetch() -> bytes:
        fetched.append(1)
        return b"GIF89a not a picture we take"

    stranger = Person("tg:1009", "Mallory")
    with pytest.raises(AuthoringError, match="Only the bot's authors"):
        await authoring_service.authoring.photo(stranger, "en", 10, fetch)
    with pytest.raises(AuthoringError, match="too large"):
        await authoring_service.authoring.photo(AUTHOR, "en", 3 * 2**20, fetch)
    assert fetched == []
    with pytest.raises(AuthoringError, match="not a picture"):
        await authoring_service.authoring.photo(AUTHOR, "en", None, fetch)
    assert fetched == [1]
    assert await storage.get_draft(AUTHOR.key) is None  # nothing started, nothing kept
