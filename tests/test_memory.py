"""What keeps the catalog's memory down, checked by structure: a text that another language
leaves the same is one string object, and `quizbot run` takes what start-up left alive out of
later garbage collections (gc.freeze)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot import app
from bot.app import open_service, run_adapters
from bot.content import load_catalog
from bot.content.items import Localized
from bot.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent


def fresh(text: str) -> str:
    """An equal string that is another object (as json.loads or YAML hands them out)."""
    return "".join(list(text))


def test_a_text_left_the_same_in_another_language_is_kept_once() -> None:
    en = "Rabindranath Tagore"
    text = Localized(en, fresh(en), fresh(en))
    assert text.bn is text.en and text.hi is text.en
    text = Localized("Kolkata", "কলকাতা", fresh("কলকাতা"))
    assert text.hi is text.bn and text.en != text.bn
    text = Localized("Delhi", "দিল্লি", "दिल्ली")
    assert (text.en, text.bn, text.hi) == ("Delhi", "দিল্লি", "दिल्ली")
    assert Localized("x", None, None).bn is None


def test_the_bundled_catalog_from_the_cache_shares_every_text_left_the_same(
    tmp_path: Path,
) -> None:
    load_catalog(ROOT / "content", tmp_path)
    catalog = load_catalog(ROOT / "content", tmp_path)  # json.loads: every string its own
    texts = [t for quiz in catalog for q in quiz.questions
             for t in (q.prompt, q.explanation, q.details, *(o.text for o in q.options))
             if t is not None]
    same = [t for t in texts if t.bn is not None and t.bn == t.en]
    assert same and all(t.bn is t.en for t in same)
    assert all(t.hi is t.en for t in texts if t.hi is not None and t.hi == t.en)


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """This test process's objects back into collection afterwards."""
    gc.unfreeze()
    yield
    gc.unfreeze()


async def test_run_freezes_what_start_up_left_alive(
    tmp_path: Path, unfrozen: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    trimmed: list[bool] = []
    monkeypatch.setattr(app, "_trim_malloc", lambda: trimmed.append(True))
    settings = load_settings(quizbot_database=tmp_path / "quiz.db", quizbot_cache_dir="off",
                             _env_file=None)
    async with open_service(settings) as service:
        questions = next(iter(service.catalog)).questions
        assert id(questions) in {id(o) for g in range(3) for o in gc.get_objects(g)}
        bot = asyncio.create_task(run_adapters(service, [], settings))
        try:
            for _ in range(5):
                await asyncio.sleep(0)
            assert not bot.done()
            # the catalog is among what no later collection walks: in no generation
            questions = next(iter(service.catalog)).questions
            assert gc.get_freeze_count() > 0 and gc.is_tracked(questions)
            assert id(questions) not in {id(o) for g in range(3) for o in gc.get_objects(g)}
            assert trimmed == [True]  # and what start-up freed given back to the system
        finally:
            bot.cancel()
            with pytest.raises(asyncio.CancelledError):
                await bot


def test_a_catalog_from_the_cache_holds_no_question_text(tmp_path: Path) -> None:
    """Prompts, options, explanations and details are read from the cache's files when asked
    for (bot/content/cache.py): the catalog keeps ids, answer indexes and where they are."""
    load_catalog(ROOT / "content", tmp_path)
    cold = load_catalog(ROOT / "content")
    catalog = load_catalog(ROOT / "content", tmp_path)
    for quiz, held in zip(catalog, cold, strict=True):
        for q, h in zip(quiz.questions, held.questions, strict=True):
            assert q.deferred and not h.deferred
            assert q._texts is None
            assert (q.prompt, q.options, q.answer) == (h.prompt, h.options, h.answer)
