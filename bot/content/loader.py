"""Load the quiz packs of a folder into a catalog, every problem pointed at its file and line.

Loading is all or nothing: a catalog with any error is refused whole, so a running bot never
serves half a pack. Every problem of every file is reported in one run, sorted by file and
line, so an author fixes them all at once instead of one per run.

A pack is untrusted input (a pull request, a mounted volume): only regular files are read, size
and nesting are capped, and no input makes the loader raise anything but ContentError. Each
pack is read (files.py), parsed with the line of every part (yaml_lines.py) and checked
(validate.py); here the packs become a catalog, ids are checked across files, and unchanged
packs come from the cache (cache.py).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import logging
import subprocess
import sys
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.content import limits, media
from bot.content.cache import ContentCache, Entry
from bot.content.files import Unreadable, read_regular
from bot.content.items import Question, Quiz
from bot.content.problems import ContentError, Problem, clean, has_errors, order, short

if TYPE_CHECKING:  # the parsers and validators are imported by the first pack not cached
    from bot.content.yaml_lines import Loc

__all__ = ["Catalog", "ContentError", "Problem", "load_catalog", "load_file", "load_text"]

log = logging.getLogger(__name__)

# a report longer than this helps nobody; the rest is summarised in one line
MAX_PROBLEMS_PER_FILE = 100


@dataclass
class Catalog:
    """Every quiz by id (`quizzes`: what posts, answers and boards look up) and the ones that
    are offered (iterating, get, with_tag: what a chat can choose); a pack withdrawn with
    /unpublish is in the first and not the second."""

    quizzes: dict[str, Quiz] = field(default_factory=dict)
    warnings: list[Problem] = field(default_factory=list)
    withdrawn: set[str] = field(default_factory=set)

    def __iter__(self) -> Iterator[Quiz]:
        return (q for q in self.quizzes.values() if q.id not in self.withdrawn)

    def get(self, quiz_id: str) -> Quiz | None:
        return None if quiz_id in self.withdrawn else self.quizzes.get(quiz_id)

    def with_tag(self, tag: str) -> list[Quiz]:
        return [q for q in self if tag in q.tags]

    def question(self, quiz_id: str, question_id: str) -> Question:
        return self.quizzes[quiz_id].question(question_id)


# --- one file, then the catalog --------------------------------------------------------------


def _read(path: Path) -> bytes:
    """The pack's bytes; Unreadable says why there are none."""
    cap = limits.PACK_FILE_BYTES
    return read_regular(path, cap, what="a quiz pack", too_big=(
        f"the file is larger than {cap / 2**20:g} MiB, the limit for one pack; "
        "split it into several packs"))


@dataclass
class _File:
    name: str
    quiz: Quiz | None = None
    problems: list[Problem] = field(default_factory=list)
    quiz_id: tuple[str, int] | None = None  # as written, also in an invalid file
    question_ids: list[tuple[str, int]] = field(default_factory=list)

    def add(self, line: int, message: str, warning: bool = False) -> None:
        self.problems.append(Problem(self.name, line, message, warning))


Read = tuple[bytes | Unreadable, str | None]  # a pack's bytes and cache key, or why not


def _read_keyed(path: Path, cache: ContentCache) -> Read:
    """Reading and hashing release the GIL: done in a thread while the last pack is decoded."""
    try:
        data = _read(path)
    except Unreadable as exc:
        return exc, None
    return data, cache.key(data)


def _prefetched(files: list[Path], cache: ContentCache, ahead: int = 4) -> Iterator[Read]:
    """Each pack read and hashed in a thread, at most `ahead` packs before they are used."""
    with ThreadPoolExecutor(1, thread_name_prefix="quizbot-content") as pool:
        pending: deque[Future[Read]] = deque()
        for path in files:
            pending.append(pool.submit(_read_keyed, path, cache))
            if len(pending) > ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _load(path: Path, cache: ContentCache | None = None, read: Read | None = None) -> _File:
    result = _File(str(path))
    key = None
    if read is not None:
        data, key = read
    else:
        try:
            data = _read(path)
        except Unreadable as exc:
            data = exc
    if isinstance(data, Unreadable):
        result.add(1, str(data))
        return result
    if (cache is not None and (entry := cache.get(data, key)) is not None
            and _images_unchanged(path.parent, entry.images)):
        return _from_cache(result, entry, path.parent)
    _parse(result, data, path.parent)
    if (cache is not None and result.quiz is not None and not has_errors(result.problems)
            and not any(p.message.endswith(media.LEFT_OUT) for p in result.problems)):
        # only a pack without errors is stored: every error comes from a real parse
        if (entry := _to_cache(result, result.quiz)) is not None:
            cache.put(data, entry, key)
    return result


def _parse(result: _File, data: bytes, folder: Path | None,
           files: Mapping[str, bytes] | None = None) -> None:
    """A pack's bytes parsed and checked, its images read from `folder` or `files`."""
    from bot.content import yaml_lines

    text = yaml_lines.check_characters(yaml_lines.decode(data, result.add), result.add)
    parsed = yaml_lines.parse(text, result.add)
    if parsed is not None:
        _check(result, *parsed, folder, files)
    if len(result.problems) > MAX_PROBLEMS_PER_FILE:
        result.problems.sort(key=order)
        rest = result.problems[MAX_PROBLEMS_PER_FILE:]
        del result.problems[MAX_PROBLEMS_PER_FILE:]
        # only warnings left out: the summary is a warning too, and the pack still loads
        result.add(rest[0].line, f"… and {len(rest)} more problems in this file",
                   all(p.warning for p in rest))


def _image_digests(folder: Path, quiz: Quiz) -> dict[str, str] | None:
    """The SHA-256 of each image the quiz shows, by path; None if one cannot be read."""
    paths = {path for q in quiz.questions for image in (q.image, q.explanation_image)
             if image is not None for _, path in image.items()}
    try:
        return {path: hashlib.sha256(media.resolve(folder, path).read_bytes()).hexdigest()
                for path in sorted(paths)}
    except (OSError, media.BadImage):
        return None


def _images_unchanged(folder: Path, images: dict[str, str]) -> bool:
    """Whether every image of a cached pack is still the one it was validated with."""
    for path, digest in images.items():
        try:
            if hashlib.sha256(media.resolve(folder, path).read_bytes()).hexdigest() != digest:
                return False
        except (OSError, media.BadImage):
            return False
    return True


def _to_cache(result: _File, quiz: Quiz) -> Entry | None:
    assert result.quiz_id is not None and len(result.question_ids) == len(quiz.questions)
    images = _image_digests(Path(result.name).parent, quiz)
    if images is None:
        return None
    return Entry(quiz, result.quiz_id[1], [line for _, line in result.question_ids],
                 [(p.line, p.message) for p in result.problems], images)


def _from_cache(result: _File, entry: Entry, folder: Path) -> _File:
    quiz = entry.quiz
    if entry.images:  # its images are found from the pack's folder, wherever that is now
        quiz = quiz.model_copy(update={"folder": str(folder)})
    result.quiz = quiz
    result.problems = [Problem(result.name, line, message, True)
                       for line, message in entry.warnings]
    result.quiz_id = (quiz.id, entry.quiz_line)
    result.question_ids = [(q.id, line) for q, line in zip(quiz.questions, entry.question_lines,
                                                           strict=True)]
    return result


def _check(result: _File, data: Any, lines: dict[Loc, int], folder: Path | None,
           files: Mapping[str, bytes] | None = None) -> None:
    """The ids as written (also in an invalid pack: load_catalog checks them across files),
    then the pack's own checks."""
    if isinstance(data, dict):
        if isinstance(quiz_id := data.get("id"), str):
            result.quiz_id = (quiz_id, lines[("id",)])
        questions = data.get("questions")
        for qi, raw in enumerate(questions if isinstance(questions, list) else ()):
            if isinstance(raw, dict) and isinstance(question_id := raw.get("id"), str):
                result.question_ids.append((question_id, lines[("questions", qi, "id")]))
    from bot.content import validate

    result.quiz = validate.check(data, lines, result.add, folder, files)


def load_file(path: Path) -> tuple[Quiz | None, list[Problem]]:
    """One pack and its problems (ids used in other files are checked by load_catalog)."""
    result = _load(path)
    quiz = None if has_errors(result.problems) else result.quiz
    return quiz, sorted(result.problems, key=order)


def load_text(text: str, name: str,
              files: Mapping[str, bytes] | None = None) -> tuple[Quiz | None, list[Problem]]:
    """A pack that is no file (an import's, a draft's, one kept in a database) checked as a
    pack file is, its images read from `files` (by their path relative to the pack), its
    problems named `name`; the quiz has no folder."""
    result = _File(name)
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > limits.PACK_FILE_BYTES:
        result.add(1, f"the pack is larger than {limits.PACK_FILE_BYTES / 2**20:g} MiB, the "
                   "limit for one pack; split it into several packs")
    else:
        _parse(result, data, None, files or {})
    quiz = None if has_errors(result.problems) else result.quiz
    return quiz, sorted(result.problems, key=order)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a catalog is built: it allocates objects for every
    question that all stay (three from the cache, a dozen parsed), and every full collection
    on the way would walk them again (one pass over them follows the load instead)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def quiz_files(root: Path) -> list[Path]:
    if not root.is_dir():
        return [root]  # a file, or a pipe or device that _read refuses with a clear message
    # hidden files are editor locks and macOS metadata, not packs
    return sorted(
        p for p in root.iterdir() if p.suffix in (".yaml", ".yml") and not p.name.startswith(".")
    )


def _used_twice(kind: str, places: dict[str, list[tuple[str, int]]]) -> Iterable[Problem]:
    """A problem at every place an id is used, naming the other places."""
    for ident, where in places.items():
        if len(where) < 2:
            continue
        for i, (file, line) in enumerate(where):
            others = ", ".join(
                f"line {ln}" if f == file else f"{clean(f)}:{ln}"
                for j, (f, ln) in enumerate(where)
                if j != i
            )
            yield Problem(file, line, f"{kind} id {short(ident)!r} is used more than once "
                          f"(also at {others})")


def _missing(files: list[Path], cache: ContentCache) -> bool:
    """Whether a readable pack has no entry in the cache yet."""
    for path in files:
        try:
            data = _read(path)
        except Unreadable:
            continue  # reported by the load itself
        if not cache.has(cache.key(data)):
            return True
    return False


_FILL = """
import contextlib, sys
sys.path.insert(0, sys.argv[1])
from bot.content.loader import ContentError, load_catalog
with contextlib.suppress(ContentError):
    load_catalog(sys.argv[2], sys.argv[3])
"""


def _fill_cache_apart(root: Path, cache_dir: Path) -> None:
    """Parsing and validating leave tens of MB behind in the process that does it (the YAML
    parsers, pydantic's validators, freed memory that stays mapped), so a bot that will run
    for days has a child process parse what is not cached yet and store it; whatever the
    child could not store (a pack with errors never is) is parsed here as before."""
    package_root = str(Path(__file__).resolve().parent.parent.parent)
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run([sys.executable, "-c", _FILL, package_root, str(root), str(cache_dir)],
                       stdin=subprocess.DEVNULL, check=False)


def load_catalog(root: Path | str, cache_dir: Path | str | None = None, *,
                 parse_apart: bool = False, leave_out_bad_images: bool = False) -> Catalog:
    """Load every pack under `root`; raise ContentError listing every problem if any.

    With `cache_dir`, a pack whose exact bytes were loaded before (by this version of the
    loader, schema and limits, on this Python) is taken from the cache there instead of being
    parsed and validated again (bot/content/cache.py); a pack with errors never is. Without
    it, every pack is parsed and validated. `parse_apart` (with a usable `cache_dir`): the
    packs not cached yet are parsed by a child process that stores them (what `quizbot run`
    does, to keep its own memory small), then everything is read from the cache.
    `leave_out_bad_images` (`quizbot run`): an image that cannot be used is logged and left
    out of its question instead of refusing its pack (media.LEAVE_OUT).
    """
    root = Path(root)
    if not root.exists():
        raise ContentError([Problem(str(root), 0, "no such file or directory")])
    try:
        files = quiz_files(root)
    except OSError as exc:
        message = f"cannot list the directory: {exc.strerror or type(exc).__name__}"
        raise ContentError([Problem(str(root), 0, message)]) from None
    if not files:
        raise ContentError([Problem(str(root), 0, "no quiz files (*.yaml) found")])
    cache = ContentCache.at(Path(cache_dir)) if cache_dir is not None else None
    if (parse_apart and cache is not None and cache.usable and cache.may_write()
            and _missing(files, cache)):
        assert cache_dir is not None
        _fill_cache_apart(root, Path(cache_dir))
    token = media.LEAVE_OUT.set(leave_out_bad_images)
    try:
        with _gc_paused():
            if cache is None:
                loaded = [_load(path) for path in files]
            else:
                loaded = [_load(path, cache, read)
                          for path, read in zip(files, _prefetched(files, cache), strict=True)]
    finally:
        media.LEAVE_OUT.reset(token)
    if cache is not None:
        cache.done()
    problems = [p for result in loaded for p in result.problems]
    for problem in problems:
        if problem.message.endswith(media.LEFT_OUT):
            log.warning("%s", problem)
    quiz_places: dict[str, list[tuple[str, int]]] = defaultdict(list)
    question_places: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for result in loaded:
        if result.quiz_id:
            quiz_places[result.quiz_id[0]].append((result.name, result.quiz_id[1]))
        for question_id, line in result.question_ids:
            question_places[question_id].append((result.name, line))
    problems += _used_twice("quiz", quiz_places)
    problems += _used_twice("question", question_places)
    if has_errors(problems):
        raise ContentError(problems)
    catalog = Catalog(warnings=sorted(problems, key=order))
    for result in loaded:
        assert result.quiz is not None  # no errors means every file validated
        catalog.quizzes[result.quiz.id] = result.quiz
    return catalog
