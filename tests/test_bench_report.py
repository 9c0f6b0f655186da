"""scripts/bench_report.py on a small fixture: the structure of what it renders and writes
(which blocks, which columns, which runs count as met), not any measured figure."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "data" / "bench" / "parts.json"


@pytest.fixture(scope="module")
def report() -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        spec = importlib.util.spec_from_file_location("bench_report",
                                                      ROOT / "scripts" / "bench_report.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def table_rows(block: str) -> dict[str, list[str]]:
    """The table's cells by figure name (the header and the rule left out)."""
    rows = [line.strip("|").split(" | ") for line in block.splitlines()
            if line.startswith("| ") and not line.startswith("| figure")]
    return {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in rows}


def test_every_part_is_a_block_with_its_calibration(report: ModuleType) -> None:
    blocks = report.render(report.merge([FIXTURE]))
    assert list(blocks) == ["sqlite", "memory"]
    sqlite = blocks["sqlite"]
    assert sqlite.startswith("**The answer path (SQLite)**")
    assert '`python -m timeit "sum(range(1000))"` 8 → 9.5 µs' in sqlite
    assert "load average 1.5 → 2.25 on 2 CPUs (Test CPU)" in sqlite
    assert "| figure | unit | quizbot | floor (same runs) | floor | ratio | goal | met |" in sqlite
    assert "- steady p99: fsync tail" in sqlite
    assert "? µs" in blocks["memory"]  # a calibration that failed is shown as unknown


def test_runs_as_min_median_max_and_the_ratio_run_by_run(report: ModuleType) -> None:
    rows = table_rows(report.render(report.merge([FIXTURE]))["sqlite"])
    unit, ours, floor, floor_name, ratio, goal, met = rows["steady p99"]
    assert (unit, ours, floor, floor_name) == ("ms", "4.00 / 6.00 / 30.0", "2.00 / 2.00 / 10.0",
                                               "bare group commit")
    assert ratio == "2.00 / 3.00 / 3.00"  # 4/2, 6/2, 30/10: per run, not of the medians
    assert goal == "≤ 2x the floor"
    assert met == "**1 of 3 runs**"
    _, ours, _, _, ratio, goal, met = rows["burst"]
    assert ours == "5,000 / 8,500 / 12,000"
    assert (goal, met) == ("≥ 5x the floor", "2 of 2 runs")
    _, ours, floor, _, ratio, goal, met = rows["CPU, no floor"]
    assert (ours, floor, ratio, goal, met) == ("56.0", "–", "–", "≤ 100 µs", "yes")


def test_unpaired_runs_compare_medians(report: ModuleType) -> None:
    rows = table_rows(report.render(report.merge([FIXTURE]))["memory"])
    _, ours, floor, _, ratio, _, met = rows["RSS, unpaired runs"]
    assert (ours, floor, ratio, met) == ("70.0 / 80.0 / 90.0", "50.0", "1.60", "**no**")


def test_counts_have_no_decimals_and_an_absolute_goal(report: ModuleType) -> None:
    rows = table_rows(report.render(report.merge([FIXTURE]))["memory"])
    _, ours, floor, _, _, goal, met = rows["within 3 s, a count"]
    assert (ours, floor, goal, met) == ("1 / 845 / 1,000", "1,000 / 1,000 / 1,000", "≥ 1,000",
                                        "**1 of 3 runs**")


def test_write_fills_only_the_marked_blocks(report: ModuleType, tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\nprose stays\n\n<!-- bench:sqlite -->\nold table\n"
                   "<!-- /bench -->\n\nmore prose\n\n<!-- bench:storms -->\nold storms\n"
                   "<!-- /bench -->\n", encoding="utf-8")
    out = tmp_path / "bench.json"
    assert report.main([str(FIXTURE), "--write", str(doc), "--json", str(out)]) == 0
    text = doc.read_text(encoding="utf-8")
    assert "old table" not in text and "| steady p99 | ms |" in text
    assert "old storms" in text  # no part measured it: left as it was
    assert text.startswith("# Performance\n\nprose stays\n") and "more prose" in text
    assert text.count("<!-- /bench -->") == 2
    assert json.loads(out.read_text(encoding="utf-8"))["parts"][0]["table"] == "sqlite"
    # a second run over its own output changes nothing
    assert report.main([str(FIXTURE), "--write", str(doc)]) == 0
    assert doc.read_text(encoding="utf-8") == text


def test_a_missing_input_is_refused(report: ModuleType, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text("<!-- bench:sqlite -->\nold\n<!-- /bench -->\n", encoding="utf-8")
    assert report.main([str(tmp_path / "nope.json"), "--write", str(doc)]) == 2
    assert "no such file" in capsys.readouterr().err
    assert doc.read_text(encoding="utf-8") == "<!-- bench:sqlite -->\nold\n<!-- /bench -->\n"
