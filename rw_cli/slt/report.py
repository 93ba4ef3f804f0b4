"""What `rw slt` prints per file and in total: `ok PATH` / `FAIL PATH (...)` in the batch
mode; with --mv one line per file (batch passed; MV equal, refused, different), the different
queries, with -v the refused ones by reason, and a total with the refusals grouped."""
from __future__ import annotations

from typing import TextIO

from rw_cli.slt.differential import MvReport


def file_line(path: str, passed: int, failed: int, not_run: int, timed_out: float | None,
              mv: MvReport | None) -> str:
    """The line that closes a file (`mv` given in the differential mode)."""
    timeout = ""
    if timed_out is not None:
        timeout = f"; timeout after {timed_out:g}s, {not_run} not run"
    if mv is not None:
        return (f"{path}: batch {passed}/{passed + failed} passed; MV {mv.equal} equal, "
                f"{mv.refused_count} refused, {len(mv.different)} different{timeout}\n")
    if failed:
        return f"FAIL {path} ({passed} passed, {failed} failed{timeout})\n"
    return f"ok {path}\n"


def one_line(sql: str, width: int = 160) -> str:
    text = " ".join(sql.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def write_mv_details(out: TextIO, report: MvReport, verbose: bool) -> None:
    """The different queries (always) and, verbose, their rows and the refused queries by
    reason."""
    for d in report.different:
        out.write(f"  {d.path}:{d.line}: MV different ({d.when}): {one_line(d.sql)}\n")
        if verbose:
            out.write("".join(f"    {ln}\n" for ln in d.detail.splitlines()))
    if verbose:
        for reason, items in sorted(report.refused.items(), key=lambda kv: -len(kv[1])):
            out.write(f"  refused ({len(items)}): {reason}\n")
            for r in items:
                out.write(f"    {r.path}:{r.line}: {one_line(r.sql)}\n")


def percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.2f}%" if whole else "-"


def write_mv_total(out: TextIO, files: int, passed: int, failed: int, total: MvReport) -> None:
    """The closing lines of a differential run: batch and MV counts, refusals by reason."""
    tried = total.equal + total.refused_count + len(total.different)
    out.write(f"total: {files} file(s); batch {passed}/{passed + failed} passed "
              f"({percent(passed, passed + failed)}); MV {total.equal} equal "
              f"({percent(total.equal, tried)}), {total.refused_count} refused, "
              f"{len(total.different)} different\n")
    for reason, items in sorted(total.refused.items(), key=lambda kv: -len(kv[1])):
        out.write(f"  refused {len(items)}: {reason}\n")
