"""Merge the bench scripts' JSON into one file and render it as Markdown tables.

    python scripts/bench_report.py bench_sqlite.json bench_postgres.json bench_storm.json
        [--json bench.json] [--markdown bench.md] [--write docs/performance.md]

Each input holds {"parts": [...]} (scripts/bench_common.py). Every part becomes one block: a
title, the machine's speed and load during its runs, and a table where each figure stands
beside its floor from the same runs, as min / median / max over the runs, with the ratio
taken run by run and how many runs met the goal. `--write FILE` replaces, in FILE, the text
between `<!-- bench:ID -->` and `<!-- /bench -->` with the block of the part ID (a marker
without a part in the inputs is left as it is, and said so).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import calibration_line

BLOCK = re.compile(r"(<!-- bench:(?P<id>[\w-]+) -->\n)(?P<body>.*?)(<!-- /bench -->)", re.S)


def number(x: float | None) -> str:
    if x is None:
        return "–"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 0.1 or x == 0:
        return f"{x:.2f}"
    if abs(x) < 0.001:
        return "< 0.001"
    return f"{x:.3g}"


def spread(values: list[float], whole: bool = False) -> str:
    """min / median / max, or the one value of a single run; `whole`: counts."""
    if not values:
        return "–"
    shown = [values[0]] if len(values) == 1 else [min(values), statistics.median(values),
                                                   max(values)]
    return " / ".join(f"{v:,.0f}" if whole else number(v) for v in shown)


def ratios(row: dict[str, Any]) -> list[float]:
    """Run by run when value and floor have as many runs (they were measured in turns),
    else the ratio of the medians."""
    value, floor = row["value"], row.get("floor") or []
    if not value or not floor:
        return []
    if len(value) == len(floor):
        return [v / f for v, f in zip(value, floor, strict=True) if f]
    mid = statistics.median(floor)
    return [statistics.median(value) / mid] if mid else []


def goal_text(row: dict[str, Any]) -> str:
    sign = "≥" if row.get("better") == "higher" else "≤"
    if row.get("goal_ratio") is not None:
        return f"{sign} {row['goal_ratio']:g}x the floor"
    if row.get("goal_value") is not None:
        unit = f" {row['unit']}" if row["unit"] else ""
        return f"{sign} {row['goal_value']:,g}{unit}"
    return ""


def met_text(row: dict[str, Any]) -> str:
    higher = row.get("better") == "higher"

    def ok(x: float, goal: float) -> bool:
        return x >= goal if higher else x <= goal

    if row.get("goal_ratio") is not None:
        checked = [ok(r, row["goal_ratio"]) for r in ratios(row)]
    elif row.get("goal_value") is not None:
        checked = [ok(v, row["goal_value"]) for v in row["value"]]
    else:
        return ""
    if not checked:
        return "–"
    if len(checked) == 1:
        return "yes" if checked[0] else "**no**"
    met = sum(checked)
    text = f"{met} of {len(checked)} runs"
    return text if met == len(checked) else f"**{text}**"


def render_part(p: dict[str, Any], quick: bool = False) -> str:
    rows = p["rows"]
    runs = max((len(r["value"]) for r in rows), default=0)
    lines = [f"**{p['title']}**" + (" (a quick run: small sizes, not for publishing)"
                                     if quick else ""), "",
             calibration_line(p["calibration"]) + (
                 f" Up to {runs} runs per figure: min / median / max." if runs > 1 else "")
             + (f" {p['setup']}" if p.get("setup") else ""),
             "",
             "| figure | unit | quizbot | floor (same runs) | floor | ratio | goal | met |",
             "|---|---|---|---|---|---|---|---|"]
    notes = []
    for r in rows:
        floor = r.get("floor") or []
        # a count (clicks within 3 s): no decimals, also for the median of an even number
        whole = not r["unit"] and all(float(v).is_integer() for v in [*r["value"], *floor])
        lines.append(
            f"| {r['name']} | {r['unit']} | {spread(r['value'], whole)} | "
            f"{spread(floor, whole) if floor else '–'} | {r.get('floor_name') or '–'} | "
            f"{spread(ratios(r)) if floor else '–'} | {goal_text(r) or '–'} | "
            f"{met_text(r) or '–'} |")
        if r.get("note"):
            notes.append(f"- {r['name']}: {r['note']}")
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def merge(paths: list[Path]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    quick = False
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        quick = quick or bool(data.get("quick"))
        parts += data["parts"]
    return {"quick": quick, "parts": parts}


def render(data: dict[str, Any]) -> dict[str, str]:
    """Each part's Markdown block, by its table id."""
    return {p["table"]: render_part(p, bool(data.get("quick"))) for p in data["parts"]}


def write_into(text: str, blocks: dict[str, str]) -> tuple[str, list[str]]:
    """`text` with every marked block replaced; the ids of markers that had no block."""
    missing: list[str] = []

    def replace(m: re.Match[str]) -> str:
        block = blocks.get(m["id"])
        if block is None:
            missing.append(m["id"])
            return m[0]
        return m[1] + block + m[4]

    return BLOCK.sub(replace, text), missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("inputs", type=Path, nargs="+", help="the bench scripts' JSON files")
    parser.add_argument("--json", type=Path, help="write the merged JSON here")
    parser.add_argument("--markdown", type=Path, help="write every block here")
    parser.add_argument("--write", type=Path, help="fill the marked blocks of this file")
    args = parser.parse_args(argv)
    missing_inputs = [str(p) for p in args.inputs if not p.is_file()]
    if missing_inputs:
        print(f"bench_report: no such file: {', '.join(missing_inputs)}", file=sys.stderr)
        return 2
    data = merge(args.inputs)
    blocks = render(data)
    if args.json:
        args.json.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    markdown = "\n".join(f"<!-- bench:{k} -->\n{v}<!-- /bench -->\n" for k, v in blocks.items())
    if args.markdown:
        args.markdown.write_text(markdown, encoding="utf-8")
    if args.write:
        text, missing = write_into(args.write.read_text(encoding="utf-8"), blocks)
        args.write.write_text(text, encoding="utf-8")
        for block_id in missing:
            print(f"bench_report: {args.write} has a block {block_id!r} that no input "
                  "measured; left as it was")
    if not (args.json or args.markdown or args.write):
        print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
