"""What a chat's misconceptions are counted from (bot/core/misconceptions.py): each person's
latest answer to each question of some quizzes in one chat, with their name and how sure they
said they were. Written once for both databases; nothing is kept: the tags are the catalog's,
which the storage does not hold, and an admin's view reads the chat's answers to the tagged
quizzes once (a range of the answers' chat index), as /analysis reads its first answers.

The latest answer, not the first: a misconception is what a person holds now, so one answered
right again (a follow-up round) no longer counts. A person's deletion deletes their answers,
so nothing here outlives it."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.ports import ChosenOption
from bot.storage.sql import Sql


async def chosen_options(db: Sql, chat_key: str, quiz_ids: Sequence[str]) -> list[ChosenOption]:
    """Each person's latest answer (highest id) in the chat to each question of `quiz_ids`,
    oldest first."""
    if not quiz_ids:
        return []
    listed = ", ".join(f"${i}" for i in range(2, len(quiz_ids) + 2))
    rows = await db.rows(
        "SELECT a.quiz_id, a.question_id, a.person_key, persons.name, a.option, a.response,"
        " a.confidence FROM answers AS a JOIN persons ON persons.key = a.person_key JOIN"
        " (SELECT max(id) AS id FROM answers WHERE chat_key = $1"
        f"  AND quiz_id IN ({listed}) GROUP BY person_key, quiz_id, question_id) AS latest"
        " ON latest.id = a.id ORDER BY a.id",
        chat_key, *quiz_ids,
    )
    return [ChosenOption(r[0], r[1], r[2], r[3], int(r[4]), r[5],
                         None if r[6] is None else int(r[6])) for r in rows]
