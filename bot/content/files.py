"""Reading a file someone else wrote: regular files only, never more than a cap.

Packs and spreadsheets come from pull requests and mounted volumes; cache entries from a
folder others might write. A pipe must not block the reader, and a file growing while it is
read must not be read past the cap.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

CHUNK = 1 << 20


class Unreadable(Exception):
    """Why a file gave no bytes, as a sentence for whoever named the file."""


def read_at_most(fd: int, cap: int) -> bytes:
    """At most `cap` + 1 bytes: more than `cap` means the file is larger than allowed (its
    size may have grown since it was checked)."""
    chunks: list[bytes] = []
    remaining = cap + 1
    while remaining > 0:
        chunk = os.read(fd, min(remaining, CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_regular(path: Path, cap: int, *, too_big: str, what: str) -> bytes:
    """The bytes of a regular file of at most `cap` bytes; Unreadable says why there are
    none (`too_big`: the sentence for a larger file; `what`: "a quiz pack", for the refusal
    of a directory or a pipe)."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise Unreadable(f"cannot open the file: {exc.strerror or type(exc).__name__}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "a pipe, socket or device"
            raise Unreadable(f"not a regular file ({kind}); {what} must be a plain file")
        if info.st_size > cap:
            raise Unreadable(too_big)
        data = read_at_most(fd, cap)
        if len(data) > cap:
            raise Unreadable(too_big)
        return data
    except OSError as exc:
        raise Unreadable(f"cannot read the file: {exc.strerror or type(exc).__name__}") from None
    finally:
        os.close(fd)
