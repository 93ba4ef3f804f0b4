"""A throwaway PostgreSQL server for differential tests.

Installs the Debian package `postgresql` when no `initdb` is found (as root: `apt-get update`
then `apt-get install -y postgresql`), runs `initdb` into a temporary directory, starts the
server on 127.0.0.1 on a free port (as the `postgres` user when we are root: initdb refuses
root), and runs queries through `psql`, one process per query. `stop()` shuts it down.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile

NULL = "\x02NULL\x02"


class PgError(Exception):
    pass


def find_bin() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(found[-1]) if found else None


def ensure_installed() -> str:
    bindir = find_bin()
    if bindir:
        return bindir
    if os.geteuid() != 0:
        raise RuntimeError("PostgreSQL is not installed and we are not root to apt-get it")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update"], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "postgresql"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    bindir = find_bin()
    if not bindir:
        raise RuntimeError("apt-get install postgresql did not provide initdb")
    return bindir


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    def __init__(self) -> None:
        self.bindir = ensure_installed()
        self.dir = tempfile.mkdtemp(prefix="rw-pgdiff-")
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        self.user = None
        if os.geteuid() == 0:
            self.user = "postgres"
            try:
                pwd.getpwnam(self.user)
            except KeyError:
                subprocess.run(["useradd", "--system", "--no-create-home", self.user], check=True)
            shutil.chown(self.dir, self.user)
        self._as_user([os.path.join(self.bindir, "initdb"), "-D", self.data, "-A", "trust", "-U", "postgres",
                       "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])
        opts = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
                f"-c TimeZone=UTC -c DateStyle=ISO -c IntervalStyle=postgres -c lc_messages=C")
        self._as_user([os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-o", opts, "-w", "-l",
                       os.path.join(self.dir, "log"), "start"])

    def _as_user(self, cmd: list[str]) -> subprocess.CompletedProcess:
        if self.user:
            cmd = ["runuser", "-u", self.user, "--"] + cmd
        return subprocess.run(cmd, check=True, capture_output=True, text=True)

    def psql(self, sql: str) -> list[list[str | None]]:
        """Rows of the last statement as text (None for NULL); PgError on an SQL error."""
        cmd = [os.path.join(self.bindir, "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
               "-d", "postgres", "-X", "-q", "-A", "-t", "-F", "\x1f", "-R", "\x1e", "-P", f"null={NULL}",
               "-v", "ON_ERROR_STOP=1", "-c", sql]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise PgError(proc.stderr.strip())
        out = proc.stdout
        if out.endswith("\n"):
            out = out[:-1]
        if out == "":
            return []
        return [[None if v == NULL else v for v in row.split("\x1f")] for row in out.split("\x1e")]

    def script(self, sql: str) -> None:
        cmd = [os.path.join(self.bindir, "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
               "-d", "postgres", "-X", "-q", "-v", "ON_ERROR_STOP=1"]
        proc = subprocess.run(cmd, input=sql, capture_output=True, text=True)
        if proc.returncode != 0:
            raise PgError(proc.stderr.strip())

    def stop(self) -> None:
        try:
            self._as_user([os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-m", "immediate", "stop"])
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
