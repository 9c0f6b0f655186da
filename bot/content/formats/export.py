"""`quizbot content export --format gift|moodle-xml|anki`: the catalog as a question bank."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bot.content.formats import anki, gift, moodle_xml
from bot.content.items import Quiz

FORMATS = ("gift", "moodle-xml", "anki")


def export(quizzes: Sequence[Quiz], format_name: str, languages: Sequence[str]) -> bytes:
    """The file's bytes: GIFT and Moodle XML in the first of `languages`, Anki one deck per
    language."""
    if format_name == "gift":
        return gift.dump(quizzes, languages[0]).encode("utf-8")
    if format_name == "moodle-xml":
        return moodle_xml.dump(quizzes, languages[0])
    if format_name == "anki":
        return anki.quiz_package(quizzes, languages)
    raise ValueError(f"unknown format {format_name!r}")


def replace_file(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all (a reader never sees half a deck)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # as open() would create it, not mkstemp's 0600
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)  # reading it means setting it: put it back at once
    os.umask(mask)
    return mask
