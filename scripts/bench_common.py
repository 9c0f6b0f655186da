"""What every bench script shares: the machine's speed beside every table, CPU over all
threads of a process, and the rows the renderer (scripts/bench_report.py) turns into tables.

A part (one script's output) is {"table": id, "title": ..., "calibration": {...},
"rows": [Row...], ...}. A row holds every run's value (and its floor's, measured in the same
run), so the renderer can give min/median/max and how many runs met the goal.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import re
import resource
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TIMEIT = "sum(range(1000))"


def timeit_us() -> float | None:
    """`python -m timeit "sum(range(1000))"` with this interpreter: µs per loop (best of 5)."""
    try:
        out = subprocess.run([sys.executable, "-m", "timeit", TIMEIT], capture_output=True,
                             text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"best of \d+: ([\d.]+) (nsec|usec|msec|sec) per loop", out)
    if found is None:
        return None
    scale = {"nsec": 1e-3, "usec": 1.0, "msec": 1e3, "sec": 1e6}[found[2]]
    return round(float(found[1]) * scale, 3)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


class Calibration:
    """The machine's speed and load at the start and at the end of a table's runs."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {
            "cpus": os.cpu_count(), "cpu": cpu_model(), "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
            "timeit_us": [timeit_us()], "load": [round(os.getloadavg()[0], 2)],
        }

    def end(self) -> dict[str, Any]:
        self.data["timeit_us"].append(timeit_us())
        self.data["load"].append(round(os.getloadavg()[0], 2))
        self.data["ended"] = datetime.now(UTC).isoformat(timespec="seconds")
        return self.data


def calibration_line(c: dict[str, Any]) -> str:
    """One line that says how fast and how busy the machine was (Markdown)."""
    t = [f"{x:g}" if x is not None else "?" for x in c.get("timeit_us", [])]
    load = [f"{x:g}" for x in c.get("load", [])]
    return (f"Machine: `python -m timeit \"{TIMEIT}\"` {' → '.join(t)} µs (start → end), "
            f"load average {' → '.join(load)} on {c.get('cpus')} CPUs ({c.get('cpu') or '?'}),"
            f" Python {c.get('python')}, {c.get('started', '')[:16].replace('T', ' ')} UTC.")


# CPU and memory of a process, all threads ---------------------------------------------------
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int) -> float:
    """utime + stime of a process, every thread, in seconds (/proc/<pid>/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def proc_cpu_named(pid: int, name: str) -> float | None:
    """proc_cpu of `pid` if it is a process of this machine named `name` (/proc/<pid>/comm),
    else None: a server elsewhere (another host, another container) reports pids that are
    not ours, or another process's."""
    try:
        if Path(f"/proc/{pid}/comm").read_text().strip() != name:
            return None
        return proc_cpu(pid)
    except (OSError, ValueError, IndexError):  # gone meanwhile, or no /proc
        return None


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (kB) and context switches of a process (/proc/<pid>/status): the
    voluntary and involuntary switches summed over its threads (/proc/<pid>/task)."""
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    switches = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            for line in (task / "status").read_text().splitlines():
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    switches += int(line.split(":")[1])
        except OSError:  # a thread that ended meanwhile
            continue
    out["switches"] = switches
    return out


def self_cpu() -> tuple[float, int]:
    """This process's CPU (all threads, seconds) and context switches so far."""
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime, u.ru_nvcsw + u.ru_nivcsw


# open loop: answers due at a steady rate ---------------------------------------------------
@dataclass
class Steady:
    latencies: list[float]
    cpu: float  # seconds of CPU per answer, every thread of this process
    switches: float  # context switches per answer


async def open_loop(
    fire: Callable[[int], Awaitable[None]], rate: int, seconds: float
) -> Steady:
    """Fire answer i at start + i/rate (all that are due, then sleep until the next one);
    its latency is from that due time to its completion."""
    loop = asyncio.get_running_loop()
    cpu0, switches0 = self_cpu()
    total = int(rate * seconds)
    latencies: list[float] = []
    tasks: list[asyncio.Task[None]] = []

    async def one(i: int, due: float) -> None:
        await fire(i)
        latencies.append(loop.time() - due)

    start = loop.time() + 0.05
    i = 0
    while i < total:
        now = loop.time()
        while i < total and start + i / rate <= now:
            tasks.append(asyncio.ensure_future(one(i, start + i / rate)))
            i += 1
        if i < total:
            await asyncio.sleep(max(0.0, start + i / rate - loop.time()))
    await asyncio.gather(*tasks)
    cpu1, switches1 = self_cpu()
    return Steady(latencies, (cpu1 - cpu0) / total, (switches1 - switches0) / total)


# rows ---------------------------------------------------------------------------------------
@dataclass
class Row:
    """One figure over the runs. `value[i]` and `floor[i]` come from the same run (when both
    have as many entries), so the ratio is taken run by run. `better`: "lower" or "higher".
    `goal_ratio`: the goal as a ratio to the floor (≤ for lower, ≥ for higher);
    `goal_value`: as an absolute value."""

    name: str
    unit: str
    value: list[float]
    floor: list[float] | None = None
    floor_name: str = ""
    better: str = "lower"
    goal_ratio: float | None = None
    goal_value: float | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def json(self) -> dict[str, Any]:
        return asdict(self)


def part(table: str, title: str, calibration: dict[str, Any], rows: list[Row],
         **more: Any) -> dict[str, Any]:
    return {"table": table, "title": title, "calibration": calibration,
            "rows": [r.json() for r in rows], **more}


# a bench child process and its driver speak one JSON object a line (stdin and stdout)
def say(data: dict[str, Any]) -> None:
    """A child's answer to the driver: one JSON line on stdout."""
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


async def commands() -> Any:
    """The driver's commands to a child, one JSON object a line on stdin."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        yield json.loads(line)
