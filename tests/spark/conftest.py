"""Real Spark for the Spark runtime's tests: local mode in this process, and a standalone
master + worker on 127.0.0.1 and a Spark Connect server, started and stopped here (with
pyspark's own launcher, SPARK_HOME = the pyspark package)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from servers import BUCKET, free_ports

S3_BUCKET = BUCKET


def spark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


def _env() -> dict:
    return {**os.environ, "SPARK_HOME": spark_home(), "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1",
            # the master's and workers' JVMs, as the drivers' (tests/conftest.py)
            "SPARK_DAEMON_JAVA_OPTS": os.environ.get("RW_SPARK_JAVA_OPTIONS", "")}


def _wait_port(port: int, proc: subprocess.Popen, log: str, timeout: float = 120) -> None:
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited: {open(log).read()[-3000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"nothing listens on {port}: {open(log).read()[-3000:]}")


def _stop(proc: subprocess.Popen) -> None:
    """Stop a launcher and everything it started (its process group)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


class Cluster:
    """A standalone master and its workers, each in its own process group."""

    def __init__(self, root) -> None:
        self.root = root
        self.port, self.web = free_ports(2)
        self.url = f"spark://127.0.0.1:{self.port}"
        self.master = self._spawn("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                             "--port", str(self.port), "--webui-port", str(self.web)])
        _wait_port(self.port, self.master, str(root / "master.log"))
        self.workers: list[subprocess.Popen] = []

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.root / f"{name}.log", "wb")
        return subprocess.Popen([os.path.join(spark_home(), "bin", "spark-class"), *args], env=_env(),
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def add_worker(self, cores: int = 2) -> subprocess.Popen:
        (web,) = free_ports(1)
        work = self.root / f"work{len(self.workers)}"
        w = self._spawn(f"worker{len(self.workers)}", [
            "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1", "--cores", str(cores),
            "--memory", "1g", "--webui-port", str(web), "--work-dir", str(work)])
        self.workers.append(w)
        return w

    def kill_worker(self, w: subprocess.Popen) -> None:
        """SIGKILL the worker and its executors (a lost machine)."""
        try:
            os.killpg(w.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        w.wait()

    def stop(self) -> None:
        for w in self.workers:
            _stop(w)
        _stop(self.master)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("spark-cluster"))
    try:
        c.add_worker()
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """`sc://127.0.0.1:PORT`: pyspark's Spark Connect server (the class that
    sbin/start-connect-server.sh launches), in the foreground, on local[2]."""
    d = tmp_path_factory.mktemp("spark-connect")
    (port,) = free_ports(1)
    log = str(d / "connect.log")
    proc = subprocess.Popen(
        [os.path.join(spark_home(), "bin", "spark-submit"), "--class",
         "org.apache.spark.sql.connect.service.SparkConnectServer", "--master", "local[2]",
         "--conf", f"spark.connect.grpc.binding.port={port}", "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
         "--conf", "spark.ui.enabled=false", "--conf", f"spark.pyspark.python={sys.executable}"],
        env=_env(), stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_port(port, proc, log)
        yield f"sc://127.0.0.1:{port}"
    finally:
        _stop(proc)
