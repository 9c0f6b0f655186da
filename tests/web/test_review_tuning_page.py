"""The person page's review tuning (bot/core/review.py Tuning): the retention the scheduler aims
at, whether the person's own FSRS parameters are fitted, and the recall predicted now of this
chat's cards with the default parameters and with the fitted ones."""

from __future__ import annotations

import random

from fsrs import Scheduler

from bot.core.deck import Deck
from bot.core.ports import ReviewFit
from bot.core.review_simulation import learner_parameters
from bot.i18n import translator
from tests.web.conftest import CHAT_A, Site
from tests.web.test_pages import figure


async def predicted(site: Site, person: str, fsrs: Scheduler) -> float:
    """The mean recall `fsrs` predicts now of the person's cards in chat A."""
    deck = Deck(fsrs)
    for a in await site.storage.review_answers(person):
        deck.apply(a)
    here = {c.question_id for c in await site.storage.person_cards(person)
            if c.chat_key == CHAT_A}
    recall = [fsrs.get_card_retrievability(card, site.clock.now())
              for (_, question), card in deck.cards.items() if question in here]
    return sum(recall) / len(recall)


async def test_the_person_page_shows_the_defaults_until_fitted_then_both_predictions(
        site: Site) -> None:
    await site.login()
    pct = translator("en").percent
    page = await (await site.client.get(f"/chat/{CHAT_A}/person/tg:2")).text()
    assert figure(page, "retention-target") == "90%"
    assert figure(page, "parameters") == "the defaults"
    default = pct(await predicted(site, "tg:2", Scheduler(enable_fuzzing=False)))
    assert figure(page, "default-retention") == default
    assert 'id="fitted-retention"' not in page and "enough review history" in page

    fitted = learner_parameters(random.Random(4))  # forgets faster than the defaults
    await site.storage.save_fit("tg:2", ReviewFit(fitted, 400, 300, 0.6, 0.5, 0.15, 0.1),
                                site.clock.now())
    page = await (await site.client.get(f"/chat/{CHAT_A}/person/tg:2")).text()
    assert figure(page, "parameters") == "fitted to their answers"
    assert figure(page, "fitted-on") == site.clock.now().strftime("%Y-%m-%d")
    assert figure(page, "default-retention") == default
    assert figure(page, "fitted-retention") == pct(
        await predicted(site, "tg:2", Scheduler(parameters=fitted, enable_fuzzing=False)))
    assert "enough review history" not in page


async def test_the_tuning_is_in_the_reader_s_language(site: Site) -> None:
    await site.login(locale="hi")
    page = await (await site.client.get(f"/chat/{CHAT_A}/person/tg:2")).text()
    t = translator("hi").gettext
    assert t("Retention target") != "Retention target" and t("Retention target") in page
    assert figure(page, "parameters") == t("the defaults")
