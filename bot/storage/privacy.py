"""A person's data, seen and deleted (bot/core/privacy.py), written once for every database
(like ops.py and queries.py).

Deletion removes the person's answers rather than anonymising them: a tombstone key would
still stand on the boards as a nameless row (or the boards would have to learn to skip it),
and the person's answers with their times and chats are what identifies them. Their rows of
the aggregates (scores, totals, week_scores, streaks) are removed with them, which is exactly
what a recount without their answers gives: each row sums one person's answers. Item
analysis, read from the answers when asked, no longer counts them; the aggregates kept by modules
of their own (kept.py: the dashboard's item figures, daily streaks, review cards) forget them.

What belongs to the person alone goes too: their private chats with the bot (on Telegram its
key is the person's; a Discord DM's the adapter names) and their questions, their quiz runs
and the questions shown only to them, their review reminder, their problem reports, their
draft. A pack they published stays (other people answered it) without its author's key.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bot.storage import fsrs_params, kept
from bot.storage.dashboard import FIGURES
from bot.storage.drafts import delete_draft
from bot.storage.sql import Sql, at_or_none

# the questions that were the person's alone: in their runs, or shown to them only; nobody
# else answers these
OWN_POSTS = (
    "SELECT id FROM posts WHERE owner_key = $1"
    " OR run_id IN (SELECT id FROM runs WHERE person_key = $1)"
)
CHAT_POSTS = "SELECT id FROM posts WHERE chat_key = $1"
# a published pack's first line (bot/core/authoring.py), which named its author until 2026-12
OLD_HEADER = "# Written in a chat by {key} (quiz polls, published with /publish)."
NEW_HEADER = "# Written in a chat (quiz polls, published with /publish)."


async def delete_person(db: Sql, key: str, private_chats: Sequence[str] = ()) -> bool:
    """Remove everything stored about the person `key`, and their private chats with the
    bot (on Telegram its key is the person's; a Discord DM's is its channel's); False if
    nothing was stored."""
    # the materializer's position, held until COMMIT: no batch holding these answers is
    # applied meanwhile, so no aggregate row of the person comes back after this
    await db.value(f"SELECT name FROM materialized WHERE name = 'scores'{db.for_update}")
    chats = list(dict.fromkeys((key, *private_chats)))
    removed = await db.run("DELETE FROM answers WHERE person_key = $1", key)
    # assignments (bot/core/assignments.py): their runs of one and its reminder to them, before
    # their runs go; one they assigned stays the chat's, without who assigned it
    for table in ("assignment_runs", "assignment_reminders"):
        removed += await db.run(f"DELETE FROM {table} WHERE person_key = $1", key)
    await db.run("UPDATE assignments SET created_by = NULL WHERE created_by = $1", key)
    # the record that their reminder went out (core/delivery.py), named with their key
    # (core/assignments.py reminder_name)
    removed += await db.run(
        "DELETE FROM delivery_steps WHERE name LIKE 'assignment-reminder:%:' || $1", key)
    removed += await _delete_posts(db, OWN_POSTS, key)
    for chat in chats:
        removed += await _delete_posts(db, CHAT_POSTS, chat)
        removed += await db.run(
            "DELETE FROM round_posts WHERE round_id IN"
            " (SELECT id FROM rounds WHERE chat_key = $1)", chat)
        for table in ("rounds", "schedules", "chat_settings", "daily_posts",
                      "dashboard_access"):
            removed += await db.run(f"DELETE FROM {table} WHERE chat_key = $1", chat)
        removed += await db.run("DELETE FROM runs WHERE chat_key = $1", chat)
    removed += await db.run("DELETE FROM runs WHERE person_key = $1", key)
    for table in ("schedules", "chat_settings"):  # an admin's change of a group's keeps
        removed += await db.run(  # the change, not who made it
            f"UPDATE {table} SET updated_by = NULL WHERE updated_by = $1", key)
    await kept.forget_person(db, key)
    await fsrs_params.forget_person(db, key)  # their fitted FSRS parameters
    for figures, columns, source in FIGURES:  # their rows leave their chats' figures
        same = " AND ".join(f"{figures}.{c} = d.{c}" for c in columns.split(", "))
        await db.run(
            f"UPDATE {figures} SET people = {figures}.people - d.people,"
            f" answered = {figures}.answered - d.answered,"
            f" correct = {figures}.correct - d.correct FROM (SELECT {columns},"
            " count(*) AS people, sum(answered) AS answered, sum(correct) AS correct"
            f" FROM {source} WHERE person_key = $1 GROUP BY {columns}) AS d WHERE {same}", key)
    for chat in chats:
        for table in ("scores", "totals", "week_scores"):
            removed += await db.run(
                f"DELETE FROM {table} WHERE person_key = $1 OR chat_key = $2", key, chat)
        # the private chat's board counts (delete_person_op took the person out of them)
        removed += await db.run("DELETE FROM rank_counts WHERE chat_key = $1", chat)
        for table in ("chat_figures", "chat_day_figures"):  # likewise, at 0 people
            removed += await db.run(f"DELETE FROM {table} WHERE chat_key = $1", chat)
    if db.for_update:  # PostgreSQL: streaks in a table of their own
        removed += await db.run("DELETE FROM streaks WHERE person_key = $1", key)
    else:
        # SQLite: streaks are in the person's row; and an answer id is the rowid, which the
        # next answer reuses once the highest ones are gone: the materializer's position
        # comes back to the highest id left (everything up to it was applied), or the next
        # answer would sit below it, never applied
        await db.run(
            "UPDATE materialized SET position = (SELECT COALESCE(max(id), 0) FROM answers)"
            " WHERE name = 'scores' AND position > (SELECT COALESCE(max(id), 0) FROM answers)")
    for table in ("reminders", "reminder_days"):
        removed += await db.run(f"DELETE FROM {table} WHERE person_key = $1", key)
    removed += await db.run("DELETE FROM problem_reports WHERE person_key = $1", key)
    for table in ("live_players", "live_revotes"):
        removed += await db.run(f"DELETE FROM {table} WHERE person_key = $1", key)
    removed += await db.run(  # a session they hosted stays the chat's, without its host
        "UPDATE live_sessions SET host_key = '' WHERE host_key = $1", key)
    removed += int(await delete_draft(db, key))
    # the pack stays (others answered it) without its author: the key in the column, and
    # in the first line that packs published before the header lost it carry
    removed += await db.run(
        "UPDATE authored_packs SET author_key = '', pack = replace(pack, $2, $3)"
        " WHERE author_key = $1", key, OLD_HEADER.format(key=key), NEW_HEADER)
    for chat in chats:
        removed += await db.run(
            "DELETE FROM problem_reports WHERE chat_key = $1", chat)
        removed += await db.run("DELETE FROM leases WHERE name LIKE '%:' || $1", chat)
        removed += await db.run("DELETE FROM chats WHERE key = $1", chat)
        await db.notify("chat", chat)
    removed += await db.run("DELETE FROM persons WHERE key = $1", key)
    await db.notify("person", key)
    await db.notify("posts", "")
    return removed > 0


async def _delete_posts(db: Sql, posts: str, arg: str) -> int:
    """The posts `posts` selects (with $1 = `arg`), with their answers and references."""
    removed = 0
    for table in ("answers", "post_refs", "round_posts", "daily_posts"):
        removed += await db.run(f"DELETE FROM {table} WHERE post_id IN ({posts})", arg)
    return removed + await db.run(f"DELETE FROM posts WHERE id IN ({posts})", arg)


async def person_data(db: Sql, person_key: str) -> dict[str, Any]:
    """Everything stored about the person `person_key`, as JSON-ready values."""
    person = await db.row("SELECT name, locale FROM persons WHERE key = $1", person_key)
    answers = await db.rows(
        "SELECT a.quiz_id, a.question_id, a.option, a.correct, a.answered_at, a.elapsed_ms,"
        " a.chat_key, c.title, a.response, a.confidence FROM answers AS a"
        " LEFT JOIN chats AS c ON c.key = a.chat_key"
        " WHERE a.person_key = $1 ORDER BY a.answered_at, a.id", person_key)
    reminder = await db.row(
        "SELECT local_time, tz, updated_at FROM reminders WHERE person_key = $1", person_key)
    reminder_days = await db.rows(
        "SELECT local_date FROM reminder_days WHERE person_key = $1 ORDER BY local_date",
        person_key)
    runs = await db.rows(
        "SELECT quiz_id, chat_key, started_at, finished_at FROM runs WHERE person_key = $1"
        " ORDER BY started_at, id", person_key)
    reports = await db.rows(
        "SELECT quiz_id, question_id, chat_key, text, created_at, resolved_at, resolution"
        " FROM problem_reports WHERE person_key = $1 ORDER BY created_at, id", person_key)
    draft = await db.row(
        "SELECT locale, title, created_at, photo FROM drafts WHERE author_key = $1", person_key)
    draft_questions = await db.rows(
        "SELECT question FROM draft_questions WHERE author_key = $1 ORDER BY number", person_key)
    packs = await db.rows(
        "SELECT quiz_id, pack, published_at, withdrawn_at FROM authored_packs"
        " WHERE author_key = $1 ORDER BY quiz_id", person_key)
    # assignments (bot/core/assignments.py): the runs they took one in, the reminder claimed
    # for them, and the ones they gave a chat
    taken = await db.rows(
        "SELECT ar.assignment_id, a.chat_key, a.selector, a.deadline, ar.quiz_id, r.started_at,"
        " r.finished_at FROM assignment_runs ar JOIN assignments a ON a.id = ar.assignment_id"
        " JOIN runs r ON r.id = ar.run_id WHERE ar.person_key = $1"
        " ORDER BY r.started_at, ar.run_id", person_key)
    reminded = await db.rows(
        "SELECT ar.assignment_id, a.chat_key, a.selector, a.deadline, ar.claimed_at, ar.sent_at"
        " FROM assignment_reminders ar JOIN assignments a ON a.id = ar.assignment_id"
        " WHERE ar.person_key = $1 ORDER BY ar.claimed_at, ar.assignment_id", person_key)
    given = await db.rows(
        "SELECT id, chat_key, selector, deadline, created_at, cancelled_at FROM assignments"
        " WHERE created_by = $1 ORDER BY created_at, id", person_key)
    # what is derived from their answers and kept about them alone: review cards, the
    # ability the difficulty model estimates, FSRS parameters fitted to them
    cards = await db.rows(
        "SELECT quiz_id, question_id, chat_key, due, last_review, stability, difficulty, state,"
        " reps, lapses FROM cards WHERE person_key = $1 ORDER BY quiz_id, question_id",
        person_key)
    ability = await db.row(
        "SELECT ability, answers FROM difficulty_people WHERE person_key = $1", person_key)
    fitted = await db.row(
        "SELECT parameters, reviews, items, fitted_at FROM review_params WHERE person_key = $1",
        person_key)
    joined = await db.rows(
        "SELECT p.session_id, s.chat_key, p.name, p.team, p.joined_at FROM live_players p"
        " JOIN live_sessions s ON s.id = p.session_id WHERE p.person_key = $1"
        " ORDER BY p.joined_at, p.session_id", person_key)
    revotes = await db.rows(
        "SELECT v.post_id, p.quiz_id, p.question_id, v.option, v.correct, v.answered_at"
        " FROM live_revotes v JOIN posts p ON p.id = v.post_id WHERE v.person_key = $1"
        " ORDER BY v.answered_at, v.post_id", person_key)
    pictures: dict[str, dict[str, str]] = {}
    for quiz_id, path, data in await db.rows(
        "SELECT f.quiz_id, f.path, f.data FROM authored_files f JOIN authored_packs p"
        " ON p.quiz_id = f.quiz_id WHERE p.author_key = $1 ORDER BY f.quiz_id, f.path", person_key):
        pictures.setdefault(quiz_id, {})[path] = _b64(bytes(data))
    return {
        "person": {
            "key": person_key,
            "name": None if person is None else person[0],
            "language": None if person is None else person[1],
        },
        "answers": [
            {"quiz": r[0], "question": r[1], "option": int(r[2]), "correct": bool(r[3]),
             "answered_at": _iso(db.at(r[4])), "elapsed_ms": int(r[5]), "chat": r[6],
             "chat_title": r[7], "response": r[8],
             "confidence": None if r[9] is None else int(r[9])}
            for r in answers
        ],
        "review_cards": [
            {"quiz": r[0], "question": r[1], "chat": r[2], "due": _iso(db.at(r[3])),
             "last_review": _iso(db.at(r[4])), "stability": r[5], "difficulty": r[6],
             "state": int(r[7]), "reps": int(r[8]), "lapses": int(r[9])}
            for r in cards
        ],
        "ability": None if ability is None else {
            "estimate": float(ability[0]), "answers": int(ability[1])},
        "review_parameters": None if fitted is None else {
            "parameters": fitted[0], "reviews": int(fitted[1]), "questions": int(fitted[2]),
            "fitted_at": _iso(db.at(fitted[3]))},
        "live_sessions": [
            {"session": int(r[0]), "chat": r[1], "name": r[2],
             "team": None if r[3] is None else int(r[3]), "joined_at": _iso(db.at(r[4]))}
            for r in joined
        ],
        "peer_revotes": [
            {"post": int(r[0]), "quiz": r[1], "question": r[2], "option": int(r[3]),
             "correct": bool(r[4]), "answered_at": _iso(db.at(r[5]))}
            for r in revotes
        ],
        "review_reminder": None if reminder is None else {
            "time": reminder[0], "zone": reminder[1], "updated_at": _iso(db.at(reminder[2])),
            "sent_on": [db.on(r[0]).isoformat() for r in reminder_days],
        },
        "quiz_runs": [
            {"quiz": r[0], "chat": r[1], "started_at": _iso(db.at(r[2])),
             "finished_at": _iso(at_or_none(db, r[3]))}
            for r in runs
        ],
        "problem_reports": [
            {"quiz": r[0], "question": r[1], "chat": r[2], "text": r[3],
             "created_at": _iso(db.at(r[4])), "resolved_at": _iso(at_or_none(db, r[5])),
             "resolution": r[6]}
            for r in reports
        ],
        "draft": None if draft is None else {
            "language": draft[0], "title": draft[1], "created_at": _iso(db.at(draft[2])),
            "questions": [r[0] for r in draft_questions],
            "photo": None if draft[3] is None else _b64(bytes(draft[3])),
        },
        "assignment_runs": [
            {"assignment": int(r[0]), "chat": r[1], "selector": r[2],
             "deadline": _iso(db.at(r[3])), "quiz": r[4], "started_at": _iso(db.at(r[5])),
             "finished_at": _iso(at_or_none(db, r[6]))}
            for r in taken
        ],
        "assignment_reminders": [
            {"assignment": int(r[0]), "chat": r[1], "selector": r[2],
             "deadline": _iso(db.at(r[3])), "claimed_at": _iso(db.at(r[4])),
             "sent_at": _iso(at_or_none(db, r[5]))}
            for r in reminded
        ],
        "assignments_given": [
            {"assignment": int(r[0]), "chat": r[1], "selector": r[2],
             "deadline": _iso(db.at(r[3])), "created_at": _iso(db.at(r[4])),
             "cancelled_at": _iso(at_or_none(db, r[5]))}
            for r in given
        ],
        "published_packs": [
            {"quiz": r[0], "pack": r[1], "published_at": _iso(db.at(r[2])),
             "withdrawn_at": _iso(at_or_none(db, r[3])), "pictures": pictures.get(r[0], {})}
            for r in packs
        ],
    }


def _b64(data: bytes) -> str:
    """A picture in the person's data (JSON): base64."""
    return base64.b64encode(data).decode("ascii")


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()
