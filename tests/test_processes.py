"""The processes `rw` starts (issue 22): none for a statement that writes nothing, and none
that outlives `rw`."""
from __future__ import annotations

import os
import subprocess
import sys
import time

RW = os.path.join(os.path.dirname(sys.executable), "rw")


def _group_members(pgid: int) -> list[int]:
    """Pids of the live processes in process group `pgid` (from /proc)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            members.append(int(entry))
    return members


def _run_in_own_group(args: list[str]) -> int:
    """Run rw as the leader of a new process group; return that group's id after it exited."""
    proc = subprocess.Popen([RW, *args], start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    return proc.pid


def test_no_process_outlives_rw_after_writes_and_compaction(tmp_path):
    data = str(tmp_path / "data")
    sql = ("create table t (a int); insert into t select * from generate_series(1, 20000); flush; "
           "create materialized view m as select a % 7 k, count(*) c from t group by 1; "
           "insert into t values (1); flush; select count(*) from m")
    pgid = _run_in_own_group(["--data-dir", data, "-c", sql])
    deadline = time.monotonic() + 5  # a helper reads EOF on its stdin and exits at once
    while _group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _group_members(pgid) == []


def test_a_read_only_statement_starts_no_helper_process(tmp_path):
    """`select 1` neither uploads nor compacts, so the upload process is not started; nor does
    a FLUSH, whose checkpoint the statement waits for: its SSTs are built in the uploader
    thread (the process serves checkpoints that nobody waits for: tests/store)."""
    code = (
        "import rw_cli\n"
        "from rw_cli.store import upload_process, compactor_process\n"
        f"s = rw_cli.connect({str(tmp_path / 'data')!r})\n"
        "s.execute('select 1')\n"
        "print(upload_process._uploader.process is None, compactor_process._compactor.process is None)\n"
        "s.execute('create table t (a int)'); s.execute('insert into t values (1)'); s.execute('flush')\n"
        "print(upload_process._uploader.process is None, s.execute('select count(*) from t').fetchall()[0][0])\n"
        "s.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["True", "True", "True", "1"], out.stderr
