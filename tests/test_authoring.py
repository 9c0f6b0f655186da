"""Authoring through the core, without a platform: who may write, a draft built, named and
published into the catalog (validated like any pack), problems named by question and field in
the author's language, published packs loaded again by a new process."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.content import Catalog, load_catalog
from bot.content.items import Kind
from bot.core.authoring import (
    PollQuestion,
    added_text,
    author_keys,
    draft_text,
    pack_id,
    problem_text,
    published_text,
)
from bot.core.authoring_form import FIELDS, WrittenQuestion, form_text, read
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
        (poll(1, correct=(0, 1, 2)), "at least one wrong one"),
        (poll(1, options=("a", "b"), correct=(0, 1)), "at least three options"),
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


# --- the kinds: a quiz poll with several right options, and the form of every kind ----------

FORMS = {
    "multi": "prompt: Which grow activation memory?\nright: A longer sequence\n"
             "wrong: A lower learning rate\nright: More layers\n"
             "explanation: Length and depth grow it.",
    "truefalse": "prompt: Checkpointing changes the gradients.\nanswer: false\n"
                 "explanation: They are the same.",
    "numeric": "prompt: About how many GB per layer?\nanswer: 0.4\ntolerance: 0.05\n"
               "unit: GB\nexplanation: 24 × 4,096 × 4,096 bytes.",
    "text": "Prompt : What is re-running forward in backward called?\n"
            "accept: recomputation; activation recomputation\naccept: gradient checkpointing\n"
            "latin: punargonona\nexplanation: Recomputation trades compute for memory.",
    "order": "prompt: Put a stage's steps in order.\nitem: Receive\nitem: Forward\n"
             "item: Backward\nexplanation: Forward, then backward.",
    "choice": "prompt: Which pass re-runs forward?\nwrong: The optimizer step\n"
              "right: The backward pass\nexplanation: Backward rebuilds the activations.",
}


async def test_a_quiz_poll_with_several_right_options_is_a_select_all_question(
    authoring_service: QuizService,
) -> None:
    service = authoring_service
    sent = poll(1, options=("one", "two", "three", "four"), correct=(2, 0))
    assert (await service.authoring.add(AUTHOR, "en", sent, "m1")).problems == ()
    assert "1. [several right] Which number is 1?" in draft_text(
        await service.authoring.view(AUTHOR), translator("en"))
    await service.authoring.name(AUTHOR, "Select all")
    assert (await service.authoring.publish(AUTHOR)).quiz_id == "select-all"
    (question,) = service.catalog.quizzes["select-all"].questions
    assert (question.kind, question.answers) == (Kind.MULTI, (0, 2))


async def test_every_kind_written_as_a_form_is_published_as_that_kind(
    authoring_service: QuizService,
) -> None:
    service = authoring_service
    for n, (kind, form) in enumerate(FORMS.items(), start=1):
        added = await service.authoring.add(AUTHOR, "en", WrittenQuestion(kind, form), f"m{n}")
        assert (added.number, added.problems) == (n, ()), added
        assert added_text(added, translator("en")).startswith(f"Question {n} added")
    view = await service.authoring.view(AUTHOR)
    assert view.kinds == tuple(FORMS)
    await service.authoring.name(AUTHOR, "Every kind")
    result = await service.authoring.publish(AUTHOR)
    assert result.problems == () and result.quiz_id == "every-kind"
    multi, tf, number, text, order, choice = service.catalog.quizzes["every-kind"].questions
    assert [q.kind for q in (multi, tf, number, text, order, choice)] == [
        Kind.MULTI, Kind.TRUEFALSE, Kind.NUMERIC, Kind.TEXT, Kind.ORDER, Kind.CHOICE]
    assert [o.text.get("en") for o in multi.options] == [
        "A longer sequence", "A lower learning rate", "More layers"]
    assert multi.answers == (0, 2)
    assert tf.answer == 1  # False
    assert number.numeric is not None and (number.numeric.low, number.numeric.high) == (
        0.35, 0.45)
    assert number.numeric.unit is not None and number.numeric.unit.get("en") == "GB"
    assert text.accept is not None and text.accept.texts == {"en": (
        "recomputation", "activation recomputation", "gradient checkpointing")}
    assert text.accept.latin == ("punargonona",)
    assert [o.text.get("en") for o in order.options] == ["Receive", "Forward", "Backward"]
    assert choice.answer == 1


async def test_a_bengali_form_with_bengali_digits_and_words(
    authoring_service: QuizService,
) -> None:
    service = authoring_service
    numeric = "prompt: কত GB?\nanswer: ০.৪\nmin: ০.৩\nmax: ০.৫\nexplanation: এতটাই।"
    truth = "prompt: এটি সত্য।\nanswer: সত্য\nexplanation: তাই।"
    for n, (kind, text) in enumerate((("numeric", numeric), ("truefalse", truth)), start=1):
        assert (await service.authoring.add(AUTHOR, "bn", WrittenQuestion(kind, text),
                                            f"m{n}")).number == n
    await service.authoring.name(AUTHOR, "সংখ্যা")
    published = await service.authoring.publish(AUTHOR)
    number, tf = service.catalog.quizzes[str(published.quiz_id)].questions
    assert number.numeric is not None and (number.numeric.low, number.numeric.high) == (
        0.3, 0.5)
    assert tf.answer == 0 and tf.options[0].text.get("bn") == "সত্য"


@pytest.mark.parametrize(("kind", "text", "said"), [
    ("essay", "prompt: x", ["“essay” is not a kind of question: write one of choice, multi, "
                            "truefalse, numeric, text, order."]),
    ("multi", "prompt: Which?\nright: a\nwrong: b\nexplanation: So.", [
        "This kind takes 3 to 10 options; the form has 2.",
        "A multi question has at least two “right:” lines and at least one “wrong:” line."]),
    ("choice", "prompt: Which?\nright: a\nright: b\nexplanation: So.", [
        "A choice question has exactly one “right:” line and at least one “wrong:” line."]),
    ("order", "prompt: Order?\nitem: a\nexplanation: So.\nanswer: 1", [
        "Line 4: a question of this kind has no “answer:” (it takes prompt:, item:, "
        "explanation:).",
        "This kind takes 2 to 6 options; the form has 1."]),
    ("truefalse", "prompt: Is it?\nanswer: maybe\nexplanation: So.\nexplanation: Twice.", [
        "“explanation:” is given twice; give it once.",
        "“answer:” is true or false, not “maybe”."]),
    ("numeric", "prompt: How many?\nanswer: 1,23,4\ntolerance: 1\nexplanation: So.", [
        "“answer:” is a number, not “1,23,4”."]),
    ("numeric", "prompt: How many?\nanswer: 5\nmin: 6\nmax: 7\nexplanation: So.", [
        "The answer 5 is not between min 6 and max 7."]),
    ("numeric", "prompt: How many?\nanswer: 5\nmin: 4\nexplanation: So.", [
        "Give both “min:” and “max:”."]),
    ("numeric", "prompt: How many?\nanswer: 5\nexplanation: So.", [
        "Give “tolerance:” (0 for the exact number), or “min:” and “max:”."]),
    ("numeric", "prompt: How many?\nanswer: 5\ntolerance: 1\nmax: 6\nexplanation: So.", [
        "Give “tolerance:” or “min:” and “max:”, not both."]),
    ("numeric", "prompt: How many?\nanswer: 5\ntolerance: -1\nexplanation: So.", [
        "“tolerance:” cannot be negative."]),
    ("text", "prompt: Name?\nlatin: পুনর্গণনা\nexplanation:\nThe name", [
        "Line 3: “explanation:” is empty.",
        "Line 4 does not start with a field name and a colon, such as “prompt:”.",
        "“accept:” is missing.",
        "“পুনর্গণনা” is not in Latin letters: “latin:” lists answers spelled in Latin "
        "letters, such as punargonona."]),
    ("text", f"prompt: <the question>\naccept: {'x' * 101}\nexplanation: So.", [
        "Line 1: write your own text in place of “<the question>”.",
        "“xxxxxxxxxxxxxxxxxxxx…” is 101 characters; an accepted answer has at most 100."]),
    # the validator's own limits, applied before storing too
    ("order", f"prompt: {'q' * 301}\nitem: a\nitem: {'b' * 101}\nexplanation: So.", [
        "Question 1, question: 301 characters, at most 300",
        "Question 1, option 2: 101 characters, at most 100"]),
])
async def test_a_form_with_a_problem_is_refused_whole_and_nothing_is_stored(
    authoring_service: QuizService, storage: Storage, kind: str, text: str, said: list[str],
) -> None:
    added = await authoring_service.authoring.add(AUTHOR, "en", WrittenQuestion(kind, text), "m")
    assert added.number is None
    assert [problem_text(p, translator("en")) for p in added.problems] == said
    assert added_text(added, translator("en")).startswith("Not added; nothing changed.")
    assert await storage.get_draft(AUTHOR.key) is None


async def test_a_stranger_sending_a_form_is_refused_before_it_is_read(
    authoring_service: QuizService, storage: Storage,
) -> None:
    with pytest.raises(AuthoringError, match="Only the bot's authors"):
        await authoring_service.authoring.add(STRANGER, "en", WrittenQuestion("essay", ""), "m")
    assert await storage.get_draft(STRANGER.key) is None


@pytest.mark.parametrize("locale", ["en", "bn", "hi"])
def test_each_kinds_form_names_its_fields_and_the_kinds_are_listed(locale: str) -> None:
    t = translator(locale)
    listed = form_text(None, t)
    assert all(f"/question {kind.value} — " in listed for kind in Kind)
    assert form_text("essay", t).splitlines()[1:] == listed.splitlines()
    for kind, fields in FIELDS.items():
        form = form_text(kind.value, t).split("\n\n", 1)[1].splitlines()
        assert form[0] == f"/question {kind.value}"
        assert [line.split(":")[0] for line in form[1:]] == [
            name for name in fields for _ in range({"right": 2, "wrong": 2, "item": 3}.get(
                name, 1))]


FORM_LINE = st.one_of(
    st.text(max_size=40),
    st.builds(lambda name, value: f"{name}:{value}",
              st.sampled_from([n for names in FIELDS.values() for n in names] + ["Prompt "]),
              st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=30)),
)


@given(kind=st.sampled_from([*(k.value for k in Kind), "x"]),
       lines=st.lists(FORM_LINE, max_size=12))
def test_any_form_is_read_or_refused_with_its_problems_never_raising(
    kind: str, lines: list[str],
) -> None:
    found = read(WrittenQuestion(kind, "\n".join(lines)))
    if isinstance(found, list):
        assert found and all(translator("hi").gettext(template, **values)
                             for template, values in found)
    else:
        assert found["kind"] == kind and found["prompt"] and found["explanation"]
