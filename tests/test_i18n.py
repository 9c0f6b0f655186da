"""The interface-string catalogs: complete, consistent with the code, and safe to render.

Every check reads the real catalogs under bot/i18n/locales and extracts the msgids from the
code with the same extractor as `python scripts/i18n.py`, so a string added to the code
without a translation, a broken placeholder or a stale template fails here (and in CI).
"""

from __future__ import annotations

import gettext
import importlib.util
import re
import shutil
import sys
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime, time
from pathlib import Path
from types import ModuleType

import pytest
from babel import Locale
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po, write_po
from hypothesis import given, settings
from hypothesis import strategies as st

import bot.i18n as i18n
from bot.adapters.telegram.help import ENTRIES as TELEGRAM_HELP
from bot.content.schema import DEFAULT_LOCALE, LOCALES
from bot.core import render
from bot.core.errors import (
    BadChart,
    BadPeriod,
    BadZone,
    NoActiveRun,
    UnknownQuiz,
    UnsupportedLocale,
    may_not_change_daily,
    may_not_change_language,
    may_not_see_analysis,
)
from bot.core.help import help_text, welcome_text
from bot.core.models import (
    Answerer,
    AnswerResult,
    AnswerStatus,
    BoardRow,
    Leaderboard,
    MissedQuestion,
    Period,
    PersonStats,
    PostSummary,
    QuizInfo,
    QuizStats,
    RunSummary,
    ScheduleStatus,
    ShownQuestion,
)
from bot.core.schedule import Schedule
from bot.i18n import Translator

ROOT = Path(__file__).resolve().parent.parent
TARGETS = [code for code in LOCALES if code != DEFAULT_LOCALE]
SCRIPTS = {"bn": (0x0980, 0x09FF), "hi": (0x0900, 0x097F)}  # Bengali, Devanagari blocks
TELEGRAM_DESCRIPTION = 256
DISCORD_DESCRIPTION = 100


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("quizbot_i18n_script", ROOT / "scripts/i18n.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


script = _load_script()


@pytest.fixture(scope="module")
def template() -> Catalog:
    """The msgids in the code right now (extracted in memory, nothing written)."""
    extracted: Catalog = script.extract()
    return extracted


def catalog(locale: str) -> Catalog:
    read: Catalog = script.read_catalog(script.po_path(locale), locale)
    return read


def entries(cat: Catalog) -> Iterator[Message]:
    return (m for m in cat if m.id)


def label(message: Message) -> str:
    return message.id if isinstance(message.id, str) else message.id[0]


def in_script(text: str, locale: str) -> bool:
    low, high = SCRIPTS[locale]
    return any(low <= ord(ch) <= high for ch in text)


def placeholders(text: str) -> list[str]:
    return sorted(script.placeholders(text))


# completeness ------------------------------------------------------------------------------

def test_template_is_up_to_date(template: Catalog) -> None:
    on_disk = script.read_catalog(script.POT_PATH)
    in_code = script.message_ids(template)
    written = script.message_ids(on_disk)
    assert in_code - written == set(), "msgids missing from the .pot: run python scripts/i18n.py"
    assert written - in_code == set(), "msgids no longer in the code: run python scripts/i18n.py"
    assert script.template_keys(on_disk) == script.template_keys(template)


def test_extraction_finds_every_kind_of_call(template: Catalog) -> None:
    ids = script.message_ids(template)
    assert "Available quizzes:" in ids  # t.gettext(...)
    assert ("{n} question", "{n} questions") in ids  # t.ngettext(singular, plural, n)
    assert "Leaderboard · today" in ids  # the _() marker
    assert len(ids) > 50


@pytest.mark.parametrize("locale", TARGETS)
def test_every_msgid_is_translated(template: Catalog, locale: str) -> None:
    cat = catalog(locale)
    missing, empty, fuzzy, wrong_forms = [], [], [], []
    for entry in entries(template):
        message = cat.get(entry.id, entry.context)
        if message is None:
            missing.append(label(entry))
            continue
        if message.fuzzy:
            fuzzy.append(label(entry))
        forms = script.forms(message)
        if not all(form.strip() for form in forms):
            empty.append(label(entry))
        if entry.pluralizable and len(forms) != cat.num_plurals:
            wrong_forms.append(label(entry))
    assert missing == [], f"{locale}: not in the catalog"
    assert empty == [], f"{locale}: empty translations"
    assert fuzzy == [], f"{locale}: fuzzy translations need review"
    assert wrong_forms == [], f"{locale}: wrong number of plural forms"


@pytest.mark.parametrize("locale", TARGETS)
def test_placeholders_match(template: Catalog, locale: str) -> None:
    cat = catalog(locale)
    wrong = []
    for entry in entries(template):
        message = cat.get(entry.id, entry.context)
        if message is None:
            continue  # reported by test_every_msgid_is_translated
        if not isinstance(entry.id, str):  # pluralizable: (singular, plural)
            singular, plural = entry.id
            assert set(placeholders(singular)) <= set(placeholders(plural)), singular
            expected = placeholders(plural)
        else:
            expected = placeholders(entry.id)
        for form in script.forms(message):
            if placeholders(form) != expected:
                wrong.append((label(entry), form))
    assert wrong == []


@pytest.mark.parametrize("locale", TARGETS)
def test_commands_emoji_and_formats_kept(template: Catalog, locale: str) -> None:
    """Command names (/quiz), HH:MM and emoji are the same in every language."""
    command = re.compile(r"(?<![\w/])/[a-z_]+")

    def kept(text: str) -> tuple[list[str], list[str], bool]:
        emoji = sorted(ch for ch in text if unicodedata.category(ch) == "So")
        return sorted(set(command.findall(text))), emoji, "HH:MM" in text

    cat = catalog(locale)
    wrong = []
    for entry in entries(template):
        message = cat.get(entry.id, entry.context)
        if message is None:
            continue
        source = entry.id if isinstance(entry.id, str) else entry.id[1]
        for form in script.forms(message):
            if form and kept(form) != kept(source):
                wrong.append((label(entry), form))
    assert wrong == []


def test_check_mode_passes() -> None:
    assert script.main(["--check"]) == 0


def test_check_mode_catches_a_new_msgid(tmp_path: Path) -> None:
    """A string added to the code makes the template stale until the catalogs are refreshed;
    reusing a msgid in another file does not (it needs no translation work)."""
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "new.py").write_text(
        'def f(t):\n    return t.gettext("A brand-new sentence.") + t.gettext("Choose a quiz:")\n'
    )
    template = script.extract()
    for message in script.extract(tmp_path / "bot"):
        if message.id:
            template.add(message.id, None, message.locations, context=message.context)
    found = script.check(template, [])
    assert len(found) == 1 and "is stale (1 new, 0 removed msgids)" in found[0]
    assert "Choose a quiz:" in script.message_ids(template)


def test_checker_catches_broken_catalogs(template: Catalog) -> None:
    """--check is only as good as `problems`: break a copy of a catalog four ways."""
    broken = catalog("bn")
    singles = [m for m in entries(broken) if not m.pluralizable and "{" in m.id]
    removed, fuzzed, typo = singles[0], singles[1], singles[2]
    empty = next(m for m in entries(broken) if m.pluralizable)
    assert isinstance(typo.string, str) and isinstance(empty.string, tuple)  # as read_po reads
    del broken[removed.id]
    broken[fuzzed.id].flags.add("fuzzy")
    broken[typo.id].string = typo.string.replace("{", "{x", 1)
    broken[empty.id].string = (empty.string[0], "")
    found = "\n".join(script.problems(template, broken, "bn"))
    assert f"missing: {removed.id!r}" in found
    assert f"fuzzy (needs review): {fuzzed.id!r}" in found
    assert "placeholders" in found and repr(typo.id) in found
    assert f"untranslated: {label(empty)!r}" in found
    assert script.problems(template, catalog("bn"), "bn") == []


# plurals -----------------------------------------------------------------------------------

def cldr_index(locale: str, n: int) -> int:
    """The gettext plural index CLDR gives n (forms in CLDR's order: one, ..., other)."""
    rule = Locale.parse(locale).plural_form
    return cldr_categories(locale).index(rule(n))


def cldr_categories(locale: str) -> list[str]:
    tags = {*Locale.parse(locale).plural_form.tags, "other"}  # "other" is implicit in CLDR
    return [tag for tag in ("zero", "one", "two", "few", "many", "other") if tag in tags]


@pytest.mark.parametrize("locale", TARGETS)
def test_plural_header_follows_cldr(locale: str) -> None:
    cat = catalog(locale)
    assert cat.plural_forms == "nplurals=2; plural=(n > 1);"  # bn, hi: one = i in 0 or n in 1
    rule = gettext.c2py(cat.plural_expr)
    assert cat.num_plurals == len(cldr_categories(locale))
    assert all(rule(n) == cldr_index(locale, n) for n in range(0, 1001))


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_english_plurals(n: int) -> None:
    text = Translator("en").ngettext("{n} person answered", "{n} people answered", n)
    assert text == (f"{n} person answered" if n == 1 else f"{n} people answered")


@pytest.mark.parametrize("locale", TARGETS)
@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_real_plurals_pick_the_cldr_form(locale: str, n: int) -> None:
    msgid = ("{n} person answered", "{n} people answered")
    forms = catalog(locale)[msgid[0]].string
    assert isinstance(forms, tuple)  # a plural's forms, as read_po reads them
    text = Translator(locale).ngettext(*msgid, n)
    assert text == forms[cldr_index(locale, n)].format(n=n)
    assert in_script(text, locale)


@pytest.fixture
def scratch_locales(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the real catalogs that a test may change; the translator cache is reset."""
    locales = tmp_path / "locales"
    shutil.copytree(script.LOCALE_DIR, locales)
    monkeypatch.setattr(i18n, "LOCALE_DIR", locales)
    i18n._translations.cache_clear()
    yield locales
    i18n._translations.cache_clear()


def edit_catalog(
    locales: Path, locale: str, edit: dict[str | tuple[str, str], str | tuple[str, str]],
    fuzzy: tuple[str, ...] = (),
) -> None:
    path = locales / locale / "LC_MESSAGES" / "quizbot.po"
    with path.open("rb") as fh:
        cat = read_po(fh, locale=locale)
    for msgid, string in edit.items():
        key = msgid if isinstance(msgid, str) else msgid[0]
        cat[key].string = string
    for msgid in fuzzy:
        cat[msgid].flags.add("fuzzy")
    with path.open("wb") as fh:
        write_po(fh, cat)


@pytest.mark.parametrize("locale", TARGETS)
@pytest.mark.parametrize(("n", "form"), [(0, "ONE"), (1, "ONE"), (2, "OTHER"), (5, "OTHER")])
def test_ngettext_uses_the_catalogs_plural_rule(
    scratch_locales: Path, locale: str, n: int, form: str
) -> None:
    """With forms that differ, n = 0 and 1 take the first form in bn and hi (English: only 1)."""
    msgid = ("{n} question", "{n} questions")
    edit_catalog(scratch_locales, locale, {msgid: ("ONE {n}", "OTHER {n}")})
    assert Translator(locale).ngettext(*msgid, n) == f"{form} {n}"


PLURALS = [
    (locale, m.id) for locale in LOCALES for m in entries(script.read_catalog(script.POT_PATH))
    if m.pluralizable
]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PLURALS), st.integers(min_value=-10**6, max_value=10**15))
def test_any_count_fills_every_placeholder(case: tuple[str, tuple[str, str]], n: int) -> None:
    locale, (singular, plural) = case
    t = Translator(locale)
    values = {name: "X" for name in script.placeholders(plural) if name != "n"}
    text = t.ngettext(singular, plural, n, **values)
    assert "{" not in text and "}" not in text
    assert t.number(n) in text


# fallback ----------------------------------------------------------------------------------

@pytest.mark.parametrize("locale", TARGETS)
def test_missing_string_falls_back_to_english(locale: str) -> None:
    t = Translator(locale)
    assert t.gettext("Not a msgid of quizbot: {name}", name="Rina") == (
        "Not a msgid of quizbot: Rina"
    )
    assert t.gettext("Not a msgid of quizbot") == "Not a msgid of quizbot"
    assert t.ngettext("{n} unknown thing", "{n} unknown things", 1) == "1 unknown thing"
    assert t.ngettext("{n} unknown thing", "{n} unknown things", 0) == "0 unknown things"


def test_unknown_locale_is_english() -> None:
    assert Translator("fr").gettext("Available quizzes:") == "Available quizzes:"
    assert Translator("fr").locale == "en"


@pytest.mark.parametrize("locale", TARGETS)
def test_real_msgid_is_translated(locale: str) -> None:
    t = Translator(locale)
    for msgid in ("Available quizzes:", "A perfect score!", "Leaderboard · today"):
        text = t.gettext(msgid)
        assert text != msgid and in_script(text, locale), (locale, msgid, text)
    assert t.gettext("📊 Stats for {name}", name="Rina").count("Rina") == 1


@pytest.mark.parametrize("locale", TARGETS)
def test_unreviewed_or_broken_entries_fall_back_to_english(
    scratch_locales: Path, locale: str
) -> None:
    edit_catalog(
        scratch_locales, locale,
        {
            "Fastest: {names}": "{nmes} ⚡",  # a typo in a placeholder
            ("{n} question", "{n} questions"): ("{n} X", ""),  # a plural form left empty
        },
        fuzzy=("Available quizzes:",),
    )
    t = Translator(locale)
    assert t.gettext("Available quizzes:") == "Available quizzes:"
    assert t.gettext("Fastest: {names}", names="Rina") == "Fastest: Rina"
    assert t.ngettext("{n} question", "{n} questions", 0) == "0 questions"
    assert t.ngettext("{n} question", "{n} questions", 1) == "1 question"
    assert in_script(t.gettext("A perfect score!"), locale)  # the rest still translated


# rendering full texts ----------------------------------------------------------------------

def shown(locale: str) -> ShownQuestion:
    return ShownQuestion(
        post_id=7, chat_key="tg:-100", quiz_id="grad-accum", quiz_title="Gradient accumulation",
        question_id="q1", prompt="What does accumulation trade?",
        options=("Memory for time", "Time for accuracy", "Nothing", "Accuracy for memory"),
        correct=0, explanation="Smaller micro-batches, more steps.", details="Longer text.",
        locale=locale, number=3, total=12, closes_at=datetime(2026, 3, 1, 12, 5, tzinfo=UTC),
    )


def analysis_texts(t: Translator) -> dict[str, str]:
    """/analysis: a quiz with a flagged question, a chart that leaves some out, and none."""
    from bot.core.analysis_text import analysis_blocks
    from bot.core.chat_analysis import ChatAnalysis
    from bot.core.models import Flag, ItemStats, QuizReport

    item = ItemStats("ga-main", "What?", 0, (2, 9, 1), -0.25, 12, 15_300.0,
                     (Flag.TOO_HARD, Flag.DISTRACTOR, Flag.NEGATIVE))
    easy = ItemStats("ga-easy", "Why?", 1, (0, 11, 0), None, 0, None, (Flag.TOO_EASY,))
    report = QuizReport("grad-accum", "Gradient accumulation", 1, (item, easy))
    charted = QuizReport("grad-accum", "Gradient accumulation", 1, (item,))
    return {
        "analysis": "\n\n".join(analysis_blocks(
            ChatAnalysis("tg:-1", None, (report,), (charted,)), t)),
        "analysis_none": analysis_blocks(ChatAnalysis("tg:-1", None, ()), t)[0],
        "analysis_none_quiz": analysis_blocks(ChatAnalysis("tg:-1", "grad-accum", ()), t)[0],
        "not_allowed_analysis": render.error_text(may_not_see_analysis(), t, ()),
        "bad_chart": render.error_text(BadChart("maybe"), t, ()),
    }


def rendered_texts(locale: str) -> dict[str, str]:
    t = Translator(locale)
    q = shown(locale)
    rows = tuple(
        BoardRow(rank=i, person_key=f"tg:{i}", name=name, correct=c, answered=a, time_ms=ms,
                 day_streak=days)
        for i, (name, c, a, ms, days) in enumerate(
            [("Rina", 12, 12, 41_200, 2), ("Arjun", 1, 1, 800, 0),
             ("", 1_234, 2_000, 9_999_999, 1_000)],
            start=1,
        )
    )
    me = BoardRow(rank=57, person_key="tg:57", name="Tanvir", correct=0, answered=3, time_ms=0)
    missed = tuple(
        MissedQuestion(quiz_id="grad-accum", question_id=f"q{i}", number=i, prompt="Why?",
                       correct_text="Because", chosen_text="No", explanation="Since.")
        for i in (2, 11)
    )
    quizzes = [QuizInfo("grad-accum", "Gradient accumulation", ("memory",), 1),
               QuizInfo("act-recompute", "Activation recomputation", ("memory",), 12)]
    summary = PostSummary(
        post_id=7, chat_key="tg:-100", question=q, answered=1_001, right=667,
        per_option=(667, 300, 0, 34),
        fastest=(Answerer("Rina", "tg:1", 1_234), Answerer("", "tg:9", 60_000)),
    )
    texts = {
        "question": render.question_text(q, t),
        "summary": render.summary_text(summary, t),
        "summary_one": render.summary_text(
            PostSummary(post_id=7, chat_key="c", question=q, answered=1, right=1,
                        per_option=(1, 0, 0, 0), fastest=(Answerer("Rina", "tg:1", 900),)), t),
        "summary_none": render.summary_text(
            PostSummary(post_id=7, chat_key="c", question=q, answered=0, right=0,
                        per_option=(0, 0, 0, 0), fastest=()), t),
        "run_summary": render.run_summary_text(
            RunSummary(run_id=1, quiz_id="grad-accum", quiz_title="Gradient accumulation",
                       score=10, total=12, missed=missed), t),
        "run_perfect": render.run_summary_text(
            RunSummary(run_id=1, quiz_id="grad-accum", quiz_title="Gradient accumulation",
                       score=12, total=12, missed=()), t),
        "stats": render.stats_text(
            PersonStats(person_key="tg:1", name="Rina", answered=1, correct=1,
                        current_streak=1, best_streak=21,
                        per_quiz=(QuizStats("grad-accum", "Gradient accumulation", 1, 1),),
                        day_streak=0, best_day_streak=5), t),
        "stats_empty": render.stats_text(
            PersonStats(person_key="tg:2", name="", answered=0, correct=0,
                        current_streak=0, best_streak=0), t),
        "review": render.review_text(missed, t),
        "review_empty": render.review_text((), t),
        "quiz_list": render.quiz_list_text(quizzes, t),
        "unknown_quiz": render.error_text(UnknownQuiz("optimizers"), t, quizzes),
        "no_run": render.error_text(NoActiveRun(), t, quizzes),
        "bad_language": render.error_text(UnsupportedLocale("fr"), t, quizzes),
        "bad_period": render.error_text(BadPeriod("year"), t, quizzes),
        "not_allowed_daily": render.error_text(may_not_change_daily(), t, quizzes),
        "not_allowed_language": render.error_text(may_not_change_language(), t, quizzes),
        "bad_zone": render.error_text(BadZone("Kolkata", ("Asia/Kolkata",)), t, quizzes),
        "help": help_text(TELEGRAM_HELP, quizzes, t, private=False, admin=True,
                          start="/quiz <quiz id>"),
        "help_private": help_text(TELEGRAM_HELP, quizzes, t, private=True, admin=False,
                                  start="/quiz <quiz id>"),
        "welcome": welcome_text(quizzes, t, start="/quiz <quiz id>"),
    }
    texts.update(analysis_texts(t))
    for period in Period:
        texts[f"board_{period}"] = render.leaderboard_text(
            Leaderboard(chat_key="tg:-100", period=period, rows=rows, me=me), t, scope="ML 101")
    texts["board_empty"] = render.leaderboard_text(
        Leaderboard(chat_key=None, period=Period.DAY, rows=(), me=None), t)
    texts["board_not_me"] = render.leaderboard_text(
        Leaderboard(chat_key=None, period=Period.WEEK, rows=rows, me=None), t)
    for status in AnswerStatus:
        result = AnswerResult(
            status=status, post_id=7, correct=status is AnswerStatus.ACCEPTED, chosen=1,
            correct_option=0, correct_text="Memory for time", chosen_text="Time for accuracy",
            explanation="Smaller micro-batches.", details="More.", locale=locale,
        )
        texts[f"result_{status}"] = render.result_text(result, t, details=True)
    if hasattr(render, "schedule_status_text"):
        for selector, minutes in (("grad-accum", 1), (None, 45), (None, None)):
            schedule = Schedule(chat_key="tg:-100", at=time(9, 30), tz="Asia/Kolkata",
                                selector=selector, open_minutes=minutes)
            texts[f"schedule_{selector}_{minutes}"] = render.schedule_status_text(
                ScheduleStatus(schedule, datetime(2026, 3, 2, 4, 0, tzinfo=UTC)), t)
    return texts


@pytest.mark.parametrize("locale", LOCALES)
def test_full_texts_render_in_every_locale(locale: str) -> None:
    texts = rendered_texts(locale)  # a KeyError or IndexError from a catalog would raise here
    for name, text in texts.items():
        assert text.strip(), name
        assert not re.search(r"\{\w*\}", text), (name, text)
    if locale in SCRIPTS:
        english = rendered_texts(DEFAULT_LOCALE)
        for name, text in texts.items():
            assert text != english[name], name
            assert in_script(text, locale), (name, text)


# platform limits for command descriptions --------------------------------------------------

def test_telegram_command_descriptions_fit() -> None:
    from bot.adapters.telegram.app import COMMANDS

    ids = script.message_ids(script.extract())
    for _name, description in COMMANDS:
        assert description in ids
        for locale in LOCALES:
            text = Translator(locale).gettext(description)
            assert 1 <= len(text) <= TELEGRAM_DESCRIPTION, (locale, text)


async def test_discord_descriptions_fit() -> None:
    from discord import app_commands

    from bot.adapters.discord.client import build_bot
    from bot.adapters.discord.publish import ChannelPublisher

    # only the command tree is read; no service is needed for that
    client = build_bot(None, ChannelPublisher(None))  # type: ignore[arg-type]
    await client.setup_hook()
    texts: list[str] = []
    msgids = script.message_ids(script.extract())
    for command in client.tree.walk_commands():
        texts.append(command.description)
        if isinstance(command, app_commands.Command):
            for parameter in command.parameters:
                texts.append(parameter.description)
                texts.extend(choice.name for choice in parameter.choices)
    language_names = set(i18n.LANGUAGE_NAMES.values())  # each in its own language, not msgids
    assert len(texts) > 10
    for text in texts:
        if text in language_names or text == "…":
            continue
        assert text in msgids, f"Discord text not marked for translation: {text!r}"
        for locale in LOCALES:
            translated = Translator(locale).gettext(text)
            assert 1 <= len(translated) <= DISCORD_DESCRIPTION, (locale, translated)
    await client.close()


@pytest.mark.parametrize("locale", [loc for loc in LOCALES if loc != DEFAULT_LOCALE])
def test_catalogs_use_latin_digits(locale: str) -> None:
    """Every number the bot prints is Latin (see "Languages" in the README): a translation
    that spells one in its own script would be the odd one out."""
    with open(i18n.catalog_path(locale), "rb") as f:
        catalog = read_po(f)
    for message in catalog:
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for text in strings:
            assert not any(unicodedata.decimal(c, None) is not None and not c.isascii()
                           for c in text or ""), (message.id, text)
