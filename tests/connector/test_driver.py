"""The pipeline driver: a background thread that ticks sources and injects barriers while
statements run under the same mutex; `rw run --until-idle` from the command line."""
import subprocess
import sys
import time

from rw_cli.stream.driver import BackgroundDriver, drive_for

RW = [sys.executable, "-m", "rw_cli.cli"]


def test_background_driver_keeps_mvs_fresh(session):
    session.execute("SET barrier_interval_ms = 50")
    session.execute("CREATE SOURCE s (v BIGINT) WITH (connector = 'datagen', fields.v.kind = 'sequence', "
                    "fields.v.end = '5000', datagen.rows.per.second = '20000')")
    session.execute("CREATE MATERIALIZED VIEW m AS SELECT count(*) AS c, sum(v) AS t FROM s")
    driver = BackgroundDriver(session, tick_rows=500).start()
    try:
        deadline = time.monotonic() + 60
        seen = []
        while time.monotonic() < deadline:
            c = session.execute("SELECT c FROM m").fetchall()[0][0]  # statements interleave safely
            seen.append(c)
            if c == 5000:
                break
            time.sleep(0.05)
    finally:
        driver.stop()
    assert driver.error is None
    assert seen[-1] == 5000 and seen == sorted(seen)  # never goes back in time
    assert len(set(seen)) > 2  # it grew while we watched, without FLUSH
    assert session.execute("SELECT t FROM m").fetchall() == [(5000 * 5001 // 2,)]


def test_drive_for_stops_when_idle(session):
    session.execute("CREATE TABLE t (v INT) WITH (connector = 'datagen', fields.v.kind = 'sequence', "
                    "fields.v.end = '100', datagen.rows.per.second = '1000000')")
    start = time.monotonic()
    drive_for(session, 30)
    assert time.monotonic() - start < 20
    assert session.execute("SELECT count(*) FROM t").fetchall() == [(100,)]


def test_rw_run_until_idle(tmp_path):
    d = str(tmp_path / "d")
    r = subprocess.run(RW + ["--data-dir", d, "--no-config", "-c",
                             "CREATE TABLE t (v INT) WITH (connector = 'datagen', fields.v.kind = 'sequence', "
                             "fields.v.end = '3000', datagen.rows.per.second = '1000000', datagen.split.num = '3')"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(RW + ["--data-dir", d, "--no-config", "run", "--until-idle"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "t: 3,000 rows (done)" in r.stderr  # the status line
    r = subprocess.run(RW + ["--data-dir", d, "--no-config", "--format", "csv", "-c",
                             "SELECT count(*), sum(v) FROM t; SHOW JOBS"], capture_output=True, text=True, timeout=120)
    assert "3000,4501500" in r.stdout and "exhausted" in r.stdout


def test_rw_run_ctrl_c_checkpoints_and_exits(tmp_path):
    import signal

    d = str(tmp_path / "d")
    r = subprocess.run(RW + ["--data-dir", d, "--no-config", "-c",
                             "CREATE SOURCE s (v BIGINT) WITH (connector = 'datagen', fields.v.kind = 'sequence', "
                             "datagen.rows.per.second = '5000'); "
                             "CREATE MATERIALIZED VIEW m AS SELECT count(*) AS c, max(v) AS top FROM s"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    proc = subprocess.Popen(RW + ["--data-dir", d, "--no-config", "run", "--barrier-interval-ms", "100000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    err = ""
    while time.monotonic() < deadline and "rows/s" not in err:  # the status line shows rows flowing
        line = proc.stderr.readline()
        err += line
        if not line and proc.poll() is not None:
            break
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=60)
    assert proc.returncode == 0, err + rest
    r = subprocess.run(RW + ["--data-dir", d, "--no-config", "--format", "csv", "-c", "SELECT c, top FROM m"],
                       capture_output=True, text=True, timeout=120)
    c, top = map(int, r.stdout.split()[-1].split(","))
    assert c > 0 and c == top  # what was read before Ctrl-C was checkpointed, once
