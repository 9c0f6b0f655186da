"""Question banks in and out: Aiken, GIFT and Moodle XML read into packs (bank.py), GIFT,
Moodle XML and Anki decks written from the catalog (docs/formats.md)."""

from __future__ import annotations

from pathlib import Path

from bot.content.formats import aiken, gift, moodle_xml
from bot.content.formats.bank import BankImportError, Reader, import_bank
from bot.content.pack_writer import Imported, RowProblem

READERS: dict[str, Reader] = {"aiken": aiken.read, "gift": gift.read, "moodle-xml": moodle_xml.read}

__all__ = ["READERS", "BankImportError", "import_file"]


def import_file(
    format_name: str, path: Path, out: Path, language: str = "en", force: bool = False
) -> tuple[list[Imported], list[RowProblem]]:
    """The packs a question bank in `format_name` makes, and its warnings (BankImportError
    with every problem if any is an error; nothing is written here)."""
    return import_bank(READERS[format_name], format_name, path, out, language, force)
