"""Quizzes started by a choice on Discord (issue 37): /help (and the welcome) carry a select
of the quizzes; choosing one runs it for whoever chose it, shown to them alone, as
/quiz quiz: <id> run: True does. A value the catalog does not have is refused."""

from __future__ import annotations

from typing import Any

from bot.adapters.discord.adapter import DiscordAdapter
from bot.core.service import QuizService
from tests.discord_e2e.helpers import bound_post
from tests.fakes.discord_api import FakeDiscord, User


def menu_of(components: list[dict[str, Any]]) -> dict[str, Any]:
    menus: list[dict[str, Any]] = [c for row in components for c in row.get("components") or []
                                   if c.get("custom_id") == "qs:start"]
    [menu] = menus
    return menu


async def test_a_quiz_chosen_from_helps_menu_runs_for_the_chooser(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User
) -> None:
    shown = await fake.reply(await fake.slash("help", {}, user=alice))
    assert shown.ephemeral
    menu = menu_of(shown.components)
    [quiz] = service.questions.quizzes()
    assert [(o["label"], o["value"], o["description"]) for o in menu["options"]] == [
        (quiz.title, quiz.id, f"{quiz.questions} questions")]
    assert (menu["min_values"], menu["max_values"]) == (1, 1)

    run = await fake.reply(await fake.click(shown.id, "qs:start", user=alice,
                                            values=[quiz.id]))
    assert run.ephemeral  # hers alone in the channel
    question = await service.questions.show(await bound_post(service, run.id))
    assert question is not None and question.owner_key == f"dc:{alice.id}"
    assert (question.quiz_id, question.number, question.total) == (quiz.id, 1, quiz.questions)

    refused = await fake.reply(await fake.click(shown.id, "qs:start", user=bob,
                                                values=["no-such-quiz"]))
    assert "no-such-quiz" in (refused.content + str(refused.embeds))
