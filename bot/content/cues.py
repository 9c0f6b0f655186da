"""Wording and shape cues: ways a test-wise reader picks the answer without knowing the subject.

Each cue is counted per pack and per language (the key's position once, it has no language):

- an absolute word ("only", "never", "every", …) in a distractor when the key has none, and the
  key as the only option without one (that question alone gives the answer away);
- a "none/nothing/nowhere" option that is never the answer;
- stem echo: the option sharing the most content words with the question is the key;
- the key sharing the most words with the other options (the one the distractors were
  written from);
- the key in one position too often.

How often is too often: under no bias, the key is the "most something" option of a question
with k options with probability 1/k. A question where t options tie for the most gives the
key 1/t (a reader guessing among the tied wins that often), so the expected count is still
the sum of 1/k over the questions counted (those where some option has any of it). The count,
rounded to the nearest whole number, is flagged when a sum of independent Bernoulli(1/k) draws
reaches it that rarely: P(X >= count) < ALPHA.

ALPHA is 0.15. With 8 questions of 4 options chance gives 2 hits on average; P(X >= 3) is 0.32,
P(X >= 4) is 0.11, P(X >= 5) is 0.027. So 4 of 8 is flagged and 3 of 8 is not: 3 happens in a
third of honest packs, while stopping at 5 would let through packs like the ones a review found
at 4.5 of 8 (issue 24). The price is that about 1 honest pack in 9 is asked to rewrite one
question per flagged cue, a small cost next to a pack that can be gamed. The same rule serves
the "never keyed" cues: an absolute (or "none") option falls on the key with probability 1/k,
so m such options all missing it has probability of the product of (1 - 1/k); with 4 options,
7 of them are flagged ((3/4)^7 = 0.13) and 6 are not (0.18). Key positions: the most used
position is flagged when k * P(Bin(n, 1/k) >= its count) < ALPHA (any of the k positions
could have been the busy one): with 8 questions of 4 options, 5 keys in one place is flagged
(4 x 0.027 = 0.11), 4 is not.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.content import limits
from bot.content.schema import LOCALES, Kind, QuizModel

ALPHA = 0.15

# A word: letters, digits, the Bengali and Devanagari blocks (their vowel signs are not
# \w) without the danda, and inner hyphens/apostrophes ("all-reduce" is one word).
_WORD = re.compile(
    r"[\w\u0980-\u09FF\u0900-\u0963\u0966-\u097F]+(?:[-'’][\w\u0980-\u09FF\u0900-\u0963\u0966-\u097F]+)*"
)

# "every": Bengali প্রতিটি and Hindi हर also say "each", the neutral word of most technical
# prompts, so they are not counted (nor "each" in English).
ABSOLUTES: dict[str, frozenset[str]] = {
    "en": frozenset({
        "only", "never", "every", "always", "nothing", "none", "all", "nowhere", "everything",
        "everywhere", "nobody", "entirely", "completely",
    }),
    "bn": frozenset({
        "শুধু", "শুধুই", "কেবল", "কেবলই", "কখনো", "কখনও", "কখনোই", "সবসময়", "সর্বদা",
        "কিছুই", "সব", "সবই", "সবাই", "সবকিছু", "সমস্ত", "পুরোপুরি", "সম্পূর্ণ",
    }),
    "hi": frozenset({
        "केवल", "सिर्फ़", "सिर्फ", "कभी", "हमेशा", "सभी", "सब", "सारे", "सारी",
        "कहीं", "बिल्कुल", "पूरी", "पूरा", "पूरे",
    }),
}

# "None of these"-type options: said as a phrase in bn and hi
_NONE_TYPE: dict[str, re.Pattern[str]] = {
    "en": re.compile(r"\b(none|nothing|nowhere|neither|no one|nobody)\b", re.IGNORECASE),
    "bn": re.compile(r"(কিছুই\s*না|কোনোটিই\s*না|কোনোটাই\s*না|কোথাও\s*না|কেউ\s*না|কোনো\s*কিছু\s*না)"),
    "hi": re.compile(r"(कुछ\s*(भी\s*)?नहीं|कोई\s*(भी\s*)?नहीं|कहीं\s*(भी\s*)?नहीं|किसी\s*में\s*नहीं)"),
}

# Words too common to count as shared content
STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "a an the and or but if of to in on at by for with from as is are was were be been "
        "being it its this that these those than then so not no do does did can could will "
        "would should may might must has have had which what when where who whom why how each "
        "per into onto about over under between after before while because there their they "
        "them we you your our one two more most less same other such also just up out".split()
    ),
    "bn": frozenset(
        "এবং ও বা কিন্তু যদি তবে এ এই ওই সেই যে যা কী কি কেন কোন কোনো হয় হবে হয়ে হলে হল হলো "
        "করে করা করতে থাকে থেকে জন্য দিয়ে সঙ্গে সাথে মধ্যে পরে আগে তার তাদের এটি এটা সেটি সেটা "
        "না নয় আর একটি একই আরও বেশি কম প্রতি প্রতিটি প্রত্যেক মতো হিসেবে কারণ তাই যখন".split()
    ),
    "hi": frozenset(
        "और या लेकिन अगर तो यह वह ये वे इस उस इन उन का के की को में से पर है हैं था थे थी हो "
        "होता होती होते होगा करना करता करती करते किया कर लिए साथ बाद पहले जो क्या क्यों कौन "
        "कैसे नहीं न एक ही भी तक बीच अधिक कम प्रति हर प्रत्येक जैसे रूप क्योंकि इसलिए जब वाला वाले वाली".split()
    ),
}


def words(text: str, locale: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def content_words(text: str, locale: str) -> set[str]:
    stop = STOPWORDS.get(locale, frozenset())
    return {w for w in words(text, locale) if w not in stop and len(w) > 1}


def absolutes(text: str, locale: str) -> frozenset[str]:
    return ABSOLUTES.get(locale, frozenset()) & set(words(text, locale))


def has_absolute(text: str, locale: str) -> bool:
    return bool(absolutes(text, locale))


def is_none_type(text: str, locale: str) -> bool:
    pattern = _NONE_TYPE.get(locale)
    return bool(pattern and pattern.search(text))


# --- chance ------------------------------------------------------------------------------------


def tail(chances: Sequence[float], hits: int) -> float:
    """P(X >= hits) where X is a sum of independent Bernoulli(p) for p in `chances`."""
    dist = [1.0]  # dist[j] = P(j hits so far)
    for p in chances:
        nxt = [0.0] * (len(dist) + 1)
        for j, q in enumerate(dist):
            nxt[j] += q * (1 - p)
            nxt[j + 1] += q * p
        dist = nxt
    return sum(dist[hits:]) if hits < len(dist) else 0.0


def too_often(chances: Sequence[float], hits: int) -> bool:
    """`hits` is unlikely (below ALPHA) for a pack without the cue."""
    return hits > 0 and tail(chances, hits) < ALPHA


def never_keyed(chances: Sequence[float]) -> bool:
    """Options each keyed with probability p by chance, none of them keyed: unlikely?"""
    return bool(chances) and math.prod(1 - p for p in chances) < ALPHA


def position_skewed(positions: Sequence[int], n_options: int) -> tuple[int, int] | None:
    """The busiest key position (0-based) and its count, if unlikely by chance."""
    if not positions or n_options < 2:
        return None
    position, count = Counter(positions).most_common(1)[0]
    busy = n_options * tail([1 / n_options] * len(positions), count)
    return (position, count) if busy < ALPHA else None


# --- the cues of one pack ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cue:
    question: int | None  # index of the question it is about, None for the pack
    message: str


def _key_credit(values: Sequence[int], key: int) -> float | None:
    """The key's share of "the option with the most": 1/t when it is one of t options tied
    for the most, 0 when another has more; None when no option has any (not counted)."""
    top = max(values)
    if top == 0:
        return None
    tied = [i for i, v in enumerate(values) if v == top]
    return 1 / len(tied) if key in tied else 0.0


def _flagged(chances: Sequence[float], hits: float) -> bool:
    return too_often(chances, math.floor(hits + 0.5))


def _share(hits: float, counted: int) -> str:
    return f"{hits:.3g} of {counted}"


def pack_cues(quiz: QuizModel) -> Iterable[Cue]:
    """Every cue of one pack (as warnings; `--strict` makes them errors)."""
    # cues are about picking one key among options: the other kinds have none, or (true or
    # false, select all) are not read by these strategies
    chosen = [q for q in quiz.questions if q.kind is Kind.CHOICE]
    counts = Counter(len(q.options or ()) for q in chosen)
    if len(counts) == 1:
        n_options = next(iter(counts))
        if skewed := position_skewed([q.answer for q in chosen], n_options):
            position, count = skewed
            yield Cue(None, f"the correct option is option {position + 1} in {count} of "
                      f"{len(chosen)} questions (chance: {len(chosen)}/"
                      f"{n_options}); spread the keys over the positions")
    for locale in LOCALES:
        yield from _locale_cues(quiz, locale)


def _locale_cues(quiz: QuizModel, locale: str) -> Iterable[Cue]:
    echo_chances: list[float] = []
    echo_hits = 0.0
    kin_chances: list[float] = []
    kin_hits = 0.0
    absolute_distractors: list[float] = []
    absolute_keys = 0
    absolute_seen: set[str] = set()
    none_options: list[float] = []
    none_keys = 0
    for qi, q in enumerate(quiz.questions):
        if q.kind is not Kind.CHOICE:
            continue
        texts = [getattr(o.text, locale) for o in q.options or ()]
        prompt = getattr(q.prompt, locale)
        if prompt is None or any(t is None for t in texts) or len(texts) < 3:
            continue
        k = len(texts)
        options = [t for t in texts if t is not None]
        key = q.answer
        absolute = [has_absolute(t, locale) for t in options]
        if not absolute[key] and sum(absolute) == k - 1:
            found = sorted(set().union(*(absolutes(t, locale) for t in options)))
            yield Cue(qi, f"in {locale}, the correct option is the only one without an "
                      f"absolute word ({', '.join(found)}), which points to it; word the "
                      "options alike")
        absolute_keys += absolute[key]
        absolute_distractors += [1 / k for i, a in enumerate(absolute) if a]
        absolute_seen.update(*(absolutes(t, locale) for t in options))
        none = [is_none_type(t, locale) for t in options]
        none_keys += none[key]
        none_options += [1 / k for n in none if n]
        option_words = [content_words(t, locale) for t in options]
        stem = content_words(prompt, locale)
        credit = _key_credit([len(w & stem) for w in option_words], key)
        if credit is not None:
            echo_chances.append(1 / k)
            echo_hits += credit
        kin = [
            sum(len(w & other) for j, other in enumerate(option_words) if j != i)
            for i, w in enumerate(option_words)
        ]
        credit = _key_credit(kin, key)
        if credit is not None:
            kin_chances.append(1 / k)
            kin_hits += credit
    if absolute_keys == 0 and never_keyed(absolute_distractors):
        yield Cue(None, f"in {locale}, absolute words ({', '.join(sorted(absolute_seen)[:4])}) "
                  f"appear in {len(absolute_distractors)} options and never in a correct one, so "
                  "\"avoid absolutes\" scores; let some correct options be absolute too, or "
                  "word the distractors without them")
    if none_keys == 0 and never_keyed(none_options):
        yield Cue(None, f"in {locale}, {len(none_options)} \"none/nothing\" options are never "
                  "the answer; make one the answer or drop some")
    if _flagged(echo_chances, echo_hits):
        yield Cue(None, f"in {locale}, the option sharing the most words with the question is "
                  f"the correct one in {_share(echo_hits, len(echo_chances))} questions "
                  f"(chance: {sum(echo_chances):.1f}); reword the question or the options")
    if _flagged(kin_chances, kin_hits):
        yield Cue(None, f"in {locale}, the correct option shares the most words with the "
                  f"other options in {_share(kin_hits, len(kin_chances))} questions "
                  f"(chance: {sum(kin_chances):.1f}), so the distractors look like variations "
                  "of it; vary the distractors' wording")


# --- the whole bank: what a reader who ignores the subject scores ------------------------------
#
# Each strategy is a way to answer without knowing the subject: it narrows a question's options
# to some the reader guesses among (evenly), or does not apply to the question. Its score is
# the expected accuracy of a reader following it over the questions it applies to, in one
# language; chance is the expected accuracy of guessing among all the options of the same
# questions. A strategy scoring far below chance is a cue too: if the key is never the
# longest, a reader drops the longest option.

FAIL_POINTS = 5.0  # `validate --strict` fails past chance +- this many percentage points
AIM_POINTS = 3.0  # what the bundled bank is written to: within chance +- this
# a strategy applying to fewer questions of a language is shown but not judged: one question
# of five moves its score by 20 points
MIN_QUESTIONS = 10


@dataclass(frozen=True, slots=True)
class _Item:
    """One question as a reader sees it in one language."""

    quiz: str
    question: str
    prompt: str
    options: tuple[str, ...]
    key: int
    locale: str

    @property
    def name(self) -> str:
        return f"{self.quiz}/{self.question}"


def _extreme(item: _Item, pick: Callable[[Iterable[int]], int]) -> list[int]:
    lengths = [limits.tg_len(o) for o in item.options]
    best = pick(lengths)
    return [i for i, n in enumerate(lengths) if n == best]


def _longest(item: _Item) -> list[int] | None:
    return _extreme(item, max)


def _shortest(item: _Item) -> list[int] | None:
    return _extreme(item, min)


def _middle_lengths(item: _Item) -> list[int]:
    dropped = set(_extreme(item, max)) | set(_extreme(item, min))
    return [i for i in range(len(item.options)) if i not in dropped] or list(
        range(len(item.options)))


def _drop_extremes(item: _Item) -> list[int] | None:
    return _middle_lengths(item)


def _echo(item: _Item) -> list[int]:
    stem = content_words(item.prompt, item.locale)
    return [len(content_words(o, item.locale) & stem) for o in item.options]


def _drop_echo(item: _Item) -> list[int] | None:
    """After dropping the longest and the shortest, the one of the rest echoing the stem
    most goes too (when one echoes it more than another)."""
    rest = _middle_lengths(item)
    echo = _echo(item)
    top = max(echo[i] for i in rest)
    kept = [i for i in rest if echo[i] < top]
    return kept or rest


def _pick_echo(item: _Item) -> list[int] | None:
    echo = _echo(item)
    top = max(echo)
    return [i for i, n in enumerate(echo) if n == top] if top else None


# a number not inside a name: FP8, H100, bf16, ZeRO-2 and GPT-3 are names, not values
_NUMBER = re.compile(
    r"(?<!\w)(?<!\d[.,])(?<![^\W\d_]-)\d+(?:,\d{3})*(?:\.\d+)?(?![^\W\d_]*\d)")


def numeric_values(options: Sequence[str]) -> list[float] | None:
    """The options' values when each is one number in the same wording (the same unit):
    "About 0.86 GB", "About 5.7 GB", …; None otherwise."""
    values: list[float] = []
    shapes: set[str] = set()
    for option in options:
        found = _NUMBER.findall(option)
        if len(found) != 1:
            return None
        values.append(float(found[0].replace(",", "")))
        shapes.add(_NUMBER.sub("#", option).strip().casefold())
    return values if len(shapes) == 1 and len(set(values)) >= 3 else None


def _middle_value(item: _Item) -> list[int] | None:
    values = numeric_values(item.options)
    if values is None:
        return None
    low, high = min(values), max(values)
    return [i for i, v in enumerate(values) if low < v < high]


def _odd_opening(item: _Item) -> list[int] | None:
    """The option whose first word differs when every other one opens with the same word."""
    firsts = [next(iter(words(o, item.locale)), "") for o in item.options]
    counts = Counter(firsts)
    if len(item.options) < 3 or len(counts) != 2 or 1 not in counts.values():
        return None
    return [i for i, w in enumerate(firsts) if counts[w] == 1]


@dataclass(frozen=True, slots=True)
class Strategy:
    name: str
    what: str  # what the reader does
    guess: Callable[[_Item], list[int] | None]


STRATEGIES: tuple[Strategy, ...] = (
    Strategy("longest", "pick the longest option", _longest),
    Strategy("shortest", "pick the shortest option", _shortest),
    Strategy("drop-extremes", "drop the longest and the shortest, guess among the rest",
             _drop_extremes),
    Strategy("drop-echo", "drop the longest, the shortest and the one echoing the stem most, "
             "guess among the rest", _drop_echo),
    Strategy("stem-echo", "pick the option sharing the most words with the stem", _pick_echo),
    Strategy("middle-value", "among numeric options in one unit, pick a middle value",
             _middle_value),
    Strategy("odd-opening", "pick the option whose first word differs from the others'",
             _odd_opening),
)


@dataclass(frozen=True, slots=True)
class Score:
    """A strategy in one language over the questions it applies to."""

    strategy: Strategy
    locale: str
    n: int
    score: float  # expected accuracy of its reader, 0..1
    chance: float  # expected accuracy of guessing on the same questions
    wins: tuple[str, ...]  # the questions where it does better than guessing ("quiz/question")
    losses: tuple[str, ...]  # and worse

    @property
    def points(self) -> float:
        """How far above chance, in percentage points (negative: below)."""
        return 100 * (self.score - self.chance)

    @property
    def judged(self) -> bool:
        return self.n >= MIN_QUESTIONS

    @property
    def failed(self) -> bool:
        return self.judged and abs(self.points) > FAIL_POINTS

    def feeding(self) -> tuple[str, ...]:
        """The questions that move it off chance: where it wins if it scores above chance,
        where it loses if below; rewriting some of them brings it back."""
        return self.wins if self.points >= 0 else self.losses


class _Bank(Protocol):
    """A quiz as the catalog (items.Quiz) or the schema (QuizModel) holds it."""

    @property
    def id(self) -> str: ...
    @property
    def questions(self) -> Sequence[Any]: ...


def _items(quizzes: Iterable[_Bank], locale: str) -> Iterator[_Item]:
    """The choice questions that spell their prompt and every option in `locale`, with 3 or
    more options (of two, one is always the longer)."""
    for quiz in quizzes:
        for q in quiz.questions:
            if q.kind is not Kind.CHOICE:
                continue
            prompt = getattr(q.prompt, locale)
            options = tuple(getattr(o.text, locale) for o in q.options)
            if prompt is None or len(options) < 3 or any(o is None for o in options):
                continue
            yield _Item(quiz.id, q.id, prompt, options, q.answer, locale)


def bank_scores(quizzes: Iterable[_Bank]) -> list[Score]:
    """Every strategy's score in every language some question is spelled in."""
    quizzes = list(quizzes)
    scores: list[Score] = []
    for locale in LOCALES:
        items = list(_items(quizzes, locale))
        if not items:
            continue
        for strategy in STRATEGIES:
            got = chance = 0.0
            n = 0
            wins: list[str] = []
            losses: list[str] = []
            for item in items:
                guessed = strategy.guess(item)
                if guessed is None or not guessed:
                    continue
                k = len(item.options)
                mine = (1 / len(guessed)) if item.key in guessed else 0.0
                n += 1
                got += mine
                chance += 1 / k
                if mine > 1 / k + 1e-9:
                    wins.append(item.name)
                elif mine < 1 / k - 1e-9:
                    losses.append(item.name)
            scores.append(Score(strategy, locale, n, got / n if n else 0.0,
                                chance / n if n else 0.0, tuple(wins), tuple(losses)))
    return scores


def _named(names: Sequence[str], at_most: int = 24) -> str:
    shown = ", ".join(names[:at_most])
    return shown + (f" and {len(names) - at_most} more" if len(names) > at_most else "")


def failure(score: Score) -> str:
    """A failed strategy as one sentence that says what to rewrite."""
    side = "above" if score.points > 0 else "below"
    fix = ("the questions where it wins" if score.points > 0 else
           "the questions where it loses")
    return (f"in {score.locale}, a reader who would {score.strategy.what} scores "
            f"{score.score:.1%} against chance {score.chance:.1%} over {score.n} questions "
            f"({abs(score.points):.1f} points {side}; at most {FAIL_POINTS:g}): rewrite some "
            f"of {fix}: {_named(score.feeding())}")


def bank_report(scores: Sequence[Score]) -> str:
    """The table `quizbot content cues` prints: per language, each strategy's score, chance
    and their difference, then the questions feeding the worst judged strategy."""
    out = [f"A reader who ignores the subject, per language: score against chance "
           f"(aim within +-{AIM_POINTS:g} points, --strict fails past +-{FAIL_POINTS:g}; "
           f"fewer than {MIN_QUESTIONS} questions: not judged)"]
    for locale in dict.fromkeys(s.locale for s in scores):
        mine = [s for s in scores if s.locale == locale]
        out += ["", f"{locale}:", f"  {'strategy':<15}{'questions':>10}{'score':>9}{'chance':>9}"
                f"{'diff':>8}"]
        for s in mine:
            mark = ("FAIL" if s.failed else "" if not s.judged or abs(s.points) <= AIM_POINTS
                    else "over aim")
            if not s.judged:
                mark = "not judged"
            out.append(f"  {s.strategy.name:<15}{s.n:>10}{s.score:>9.1%}{s.chance:>9.1%}"
                       f"{s.points:>+8.1f}  {mark}".rstrip())
        judged = [s for s in mine if s.judged and s.feeding()]
        if judged:
            worst = max(judged, key=lambda s: abs(s.points))
            which = "wins" if worst.points >= 0 else "loses"
            out.append(f"  worst: {worst.strategy.name} ({worst.strategy.what}), "
                       f"{worst.points:+.1f} points; it {which} on {len(worst.feeding())}: "
                       f"{_named(worst.feeding(), 200)}")
    return "\n".join(out)
