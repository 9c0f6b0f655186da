"""The `quizbot` command line: help, option checks, configuration errors and pipes."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import _parser, main

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "content"


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The caller's environment without any quizbot setting, with a database in tmp_path."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TELEGRAM_", "DISCORD_", "QUIZBOT_"))
    }
    return {**env, "QUIZBOT_DATABASE": str(tmp_path / "quiz.db"), **extra}


def quizbot(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the command in tmp_path (so no developer's .env is read)."""
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env if env is not None else clean_env(tmp_path),
    )


# --- help -------------------------------------------------------------------------------


def test_no_arguments_prints_help_not_an_error(tmp_path: Path) -> None:
    proc = quizbot(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: quizbot")
    for command in ("run", "play", "leaderboard", "stats", "content"):
        assert f"    {command}" in proc.stdout
    assert "error" not in proc.stderr and "required" not in proc.stderr


def test_content_alone_prints_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["content"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: quizbot content") and "validate" in out and "export" in out


def test_no_arguments_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("usage: quizbot")


def _all_parsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(parser.prog, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _all_parsers(sub)
    return found


def test_every_command_and_option_has_help() -> None:
    missing = []
    for prog, parser in _all_parsers(_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                helped = {choice.dest for choice in action._choices_actions if choice.help}
                missing += [f"{prog} {name}" for name in action.choices if name not in helped]
            elif not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{prog} {'/'.join(action.option_strings) or action.dest}")
    assert not missing


# --- leaderboard --limit ----------------------------------------------------------------


@pytest.mark.parametrize("value", ["1", "10", "100"])
def test_limit_accepts_1_to_100(value: str) -> None:
    args = _parser().parse_args(["leaderboard", "--limit", value])
    assert args.limit == int(value)


def test_limit_defaults_to_10() -> None:
    assert _parser().parse_args(["leaderboard"]).limit == 10


@pytest.mark.parametrize("value", ["0", "-1", "101", "1000000", "ten", "1.5", ""])
def test_limit_outside_1_to_100_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        _parser().parse_args(["leaderboard", "--limit", value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --limit: must be a whole number from 1 to 100" in err


def test_leaderboard_with_the_largest_limit_runs(tmp_path: Path) -> None:
    assert quizbot(tmp_path, "db", "migrate").returncode == 0
    proc = quizbot(tmp_path, "leaderboard", "--limit", "100")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", [["leaderboard"], ["stats", "--name", "x"], ["report"],
                                     ["chats"], ["content", "reports"]])
def test_a_reading_command_on_a_mistyped_database_refuses_and_creates_nothing(
    tmp_path: Path, command: list[str]
) -> None:
    """A mistyped QUIZBOT_DATABASE must not look like a bot whose history was lost."""
    typo = tmp_path / "quizbto.db"
    proc = quizbot(tmp_path, *command, env=clean_env(tmp_path, QUIZBOT_DATABASE=str(typo)))
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr == (f"quizbot: no database at {typo} (QUIZBOT_DATABASE): check the path; "
                           "`quizbot run` creates one\n")
    assert list(tmp_path.iterdir()) == []


def test_report_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    """`quizbot report | head`, the reader gone before the report is written: no traceback."""
    assert quizbot(tmp_path, "db", "migrate").returncode == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # a reader that has already left
    try:
        proc = subprocess.run([sys.executable, "-m", "bot", "report"], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=60, cwd=tmp_path,
                              env=clean_env(tmp_path))
    finally:
        os.close(write_end)
    err = proc.stderr
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err


# --- configuration ----------------------------------------------------------------------


def test_env_example_copied_as_is_lets_commands_run(tmp_path: Path) -> None:
    shutil.copy(ROOT / ".env.example", tmp_path / ".env")
    env = clean_env(tmp_path)
    del env["QUIZBOT_DATABASE"]  # everything from .env, as a newcomer would have it
    proc = quizbot(tmp_path, "content", "validate", env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok: ") and str(BUNDLED) in proc.stdout


SECRET = "123456:SECRET-token"


def test_bad_configuration_one_line_per_variable_never_the_value(tmp_path: Path) -> None:
    env = clean_env(
        tmp_path,
        DISCORD_GUILD_ID="my-guild",
        TELEGRAM_BOT_TOKEN=f"{SECRET}\nsecond-line",
        QUIZBOT_LOG_LEVEL="LOUD",
    )
    proc = quizbot(tmp_path, "content", "validate", env=env)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert sorted(line.split(":")[2].strip() for line in lines) == [
        "DISCORD_GUILD_ID", "QUIZBOT_LOG_LEVEL", "TELEGRAM_BOT_TOKEN",
    ]
    assert all(line.startswith("quizbot: configuration error: ") for line in lines)
    for value in ("SECRET", "123456", "second-line", "my-guild", "LOUD"):
        assert value not in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_blank_variable_in_the_environment_means_unset(tmp_path: Path) -> None:
    env = clean_env(
        tmp_path, DISCORD_GUILD_ID="", QUIZBOT_QUESTION_SECONDS="", QUIZBOT_CONTENT_DIR=""
    )
    proc = quizbot(tmp_path, "content", "validate", env=env)
    assert proc.returncode == 0, proc.stderr


# --- content validate / export ----------------------------------------------------------


def test_validate_prints_file_line_error_for_every_problem(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    packs.mkdir()
    (packs / "a.yaml").write_text("id: a\ntitle: [x\n", encoding="utf-8")
    (packs / "b.yaml").write_text("id: B\n", encoding="utf-8")
    proc = quizbot(tmp_path, "content", "validate", str(packs))
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert lines == [
        f"{packs / 'a.yaml'}:3: error: invalid YAML: expected ',' or ']', but got '<stream end>'",
        f"{packs / 'b.yaml'}:1: error: id must be lowercase letters, digits and hyphens (at most "
        "48), starting with a letter or digit",
        f"{packs / 'b.yaml'}:1: error: title is missing",
        f"{packs / 'b.yaml'}:1: error: questions is missing",
        f"4 errors: nothing loaded from {packs}",
    ]


def big_pack(tmp_path: Path, copies: int = 8) -> Path:
    """A valid pack larger than a pipe's buffer, so a closed reader is noticed mid-write."""
    source = (BUNDLED / "activation-recomputation.yaml").read_text(encoding="utf-8")
    head, body = source.split("questions:\n", 1)
    text = head + "questions:\n" + "".join(  # each copy's ids, and the pairs naming them
        body.replace("  - id: ", f"  - id: c{i}-").replace("    pair: ", f"    pair: c{i}-")
        for i in range(copies)
    )
    path = tmp_path / "big.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")
def test_export_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    """`quizbot content export | head -1`: no BrokenPipeError traceback."""
    pack = big_pack(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "content", "export", str(pack)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=clean_env(tmp_path),
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline() == b"[\n"
    proc.stdout.close()  # what `head -1` does after its line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert err == ""


def test_export_of_a_big_pack_is_complete_json(tmp_path: Path) -> None:
    proc = quizbot(tmp_path, "content", "export", str(big_pack(tmp_path)))
    assert proc.returncode == 0, proc.stderr
    [quiz] = json.loads(proc.stdout)
    one = (BUNDLED / "activation-recomputation.yaml").read_text(encoding="utf-8")
    questions = one[one.index("\nquestions:"):]  # not the pack's list of misconceptions
    assert len(quiz["questions"]) == 8 * questions.count("\n  - id: ")
