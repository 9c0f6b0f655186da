"""The content cache (bot/content/cache.py): a cached catalog is the cold one, any change to a
pack or to the code that validates it is a miss, a damaged entry or an unusable directory only
costs a parse, and an error is never hidden."""

from __future__ import annotations

import gc
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.content import ContentError, cache, load_catalog, yaml_lines
from bot.content.loader import Catalog
from bot.settings import Settings
from tests.conftest import BUNDLED

# a pack with warnings of each kind the loader gives: missing translations, and the answer the
# longest option in every question (the giveaway warning at `questions:`)
WARNED = """\
id: warned
title: {en: Warned, bn: সতর্ক}
tags: [demo]
questions:
%s"""
QUESTION = """\
  - id: w-%d
    prompt: {en: "Question %d?", hi: "प्रश्न %d?"}
    options:
      - {en: "the long correct answer %d", correct: true}
      - {en: "no"}
      - {en: "nope"}
    explanation: {en: "Because.\\nTwo lines."}
    details: {en: "More."}
"""


def warned_pack(questions: int = 3) -> str:
    return WARNED % "".join(QUESTION % (i, i, i, i) for i in range(questions))


@pytest.fixture
def packs(tmp_path: Path) -> Path:
    """The bundled packs and one with warnings, in a folder of their own."""
    root = tmp_path / "packs"
    shutil.copytree(BUNDLED, root)
    (root / "warned.yaml").write_text(warned_pack(), encoding="utf-8")
    return root


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The packs parsed for real (not taken from the cache), by file name."""
    parsed: list[str] = []
    real = yaml_lines.parse

    def counting(text: str, add: Any) -> Any:
        parsed.append(text.split("\n", 1)[0])
        return real(text, add)

    monkeypatch.setattr(yaml_lines, "parse", counting)
    return parsed


def entries(cache_dir: Path) -> list[Path]:
    folder = cache_dir / cache.SUBDIR
    found = folder.glob("*.json") if folder.is_dir() else ()
    return sorted(p for p in found if not p.name.startswith("."))


def same(a: Catalog, b: Catalog) -> None:
    assert list(a.quizzes) == list(b.quizzes)
    assert a.quizzes == b.quizzes
    assert [q.export() for q in a] == [q.export() for q in b]
    for qa, qb in zip(a, b, strict=True):
        for x, y in zip(qa.questions, qb.questions, strict=True):
            assert [o.correct for o in x.options] == [o.correct for o in y.options]
            assert x.answer == y.answer and x.details == y.details
            for locale in ("en", "bn", "hi"):
                assert x.prompt.get(locale) == y.prompt.get(locale)
                assert [o.text.get(locale) for o in x.options] == [
                    o.text.get(locale) for o in y.options
                ]
                assert x.explanation.get(locale) == y.explanation.get(locale)
    assert a.warnings == b.warnings


def test_a_cached_catalog_is_the_cold_one(
    packs: Path, cache_dir: Path, parses: list[str]
) -> None:
    cold = load_catalog(packs)
    assert cold.warnings  # the warned pack's: missing locales, line breaks are fine, giveaway
    assert any("longest" in w.message for w in cold.warnings)
    files = len(list(packs.glob("*.yaml")))
    parses.clear()
    first = load_catalog(packs, cache_dir)  # parses and stores
    assert len(parses) == files and len(entries(cache_dir)) == files
    parses.clear()
    cached = load_catalog(packs, cache_dir)
    assert parses == []  # nothing parsed: every pack came from the cache
    same(cold, first)
    same(cold, cached)
    assert [str(w) for w in cached.warnings] == [str(w) for w in cold.warnings]


def test_an_entry_serves_the_same_pack_under_another_name(
    packs: Path, cache_dir: Path, tmp_path: Path, parses: list[str]
) -> None:
    load_catalog(packs, cache_dir)
    moved = tmp_path / "moved"
    packs.rename(moved)
    parses.clear()
    catalog = load_catalog(moved, cache_dir)
    assert parses == []
    assert all(w.file.startswith(str(moved)) for w in catalog.warnings)  # today's file names


def test_one_character_changed_same_size_and_time_is_a_miss(
    packs: Path, cache_dir: Path, parses: list[str]
) -> None:
    path = packs / "warned.yaml"
    load_catalog(packs, cache_dir)
    info = path.stat()
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("Question 1?", "Question 7?"), encoding="utf-8")
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert path.stat().st_size == info.st_size and path.stat().st_mtime_ns == info.st_mtime_ns
    parses.clear()
    catalog = load_catalog(packs, cache_dir)
    assert parses == ["id: warned"]  # that pack only
    assert catalog.question("warned", "w-1").prompt.en == "Question 7?"


def test_a_change_to_the_loader_is_a_miss(
    packs: Path, cache_dir: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    load_catalog(packs, cache_dir)
    monkeypatch.setattr(cache, "version", lambda: "another loader")
    parses.clear()
    load_catalog(packs, cache_dir)
    assert len(parses) == len(list(packs.glob("*.yaml")))


def test_the_version_covers_the_sources_and_the_python() -> None:
    cache.version.cache_clear()
    try:
        current = cache.version()
        assert current is not None and len(current) == 64
        assert current == cache.version()
    finally:
        cache.version.cache_clear()


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "foreign",
                                    "other-key", "directory"])
def test_a_damaged_entry_is_ignored_and_rebuilt(
    packs: Path, cache_dir: Path, parses: list[str], damage: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cold = load_catalog(packs)
    load_catalog(packs, cache_dir)
    victims = entries(cache_dir)
    victim = victims[0]
    raw = victim.read_bytes()
    if damage == "truncate":
        victim.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip":
        at = len(raw) - 10  # inside the payload: only the checksum tells
        victim.write_bytes(raw[:at] + bytes([raw[at] ^ 0x01]) + raw[at + 1:])
    elif damage == "garbage":
        victim.write_bytes(os.urandom(len(raw)))
    elif damage == "empty":
        victim.write_bytes(b"")
    elif damage == "foreign":
        victim.write_bytes(b'{"not": "ours"}\n')
    elif damage == "other-key":  # a whole entry, of another pack, under this pack's name
        victim.write_bytes(victims[1].read_bytes())
    else:
        victim.unlink()
        victim.mkdir()
    parses.clear()
    with caplog.at_level(logging.DEBUG, logger="bot.content.cache"):
        catalog = load_catalog(packs, cache_dir)
    same(cold, catalog)
    assert len(parses) == 1  # that pack only, parsed again
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    if damage == "directory":  # nothing can be renamed over it either: said once
        assert any("cannot be written" in m for m in infos)
        infos = [m for m in infos if "cannot be written" not in m]
    assert len(infos) == 1 and "1 entries could not be used" in infos[0]
    if damage != "directory":  # rebuilt: the next load takes it from the cache
        parses.clear()
        same(cold, load_catalog(packs, cache_dir))
        assert parses == []


def test_an_unwritable_cache_still_loads(
    packs: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    cold = load_catalog(packs)
    with caplog.at_level(logging.INFO, logger="bot.content.cache"):
        same(cold, load_catalog(packs, blocker / "cache"))
        same(cold, load_catalog(packs, blocker / "cache"))
    said = [r.getMessage() for r in caplog.records if r.name == "bot.content.cache"]
    assert len(said) == 1 and "not used" in said[0]  # once per process, not per pack or load
    assert not (blocker / "cache").exists()


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() == 0,
                    reason="root writes to read-only directories")
def test_a_read_only_cache_still_loads(packs: Path, cache_dir: Path) -> None:
    (cache_dir / cache.SUBDIR).mkdir(parents=True)
    (cache_dir / cache.SUBDIR).chmod(0o500)
    try:
        same(load_catalog(packs), load_catalog(packs, cache_dir))
        same(load_catalog(packs), load_catalog(packs, cache_dir, parse_apart=True))
    finally:
        (cache_dir / cache.SUBDIR).chmod(0o700)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
def test_a_directory_others_may_write_is_not_used(
    packs: Path, cache_dir: Path, parses: list[str]
) -> None:
    load_catalog(packs, cache_dir)
    (cache_dir / cache.SUBDIR).chmod(0o777)
    try:
        parses.clear()
        same(load_catalog(packs), load_catalog(packs, cache_dir))
        assert parses  # read from the packs, not from entries others could have written
    finally:
        (cache_dir / cache.SUBDIR).chmod(0o700)


def test_a_malformed_pack_is_reported_with_a_warm_cache(
    packs: Path, cache_dir: Path, parses: list[str]
) -> None:
    load_catalog(packs, cache_dir)
    path = packs / "warned.yaml"
    path.write_text(warned_pack().replace('{en: "no"}', '{en: "no", correct: true}', 1),
                    encoding="utf-8")
    before = entries(cache_dir)
    for _ in range(2):  # and again: a pack with an error is never stored
        parses.clear()
        with pytest.raises(ContentError) as info:
            load_catalog(packs, cache_dir)
        assert parses == ["id: warned"]
        errors = [str(p) for p in info.value.problems if not p.warning]
        assert errors == [f"{path}:7: error: question 1.options: exactly one option "
                          "must have 'correct: true', found 2"]
    assert entries(cache_dir) == before


def test_ids_used_twice_across_cached_packs_are_still_refused(
    tmp_path: Path, cache_dir: Path, parses: list[str]
) -> None:
    root = tmp_path / "twice"
    root.mkdir()
    (root / "a.yaml").write_text(warned_pack(2), encoding="utf-8")
    (root / "b.yaml").write_text(warned_pack(2).replace("id: warned", "id: other"),
                                 encoding="utf-8")
    found = []
    for _ in range(2):  # the second time, both packs come from the cache (each is valid alone)
        parses.clear()
        with pytest.raises(ContentError) as info:
            load_catalog(root, cache_dir)
        found.append([str(p) for p in info.value.problems if not p.warning])
    assert parses == []
    assert found[0] == found[1] and len(found[0]) == 4
    assert f"{root / 'a.yaml'}:5: error: question id 'w-0' is used more than once" in "\n".join(
        found[1]
    )


def test_disabled_the_cache_is_neither_read_nor_written(
    packs: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_catalog(packs)
    assert not cache_dir.exists()
    for off in ("off", "OFF", "none", "false", "0"):
        monkeypatch.setenv("QUIZBOT_CACHE_DIR", off)
        assert Settings(_env_file=None).quizbot_cache_dir is None
    monkeypatch.setenv("QUIZBOT_CACHE_DIR", str(cache_dir))
    assert Settings(_env_file=None).quizbot_cache_dir == cache_dir


def test_the_default_is_the_xdg_cache_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("QUIZBOT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert Settings(_env_file=None).quizbot_cache_dir == tmp_path / "xdg" / "quizbot"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("QUIZBOT_CACHE_DIR", "")  # empty: the default, as for every variable
    expected = Path.home() / ".cache" / "quizbot"
    assert Settings(_env_file=None).quizbot_cache_dir == expected


def test_cli_validate_does_not_use_the_cache(packs: Path, cache_dir: Path) -> None:
    env = {**os.environ, "QUIZBOT_CACHE_DIR": str(cache_dir)}
    proc = subprocess.run([sys.executable, "-m", "bot", "content", "validate", str(packs)],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert not cache_dir.exists()
    proc = subprocess.run([sys.executable, "-m", "bot", "content", "export", str(packs)],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert len(entries(cache_dir)) == len(list(packs.glob("*.yaml")))


@pytest.fixture
def few_spares(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(cache, "SPARE_ENTRIES", 2)
    yield


@pytest.mark.usefixtures("few_spares")
def test_old_entries_are_pruned(packs: Path, cache_dir: Path) -> None:
    files = len(list(packs.glob("*.yaml")))
    path = packs / "warned.yaml"
    for i in range(6):  # six edits: six entries of that pack, of which two are kept
        path.write_text(warned_pack(i + 1), encoding="utf-8")
        load_catalog(packs, cache_dir)
        assert len(entries(cache_dir)) <= files + 2
        time.sleep(0.01)  # distinct times
    folder = cache_dir / cache.SUBDIR
    stale = folder / ".tmp-crashed.json"
    stale.write_bytes(b"half")
    fresh = folder / ".tmp-writing.json"  # another process may be writing it right now
    fresh.write_bytes(b"half")
    theirs = [folder / "notes.json", folder / "README", folder / ("f" * 63 + ".json")]
    for path_ in [stale, *theirs]:
        path_.write_bytes(b"not ours")
        os.utime(path_, (time.time() - 7200, time.time() - 7200))
    path.write_text(warned_pack(9), encoding="utf-8")
    load_catalog(packs, cache_dir)
    assert not stale.exists() and fresh.exists()
    assert all(p.exists() for p in theirs)  # only names the cache makes are removed
    assert len([p for p in entries(cache_dir) if p not in theirs]) == files + 2
    assert (folder / ("f" * 63 + ".json")) in entries(cache_dir)  # not a name it makes


def test_garbage_collection_is_back_on_after_a_load(packs: Path, cache_dir: Path) -> None:
    assert gc.isenabled()
    load_catalog(packs, cache_dir)
    assert gc.isenabled()
    with pytest.raises(ContentError):
        load_catalog(packs / "missing", cache_dir)
    assert gc.isenabled()


def test_parsed_apart_a_cold_load_is_parsed_by_a_child_and_is_the_same(
    packs: Path, cache_dir: Path, parses: list[str]
) -> None:
    cold = load_catalog(packs)
    parses.clear()
    apart = load_catalog(packs, cache_dir, parse_apart=True)
    assert parses == []  # the child parsed and stored every pack; this process read them
    assert len(entries(cache_dir)) == len(list(packs.glob("*.yaml")))
    same(cold, apart)


def test_parsed_apart_an_error_is_still_reported_here(
    packs: Path, cache_dir: Path, parses: list[str]
) -> None:
    path = packs / "warned.yaml"
    path.write_text(warned_pack().replace('{en: "no"}', '{en: "no", correct: true}', 1),
                    encoding="utf-8")
    with pytest.raises(ContentError) as info:
        load_catalog(packs, cache_dir, parse_apart=True)
    assert parses == ["id: warned"]  # the child stored the others, not this one
    assert [str(p) for p in info.value.problems if not p.warning] == [
        f"{path}:7: error: question 1.options: exactly one option must have "
        "'correct: true', found 2"]


def test_parsed_apart_the_process_keeps_no_parser(packs: Path, cache_dir: Path) -> None:
    script = (f"import sys; from bot.content import load_catalog; "
              f"c = load_catalog({str(packs)!r}, {str(cache_dir)!r}, parse_apart=True); "
              "print(len(c.quizzes), sorted({m.split('.')[0] for m in sys.modules} "
              "& {'ruamel', 'yaml'}))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parent.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(" ", 1) == [str(len(list(packs.glob("*.yaml")))), "[]\n"]


def test_a_cached_question_reads_its_explanation_and_details_when_asked_for(
    packs: Path, cache_dir: Path
) -> None:
    cold = load_catalog(packs)
    load_catalog(packs, cache_dir)
    cached = load_catalog(packs, cache_dir)
    shutil.rmtree(cache_dir)  # a running bot's entries pruned or rebuilt: still readable
    for a, b in zip(cold, cached, strict=True):
        for x, y in zip(a.questions, b.questions, strict=True):
            assert not x.deferred and y.deferred  # held only by the cold load
            assert (x.explanation, x.details) == (y.explanation, y.details)
            assert y.model_copy(update={"id": "copy"}).explanation == x.explanation
