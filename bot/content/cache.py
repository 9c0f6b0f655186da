"""The content cache: a pack whose exact bytes loaded before is not parsed and validated again.

An entry holds what loading a pack produced: the catalog's quiz, the lines of its ids (for the
checks across files) and its warnings. It is named by the SHA-256 of the pack's bytes and of
everything the result depends on (`version()`: the sources of this package's modules that
read, parse and validate a pack, the Python, pydantic, PyYAML, ziamath, latex2mathml and
Pygments versions), so any edit to a pack, even of one character with the same size and time,
and any change to the code that validates it, makes a different name, and the old entry is
simply no longer read.

Only a pack without errors is stored: a pack with an error is parsed and reported every time,
so the cache never hides one. Entries are JSON (no pickle) behind a header with their own
name, length and CRC-32: a corrupt, truncated, foreign or unreadable entry is ignored (said once
per load at INFO, each at DEBUG) and rewritten. Writes go to a temporary file renamed into
place; a directory that cannot be written only means no cache, never a failed load. A directory
owned by another user or writable by others is not used (its entries would be trusted as
validated). After a load that wrote an entry, entries this load did not use are pruned to the
SPARE_ENTRIES most recently used.

The cache is trusted like the packs themselves: an entry is checked for damage, not validated
again.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import logging
import mmap
import os
import re
import stat
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.content import limits
from bot.content.files import read_at_most
from bot.content.items import (
    Accept,
    Code,
    Kind,
    Localized,
    Meta,
    Misconception,
    Numeric,
    Option,
    Question,
    Quiz,
    Texts,
)

log = logging.getLogger(__name__)

FORMAT = 8  # the entry layout below; the sources are part of the version anyway
MAGIC = b"quizbot-content-cache"
SUBDIR = "content"  # under QUIZBOT_CACHE_DIR
SPARE_ENTRIES = 64  # entries kept beyond those the last load used (edits, other folders)
TOUCH_AFTER = 3600.0  # s: a used entry's time is refreshed (for pruning) at most this often
ENTRY_BYTES = 8 * limits.PACK_FILE_BYTES  # larger is not ours
_SOURCES = ("cache.py", "cues.py", "files.py", "items.py", "limits.py", "loader.py",
            "mathtext.py", "media.py", "problems.py", "schema.py", "validate.py", "yaml_lines.py")
_HERE = Path(__file__).resolve().parent

_ENTRY = re.compile(r"[0-9a-f]{64}\.json")
_TEMPORARY = re.compile(r"\.tmp-[A-Za-z0-9_]+\.json")  # tempfile.mkstemp's names
_said: set[tuple[str, str]] = set()  # (directory, what): said once per process


def _once(directory: Path, what: str, message: str, *args: Any) -> None:
    if (str(directory), what) not in _said:
        _said.add((str(directory), what))
        log.info(message, *args)


@dataclass(frozen=True, slots=True)
class Entry:
    quiz: Quiz
    quiz_line: int  # the line of the quiz's id
    question_lines: list[int]  # the line of each question's id, in order
    warnings: list[tuple[int, str]]  # (line, message)
    # the SHA-256 of each image the pack shows, by its path: the pack's bytes (the key) do not
    # cover them, so a hit is used only while they are unchanged (loader.py)
    images: dict[str, str] = field(default_factory=dict)


def _installed(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def _with_libyaml() -> bool:
    """Whether PyYAML was built with libyaml (its C extension is installed)."""
    try:
        files = importlib.metadata.files("PyYAML") or []
    except importlib.metadata.PackageNotFoundError:
        return False
    return any(f.name.startswith("_yaml.") and f.parent.name == "yaml" for f in files)


@functools.cache
def version() -> str | None:
    """What a loaded pack depends on besides its bytes; None: our sources cannot be read, so a
    change could not be told (no cache then)."""
    # the validators' and parsers' versions read from their metadata: a cached load imports
    # neither the schema nor the parsers
    libyaml = f"{_installed('PyYAML')} libyaml={_with_libyaml()}"
    # what formulas and code languages are accepted (read from the metadata: not imported)
    checkers = "\0".join(_installed(name) for name in ("ziamath", "latex2mathml", "pygments"))
    digest = hashlib.sha256(
        f"{FORMAT}\0{sys.version}\0{sys.implementation.cache_tag}\0{_installed('pydantic')}\0"
        f"{_installed('pydantic-core')}\0{libyaml}\0{checkers}\0".encode()
    )
    for name in _SOURCES:
        try:
            source = (_HERE / name).read_bytes()
        except OSError:
            return None
        digest.update(f"{name}\0{len(source)}\0".encode())
        digest.update(source)
    return digest.hexdigest()


class ContentCache:
    """The entries in one directory, for one load of a catalog."""

    def __init__(self, directory: Path, version: str) -> None:
        self.directory = directory
        self.version = version
        self._prefix = hashlib.sha256(f"{MAGIC.decode()}\0{version}\0".encode())
        self.used: set[str] = set()
        self.hits = 0
        self.wrote = 0
        self.unusable = 0
        self.usable = self._check_directory()
        self.writable = self.usable

    @classmethod
    def at(cls, cache_dir: Path) -> ContentCache | None:
        """The cache under QUIZBOT_CACHE_DIR, or None when it cannot tell a change."""
        current = version()
        if current is None:
            _once(cache_dir, "sources", "content cache not used: the loader's source files "
                  "cannot be read, so a change to them could not be told")
            return None
        return cls(cache_dir / SUBDIR, current)

    def _check_directory(self) -> bool:
        try:
            info = os.stat(self.directory)
        except FileNotFoundError:
            return True  # nothing to read yet; the first write creates it
        except OSError as exc:
            _once(self.directory, "stat", "content cache in %s not used: %s", self.directory,
                  exc.strerror or type(exc).__name__)
            return False
        if not stat.S_ISDIR(info.st_mode):
            _once(self.directory, "dir", "content cache in %s not used: not a directory",
                  self.directory)
            return False
        if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o022):
            _once(self.directory, "owner", "content cache in %s not used: it belongs to another "
                  "user or others may write to it, and its entries are trusted as validated",
                  self.directory)
            return False
        return True

    def key(self, data: bytes) -> str:
        digest = self._prefix.copy()
        digest.update(data)
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def may_write(self) -> bool:
        """Whether entries can be written here, as far as the permissions tell (the
        directory, or the nearest existing folder it would be created in)."""
        if not self.writable:
            return False
        folder = self.directory
        while not folder.exists() and folder.parent != folder:
            folder = folder.parent
        return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)

    def has(self, key: str) -> bool:
        """Whether an entry by this name is there (not whether it is usable)."""
        return self.usable and self._path(key).is_file()

    # --- reading ---------------------------------------------------------------------------

    def get(self, data: bytes, key: str | None = None) -> Entry | None:
        """The entry of a pack with these bytes (`key`: their key, if known), or None (never
        stored, or unusable)."""
        if not self.usable:
            return None
        key = key or self.key(data)
        path = self._path(key)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return None
        except OSError as exc:
            return self._unusable(key, f"cannot open it ({exc.strerror or type(exc).__name__})")
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > ENTRY_BYTES:
                return self._unusable(key, "not one of our entries")
            raw = read_at_most(fd, info.st_size)
            mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if raw else None
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else None
            return self._unusable(key, f"cannot read it ({why or type(exc).__name__})")
        finally:
            os.close(fd)
        try:
            entry = decode(raw, self.version, key, mapped)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, StopIteration,
                RecursionError, MemoryError) as exc:
            if mapped is not None:
                mapped.close()
            return self._unusable(key, str(exc) or type(exc).__name__)
        self.used.add(key)
        self.hits += 1
        if time.time() - info.st_mtime > TOUCH_AFTER:
            try:
                os.utime(path)  # recently used: kept when others are pruned
            except OSError:
                pass
        return entry

    def _unusable(self, key: str, why: str) -> Entry | None:
        self.unusable += 1
        log.debug("content cache entry %s ignored (%s); the pack is loaded again", key, why)
        return None

    # --- writing ---------------------------------------------------------------------------

    def put(self, data: bytes, entry: Entry, key: str | None = None) -> None:
        """Store an entry; a cache that cannot be written is skipped (said once)."""
        if not self.writable:
            return
        key = key or self.key(data)
        blob = encode(entry, self.version, key)
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.directory)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(blob)
                os.replace(temporary, self._path(key))
            except BaseException:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass
                raise
        except OSError as exc:
            self.writable = False
            _once(self.directory, "write", "content cache in %s cannot be written (%s); packs "
                  "are loaded without it", self.directory, exc.strerror or type(exc).__name__)
            return
        self.used.add(key)
        self.wrote += 1

    def done(self) -> None:
        """After a load: say what was unusable, prune if this load wrote anything."""
        if self.unusable:
            log.info("content cache in %s: %d entries could not be used (corrupt, truncated, "
                     "from elsewhere or unreadable) and were rebuilt", self.directory,
                     self.unusable)
        if self.wrote:
            self.prune()

    def prune(self) -> None:
        """Keep the entries this load used and the SPARE_ENTRIES most recent others; drop
        temporary files left by a crash over an hour ago."""
        now = time.time()
        others: list[tuple[float, str]] = []
        remove: list[str] = []
        try:
            with os.scandir(self.directory) as found:
                for item in found:
                    try:
                        mtime = item.stat(follow_symlinks=False).st_mtime
                    except OSError:
                        continue
                    # only names we make: whatever else is in the folder is left alone
                    if _TEMPORARY.fullmatch(item.name):
                        if now - mtime > 3600:
                            remove.append(item.name)
                    elif _ENTRY.fullmatch(item.name) and item.name[:-5] not in self.used:
                        others.append((mtime, item.name))
        except OSError:
            return
        others.sort(reverse=True)
        remove += [name for _, name in others[SPARE_ENTRIES:]]
        for name in remove:
            try:
                os.unlink(self.directory / name)
            except OSError:
                pass


# --- the entry: a header line, then JSON of plain lists ------------------------------------
#
# header: MAGIC FORMAT version key payload-length payload-crc32
# payload: one line of JSON, then the texts, a line of JSON per question:
# [quiz_line, [[line, warning], ...], images, [id, title, tags, [question, ...], language,
#  [[misconception id, statement], ...]]]
# question: [id, line, answer, [offset, length] of its line of texts (from the first one's
#            start), [code language, code text] or null, formula or null, image or null,
#            metadata or null (Meta.as_list), kind, [answer, ...], [value, low, high, unit or
#            null] or null, [{locale: [form, ...]}, [latin, ...]] or null, image text or null,
#            [misconception id or null, ...] by canonical option, pair or null,
#            explanation image or null, its text or null]
# its line of texts: [prompt, [option text, ...], [answer, ...], explanation, details or null]
# a text: [en, bn or null, hi or null]
#
# The texts are nearly all of a catalog's memory, and only a question being asked, answered
# or shown needs them: a question loaded from an entry keeps where its line is in the entry
# file (mapped, not read; the file is never changed in place, and a mapping outlives its
# removal) and reads it when asked for.


def _text(text: Localized) -> list[str | None]:
    return [text.en, text.bn, text.hi]


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def encode(entry: Entry, version: str, key: str) -> bytes:
    quiz = entry.quiz
    questions = []
    lines = []
    at = 0
    for q, line in zip(quiz.questions, entry.question_lines, strict=True):
        texts = _json([_text(q.prompt), [_text(o.text) for o in q.options], list(q.answers),
                       _text(q.explanation),
                       _text(q.details) if q.details is not None else None])
        numeric = q.numeric
        questions.append(
            [q.id, line, q.answer, [at, len(texts)],
             [q.code.language, _text(q.code.text)] if q.code is not None else None,
             _text(q.formula) if q.formula is not None else None,
             _text(q.image) if q.image is not None else None,
             q.meta.as_list() if q.meta is not None else None,
             q.kind.value, list(q.answers),
             [numeric.value, numeric.low, numeric.high,
              _text(numeric.unit) if numeric.unit is not None else None]
             if numeric is not None else None,
             [{loc: list(forms) for loc, forms in q.accept.texts.items()}, list(q.accept.latin)]
             if q.accept is not None else None,
             _text(q.image_alt) if q.image_alt is not None else None,
             list(q.misconceptions), q.pair,
             _text(q.explanation_image) if q.explanation_image is not None else None,
             _text(q.explanation_image_alt) if q.explanation_image_alt is not None else None])
        lines.append(texts)
        at += len(texts) + 1
    payload = b"\n".join([_json(
        [entry.quiz_line, [list(w) for w in entry.warnings], entry.images,
         [quiz.id, _text(quiz.title), list(quiz.tags), questions, quiz.language,
          [[m.id, _text(m.statement)] for m in quiz.misconceptions]]]), *lines])
    header = b" ".join((MAGIC, str(FORMAT).encode(), version.encode(), key.encode(),
                        str(len(payload)).encode(), str(zlib.crc32(payload)).encode()))
    return header + b"\n" + payload


def _texts(line: bytes) -> Texts:
    prompt, options, answers, explanation, details = json.loads(line)
    return Texts(Localized(*prompt),
                 [Option(Localized(*option), i in answers) for i, option in enumerate(options)],
                 Localized(*explanation), Localized(*details) if details is not None else None)


class _EntryFile:
    """An entry file mapped for its questions' texts."""

    __slots__ = ("_map",)

    def __init__(self, mapped: mmap.mmap) -> None:
        self._map = mapped

    def read(self, offset: int, length: int) -> bytes:
        line = self._map[offset:offset + length]
        # the pages go out of the process's memory again (they stay in the page cache)
        start = offset - offset % mmap.PAGESIZE
        if hasattr(self._map, "madvise"):
            self._map.madvise(mmap.MADV_DONTNEED, start, offset + length - start)
        return line


@functools.lru_cache(maxsize=256)  # a storm on one question reads its texts once
def _read_texts(file: _EntryFile, offset: int, length: int) -> Texts:
    return _texts(file.read(offset, length))


class _Deferred:
    """Where one question's texts are (items.Deferred)."""

    __slots__ = ("file", "length", "offset")

    def __init__(self, file: _EntryFile, offset: int, length: int) -> None:
        self.file = file
        self.offset = offset
        self.length = length

    def load(self) -> Texts:
        return _read_texts(self.file, self.offset, self.length)


def decode(raw: bytes, version: str, key: str, mapped: mmap.mmap | None = None) -> Entry:
    """The entry in `raw`; ValueError (or another lookup error) if it is not a whole one.
    With `mapped` (the same file), the questions' texts are read from it when asked for;
    without, they are read now."""
    end = raw.find(b"\n", 0, 512)
    if end < 0:
        raise ValueError("no header")
    fields = raw[:end].split(b" ")
    if len(fields) != 6 or fields[0] != MAGIC or fields[1] != str(FORMAT).encode():
        raise ValueError("not an entry of this format")
    if fields[2] != version.encode() or fields[3] != key.encode():
        raise ValueError("an entry for another pack or version")
    payload = raw[end + 1:]
    if int(fields[4]) != len(payload):
        raise ValueError("truncated")
    if int(fields[5]) != zlib.crc32(payload):
        raise ValueError("corrupt (checksum)")
    first = payload.index(b"\n") if b"\n" in payload else len(payload)
    tail = end + 1 + first + 1  # where the lines of texts start in `raw`
    quiz_line, warnings, images, (quiz_id, title, tags, rows, language, wrong_ideas) = \
        json.loads(payload[:first])
    file = _EntryFile(mapped) if mapped is not None else None
    text = Localized
    questions: list[Question] = []
    lines: list[int] = []
    for (question_id, line, answer, (at, length), code, formula, image, meta, kind, answers,
         numeric, accept, image_alt, stands_for, pair, explained, explained_alt) in rows:
        if not (isinstance(at, int) and isinstance(length, int) and 0 <= at
                and tail + at + length <= len(raw)):
            raise ValueError("a question's texts are outside the entry")
        if file is not None:
            texts, deferred = None, _Deferred(file, tail + at, length)
        else:
            texts, deferred = _texts(raw[tail + at:tail + at + length]), None
        questions.append(Question(
            question_id,
            texts.prompt if texts is not None else None,
            texts.options if texts is not None else None,
            texts.explanation if texts is not None else None,
            texts.details if texts is not None else None,
            answer,
            code=Code(code[0], text(*code[1])) if code is not None else None,
            formula=text(*formula) if formula is not None else None,
            image=text(*image) if image is not None else None,
            meta=Meta.from_list(meta) if meta is not None else None,
            deferred=deferred,
            kind=Kind(kind),
            answers=tuple(answers),
            numeric=Numeric(numeric[0], numeric[1], numeric[2],
                            text(*numeric[3]) if numeric[3] is not None else None)
            if numeric is not None else None,
            accept=Accept({str(k): tuple(v) for k, v in accept[0].items()}, tuple(accept[1]))
            if accept is not None else None,
            image_alt=text(*image_alt) if image_alt is not None else None,
            misconceptions=tuple(stands_for),
            pair=pair,
            explanation_image=text(*explained) if explained is not None else None,
            explanation_image_alt=text(*explained_alt) if explained_alt is not None else None,
        ))
        lines.append(line)
    quiz = Quiz(quiz_id, text(*title), tags, questions, language,
                misconceptions=tuple(Misconception(m_id, text(*statement))
                                     for m_id, statement in wrong_ideas))
    return Entry(quiz, quiz_line, lines, [(line, message) for line, message in warnings],
                 {str(k): str(v) for k, v in images.items()})
