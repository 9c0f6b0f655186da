"""A person's data, seen and deleted, in the in-memory store: what bot/storage/privacy.py does
in SQL (see there for why answers are removed, not anonymised). Boards are summed from the
answers when read, so removing the answers is all a board needs."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.storage.memory.storage import MemoryDatabase


def person_data(db: MemoryDatabase, key: str) -> dict[str, Any]:
    person = db.persons.get(key)
    answers = sorted((a for a in db.answers.values() if a.person_key == key),
                     key=lambda a: (a.answered_at, a.id))
    reminder = db.reminders.get(key)
    draft = db.drafts.get(key)
    return {
        "person": {
            "key": key,
            "name": None if person is None else person.name,
            "language": None if person is None else person.locale,
        },
        "answers": [
            {"quiz": a.quiz_id, "question": a.question_id, "option": a.option,
             "correct": a.correct, "answered_at": _iso(a.answered_at),
             "elapsed_ms": a.elapsed_ms, "chat": a.chat_key,
             "chat_title": chat.title if (chat := db.chats.get(a.chat_key)) else None}
            for a in answers
        ],
        "review_reminder": None if reminder is None else {
            "time": reminder.at.strftime("%H:%M"), "zone": reminder.tz,
            "updated_at": _iso(reminder.updated_at),
            "sent_on": sorted(day.isoformat() for who, day in db.reminder_days if who == key),
        },
        "quiz_runs": [
            {"quiz": r.quiz_id, "chat": r.chat_key, "started_at": _iso(r.started_at),
             "finished_at": _iso(r.finished_at)}
            for r in sorted(db.runs.values(), key=lambda r: (r.started_at, r.id))
            if r.person_key == key
        ],
        "problem_reports": [
            {"quiz": r.quiz_id, "question": r.question_id, "chat": r.chat_key, "text": r.text,
             "created_at": _iso(r.created_at), "resolved_at": _iso(r.resolved_at),
             "resolution": r.resolution}
            for r in sorted(db.reports.values(), key=lambda r: (r.created_at, r.id))
            if r.person_key == key
        ],
        "draft": None if draft is None else {
            "language": draft.locale, "title": draft.title,
            "created_at": _iso(draft.created_at), "questions": list(draft.questions.values()),
            "photo": None if draft.photo is None else _b64(draft.photo),
        },
        "published_packs": [
            {"quiz": p.quiz_id, "pack": p.text, "published_at": _iso(p.published_at),
             "withdrawn_at": _iso(p.withdrawn_at),
             "pictures": {path: _b64(data) for path, data in sorted(p.files)}}
            for _, p in sorted(db.packs.items()) if p.author_key == key
        ],
    }


def _b64(data: bytes) -> str:
    """A picture in the person's data (JSON): base64."""
    return base64.b64encode(data).decode("ascii")


def delete_person(db: MemoryDatabase, key: str, private_chats: Sequence[str] = ()) -> bool:
    chats = {key, *private_chats}
    runs = {run_id for run_id, run in db.runs.items() if run.person_key == key}
    own = {post_id for post_id, post in db.posts.items()
           if post.chat_key in chats or post.owner_key == key or post.run_id in runs}
    removed = 0

    def drop(mapping: dict[Any, Any], gone: list[Any]) -> None:
        nonlocal removed
        for item in gone:
            del mapping[item]
        removed += len(gone)

    drop(db.answers, [k for k, a in db.answers.items() if a.person_key == key or a.post_id in own])
    drop(db.refs, [ref for ref, post_id in db.refs.items() if post_id in own])
    drop(db.summaries, [post_id for post_id in db.summaries if post_id in own])
    drop(db.dailies, [k for k, d in db.dailies.items() if k[0] in chats or d.post_id in own])
    drop(db.posts, list(own))
    for record in db.rounds.values():
        record.posts = [post_id for post_id in record.posts if post_id not in own]
    drop(db.rounds, [i for i, r in db.rounds.items() if r.chat_key in chats])
    drop(db.schedules, [k for k in db.schedules if k in chats])
    drop(db.settings, [k for k in db.settings if k in chats])
    drop(db.dashboards, [k for k in db.dashboards if k in chats])
    drop(db.runs, [i for i, r in db.runs.items() if r.person_key == key or r.chat_key in chats])
    drop(db.reminders, [k for k in db.reminders if k == key])
    days = {d for d in db.reminder_days if d[0] == key}
    db.reminder_days -= days
    drop(db.reminder_sends, [d for d in db.reminder_sends if d[0] == key])
    removed += len(days)
    drop(db.reports, [i for i, r in db.reports.items()
                      if r.person_key == key or r.chat_key in chats])
    drop(db.drafts, [k for k in db.drafts if k == key])
    removed += db.live.forget(key)
    for quiz_id, pack in list(db.packs.items()):
        if pack.author_key == key:
            db.packs[quiz_id] = dataclasses.replace(pack, author_key="")
            removed += 1
    drop(db.leases, [name for name in db.leases if name.partition(":")[2] in chats])
    drop(db.chats, [k for k in db.chats if k in chats])
    drop(db.persons, [k for k in db.persons if k == key])
    return removed > 0


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()
