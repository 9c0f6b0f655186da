"""Plain-text renderings shared by the adapters (console, Telegram, Discord embeds).

Every user-visible sentence goes through the Translator, so catalogs cover all platforms.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from babel.dates import format_timedelta

from bot.content.items import Kind
from bot.core.chat_settings import ChatSettings
from bot.core.errors import (
    BadZone,
    Msgid,
    NoActiveRun,
    ScheduleError,
    UnknownQuestion,
    UnknownQuiz,
    UserError,
)
from bot.core.models import LETTERS as LETTERS  # re-exported: adapters letter options here
from bot.core.models import (
    AnswerResult,
    AnswerStatus,
    BoardRow,
    Confidence,
    Leaderboard,
    MissedQuestion,
    Period,
    PersonStats,
    PostSummary,
    QuizInfo,
    ReviewStats,
    RunSummary,
    ScheduleStatus,
    ShownQuestion,
)
from bot.core.models import letter as letter
from bot.core.ports import RoundSummary
from bot.core.schedule import Schedule
from bot.i18n import Translator, _

OPTION_CHARS = 48  # an option's text in a list of shares, cut to fit one phone line


def short(text: str, width: int = OPTION_CHARS) -> str:
    """One line of at most `width` characters, cut with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def option_share(t: Translator, letter_: str, text: str, count: int, share: float,
                 correct: bool) -> str:
    """One option's line in a distribution, the same in a close summary and in /analysis
    (and as Discord's closed question lists them): `B) its text — 3 (50%) ✓`, by the letter
    the chat saw."""
    line = f"{letter_}) {short(text)} — {t.number(count)} ({t.percent(share)})"
    return line + " ✓" if correct else line


def person_name(name: str, n: int, t: Translator) -> str:
    """A person's name, or where it is unknown a neutral placeholder numbered by `n` (their
    place in the list shown), never their platform id."""
    # i18n: stands for a person whose name is unknown; {n} is their place in the list
    return name.strip() or t.gettext("someone #{n}", n=t.number(n))


def seconds(t: Translator, ms: int) -> str:
    return t.gettext("{seconds} s", seconds=t.number(round(ms / 1000, 1)))


def daily_label(q: ShownQuestion, t: Translator) -> str:
    """"📅 Daily question · " before a scheduled daily question's heading or poll ("" for any
    other), so a chat tells it from one somebody asked for."""
    return t.gettext("📅 Daily question") + " · " if q.daily else ""


def heading(q: ShownQuestion, t: Translator) -> str:
    """The quiz's title, and the question's place in its round or run if it has one."""
    if q.number is None or q.total is None:
        return daily_label(q, t) + q.quiz_title
    return t.gettext(
        "{title} · question {number} of {total}",
        title=q.quiz_title, number=t.number(q.number), total=t.number(q.total),
    )


def poll_question(q: ShownQuestion, t: Translator) -> str:
    """A poll's question: the prompt, numbered in its round or run ("2/5 · …"), or labelled
    as the daily question."""
    if q.number is None or q.total is None:
        return daily_label(q, t) + q.prompt
    return f"{t.number(q.number)}/{t.number(q.total)} · {q.prompt}"


def kind_hint(q: ShownQuestion, t: Translator) -> str:
    """How a question of a kind other than a choice is answered ("" for a choice)."""
    if q.kind is Kind.MULTI:
        return t.gettext("Select every right option.")
    if q.kind is Kind.ORDER:
        return t.gettext("Put the options in order, first to last (e.g. {example}).",
                         example=" ".join(LETTERS[: len(q.options)][::-1]))
    if q.kind is Kind.NUMERIC:
        if q.unit:
            return t.gettext("Answer with a number, in {unit}.", unit=q.unit)
        return t.gettext("Answer with a number.")
    if q.kind is Kind.TEXT:
        return t.gettext("Answer in a word or a few.")
    return ""


def question_text(q: ShownQuestion, t: Translator) -> str:
    return "\n\n".join(part for part in question_parts(q, t) if part)


def question_parts(q: ShownQuestion, t: Translator) -> tuple[str, str, str]:
    """The heading, the prompt, and the options with the kind's hint: a text-only adapter
    shows a question's code or formula between the prompt and the options."""
    options = "\n".join(f"{letter(i)}) {text}" for i, text in enumerate(q.options))
    hint = kind_hint(q, t)
    return heading(q, t), q.prompt, "\n\n".join(part for part in (options, hint) if part)


def verdict(result: AnswerResult, t: Translator) -> str:
    """One line: right or wrong, with the right answer (its letter, for one option)."""
    if result.correct_option is not None:
        answer = f"{letter(result.correct_option)}) {result.correct_text}"
    else:
        answer = result.correct_text
    if result.correct:
        return t.gettext("✅ Correct! {answer}", answer=answer)
    if result.partial is not None and result.partial[0]:
        return t.gettext(
            "❌ Not quite: {right} of {total} right options, and only all of them count. "
            "The answer is {answer}",
            right=t.number(result.partial[0]), total=t.number(result.partial[1]),
            answer=answer)
    return t.gettext("❌ Not quite. The answer is {answer}", answer=answer)


def expected_text(expected: Kind | None, t: Translator) -> str:
    """What to type when a typed answer could not be read."""
    if expected is Kind.NUMERIC:
        return t.gettext("Please type a number, e.g. {example}.", example=t.number(2.9))
    if expected is Kind.ORDER:
        return t.gettext("Please type the letters of every option in order, e.g. {example}.",
                         example="B A D C")
    if expected is Kind.MULTI:
        return t.gettext("Please type the letters of the options you pick, e.g. {example}.",
                         example="A C")
    if expected is Kind.TEXT:
        return t.gettext("Please type a short answer.")
    return t.gettext("That is not one of the options.")


def result_text(result: AnswerResult, t: Translator, *, details: bool = False) -> str:
    """What a person sees right after answering (or trying to)."""
    status = result.status
    if status is AnswerStatus.UNKNOWN_POST:
        return t.gettext("This question is no longer available.")
    if status is AnswerStatus.INVALID_OPTION:
        return expected_text(result.expected, t)
    if status is AnswerStatus.NOT_YOURS:
        return t.gettext("This question belongs to someone else's quiz. Start your own with /quiz.")
    if status is AnswerStatus.CLOSED:
        return t.gettext("This question is closed; answers are no longer counted.")
    if status is AnswerStatus.ALREADY_ANSWERED:
        choice = f"{letter(result.chosen)}) {result.chosen_text}" if result.chosen is not None \
            else result.response_text
        return t.gettext(
            "You already answered {choice}. Your first answer is final.", choice=choice,
        ) + "\n" + verdict(result, t)
    text = verdict(result, t)
    if result.response_text:
        text += "\n" + t.gettext("Your answer: {answer}", answer=result.response_text)
    text += f"\n{result.explanation}"
    if details and result.details:
        text += f"\n\n{result.details}"
    return text


SUMMARY_FASTEST = 3  # names a close summary gives
SUMMARY_TYPED = 3  # a typed question's most common answers a close summary gives


def summary_text(summary: PostSummary, t: Translator) -> str:
    """What a chat is sent when a question closes: a few lines, one phone screen at most in a
    group where a round posts one per question. The question itself is above it (the
    summary replies to it), so its prompt is not repeated, and each option's share is one
    line of counts by letter; the long details are the reader's to open
    (`details_text`)."""
    q = summary.question
    answer = f"{letter(q.correct)}) {q.options[q.correct]}" if 0 <= q.correct < len(q.options) \
        else summary.correct_text
    count = t.ngettext("{n} person answered", "{n} people answered", summary.answered)
    if summary.answered:
        count += " · " + t.gettext("{share} right", share=t.percent(summary.share_right))
    lines = [t.gettext("⏱ Question closed.") + " " + t.gettext("Answer: {answer}", answer=answer),
             count]
    if summary.answered and summary.per_option:
        lines.append(" · ".join(
            f"{letter(i)} {t.number(n)}"
            + (" ✓" if i == q.correct or (q.kind is Kind.MULTI and i in q.correct_set) else "")
            for i, n in enumerate(summary.per_option)))
    if summary.answered and summary.typed:
        lines.append(" · ".join(f"“{short(text, 24)}” {t.number(n)}"
                                for text, n in summary.typed[:SUMMARY_TYPED]))
    if summary.fastest:
        fastest = ", ".join(
            f"{person_name(a.name, i, t)} ({seconds(t, a.elapsed_ms)})"
            for i, a in enumerate(summary.fastest[:SUMMARY_FASTEST], 1)
        )
        lines.append(t.gettext("Fastest: {names}", names=fastest))
    lines.append("💡 " + q.explanation)
    return "\n".join(lines)


def has_details(q: ShownQuestion) -> bool:
    """Whether a question says more than its short explanation (worth a "details" link)."""
    return bool(q.details) and q.details != q.explanation


def details_text(q: ShownQuestion, t: Translator) -> str:
    """A closed question in full, for the one who asked for it (in their private chat):
    the prompt, every option whole, the right answer and the long explanation."""
    options = "\n".join(f"{letter(i)}) {text}" for i, text in enumerate(q.options))
    if 0 <= q.correct < len(q.options):
        answer = f"{letter(q.correct)}) {q.options[q.correct]}"
    elif q.kind is Kind.ORDER:
        answer = " → ".join(letter(i) for i in q.correct_set)
    else:  # several right options; a typed answer's is in its explanation
        answer = ", ".join(letter(i) for i in q.correct_set)
    return "\n\n".join(part for part in (
        q.quiz_title, q.prompt, options,
        t.gettext("Answer: {answer}", answer=answer) if answer else "",
        q.details or q.explanation) if part)


# how sure a person said they were of an answer
SAID = {
    Confidence.SURE: _("sure"),
    Confidence.THINK_SO: _("think so"),
    Confidence.GUESSING: _("guessing"),
}

PERIOD_TITLES = {
    Period.DAY: _("Leaderboard · today"),
    Period.WEEK: _("Leaderboard · this week"),
    Period.ALL: _("Leaderboard · all time"),
}


def leaderboard_text(board: Leaderboard, t: Translator, *, scope: str = "") -> str:
    title = t.gettext(PERIOD_TITLES[board.period])
    lines = [f"🏆 {title}" + (f" · {scope}" if scope else "")]
    if not board.rows:
        lines.append(t.gettext("No answers yet. Be the first: /quiz"))
    for row in board.rows:
        lines.append(_board_line(row, t))
    if board.me is not None and all(r.person_key != board.me.person_key for r in board.rows):
        lines.append("…")
        lines.append(_board_line(board.me, t))
    elif board.me is None and board.rows:
        lines.append(t.gettext("You have no answers in this period yet."))
    return "\n".join(lines)


def _board_line(row: BoardRow, t: Translator) -> str:
    line = t.gettext(
        "{rank}. {name} — {correct}/{answered} right ({time})",
        rank=t.number(row.rank), name=person_name(row.name, row.rank, t),
        correct=t.number(row.correct), answered=t.number(row.answered),
        time=seconds(t, row.time_ms),
    )
    if row.day_streak > 1:  # a daily streak worth showing off
        line += " · " + t.ngettext("🔥 {n}-day streak", "🔥 {n}-day streak", row.day_streak)
    return line


def stats_text(stats: PersonStats, t: Translator, *, start: str = "/quiz") -> str:
    """`start`: how to take a first quiz where this is read (a chat command, a shell one)."""
    lines = [
        t.gettext("📊 Stats for {name}", name=stats.name) if stats.name.strip()
        else t.gettext("📊 Your stats"),
        t.ngettext("{n} question answered", "{n} questions answered", stats.answered)
        + " · " + t.gettext("{share} right", share=t.percent(stats.accuracy)),
        t.gettext(
            "Streak: {current} in a row (best {best})",
            current=t.number(stats.current_streak), best=t.number(stats.best_streak),
        ),
    ]
    if stats.best_day_streak:
        lines.append(t.ngettext(
            "Daily streak: {n} day (best {best})", "Daily streak: {n} days (best {best})",
            stats.day_streak, best=t.number(stats.best_day_streak),
        ))
    if stats.calibration:
        lines.append(t.gettext("How sure you said you were:") + " " + " · ".join(
            t.gettext("{said}: right {right} of {answered}", said=t.gettext(SAID[said]),
                      right=t.number(right), answered=t.number(answered))
            for said, answered, right in stats.calibration))
    for quiz in stats.per_quiz:
        lines.append(f"• {quiz.title}: {t.number(quiz.correct)}/{t.number(quiz.answered)}")
    if not stats.answered:
        lines.append(t.gettext("No answers yet. Try {command}", command=start))
    return "\n".join(lines)


def run_summary_text(summary: RunSummary, t: Translator) -> str:
    lines = [
        t.gettext(
            "🏁 {title}: {score} of {total} right",
            title=summary.quiz_title, score=t.number(summary.score),
            total=t.number(summary.total),
        )
    ]
    if summary.missed:
        lines.append(t.gettext("Worth another look:"))
        lines.extend(missed_lines(summary.missed, t))
    else:
        lines.append(t.gettext("A perfect score!"))
    return "\n".join(lines)


def missed_lines(missed: Sequence[MissedQuestion], t: Translator) -> list[str]:
    return [
        f"{t.number(m.number)}. {m.prompt}\n   → {m.correct_text}"
        + (f"\n   ✗ {m.chosen_text}" if m.chosen_text else "") for m in missed
    ]


def review_text(missed: Sequence[MissedQuestion], t: Translator) -> str:
    if not missed:
        return t.gettext("Nothing to review: you have no missed questions.")
    lines = [t.gettext("📝 Questions you missed:")]
    for m in missed:
        answered = f"\n   ✗ {m.chosen_text}" if m.chosen_text else ""
        lines.append(f"• {m.prompt}\n   → {m.correct_text}{answered}\n   {m.explanation}")
    return "\n".join(lines)


def review_stats_text(stats: ReviewStats, t: Translator) -> str:
    """The spaced-review line of /stats: cards due now and retention."""
    line = t.ngettext("🧠 Review: {n} card, {due} due now", "🧠 Review: {n} cards, {due} due now",
                      stats.cards, due=t.number(stats.due))
    if stats.retention is None:
        return line
    return line + " · " + t.gettext("retention {share}", share=t.percent(stats.retention))


def nothing_due_text(t: Translator, wait: timedelta | None = None) -> str:
    """`wait`: how long until the next card is due (None: no card is waiting)."""
    if wait is None:
        return t.gettext("Nothing is due for review right now. Answer some questions, or "
                         "come back later.")
    # i18n: {delay} is a localised duration such as "3 days" or "5 hours"
    return t.gettext("Nothing is due for review right now. Your next card is due in {delay}.",
                     delay=format_timedelta(max(wait, timedelta(minutes=1)), locale=t.locale,
                                            threshold=1.5))


def review_elsewhere_text(t: Translator) -> str:
    return t.gettext("Your review is in our private chat.")


def review_blocked_text(t: Translator) -> str:
    return t.gettext("I cannot write to you privately yet: start a private chat with me "
                     "first, then send /review again.")


def reminder_text(due: int, t: Translator) -> str:
    # i18n: a private message once a day; {n} is how many questions are due
    return t.ngettext("📚 {n} question is due for review. Send /review to go through it.",
                      "📚 {n} questions are due for review. Send /review to go through them.",
                      due)


def reminder_set_text(reminder: Schedule, t: Translator) -> str:
    # i18n: {time} is HH:MM, {zone} an IANA name such as Asia/Kolkata (keep both as is)
    return t.gettext("I will remind you at {time} ({zone}) on days when reviews are due.",
                     time=reminder.at.strftime("%H:%M"), zone=reminder.tz)


def reminder_off_text(removed: bool, t: Translator) -> str:
    return t.gettext("Review reminders are off.") if removed \
        else t.gettext("You have no review reminder.")


def reminder_status_text(
    reminder: Schedule | None, t: Translator, *, usage: str | None = None,
    off: str = "/remind off",
) -> str:
    """/remind alone: the current reminder, or that there is none and how to set one.
    `usage` and `off` are the platform's own syntax (Telegram's by default)."""
    if reminder is None:
        return t.gettext("You have no review reminder.") + "\n" + (usage or remind_usage_text(t))
    # i18n: {time} is HH:MM, {zone} an IANA name such as Asia/Kolkata, {command} a command
    # (keep all three as they are)
    return t.gettext("Your review reminder: {time} ({zone}), on days when reviews are due. "
                     "{command} turns it off.",
                     time=reminder.at.strftime("%H:%M"), zone=reminder.tz, command=off)


def remind_usage_text(t: Translator) -> str:
    return t.gettext("Usage: /remind HH:MM [Time/Zone], or /remind off")


def quiz_list_text(quizzes: Sequence[QuizInfo], t: Translator) -> str:
    lines = [t.gettext("Available quizzes:")]
    for q in quizzes:
        lines.append(
            f"• {q.id} — {q.title} ("
            + t.ngettext("{n} question", "{n} questions", q.questions)
            + ")"
        )
    return "\n".join(lines)


def schedule_status_text(status: ScheduleStatus, t: Translator) -> str:
    """A chat's daily schedule and its next post, in the schedule's own time zone.

    Shared by the adapters' status replies; the commands to change it differ per platform.
    """
    from babel.dates import format_skeleton

    schedule = status.schedule
    when = status.next_post.astimezone(schedule.zone)
    lines = [
        # i18n: {time} is HH:MM, {zone} an IANA name such as Asia/Kolkata (keep both as is)
        t.gettext("📅 A daily question at {time} ({zone}).",
                  time=f"{schedule.at:%H:%M}", zone=schedule.tz),
        t.gettext("Quiz or topic: {name}", name=schedule.selector) if schedule.selector
        else t.gettext("Quiz or topic: all quizzes"),
        t.ngettext("Open for {n} minute", "Open for {n} minutes", schedule.open_minutes)
        if schedule.open_minutes else t.gettext("Open until the next daily question"),
        # i18n: {date} is a localised date such as "Mon, Mar 2, 2026"; {time} is HH:MM
        t.gettext("Next question: {date}, {time}",
                  date=format_skeleton("yMMMEd", when, tzinfo=schedule.zone, locale=t.locale),
                  time=f"{when:%H:%M}"),
    ]
    return "\n".join(lines)


ROUND_ROWS = 10  # people listed in a round's summary


def round_summary_text(summary: RoundSummary, t: Translator) -> str:
    """A round's end: how many questions, who got how many right (most first)."""
    lines = [
        t.gettext("🏁 Round over: {total} questions.", total=t.number(summary.total))
        if summary.asked >= summary.total else
        t.gettext("🏁 Round over after {asked} of {total} questions.",
                  asked=t.number(summary.asked), total=t.number(summary.total))
    ]
    if not summary.scores:
        lines.append(t.gettext("Nobody answered in this round."))
    for i, score in enumerate(summary.scores[:ROUND_ROWS], 1):
        lines.append(t.gettext("{rank}. {name}: {right} of {asked} right",
                               rank=t.number(i), name=person_name(score.name, i, t),
                               right=t.number(score.right),
                               asked=t.number(summary.asked)))
    return "\n".join(lines)


def settings_text(settings: ChatSettings, t: Translator, *, modes: bool = True) -> str:
    """A chat's settings; the commands to change them differ per platform. `modes`: whether
    the platform offers a choice between polls and buttons (Discord does not)."""
    return "\n".join([t.gettext("⚙️ This chat's settings"),
                      *settings_lines(settings, t, modes=modes)])


def settings_changed_text(before: ChatSettings, after: ChatSettings, t: Translator, *,
                          modes: bool = True) -> str:
    """What a change of the settings did, as its lines alone (every line of them repeated
    after each change would fill a group)."""
    changed = [line for old, line in zip(settings_lines(before, t, modes=modes),
                                         settings_lines(after, t, modes=modes), strict=True)
               if old != line]
    if not changed:
        return t.gettext("⚙️ Nothing changed: that was the setting already.")
    return "\n".join([t.gettext("⚙️ Changed:"), *changed])


def settings_lines(settings: ChatSettings, t: Translator, *, modes: bool = True) -> list[str]:
    """One line per setting, in the same order whatever their values."""
    seconds = t.number(settings.question_seconds)
    return [
        t.gettext("Question time: {seconds} s", seconds=seconds) if settings.own_time
        else t.gettext("Question time: {seconds} s (the default)", seconds=seconds),
        *([t.gettext("Questions as: polls") if settings.mode == "polls"
           else t.gettext("Questions as: buttons") if settings.mode == "buttons"
           else t.gettext("Questions as: the platform's default")] if modes else []),
        t.gettext("Chart of the answers when a question closes: on") if settings.chart
        else t.gettext("Chart of the answers when a question closes: off"),
        t.gettext("Who starts questions and rounds: admins only") if settings.admins_only
        else t.gettext("Who starts questions and rounds: anyone (only admins replace an "
                       "open one)"),
        t.gettext("Peer rounds: no discussion when {share} or more are right at the first "
                  "vote", share=t.percent(settings.peer_threshold / 100))
        + ("" if settings.own_peer_threshold else " " + t.gettext("(the default)")),
        t.gettext("Peer rounds: discussion for {time}",
                  time=duration_text(settings.peer_discussion, t))
        + ("" if settings.own_peer_discussion else " " + t.gettext("(the default)")),
        t.gettext("Ask how sure with each answer: on") if settings.confidence
        else t.gettext("Ask how sure with each answer: off"),
        # questions at the right difficulty (bot/core/difficulty.py)
        t.gettext("Someone alone gets questions they should get right {share} of the time",
                  share=t.percent(settings.target / 100))
        + ("" if settings.own_target else " " + t.gettext("(the default)")),
    ]


def target_help(t: Translator) -> str:
    """How /settings target is used, the same on every platform (questions at the right
    difficulty: bot/core/difficulty.py)."""
    return t.gettext("/settings target 50 to 95 (percent): how often someone alone should be "
                     "right; their next question is the one predicted nearest that.")


def duration_text(seconds: int, t: Translator) -> str:
    """Whole minutes as minutes ("2 min"), anything else as seconds ("90 s")."""
    if seconds % 60 == 0:
        return t.gettext("{minutes} min", minutes=t.number(seconds // 60))
    return t.gettext("{seconds} s", seconds=t.number(seconds))


def error_text(error: UserError, t: Translator, quizzes: Sequence[QuizInfo]) -> str:
    """What was refused and what to do instead, in the reader's language, on every platform.
    `quizzes`: the catalog in the reader's language, listed after a name it does not have."""
    values = {k: t.gettext(v.text) if isinstance(v, Msgid) else v
              for k, v in error.values.items()}
    lines = [t.gettext(error.template, **values)]
    if isinstance(error, UnknownQuestion) and error.nearest:
        lines.append(t.gettext("Did you mean: {ids}?", ids=", ".join(error.nearest)))
    elif isinstance(error, UnknownQuestion) and error.last:
        lines.append(t.gettext("The last question you answered here is {id}.", id=error.last))
    if isinstance(error, BadZone) and error.suggestions:
        lines.append(t.gettext("Did you mean: {zones}?", zones=", ".join(error.suggestions)))
    if isinstance(error, ScheduleError):
        lines.append(t.gettext("Nothing was changed."))
    if isinstance(error, UnknownQuiz | NoActiveRun):
        lines.append(quiz_list_text(quizzes, t))
    return "\n".join(lines)
