"""`quizbot db copy …` that signals itself as one of its phases begins (PHASES in
bot/storage/copy.py): a kill -9 or a Ctrl-C at a known point of a real copy.

    python -m tests.interrupted_copy PHASE SIGKILL|SIGINT db copy SOURCE DESTINATION …"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from bot import cli
from bot.storage import copy


def main() -> int:
    target, sig, argv = sys.argv[1], getattr(signal, sys.argv[2]), sys.argv[3:]
    real = copy.copy_database

    async def interrupted(*args: Any, on_phase: Callable[[str], None] | None = None,
                          **options: Any) -> copy.Report:
        def phase(name: str) -> None:
            if on_phase is not None:
                on_phase(name)
            if name == target:
                os.kill(os.getpid(), sig)

        return await real(*args, on_phase=phase, **options)

    copy.copy_database = interrupted  # what `db copy` imports when it runs
    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
