"""Start-up cost of the `rw` command against the bare import of its libraries (issue 22).

    .venv/bin/python bench/startup.py [--runs 10] [--json]

Three things a user waits for, each measured as a child process's CPU seconds (user + sys, so
that a shared machine's load does not count) and wall seconds:

- `rw -c "select 1"` on a fresh data directory (the store is created, the statement runs);
- `rw --version`;
- the interactive shell until its prompt is drawn (in a pseudo-terminal; the child is ended
  as soon as `rw=>` appears, so its CPU is the cost of getting there).

The baseline is `python -c "import duckdb, pyarrow, sqlglot, click"` with the same
interpreter. Runs alternate (baseline, then each command) so that drifting load affects all
alike; the report gives medians and each median's ratio to the baseline's.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(sys.executable)
RW = os.path.join(BIN, "rw")
BASELINE = [sys.executable, "-c", "import duckdb, pyarrow, sqlglot, click"]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_command(argv: list[str], env: dict) -> tuple[float, float]:
    """CPU and wall seconds of one run of `argv` (it must exit 0)."""
    cpu0, wall0 = _children_cpu(), time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return _children_cpu() - cpu0, time.perf_counter() - wall0


def run_shell(data_dir: str, env: dict, prompt: str = "rw=>") -> tuple[float, float]:
    """CPU and wall seconds until the shell draws its prompt in a pseudo-terminal."""
    import pexpect

    cpu0, wall0 = _children_cpu(), time.perf_counter()
    child = pexpect.spawn(RW, ["--data-dir", data_dir], env=env, dimensions=(40, 100), encoding="utf-8")
    child.expect_exact(prompt, timeout=60)
    wall = time.perf_counter() - wall0
    child.sendline("\\q")
    child.expect(pexpect.EOF, timeout=60)
    child.wait()
    return _children_cpu() - cpu0, wall


def measure(runs: int) -> dict[str, dict[str, list[float]]]:
    home = tempfile.mkdtemp(prefix="rw_startup_")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RW_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HOME=home, RW_HISTFILE=os.path.join(home, "hist"), TERM="xterm", NO_COLOR="1", PAGER="cat")
    samples: dict[str, dict[str, list[float]]] = {}

    def add(name: str, cpu_wall: tuple[float, float]) -> None:
        entry = samples.setdefault(name, {"cpu": [], "wall": []})
        entry["cpu"].append(cpu_wall[0])
        entry["wall"].append(cpu_wall[1])

    try:
        # one untimed round: byte-compiled caches written, files in the page cache
        run_command(BASELINE, env)
        run_command([RW, "--data-dir", os.path.join(home, "warm"), "-c", "select 1"], env)
        for i in range(runs):
            add("baseline (import duckdb, pyarrow, sqlglot, click)", run_command(BASELINE, env))
            add('rw -c "select 1"', run_command([RW, "--data-dir", os.path.join(home, f"d{i}"), "-c", "select 1"], env))
            add("rw --version", run_command([RW, "--version"], env))
            add("shell until the prompt", run_shell(os.path.join(home, f"s{i}"), env))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return samples


def report(samples: dict[str, dict[str, list[float]]]) -> dict:
    names = list(samples)
    base = {k: statistics.median(samples[names[0]][k]) for k in ("cpu", "wall")}
    summary = {}
    print(f"{'':52} {'CPU s':>7} {'ratio':>6} {'wall s':>7} {'ratio':>6}")
    for name in names:
        cpu = statistics.median(samples[name]["cpu"])
        wall = statistics.median(samples[name]["wall"])
        summary[name] = {"cpu_s": round(cpu, 4), "cpu_ratio": round(cpu / base["cpu"], 3),
                         "wall_s": round(wall, 4), "wall_ratio": round(wall / base["wall"], 3)}
        print(f"{name:52} {cpu:7.3f} {cpu / base['cpu']:6.2f} {wall:7.3f} {wall / base['wall']:6.2f}")
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="also print the summary as JSON")
    args = parser.parse_args()
    summary = report(measure(args.runs))
    if args.json:
        print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
