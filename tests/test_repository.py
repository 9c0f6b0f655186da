"""The repository speaks of the project only: a README that is one page, and no tracked file that
names a folder of the machine it was written on."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_MAX_LINES = 250

# Absolute folders that only exist on a developer's or a build machine. The Docker image's own
# home (/home/quizbot) is part of the project, so it is allowed.
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|root|Users/\w+|home/(?!quizbot\b)\w+|tmp/pytest-)/")


def tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                                capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: no list of tracked files")
    return [ROOT / name for name in listed.decode().split("\0") if name]


def test_readme_is_one_page() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines; keep it to {README_MAX_LINES}, the rest in docs/")


def test_readme_opens_with_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = text.split("```", 2)[1]
    assert "make run" in first_block and "make test" in first_block


def test_no_tracked_file_names_a_path_of_this_machine() -> None:
    checkout_parent = re.compile(r"(?<![\w.])" + re.escape(str(ROOT.parent).rstrip("/") + "/"))
    found: list[str] = []
    for path in tracked_files():
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary files (images, fonts) carry no paths we write
        for number, line in enumerate(text.splitlines(), 1):
            if checkout_parent.search(line) or MACHINE_PATH.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not found, "paths of a build machine in tracked files:\n" + "\n".join(found)


def test_the_pattern_catches_machine_paths_and_spares_the_image() -> None:
    # built from parts, so that this file does not name such a path itself
    assert MACHINE_PATH.search("# Source: /" + "work/shared/seeds/000.txt")
    assert MACHINE_PATH.search("see /" + "home/alice/notes")
    assert not MACHINE_PATH.search("the cache is /home/quizbot/.cache/quizbot")
    assert not MACHINE_PATH.search("https://example.org/" + "work/x")
