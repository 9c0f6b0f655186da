"""Every word the dashboard's templates show, marked for the catalogs (scripts/i18n.py reads
Python only): a template writes `t("People")` with one of these msgids, and
tests/web/test_words.py checks that every `t("…")` in a template is listed here."""

from __future__ import annotations

from bot.i18n import _

WORDS = (
    _("Dashboard"), _("Overview"), _("People"), _("Questions"), _("Reports"), _("Settings"),
    _("Exports"), _("Language"), _("Answers"), _("Right"), _("Accuracy"), _("Last seen"),
    _("Day streak"), _("On a day streak now"), _("Longest day streak now"),
    _("Longest day streak ever"), _("Open review cards"), _("Review cards due today"),
    _("Weakest topics"), _("Answers per day"),
    _("Accuracy over time"),
    _("Open reports"), _("Daily question"), _("off"), _("on"), _("Next page"),
    _("Question"), _("Option chosen"), _("When"), _("Seconds"), _("Round"),
    _("Review cards"), _("Due"), _("Stability (days)"), _("Discrimination"),
    _("How sure they said they were"), _("From the answers where this chat asked how sure."),
    _("How sure"),
    # review tuned to each person (person.html)
    _("Review tuned to this person"), _("Retention target"), _("Parameters"),
    _("fitted to their answers"), _("the defaults"), _("Fitted on"),
    _("Predicted retention, default parameters"), _("Predicted retention, fitted parameters"),
    _("Their own parameters are fitted once they have enough review history and predict their"
      " answers better than the defaults."),
    _("Flags"), _("Option"), _("Most common answers"), _("Share"), _("Person"), _("Note"),
    _("Resolve"),
    _("No open reports in this chat."), _("Nothing answered here yet."),
    _("Question time (seconds)"), _("Mode"), _("Chart on summaries"),
    _("Only admins start questions"), _("Default"), _("Polls"), _("Buttons"),
    _("The platform's default"), _("Time zone (the times on these pages)"),
    _("Settings are changed in the chat, where the platform checks who is an admin."),
    _("All answers (CSV)"), _("All answers (Excel)"), _("Board (CSV)"), _("Board (Excel)"),
    _("Period"), _("today"), _("this week"), _("all time"), _("Rank"), _("Name"),
    _("Question id"), _("Prompt"), _("Correct"), _("Answered at"), _("Seconds taken"),
    _("yes"), _("no"), _("Report"), _("Reported by"),
    _("This link has expired or was withdrawn"),
    _("Ask the bot again with /dashboard in the chat for a new link."),
    _("There is no such page"),  # missing.html, any address the dashboard does not serve
    _("Open the dashboard from the link the bot gives with /dashboard in your chat."),
    _("The report is resolved."),
    # the Telegram Mini App (miniapp.py)
    _("My progress"), _("Accuracy per topic"), _("Quiz"), _("Due for review"),
    _("Nothing is due now."), _("Send /review to the bot to go through them."),
    _("Your latest answers"), _("Open this page from the button in your chat with the bot."),
    # a question's difficulty on the Questions page (bot/core/difficulty.py)
    _("Difficulty: {share} right for someone new"),
    _("Difficulty: how often someone new would be right, as the bot estimates it from every"
      " first answer to the question in any chat, starting from the pack's easy, medium or"
      " hard."),
)
