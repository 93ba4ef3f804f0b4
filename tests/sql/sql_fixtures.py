"""Fixture files of (input SQL -> expected text) cases, in the style of sqlglot's optimizer
fixtures, and their regeneration.

A file is blocks separated by blank lines. A block of `--` lines only is a comment (kept as
is). Any other block is a case: its leading `--` lines (the first one is its title), the
input SQL up to the line that ends with `;`, then the expected output, line by line. With
`RW_UPDATE_GOLDEN=1` a test writes what it got as the expected part of its case instead of
comparing (the file is rewritten, everything else in it unchanged).
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
UPDATE = bool(os.environ.get("RW_UPDATE_GOLDEN"))


@dataclass
class Case:
    title: str
    sql: str
    expected: list[str]
    comments: list[str] = field(default_factory=list)  # the `--` lines after the title


def parse(text: str) -> list[Case | str]:
    """The blocks of a fixture file: a Case, or a comment block's text."""
    out: list[Case | str] = []
    for block in _blocks(text):
        if all(line.startswith("--") for line in block):
            out.append("\n".join(block))
            continue
        head = []
        while block and block[0].startswith("--"):
            head.append(block.pop(0))
        end = next((i for i, line in enumerate(block) if line.rstrip().endswith(";")), None)
        if end is None:
            raise ValueError(f"a case without `;` ending its SQL: {block[0]!r}")
        title = head[0][2:].strip() if head else block[0]
        out.append(Case(title, "\n".join(block[: end + 1]).rstrip()[:-1], block[end + 1:], head[1:]))
    return out


def _blocks(text: str) -> list[list[str]]:
    blocks, cur = [], []
    for line in text.splitlines():
        if line.strip():
            cur.append(line.rstrip())
        elif cur:
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    return blocks


def render(blocks: list[Case | str]) -> str:
    parts = []
    for b in blocks:
        if isinstance(b, str):
            parts.append(b)
        else:
            parts.append("\n".join([f"-- {b.title}"] + b.comments + [b.sql + ";"] + b.expected))
    return "\n\n".join(parts) + "\n"


def cases(area: str) -> list[tuple[str, int, Case]]:
    """(file, index of the case among the file's blocks, case) of every fixture of an area,
    for pytest.mark.parametrize (ids: `file:title`)."""
    out = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, area, "*.sql"))):
        with open(path) as f:
            for i, b in enumerate(parse(f.read())):
                if isinstance(b, Case):
                    out.append((path, i, b))
    return out


def case_id(item: tuple[str, int, Case]) -> str:
    path, _, case = item
    return f"{os.path.basename(path)[:-4]}:{case.title}"


def check(item: tuple[str, int, Case], actual: list[str]) -> None:
    """Compare (or, when regenerating, record) a case's output."""
    path, index, case = item
    if UPDATE:
        with open(path) as f:
            blocks = parse(f.read())
        blocks[index].expected = list(actual)
        with open(path, "w") as f:
            f.write(render(blocks))
        return
    assert case.expected, f"no expected output for {case.title!r}: run with RW_UPDATE_GOLDEN=1"
    assert actual == case.expected
