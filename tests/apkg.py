"""Reading an Anki deck (.apkg) back: a zip holding Anki's SQLite collection."""

from __future__ import annotations

import io
import json
import sqlite3
import tempfile
import zipfile
from dataclasses import dataclass
from html import unescape
from pathlib import Path

from bot.content.formats.anki import FIELDS


@dataclass(frozen=True)
class Note:
    guid: str
    fields: dict[str, str]  # field name -> its text (HTML undone)
    tags: str
    deck: str


def notes(data: bytes) -> list[Note]:
    with zipfile.ZipFile(io.BytesIO(data)) as apkg:
        collection = apkg.read("collection.anki2")
    with tempfile.TemporaryDirectory(prefix="apkg-") as tmp:
        path = Path(tmp) / "collection.anki2"
        path.write_bytes(collection)
        db = sqlite3.connect(path)
        try:
            decks = {int(k): v["name"] for k, v in json.loads(
                db.execute("SELECT decks FROM col").fetchone()[0]).items()}
            rows = db.execute(
                "SELECT n.guid, n.flds, n.tags, c.did FROM notes n JOIN cards c ON c.nid = n.id "
                "ORDER BY n.id").fetchall()
        finally:
            db.close()
    return [Note(guid, {name: unescape(value.replace("<br>", "\n"))
                        for name, value in zip(FIELDS, flds.split("\x1f"), strict=True)},
                 tags.strip(), decks[did])
            for guid, flds, tags, did in rows]


def media(data: bytes) -> dict[str, bytes]:
    """The package's media files by the names the notes use."""
    with zipfile.ZipFile(io.BytesIO(data)) as apkg:
        names = json.loads(apkg.read("media"))
        return {name: apkg.read(number) for number, name in names.items()}
