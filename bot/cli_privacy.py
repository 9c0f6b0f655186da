"""`quizbot privacy export|delete --person KEY`: an operator answers a person's request to see
or delete their data (what /mydata does for the person; bot/core/privacy.py). Registered by
bot/cli.py."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from bot.app import open_service
from bot.settings import Settings

# a person key as the adapters make them: "tg:<user id>", "dc:<user id>", "console:<name>"
PERSON_KEY = re.compile(r"^[a-z]+:\S+$")


def _person_key(text: str) -> str:
    if not PERSON_KEY.match(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a person key: it looks like tg:123456789 (Telegram) or "
            "dc:123456789012345678 (Discord); /whoami shows a person theirs")
    return text


def add_parser(sub: Any) -> None:
    privacy = sub.add_parser(
        "privacy", help="a person's stored data: export it as JSON, or delete it everywhere")
    psub = privacy.add_subparsers(dest="action", metavar="ACTION")
    export = psub.add_parser("export", help="print (or write) everything stored about a person")
    delete = psub.add_parser(
        "delete", help="delete a person everywhere: their answers (and board rows), language, "
        "reminder, reports, draft, private chat; packs they published stay, without them")
    for parser in (export, delete):
        parser.add_argument("--person", required=True, type=_person_key, metavar="KEY",
                            help="the person's key, e.g. tg:123456789")
    export.add_argument("--out", type=Path, metavar="FILE", help="write the JSON here")


async def run(settings: Settings, args: argparse.Namespace) -> int:
    async with open_service(settings) as service:
        if args.action == "export":
            data = await service.privacy.export(args.person)
            if args.out is not None:
                args.out.write_bytes(data.content)
                print(f"wrote {args.person}'s data to {args.out}")
            else:
                sys.stdout.write(data.content.decode() + "\n")
            return 0
        deleted = await service.privacy.delete(args.person)
    if not deleted:
        print(f"nothing is stored about {args.person}; nothing was deleted")
        return 1
    print(f"deleted everything stored about {args.person}")
    return 0
