"""/analysis as chat text, in the reader's language, in pieces that fit a platform's message.

One block per answered question (a chat has no fixed-width font for `quizbot report`'s
table): its answers, share right, discrimination, median time, then each option by the letter
this chat saw and its text, with its count and share (✓ the correct one; the lines of a close
summary, render.option_share), and flags (with the pack's stated difficulty when the answers
show another). Then the misconceptions the chat's latest answers chose (misconceptions.py):
each with how many chose it, how many of them were sure, and who. `chunks` packs the blocks
into messages of at most
`limit` characters as the platform counts them, never splitting a block.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.core.chat_analysis import ChatAnalysis
from bot.core.misconceptions import HeldMisconception
from bot.core.models import MIN_ANSWERS, Flag, ItemStats
from bot.core.render import option_share, short
from bot.i18n import Translator, _

PROMPT_CHARS = 80
NAMES_SHOWN = 10  # who holds a misconception, then "and N more"

FLAG_TEXT = {
    Flag.TOO_EASY: _("too easy"),
    Flag.TOO_HARD: _("too hard"),
    Flag.NEGATIVE: _("negative discrimination"),
}


# i18n: a question's difficulty, as its pack states it or as its answers show it
DIFFICULTY_TEXT = {"easy": _("easy"), "medium": _("medium"), "hard": _("hard")}


def difficulty_text(item: ItemStats, t: Translator) -> str:
    """The stated difficulty beside the observed one when they differ, e.g. "stated hard,
    observed easy (92% right)"; "" when they agree or either is unknown."""
    observed = item.observed
    if item.stated is None or observed is None or item.stated == observed:
        return ""
    return t.gettext("stated {stated}, observed {observed} ({right} right)",
                     stated=t.gettext(DIFFICULTY_TEXT.get(item.stated, item.stated)),
                     observed=t.gettext(DIFFICULTY_TEXT[observed]),
                     right=t.percent(item.share_right or 0.0))


def _seconds(ms: float | None, t: Translator) -> str:
    if ms is None:
        return "–"
    return t.gettext("{seconds} s", seconds=t.number(round(ms / 1000, 1)))


def flags_text(item: ItemStats, t: Translator) -> str:
    words = []
    for flag in item.flags:
        if flag is Flag.DISTRACTOR:
            words.append(t.gettext(
                "distractor {letters} chosen more often than the answer",
                letters="/".join(item.letter_of(i) for i in item.popular_distractors)))
        else:
            words.append(t.gettext(FLAG_TEXT[flag]))
    if difficulty := difficulty_text(item, t):
        words.append(difficulty)
    return "⚠️ " + "; ".join(words) if words else ""


def item_block(
    item: ItemStats, number: int, t: Translator, gain: float | None = None
) -> str:
    disc = "–" if item.discrimination is None else f"{item.discrimination:+.2f}"
    lines = [
        f"{t.number(number)}. {short(item.prompt, PROMPT_CHARS)} ({item.question_id})",
        t.gettext(
            "answered {n} · right {right} · disc {disc} · median {median}",
            n=t.number(item.answered), right=t.percent(item.share_right or 0.0),
            disc=disc, median=_seconds(item.median_ms, t),
        ),
    ]
    lines += [option_share(t, o.letter, o.text, o.count, o.share or 0.0, o.correct)
              for o in item.shown_options()]
    if item.typed:  # a number's, a text's or an order's answers: the most common, then wrong
        lines.append(t.gettext("most common answers: {answers}", answers=" · ".join(
            f"“{short(text, 24)}” {t.number(n)}" + (" ✓" if right else "")
            for text, n, right in item.typed)))
    if item.wrong:
        lines.append(t.gettext("most common wrong answers: {answers}", answers=" · ".join(
            f"“{short(text, 24)}” {t.number(n)}" for text, n in item.wrong)))
    if gain is not None:  # peer rounds of this question went to a revote
        lines.append(t.gettext(
            "discussion gain: {gain} percentage points (right at the revote minus right at "
            "the first vote)", gain=f"{round(gain * 100):+d}"))
    if flags := flags_text(item, t):
        lines.append(flags)
    return "\n".join(lines)


def misconception_block(m: HeldMisconception, t: Translator) -> str:
    """One misconception: its statement, how many chose it of those asked, how many of
    them were sure, and who (the sure marked)."""
    names = [t.gettext("{name} (sure)", name=h.name) if h.sure else h.name
             for h in m.holders[:NAMES_SHOWN]]
    if len(m.holders) > NAMES_SHOWN:
        names.append(t.gettext("and {n} more", n=t.number(len(m.holders) - NAMES_SHOWN)))
    return "\n".join([
        f"• “{m.statement}” ({m.quiz_id}/{m.id})",
        t.gettext("chosen by {people} of {answered} · sure: {sure}",
                  people=t.number(m.people), answered=t.number(m.answered),
                  sure=t.number(m.sure)),
        t.gettext("who: {names}", names=", ".join(names)),
    ])


def misconception_blocks(analysis: ChatAnalysis, t: Translator) -> list[str]:
    if not analysis.misconceptions:
        return []
    return [t.gettext("🧩 Misconceptions: what the distractors chosen stand for (each "
                      "person's latest answer counts)")] + [
        misconception_block(m, t) for m in analysis.misconceptions]


def analysis_blocks(analysis: ChatAnalysis, t: Translator) -> list[str]:
    """The text in blocks: a heading per quiz, a block per answered question, the key."""
    if analysis.empty:
        return [t.gettext("📊 No answers to {quiz} in this chat yet: the item analysis needs "
                          "answered questions.", quiz=analysis.quiz_id) if analysis.quiz_id
                else t.gettext("📊 No answers in this chat yet: the item analysis needs "
                               "answered questions.")]
    blocks = []
    for report in analysis.reports:
        blocks.append(t.gettext(
            "📊 Item analysis: {title} ({quiz}) · {people} · {answers}",
            title=report.title, quiz=report.quiz_id,
            people=t.ngettext("{n} person", "{n} people", report.people),
            answers=t.ngettext("{n} answer", "{n} answers", report.answers),
        ))
        for number, item in enumerate(report.items, start=1):
            if item.answered:
                blocks.append(item_block(item, number, t,
                                         analysis.gains.get((report.quiz_id, item.question_id))))
    blocks += misconception_blocks(analysis, t)
    key = [
        t.gettext("Each person's first answer counts. ✓ marks the correct option.") + " "
        + t.gettext("Letters as this chat last saw each question."),
        t.gettext("disc: from -1 to +1, how well the question tells those who do well on the "
                  "quiz's other questions from those who do not; near 0 or below, it does "
                  "not. Flags need at least {n} answers.", n=t.number(MIN_ANSWERS)),
    ]
    if analysis.charted_questions < analysis.answered_questions:
        key.append(t.gettext(
            "The chart shows {charted} of the {total} answered questions.",
            charted=t.number(analysis.charted_questions),
            total=t.number(analysis.answered_questions)))
    blocks.append("\n".join(key))
    return blocks


def chunks(blocks: Sequence[str], limit: int, measure: Callable[[str], int] = len) -> list[str]:
    """The blocks packed into as few messages of at most `limit` as they fit, separated by
    a blank line; a block longer than `limit` alone is cut to it."""
    out: list[str] = []
    for block in blocks:
        if measure(block) > limit:
            while measure(block) > limit - 1:
                block = block[:-1]
            block = block.rstrip() + "…"
        if out and measure(out[-1]) + 2 + measure(block) <= limit:
            out[-1] += "\n\n" + block
        else:
            out.append(block)
    return out
