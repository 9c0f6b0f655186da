"""`quizbot db backup|restore …` that sends itself a signal as its copy begins: a kill -9, a
SIGTERM or a Ctrl-C at a known point of a real backup or restore.

    python -m tests.interrupted_backup SIGKILL|SIGTERM|SIGINT db backup FILE

SQLite: at the copy's first step (one page a step, so a small database has many). The
process then waits for the command to ask its copy to stop, which is what a signal must lead
to. PostgreSQL (pg_dump): as pg_dump starts."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable

from bot import cli
from bot.storage import backup_files
from bot.storage.postgres import backup as pg_backup
from bot.storage.sqlite import backup as sqlite_backup


def main() -> int:
    sig, argv = getattr(signal, sys.argv[1]), sys.argv[2:]
    sent = threading.Event()

    def checker(stop: threading.Event) -> Callable[..., None]:
        real = backup_files.checker(stop)

        def progress(*args: object) -> None:
            if not sent.is_set():
                sent.set()
                os.kill(os.getpid(), sig)
                stop.wait(60)  # until the command has taken the signal in
            real(*args)
        return progress

    real_run = pg_backup._run

    async def run(args: list[str], env: dict[str, str]) -> tuple[int, str]:
        if not sent.is_set():
            sent.set()
            os.kill(os.getpid(), sig)
        return await real_run(args, env)

    sqlite_backup.STEP = 1
    vars(sqlite_backup)["checker"] = checker  # the name copy_pages calls
    pg_backup._run = run
    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
