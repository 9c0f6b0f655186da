"""What live sessions and peer rounds say, in the reader's language and script (numbers
through the Translator), the same on every platform."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.live import Countdown, Lobby, Paused, Podium, Revealed, Standing
from bot.core.models import ShownQuestion
from bot.core.peer import PeerResult, Revoting, Split
from bot.core.ports import LivePlayer
from bot.core.render import (
    duration_text,
    letter,
    option_share,
    person_name,
    short,
    summary_text,
)
from bot.i18n import Translator

MEDALS = ("🥇", "🥈", "🥉")


def lobby_text(lobby: Lobby, t: Translator) -> str:
    s = lobby.session
    lines = [
        t.gettext("🎤 Live quiz: {total} questions, {seconds} s each.",
                  total=t.number(s.total), seconds=t.number(s.seconds)),
        t.ngettext("{n} player joined.", "{n} players joined.", lobby.joined),
    ]
    if s.teams:
        lines.append(t.gettext("Teams: {teams} (a team scores its members' average).",
                               teams=t.number(s.teams)))
    if lobby.sizes:
        lines.append(" · ".join(
            t.ngettext("Team {team}: {n} player", "Team {team}: {n} players", size,
                       team=t.number(k + 1)) for k, size in enumerate(lobby.sizes)))
    if s.speed:
        lines.append(t.gettext("Speed points: faster right answers score more."))
    lines += players_lines(lobby.players, s.teams, t)
    lines.append(t.gettext("Press your team's button to play. The host starts with /next.")
                 if s.choose else t.gettext("Press Join to play. The host starts with /next."))
    return "\n".join(lines)


SHOWN_NAMES = 40  # names a lobby lists; a crowd beyond that is a count


def players_lines(players: Sequence[LivePlayer], teams: int, t: Translator) -> list[str]:
    """Who joined, by team where there are teams (their first SHOWN_NAMES)."""
    if not players:
        return []
    named = list(players[:SHOWN_NAMES])
    more = len(players) - len(named)
    tail = [t.gettext("and {n} more", n=t.number(more))] if more else []
    if not teams:
        return [", ".join([p.name or "?" for p in named] + tail)]
    lines = [team_label(k, t) + ": " + ", ".join(p.name or "?" for p in named if p.team == k)
             for k in range(teams) if any(p.team == k for p in named)]
    return lines + tail


def lobby_over_text(podium: Podium, t: Translator) -> str:
    """The lobby message once the session ended: who played, no Join."""
    players = [LivePlayer(s.person_key, s.name, s.team, podium.session.started_at)
               for s in sorted(podium.standings, key=lambda s: s.name)]
    return "\n".join([
        t.ngettext("🎤 Live quiz over: {n} player, {asked} questions.",
                   "🎤 Live quiz over: {n} players, {asked} questions.", len(players),
                   asked=t.number(podium.asked)),
        *players_lines(players, podium.session.teams, t)])


def closed_question_text(question: ShownQuestion, t: Translator) -> str:
    """A question message once it closed: no countdown (and no buttons)."""
    lines = question_text(question, 0, t).splitlines()
    return "\n".join([*lines[:-1], t.gettext("🔒 Closed")])


def team_label(team: int, t: Translator) -> str:
    """A team's join button (`team` 0-based)."""
    return t.gettext("Team {team}", team=t.number(team + 1))


def joined_text(lobby: Lobby, t: Translator) -> str:
    """What the person who pressed Join is told."""
    if lobby.team is not None:
        return t.gettext("You joined team {team}.", team=t.number(lobby.team + 1))
    return t.gettext("You joined.")


def took_over_text(t: Translator) -> str:
    return t.gettext("🎤 A new host runs this session now.")


def question_text(question: ShownQuestion, remaining_s: int | None, t: Translator) -> str:
    """A live question with its countdown (`remaining_s`; None: paused)."""
    lines = []
    if question.number is not None and question.total is not None:
        lines.append(t.gettext("Question {number} of {total}",
                               number=t.number(question.number),
                               total=t.number(question.total)))
    lines.append(question.prompt)
    lines += [f"{letter(i)}) {o}" for i, o in enumerate(question.options)]
    lines.append("")
    lines.append(countdown_line(remaining_s, t))
    return "\n".join(lines)


def countdown_line(remaining_s: int | None, t: Translator) -> str:
    if remaining_s is None:
        return t.gettext("⏸ Paused")
    if remaining_s <= 0:
        return t.gettext("⌛ Time is up")
    return t.gettext("⏳ {seconds} s left", seconds=t.number(remaining_s))


def countdown_text(countdown: Countdown, question: ShownQuestion, t: Translator) -> str:
    return question_text(question, countdown.remaining_s, t)


def paused_text(paused: Paused, t: Translator) -> str:
    if paused.remaining_ms is None:
        return t.gettext("▶️ Resumed.")
    return t.gettext("⏸ Paused with {seconds} s left. /pause again resumes.",
                     seconds=t.number(round(paused.remaining_ms / 1000)))


def revealed_text(revealed: Revealed, t: Translator) -> str:
    text = summary_text(revealed.summary, t)
    if revealed.skipped:
        text = t.gettext("⏭ Skipped: this question counts for nobody.") + "\n" + text
    hint = (t.gettext("/next shows the podium.") if revealed.last
            else t.gettext("/next asks the next question."))
    return text + "\n\n" + hint


def podium_text(podium: Podium, t: Translator) -> str:
    lines = [t.gettext("🏆 Podium after {asked} questions",
                       asked=t.number(podium.asked))]
    if not podium.standings:
        lines.append(t.gettext("Nobody joined."))
    for i, s in enumerate(podium.top):
        lines.append(f"{MEDALS[s.rank - 1] if s.rank <= len(MEDALS) else ''} " + t.gettext(
            "{name}: {score} points, {right} right, {seconds} s",
            name=person_name(s.name, i + 1, t), score=t.number(s.score),
            right=t.number(s.right), seconds=t.number(round(s.time_ms / 1000))))
    for team in podium.teams:
        lines.append(t.gettext("{rank}. Team {team}: {score} points ({members} players)",
                               rank=t.number(team.rank), team=t.number(team.team + 1),
                               score=t.number(round(team.score)),
                               members=t.number(team.members)))
    return "\n".join(lines)


def rank_text(standing: Standing, players: int, t: Translator) -> str:
    """Each person's own place, told privately."""
    return t.gettext("Your place: {rank} of {players}, with {score} points.",
                     rank=t.number(standing.rank), players=t.number(players),
                     score=t.number(standing.score))


def split_text(split: Split, t: Translator, place: str | None = None) -> str:
    """The first vote's split, without the answer; `place`: the topic or thread the
    discussion opened in (None: here, in the chat)."""
    q = split.question
    lines = [t.gettext("🗳 First vote: {n} voted. How the group is split:",
                       n=t.number(split.voted))]
    lines += [option_share(t, letter(i), q.options[i], n, n / split.voted if split.voted
                           else 0.0, False) for i, n in enumerate(split.per_option)]
    lines.append("")
    time = duration_text(round(split.until.total_seconds()), t)
    lines.append(t.gettext(
        "💬 Discuss for {time}: convince your neighbours, then vote again.", time=time)
        if place is None else t.gettext(
        "💬 Discuss for {time} in “{place}”: convince your neighbours, then vote again here.",
        time=time, place=place))
    return "\n".join(lines)


def discussion_name(split: Split, t: Translator) -> str:
    """The discussion's topic or thread name (Discord allows 100 characters)."""
    return short(t.gettext("💬 Discuss: {prompt}", prompt=split.question.prompt), 100)


def discussion_text(split: Split, t: Translator) -> str:
    """What opens the discussion in its topic or thread: the question, not the answer."""
    q = split.question
    return "\n".join([
        t.gettext("💬 Convince your neighbours for {time}; the revote opens in the chat.",
                  time=duration_text(round(split.until.total_seconds()), t)),
        "", q.prompt, *(f"{letter(i)}) {o}" for i, o in enumerate(q.options))])


def revote_text(revoting: Revoting, t: Translator) -> str:
    if revoting.transfer:  # a peer round's isomorphic question (peer.py)
        return t.gettext("🔁 One more on the same idea, answered alone: no discussion this "
                         "time.")
    return t.gettext("🗳 Vote again: {prompt}", prompt=revoting.question.prompt)


def peer_result_text(result: PeerResult, t: Translator) -> str:
    q = result.summary.question
    lines = [t.gettext("Answer: {answer}", answer=f"{letter(q.correct)}) {q.options[q.correct]}")]
    if result.second_right is None:
        lines.append(t.gettext(
            "{share} were right at the first vote: no discussion needed.",
            share=t.percent(result.first_right)))
    else:
        lines.append(t.gettext("right: {before} → {after}",
                               before=t.percent(result.first_right),
                               after=t.percent(result.second_right)))
    if result.transfer_right is not None:  # the isomorphic question, answered alone
        lines.append(t.gettext("the same idea, answered alone: {share} right",
                               share=t.percent(result.transfer_right)))
        if (other := result.transfer_summary) is not None:
            p = other.question
            lines.append(t.gettext("Answer: {answer}",
                                   answer=f"{letter(p.correct)}) {p.options[p.correct]}"))
        gains = []
        if (gain := result.normalised_gain) is not None:
            gains.append(t.gettext("normalised gain {gain}", gain=f"{gain:+.2f}"))
        if result.learning_gain is not None:
            gains.append(t.gettext("weighted learning gain {gain}",
                                   gain=f"{result.learning_gain:.2f}"))
        if gains:
            lines.append(" · ".join(gains))
    lines.append("")
    lines.append(q.details or q.explanation)
    return "\n".join(lines)
