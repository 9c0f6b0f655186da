"""The SQLite steady p99 alone (scripts/bench.py's figure 3: 1,000 answers/s for 5 s through
QuizService.answer), the aggregates in the answers' file and in a file of their own
(bot/storage/sqlite/aggregates_file.py), beside the floor; asserts nothing.

    python scripts/bench_steady.py [--runs 3] [--seconds 5] [--dir DIR] [--json FILE]

The floor (bare sqlite3 group commit), quizbot with its aggregates inline and quizbot with
them apart take turns, each run on a fresh file; every run's p99, its ratio to the floor of
the same turn, and CPU per answer are printed (and written as JSON with --json), with the
machine's speed line at the start and the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import ms, pct, steady_core, steady_floor
from bench_common import Calibration


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--dir", type=Path, default=None, help="where the files go (on disk)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="quizbot-steady-", dir=args.dir))
    calibration = Calibration()
    runs = []
    for r in range(args.runs):
        floor = await steady_floor(base / f"floor-{r}.db", args.rate, args.seconds, 1000)
        run: dict[str, float] = {"floor_p99_ms": ms(pct(floor.latencies, 0.99)),
                                 "floor_cpu_us": floor.cpu * 1e6}
        for kind in ("inline", "apart"):
            core = await steady_core(base / f"{kind}-{r}.db", args.rate, args.seconds, 1000,
                                     kind == "apart")
            run[f"{kind}_p99_ms"] = ms(pct(core.latencies, 0.99))
            run[f"{kind}_ratio"] = run[f"{kind}_p99_ms"] / run["floor_p99_ms"]
            run[f"{kind}_cpu_us"] = core.cpu * 1e6
        runs.append(run)
        print(f"run {r + 1}: p99 floor {run['floor_p99_ms']:.2f} ms; inline "
              f"{run['inline_p99_ms']:.2f} ms ({run['inline_ratio']:.2f}x); apart "
              f"{run['apart_p99_ms']:.2f} ms ({run['apart_ratio']:.2f}x); CPU µs/answer floor "
              f"{run['floor_cpu_us']:.0f}, inline {run['inline_cpu_us']:.0f}, apart "
              f"{run['apart_cpu_us']:.0f}", flush=True)
    machine = calibration.end()
    print(f"machine: {machine}")
    if args.json is not None:
        args.json.write_text(json.dumps({"machine": machine, "runs": runs}, indent=2,
                                        ensure_ascii=False) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
