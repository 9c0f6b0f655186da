"""The `quizbot` command: run the bots, play in the terminal, inspect boards, check content."""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import overload

from bot import __version__, cli_privacy, cli_reports, health, logs
from bot.adapters import ConnectionLost, CredentialsRejected
from bot.adapters.console import CHAT, ConsoleQuiz, command, console_person, quiet_logs
from bot.app import (
    Exit,
    catalog_size,
    configured_adapters,
    exit_for,
    open_service,
    run_adapters,
    serve_dashboard,
)
from bot.content import ContentError, load_catalog
from bot.content.items import LOCALES
from bot.content.loader import quiz_files  # the files load_catalog reads
from bot.content.media import BadImage
from bot.content.problems import Problem, has_errors
from bot.core import render
from bot.core.item_stats import analyse
from bot.core.models import Chat, Period
from bot.core.ports import Storage, StorageError
from bot.i18n import translator
from bot.reports import Scope, chart_png, report_text
from bot.settings import Settings, SettingsError, load_settings
from bot.storage import DatabaseUrl, describe, migrate_database, storage_for

# The content formats (with the YAML parsers and genanki), backups and `db copy` (asyncpg)
# are imported by the commands that use them: `quizbot run` keeps none of them in memory.

# Without a terminal there is nobody to take the console quiz: a deployment that forgot its
# token must fail visibly instead of exiting 0.
NO_TOKEN_NO_TERMINAL = (
    "quizbot: configuration error: neither TELEGRAM_BOT_TOKEN nor DISCORD_BOT_TOKEN is set "
    "(see .env.example); the console quiz needs a terminal"
)


# the operator's messages are English; their plurals go through the catalog like the chats'
EN = translator("en")

LIMIT_RANGE = range(1, 101)
WHOLE_BOARD = 2**62  # --limit all: more rows than any board has (a SQL LIMIT)


class _Later(Sequence[str]):
    """An argument's choices, listed by a module imported when they are first looked at
    (parsing that argument, its --help), not by every command."""

    def __init__(self, first: list[str], rest: Callable[[], Iterable[str]]) -> None:
        self._first = first
        self._rest = rest
        self._all: list[str] | None = None

    def _items(self) -> list[str]:
        if self._all is None:
            self._all = [*self._first, *self._rest()]
        return self._all

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self._items()[index]

    def __len__(self) -> int:
        return len(self._items())


def _export_formats() -> Iterable[str]:
    from bot.content.formats.export import FORMATS

    return FORMATS


def _import_formats() -> Iterable[str]:
    from bot.content.formats import READERS

    return READERS


class _Default(int):
    """--limit's default, told apart from an explicit `--limit 10`: --csv prints the whole
    board unless --limit is given."""


DEFAULT_LIMIT = _Default(10)
CSV_COLUMNS = ("rank", "name", "person_key", "correct", "answered", "time_ms", "day_streak")


def _limit(text: str) -> int:
    """argparse type for --limit: a board of 1 to 100 rows, or all of it."""
    if text.strip().lower() == "all":
        return WHOLE_BOARD
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value not in LIMIT_RANGE:
        raise argparse.ArgumentTypeError(
            f"must be a whole number from {LIMIT_RANGE.start} to {LIMIT_RANGE.stop - 1}, "
            "or all"
        )
    return value


class ChatNotFound(Exception):
    """--chat names no chat, or a bare id several platforms have: the message says which."""


async def chat_key(storage: Storage, text: str | None) -> str | None:
    """--chat as a chat key: a key (`tg:-100123`) as it is; a bare platform id (`-100123`)
    the one chat that has it, else ChatNotFound naming the keys to choose from."""
    if text is None or ":" in text:
        return text
    text = text.strip()
    known = [key for key, _ in await storage.chats()]
    if text in known:  # a key without a platform prefix, such as the console's
        return text
    keys = [key for key in known if key.partition(":")[2] == text]
    if len(keys) == 1:
        return keys[0]
    if not keys:
        raise ChatNotFound(f"no chat has the id {text} (quizbot chats lists the chat keys)")
    raise ChatNotFound(f"several chats have the id {text}: give one of {', '.join(keys)}")


CHAT_HELP = ("a chat key such as tg:-100123, or its id alone (-100123) when one chat has it; "
             "quizbot chats lists them (default: all chats)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="quizbot", description=__doc__)
    parser.add_argument("--version", action="version", version=f"quizbot {__version__}")
    # not required: `quizbot` alone prints this help instead of an argparse error
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser(
        "run", help="start every configured bot (with no token, the console quiz in a terminal)"
    )
    run.add_argument("--quiz", help="console quiz: quiz id (default: resume, or choose)")
    run.add_argument("--lang", choices=LOCALES, help="console quiz: language")
    run.add_argument("--name", help="console quiz: player name (default: your login name)")

    check = sub.add_parser(
        "health", help="exit 0 if the running bot is alive and its database usable, else 1"
    )
    check.add_argument("--database-only", action="store_true",
                       help="only check the database (for a bot that is not running)")
    check.add_argument("--instance",
                       help="the process whose heartbeat must be fresh (default: "
                            "QUIZBOT_INSTANCE; unset: any process on this machine)")

    play = sub.add_parser("play", help="take a quiz in the terminal")
    play.add_argument("--quiz", help="quiz id (default: resume, or choose from a list)")
    play.add_argument("--lang", choices=LOCALES, help="language of questions and messages")
    play.add_argument("--name", help="player name (default: your login name)")

    board = sub.add_parser("leaderboard", help="print the leaderboard")
    board.add_argument(
        "--period",
        choices=[p.value for p in Period],
        default="all",
        help="today, this week (7 UTC days) or all time (default: %(default)s)",
    )
    board.add_argument("--chat", help=CHAT_HELP)
    board.add_argument(
        "--limit", type=_limit, default=DEFAULT_LIMIT,
        help="rows to show, 1 to 100, or all (default: 10; with --csv: all)",
    )
    board.add_argument("--csv", action="store_true",
                       help="print the board as CSV (" + ", ".join(CSV_COLUMNS) + ")")
    board.add_argument("--lang", choices=LOCALES, help="language of the board")
    board.add_argument("--name", help="whose rank to show (default: your login name)")

    sub.add_parser("chats", help="list the chats the bot has posted in: their keys (for "
                   "--chat) and names")

    dashboard = sub.add_parser(
        "dashboard", help="print a signed link to a chat's web dashboard, as /dashboard gives "
        "its admins (the operator's way in, e.g. to the console quiz's chat)")
    dashboard.add_argument("--chat", default=CHAT.key,
                           help=f"{CHAT_HELP.removesuffix(' (default: all chats)')} (default: "
                           "the console quiz's chat)")
    dashboard.add_argument("--lang", choices=LOCALES, default="en",
                           help="the pages' language until switched on them (default: en)")
    dashboard.add_argument("--revoke", action="store_true",
                           help="instead, end every link and session of the chat (as "
                           "/dashboard revoke)")

    stats = sub.add_parser("stats", help="print personal stats")
    stats.add_argument("--name", help="player name (default: your login name)")
    stats.add_argument("--lang", choices=LOCALES, help="language of the stats")

    content = sub.add_parser("content", help="validate or export quiz packs")
    csub = content.add_subparsers(dest="action", metavar="ACTION")
    pack_help = "a pack file or a directory of *.yaml packs (default: QUIZBOT_CONTENT_DIR)"
    validate = csub.add_parser(  # always for real: the content cache is neither read nor written
        "validate", help="check packs against the schema and limits (every pack parsed; the "
        "content cache is not used)")
    validate.add_argument("path", nargs="?", type=Path, help=pack_help)
    validate.add_argument(
        "--strict", action="store_true",
        help="treat warnings (answer cues, glossary, missing languages) as errors")
    cues = csub.add_parser(
        "cues", help="print what a reader who ignores the subject scores with each strategy "
        "(longest, shortest, middle value, …) against chance, per language")
    cues.add_argument("path", nargs="?", type=Path, help=pack_help)
    claims = csub.add_parser(
        "claims", help="list the packs' version-sensitive claims by library, with their "
        "sources, to recheck when a library releases")
    claims.add_argument("path", nargs="?", type=Path, help=pack_help)
    export = csub.add_parser(
        "export", help="print all quizzes as JSON, or write them as a question bank (GIFT, "
        "Moodle XML) or an Anki deck (docs/formats.md)")
    export.add_argument(
        "--format", choices=_Later(["json"], _export_formats), default="json",
        metavar="FORMAT", help="output format: %(choices)s (default: %(default)s)",
    )
    export.add_argument("path", nargs="?", type=Path, help=pack_help)
    export.add_argument("--lang", choices=LOCALES,
                        help="gift, moodle-xml: the language written (default: en); anki: "
                        "one deck in this language (default: a deck per language)")
    export.add_argument("--quiz", metavar="ID", help="only this quiz (default: every quiz)")
    export.add_argument("--out", type=Path, metavar="PATH",
                        help="the file to write (needed for anki; gift and moodle-xml go to "
                        "stdout without it)")
    export.add_argument(
        "--authored", type=Path, metavar="DIR",
        help="instead: write the packs published in chats (stored in QUIZBOT_DATABASE) as "
        "YAML files into DIR",
    )
    importer = csub.add_parser(
        "import", help="write validated packs from a spreadsheet (docs/csv-format.md) or a "
        "question bank: Aiken, GIFT, Moodle XML (docs/formats.md)"
    )
    importer.add_argument("format", choices=_Later(["csv"], _import_formats), metavar="FORMAT",
                          help="the file's format: %(choices)s")
    importer.add_argument("file", type=Path, help="the file: a CSV sheet (one row per "
                          "question) or a question bank")
    importer.add_argument(
        "--out", type=Path, help="where the packs go (default: QUIZBOT_CONTENT_DIR)"
    )
    importer.add_argument("--force", action="store_true",
                          help="replace packs that this import did not write")
    importer.add_argument("--lang", choices=LOCALES,
                          help="a question bank's language (default: en); a spreadsheet's "
                          "columns name their own")
    cli_reports.add_parser(csub)

    report = sub.add_parser(
        "report", help="item analysis: which questions work (share per option, discrimination)"
    )
    report.add_argument("--chat", help=CHAT_HELP)
    report.add_argument("--quiz", help="a quiz id (default: every quiz with answers)")
    report.add_argument("--png", type=Path, metavar="FILE",
                        help="also draw the shares per option as a PNG chart")

    database = sub.add_parser("db", help="migrate, back up or restore the database, or copy a "
                              "community to another")
    dsub = database.add_subparsers(dest="action", metavar="ACTION")
    dsub.add_parser("migrate", help="bring QUIZBOT_DATABASE to this version's schema")
    backup = dsub.add_parser(
        "backup", help="write a checked backup of QUIZBOT_DATABASE to FILE while the bot runs "
        "(SQLite: online backup; PostgreSQL: pg_dump, else a logical copy into a SQLite file)")
    backup.add_argument("file", type=Path, help="the backup file (replaced only if it is a "
                        "quizbot backup itself)")
    backup.add_argument("--logical", action="store_true",
                        help="PostgreSQL: a SQLite copy from one snapshot, even where pg_dump "
                        "is installed")
    restore = dsub.add_parser(
        "restore", help="check FILE (integrity, a quizbot database of a schema this version "
        "reads, row counts), then replace QUIZBOT_DATABASE with it; stop the bot first")
    restore.add_argument("file", type=Path, help="a file `quizbot db backup` wrote")
    copy = dsub.add_parser(
        "copy", help="copy a community between SQLite and PostgreSQL (verified, resumable); "
        "a source that is missing or not a quizbot database is refused and never written; "
        "a source a running bot writes to (its heartbeat is fresh, or other sessions use the "
        "PostgreSQL database) is refused, not snapshotted: stop the bot first"
    )
    for name in ("source", "destination"):
        copy.add_argument(name, type=_database_arg, help="a SQLite file or a postgresql:// URL")
    copy.add_argument("--force", action="store_true",
                      help="empty a destination that already holds a community first")
    copy.add_argument("--batch-size", type=int, default=5000, help="rows per transaction")
    copy.add_argument("--live-ok", action="store_true",
                      help="copy a source that is being written to anyway (what is written "
                      "during the copy may be missing, or fail the verification)")

    cli_privacy.add_parser(sub)
    return parser


def _database_arg(text: str) -> Path | DatabaseUrl:
    """argparse type: a path or a postgresql:// URL (an error never quotes it: a password)."""
    if "://" not in text:
        return Path(text)
    try:
        return DatabaseUrl(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"the URL {exc}") from None


async def _db(settings: Settings, args: argparse.Namespace) -> int:
    from bot.storage.backup import (
        BackupError,
        backup_database,
        restore_database,
        stop_on_signals,
        stopped_line,
    )
    from bot.storage.copy import copy_database

    if args.action == "migrate":
        print(await migrate_database(settings.quizbot_database))
        return 0
    if args.action in ("backup", "restore"):
        stopped = stop_on_signals()
        try:
            if args.action == "backup":
                print(await backup_database(settings.quizbot_database, args.file,
                                            logical=args.logical))
            else:
                print(await restore_database(settings.quizbot_database, args.file))
            return 0
        except BackupError as exc:  # a refusal, not a broken database: exit 1
            print(f"quizbot: {exc}", file=sys.stderr)
            return 1
        except asyncio.CancelledError:
            if not stopped:
                raise
            line = stopped_line(args.action, settings.quizbot_database, stopped[0])
            print(f"quizbot: {line}", file=sys.stderr)
            return 128 + stopped[0]
    report = await copy_database(args.source, args.destination, force=args.force,
                                 batch=max(1, args.batch_size), live_ok=args.live_ok,
                                 on_phase=_copy_phase.append)
    print(f"copied {report.source} to {report.destination}: every table's rows counted on "
          "both sides, equal; boards built")
    return 0


_copy_phase: list[str] = []  # where `db copy` is, for the line a Ctrl-C prints


def _copy_interrupted(args: argparse.Namespace) -> int:
    from bot.storage.copy import interrupted as copy_interrupted

    phase = _copy_phase[-1] if _copy_phase else "checking"
    print(f"\nquizbot: {copy_interrupted(phase, describe(args.destination))}", file=sys.stderr)
    return 130


# the commands that only read a database: on a SQLite file that is not there, opening it would
# create an empty one, and a mistyped QUIZBOT_DATABASE would show empty boards as if all were lost
READS_ONLY = frozenset({"leaderboard", "stats", "report", "chats", "dashboard", "privacy"})


def _missing_database(settings: Settings, args: argparse.Namespace) -> str | None:
    """Why a reading command refuses to run (None: it may), before any file is created."""
    database = settings.quizbot_database
    reads = args.command in READS_ONLY or (args.command == "content" and args.action == "reports")
    if not reads or not isinstance(database, Path) or database.exists():
        return None
    return (f"quizbot: no database at {database} (QUIZBOT_DATABASE): check the path; "
            "`quizbot run` creates one")


def _reader_gone() -> int:
    """stdout's reader left (`quizbot content export | head`): stop quietly.

    Python would report the broken pipe again when it flushes stdout at exit, so stdout is
    pointed at /dev/null first.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 0


def _content_validate(settings: Settings, path: Path | None, strict: bool = False) -> int:
    from bot.content import cues, glossary, validate

    target = path or settings.quizbot_content_dir
    catalog, problems = validate.load_bank(Path(target), strict)
    if catalog is None:
        for problem in sorted(problems, key=lambda p: (p.file, p.line)):
            print(problem, file=sys.stderr)
        errors = sum(not p.warning for p in problems)
        print(EN.ngettext("{n} error: nothing loaded from {target}",
                          "{n} errors: nothing loaded from {target}", errors, target=target),
              file=sys.stderr)
        return 1
    problems += glossary.check(Path(target), quiz_files(Path(target)))
    scores = cues.bank_scores(catalog)
    problems += [Problem(str(target), 0, cues.failure(s), True) for s in scores if s.failed]
    if strict:  # CI: a cue or a glossary slip fails the build like an error
        problems = [Problem(p.file, p.line, p.message) for p in problems]
    for problem in sorted(problems, key=lambda p: (p.file, p.line)):
        print(problem, file=sys.stderr)
    if any(s.failed for s in scores):
        print(cues.bank_report(scores), file=sys.stderr)
    if has_errors(problems):
        errors = sum(not p.warning for p in problems)
        print(f"{errors} errors{' (--strict: warnings count)' if strict else ''} in {target}",
              file=sys.stderr)
        return 1
    print(f"ok: {catalog_size(catalog)} in {target}")
    return 0


def _content_bank(settings: Settings, action: str, path: Path | None) -> int:
    """`content cues` and `content claims`: a report on a bank that loads."""
    from bot.content import claims, cues, validate

    target = path or settings.quizbot_content_dir
    catalog, problems = validate.load_bank(Path(target))
    if catalog is None:
        for problem in problems:
            print(problem, file=sys.stderr)
        print(f"quizbot: {target} does not load (quizbot content validate shows why)",
              file=sys.stderr)
        return 1
    print(cues.bank_report(cues.bank_scores(catalog)) if action == "cues"
          else claims.report(catalog))
    return 0


def _content_export(settings: Settings, args: argparse.Namespace) -> int:
    try:
        catalog = load_catalog(args.path or settings.quizbot_content_dir,
                               settings.quizbot_cache_dir)
    except ContentError as exc:
        print(exc, file=sys.stderr)
        return 1
    quizzes = list(catalog)
    if args.quiz is not None:
        quizzes = [q for q in quizzes if q.id == args.quiz]
        if not quizzes:
            print(f"quizbot: no quiz {args.quiz!r} in {args.path or settings.quizbot_content_dir}",
                  file=sys.stderr)
            return 1
    if args.format == "json":
        json.dump([q.export() for q in quizzes], sys.stdout, ensure_ascii=False, indent=2)
        print()
        return 0
    if args.format == "anki" and args.out is None:
        print("quizbot: an Anki deck is a file: give --out FILE.apkg", file=sys.stderr)
        return 2
    from bot.content.formats.export import export as export_bank
    from bot.content.formats.export import replace_file

    languages = [args.lang] if args.lang else ["en"] if args.format != "anki" else list(LOCALES)
    data = export_bank(quizzes, args.format, languages)
    if args.out is None:
        sys.stdout.write(data.decode("utf-8"))
        return 0
    try:
        replace_file(args.out, data)
    except OSError as exc:
        print(f"quizbot: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    questions = EN.ngettext("{n} question", "{n} questions", sum(len(q.questions)
                                                                  for q in quizzes))
    print(f"wrote {args.out}: {len(quizzes)} quizzes, {questions}, in "
          f"{', '.join(languages)} ({args.format})")
    return 0


async def _export_authored(settings: Settings, out: Path) -> int:
    """`content export --authored DIR`: the published packs, each as DIR/<id>.yaml, and
    their pictures as DIR/images/<id>-<n>.png|jpg."""
    from bot.content.pack_writer import Imported, write

    storage = storage_for(settings.quizbot_database)
    try:
        await storage.open()
    except StorageError as exc:
        print(f"quizbot: {exc}", file=sys.stderr)
        return Exit.STORAGE
    try:
        packs = await storage.authored_packs()
    finally:
        await storage.close()
    try:
        # each with its pictures beside it, where its YAML names them
        written = write([Imported(p.quiz_id, 0, p.text, p.files) for p in packs], out)
    except (OSError, BadImage) as exc:  # BadImage: a stored path leading outside DIR
        print(f"quizbot: cannot write to {out}: {getattr(exc, 'strerror', None) or exc}",
              file=sys.stderr)
        return 1
    for pack, path in zip(packs, written, strict=True):
        withdrawn = " (withdrawn with /unpublish)" if pack.withdrawn_at is not None else ""
        print(f"wrote {path}: quiz {pack.quiz_id}, published by {pack.author_key}{withdrawn}")
    if not packs:
        print(f"no pack was published in a chat (database {settings.quizbot_database})")
    return 0


def _content_import(settings: Settings, args: argparse.Namespace) -> int:
    from bot.content.csv_import import CsvImportError, import_csv
    from bot.content.formats import import_file
    from bot.content.pack_writer import write

    out = args.out or settings.quizbot_content_dir
    if args.format == "csv" and args.lang is not None:
        print("quizbot: --lang is for question banks; a spreadsheet's columns name their "
              "languages (prompt_bn, …)", file=sys.stderr)
        return 2
    try:
        if args.format == "csv":
            packs, warnings = import_csv(args.file, out, force=args.force)
        else:
            packs, warnings = import_file(args.format, args.file, out, args.lang or "en",
                                          force=args.force)
    except CsvImportError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        errors = sum(not p.warning for p in exc.problems)
        print(EN.ngettext("{n} error: nothing written to {out}",
                          "{n} errors: nothing written to {out}", errors, out=out),
              file=sys.stderr)
        return 1
    for problem in warnings:
        print(problem, file=sys.stderr)
    try:
        written = write(packs, out)
    except OSError as exc:
        print(f"quizbot: cannot write to {out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    for pack, path in zip(packs, written, strict=True):
        questions = EN.ngettext("{n} question", "{n} questions", pack.questions)
        print(f"wrote {path}: quiz {pack.quiz_id}, {questions}")
    return 0


async def _report(settings: Settings, args: argparse.Namespace) -> int:
    async with open_service(settings) as service:
        if args.quiz is not None and service.catalog.get(args.quiz) is None:
            print(f"quizbot: no quiz {args.quiz!r} in {settings.quizbot_content_dir}",
                  file=sys.stderr)
            return 1
        args.chat = await chat_key(service.storage, args.chat)
        responses = await service.storage.item_responses(args.quiz, args.chat)
        # in a worker thread, as /analysis: the event loop (the storage's tasks) stays free
        reports = await asyncio.to_thread(analyse, service.catalog, responses, args.quiz)
    scope = Scope(args.chat, args.quiz)
    print(report_text(reports, scope))
    if args.png is not None:
        try:
            args.png.write_bytes(chart_png(reports, f"Item analysis ({scope})"))
        except OSError as exc:
            print(f"quizbot: cannot write {args.png}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        print(f"chart: {args.png}")
    return 0


async def _run(settings: Settings, args: argparse.Namespace) -> int:
    if not settings.secrets() and not sys.stdin.isatty():
        print(NO_TOKEN_NO_TERMINAL, file=sys.stderr)
        return Exit.CONFIG
    if not settings.secrets():
        quiet_logs()  # the console quiz's terminal
    async with open_service(settings) as service:
        adapters = configured_adapters(service, settings)
        if adapters:
            return await run_adapters(service, adapters, settings)
        # the dashboard beside the console quiz (when it is on), so that it can be tried
        # with no token: the console chat's link goes to stderr, beside the banner
        dashboard = await serve_dashboard(service, settings)
        try:
            person = console_person(args.name)
            if dashboard is not None:
                locale = args.lang or await service.locales.for_person(person, CHAT)
                await service.storage.upsert_chat(CHAT.key, CHAT.title)
                link = await service.dashboard.link(CHAT, allowed=True, locale=locale)
                print(translator(locale).gettext("The console quiz's dashboard: {link}",
                                                 link=link), file=sys.stderr, flush=True)
            return await ConsoleQuiz(service, person, args.lang, banner=True).play(args.quiz)
        finally:
            if dashboard is not None:
                await dashboard.cleanup()


DASHBOARD_OFF = ("quizbot: the dashboard is off: set QUIZBOT_WEB_LISTEN, QUIZBOT_WEB_URL and "
                 "QUIZBOT_WEB_SECRET (docs/dashboard.md)")


async def _dashboard(settings: Settings, args: argparse.Namespace) -> int:
    """`quizbot dashboard`: a chat's signed link (the operator needs no chat admin's rights:
    they hold the database), or every link and session of the chat ended."""
    if settings.web is None:
        print(DASHBOARD_OFF, file=sys.stderr)
        return Exit.CONFIG
    async with open_service(settings) as service:
        key = await chat_key(service.storage, args.chat)
        assert key is not None  # --chat has a default
        if await service.storage.chat_title(key) is None:
            raise ChatNotFound(f"no chat {key} (quizbot chats lists the chat keys)")
        chat = Chat(key)
        if args.revoke:
            await service.dashboard.revoke(chat, allowed=True)
            print(f"every dashboard link and session of {key} has ended")
            return 0
        print(await service.dashboard.link(chat, allowed=True, locale=args.lang))
    print("It opens the chat's pages for 24 hours, wherever a `quizbot run` with "
          "QUIZBOT_WEB_LISTEN serves them.", file=sys.stderr)
    return 0


async def _play(settings: Settings, args: argparse.Namespace) -> int:
    async with open_service(settings) as service:
        return await ConsoleQuiz(service, console_person(args.name), args.lang).play(args.quiz)


async def _leaderboard(settings: Settings, args: argparse.Namespace) -> int:
    limit = WHOLE_BOARD if args.csv and args.limit is DEFAULT_LIMIT else int(args.limit)
    async with open_service(settings) as service:
        person = console_person(args.name)
        board = await service.boards.leaderboard(
            await chat_key(service.storage, args.chat), args.period, person_key=person.key,
            limit=limit,
        )
        if args.csv:
            out = csv.writer(sys.stdout, lineterminator="\n")
            out.writerow(CSV_COLUMNS)
            out.writerows((r.rank, r.name, r.person_key, r.correct, r.answered, r.time_ms,
                           r.day_streak) for r in board.rows)
            return 0
        locale = args.lang or await service.locales.for_person(person, CHAT)
        print(render.leaderboard_text(board, translator(locale)))
    return 0


async def _chats(settings: Settings, args: argparse.Namespace) -> int:
    """`quizbot chats`: one line a chat, its key and its name (what --chat takes)."""
    storage = storage_for(settings.quizbot_database)
    await storage.open()
    try:
        chats = await storage.chats()
    finally:
        await storage.close()
    width = max((len(key) for key, _ in chats), default=0)
    for key, title in chats:
        print(f"{key:<{width}}  {title}".rstrip())
    if not chats:
        print(f"no chats yet (database {settings.quizbot_database})")
    return 0


async def _stats(settings: Settings, args: argparse.Namespace) -> int:
    async with open_service(settings) as service:
        person = console_person(args.name)
        locale = args.lang or await service.locales.for_person(person, CHAT)
        stats = await service.boards.stats(person, locale)
        print(render.stats_text(stats, translator(locale), start=command("play")))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None or (
        args.command in ("content", "db", "privacy") and args.action is None
    ):
        # a bare command is a request for help, not a mistake
        parser.parse_args([*([args.command] if args.command else []), "--help"])
    try:
        settings = load_settings()
    except SettingsError as exc:
        for line in exc.lines:  # one line per bad variable
            print(f"quizbot: configuration error: {line}", file=sys.stderr)
        return 2
    # the terminal commands keep stdout for the quiz; only problems are logged there
    level = settings.quizbot_log_level if args.command == "run" else "WARNING"
    redactor = logs.setup(level, settings.secrets())
    if args.command == "content" and args.action != "reports":
        try:
            if args.action == "validate":
                return _content_validate(settings, args.path, args.strict)
            if args.action == "import":
                return _content_import(settings, args)
            if args.action in ("cues", "claims"):
                return _content_bank(settings, args.action, args.path)
            if args.authored is not None:
                return int(asyncio.run(_export_authored(settings, args.authored)))
            return _content_export(settings, args)
        except BrokenPipeError:
            return _reader_gone()
    if args.command == "health":
        return _health(settings, args)
    commands = {"run": _run, "play": _play, "leaderboard": _leaderboard, "stats": _stats,
                "report": _report, "db": _db, "content": cli_reports.run, "chats": _chats,
                "dashboard": _dashboard,
                "privacy": cli_privacy.run}
    handler = commands[args.command]
    missing = _missing_database(settings, args)
    if missing is not None:
        print(missing, file=sys.stderr)
        return Exit.STORAGE
    try:
        code = int(asyncio.run(handler(settings, args)))
        sys.stdout.flush()  # here, not at exit, where a reader gone would be a traceback
        return code
    except BrokenPipeError:  # `quizbot report | head`
        return _reader_gone()
    except ContentError as exc:
        print(exc, file=sys.stderr)
        print(f"quizbot: the quiz content in {settings.quizbot_content_dir} is invalid; "
              "nothing was loaded (quizbot content validate shows every problem)",
              file=sys.stderr)
        return Exit.CONTENT
    except (CredentialsRejected, ConnectionLost, StorageError) as exc:
        # one line that says what to fix; a library's text may quote the token
        print(f"quizbot: {redactor.redact(str(exc))}", file=sys.stderr)
        return exit_for(exc) or 1
    except ChatNotFound as exc:
        print(f"quizbot: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if args.command == "db" and args.action == "copy":
            return _copy_interrupted(args)
        if args.command == "db":  # a transaction or a rename: done whole, or again
            print("\nquizbot: interrupted; run the same command again: it finishes or redoes "
                  "what was stopped", file=sys.stderr)
            return 130
        print("\nProgress saved. Bye!", file=sys.stderr)
        return 130


def _health(settings: Settings, args: argparse.Namespace) -> int:
    """One verdict line, then each process's heartbeat on this machine, one line each."""
    instance = args.instance or settings.quizbot_instance
    now = time.time()
    problem = health.check(settings.quizbot_database, running=not args.database_only,
                           now=now, instance=instance)
    print(f"unhealthy: {problem}" if problem else "ok",
          file=sys.stderr if problem else sys.stdout)
    if not args.database_only:
        for heartbeat in health.heartbeats(settings.quizbot_database):
            print(heartbeat.line(now))
    return 1 if problem else 0


if __name__ == "__main__":
    sys.exit(main())

