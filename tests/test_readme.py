"""The README's examples run exactly as written, in order, and print what it shows (issue
20): every indented command (`make run ARGS=...`, `.venv/bin/rw ...`, `$ rw ...`) followed by
output. `DIR` and `PID` stand for the data directory and the writer's process id; the
read-only example runs while this process writes the data directory."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import rw_cli

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ("make run ARGS=", ".venv/bin/rw ", "$ rw ")


def examples() -> list[tuple[int, str, list[str]]]:
    """(line number, command, expected output lines) of each example with output."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    found = []
    i = 0
    while i < len(lines):
        text = lines[i][4:] if lines[i].startswith("    ") else None
        if text is None or not text.startswith(COMMANDS):
            i += 1
            continue
        start, command, expected = i + 1, text.removeprefix("$ "), []
        i += 1
        if i < len(lines) and not lines[i].strip():
            i += 1  # a blank line may part the command from its output
        while i < len(lines) and lines[i].startswith("    ") and not lines[i][4:].startswith(COMMANDS):
            expected.append(lines[i][4:].rstrip())
            i += 1
        if expected and not command.endswith("\\"):
            found.append((start, command, expected))
    return found


def _output(proc: subprocess.CompletedProcess) -> list[str]:
    lines = [ln.rstrip() for ln in (proc.stdout + proc.stderr).splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


@pytest.mark.slow
def test_readme_examples(tmp_path):
    cases = examples()
    assert len(cases) >= 5, cases
    data_dir = str(tmp_path / "rw-data")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE") and k != "MFLAGS"}
    env.update(RW_DATA_DIR=data_dir, PATH=f"{ROOT / '.venv' / 'bin'}:{env.get('PATH', '')}", NO_COLOR="1",
               PYTHONPATH=str(ROOT))
    for line, command, expected in cases:
        writer = None
        if "read-only" in "\n".join(expected):  # another process writes the data directory
            writer = rw_cli.connect(data_dir)
            expected = [e.replace("DIR", data_dir).replace("PID", str(os.getpid())) for e in expected]
        try:
            proc = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=300)
        finally:
            if writer is not None:
                writer.close()
        got = _output(proc)
        # `make run` may install first on a fresh checkout: the example's output ends it
        assert got[-len(expected):] == expected, f"README.md:{line}: {command}\n" + "\n".join(got)
