"""Starting Spark for `--engine spark`: local[N], a standalone cluster or Spark Connect.

Only this package imports pyspark, and only when the Spark engine is chosen. The workers run
the project's own interpreter (PYSPARK_PYTHON = sys.executable) so they import the same
rw_cli and executor code as the driver.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys

from rw_cli.errors import RwError

DEFAULT_MASTER = "local[2]"
_LOCAL = re.compile(r"^local(\[(\d+|\*)(,\d+)?\])?$")
CONF_DIR = os.path.join(os.path.dirname(__file__), "conf")  # log4j2.properties: errors only
LOG4J = os.path.join(CONF_DIR, "log4j2.properties")
_sessions: dict[str, object] = {}


class SparkError(RwError):
    pass


def is_local(master: str) -> bool:
    return bool(_LOCAL.match(master))


def check_master(master: str, state_store: str) -> None:
    """Tasks read and write state themselves: a store on the local disk only works when
    every task runs on this machine (local[N]); a cluster needs an object store (S3)."""
    if not (is_local(master) or master.startswith("spark://") or master.startswith("sc://")):
        raise SparkError(f"invalid Spark master {master!r}",
                         hint="use local[N], spark://HOST:PORT (standalone) or sc://HOST:PORT (Spark Connect)")
    if not is_local(master) and "://" not in state_store.replace("file://", ""):
        raise SparkError(f"the Spark master {master} needs a shared state store, not the local path {state_store}",
                         hint="pass --state-store s3://BUCKET/PREFIX (with --s3-endpoint), or use a local[N] master")


def _executor_env() -> dict[str, str]:
    """What tasks need from the driver's environment (S3 credentials, the interpreter)."""
    keys = [k for k in os.environ if k.startswith("AWS_") or k in ("TZ",)]
    return {k: os.environ[k] for k in keys}


def spark_session(master: str = DEFAULT_MASTER, log_path: str | None = None):
    """One SparkSession per master for the whole process (recovery reuses it). The JVM's
    own output (start-up notes, executor losses) goes to `log_path`, not to the terminal:
    rw reports what matters (a failed epoch) itself."""
    if master in _sessions:
        return _sessions[master]
    # one Spark session per process (PySpark allows no classic and remote one side by side):
    # another master's session stops first
    stop_all()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_CONF_DIR", CONF_DIR)
    import warnings

    warnings.filterwarnings("ignore", message=".*pandas.*", category=FutureWarning)
    from pyspark.sql import SparkSession

    # a fresh builder: `SparkSession.builder` is shared and keeps options (spark.remote) of
    # earlier sessions
    builder = SparkSession.Builder().appName("rw")
    if master.startswith("sc://"):
        builder = builder.remote(master)
    else:
        builder = builder.master(with_task_retries(master))
        for k, v in {
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.python.worker.reuse": "true",
            "spark.pyspark.python": sys.executable,
            "spark.pyspark.driver.python": sys.executable,
            "spark.sql.execution.arrow.pyspark.enabled": "true",
            "spark.sql.adaptive.enabled": "false",  # keep one task per actor partition
            "spark.task.maxFailures": os.environ.get("RW_SPARK_TASK_MAX_FAILURES", "4"),
            "spark.driver.host": "127.0.0.1" if is_local(master) or "127.0.0.1" in master else None,
            "spark.executor.memory": os.environ.get("RW_SPARK_EXECUTOR_MEMORY"),
            "spark.driver.extraJavaOptions": _java_options(),
            "spark.executor.extraJavaOptions": _java_options(),
            # on one machine a shuffle goes through the page cache, not a network: compressing
            # an epoch's Arrow chunks costs CPU the tasks need and saves nothing
            "spark.shuffle.compress": "false" if is_local(master) else None,
            # an executor talks to its Python workers over a Unix socket: over loopback TCP
            # (Nagle's algorithm on the executor's side, delayed ACKs on the worker's) a
            # task's input often waited 40 ms for its last small segment — a sixth of an
            # epoch job, in about half of the tasks
            "spark.python.unix.domain.socket.enabled": "true",
        }.items():
            if v is not None:
                builder = builder.config(k, v)
        for k, v in _executor_env().items():
            builder = builder.config(f"spark.executorEnv.{k}", v)
        for k, v in extra_conf().items():
            builder = builder.config(k, v)
    try:
        with _jvm_output_to(log_path if not master.startswith("sc://") else None):
            spark = builder.getOrCreate()
    except Exception as e:  # noqa: BLE001 - Java/Py4J/gRPC errors of every kind
        raise SparkError(f"could not start Spark at {master}: {str(e).splitlines()[0] if str(e) else e!r}") from None
    try:
        spark.sparkContext.setLogLevel("ERROR")
        remember_jvm_names(spark.sparkContext)
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
        pass
    if master.startswith("spark://") and os.environ.get("RW_SPARK_SHIP_PACKAGE", "1") != "0":
        spark.sparkContext.addPyFile(package_zip())
    _sessions[master] = spark
    return spark


def remember_jvm_names(sc) -> None:
    """Py4J looks a name like `sc._jvm.PythonRDD` up in the JVM on every use, trying each
    imported package in turn (each miss a Class.forName over the ~280 jars of Spark's class
    path): PySpark does that several times for every RDD it builds, which was a sixth of
    the JVM's CPU per epoch job. A class's name means the same class for the whole session,
    so the first answer is kept — and so are its static methods (`PythonRDD.runJob`), which
    Py4J also asks the JVM about on every use."""
    from py4j.java_gateway import JavaClass, JavaMember

    view = sc._jvm
    base = type(view)
    if getattr(base, "remembers_names", False):
        return

    class RememberingClass(JavaClass):
        def __getattr__(self, name: str):
            found = JavaClass.__getattr__(self, name)
            if isinstance(found, JavaMember):  # a static method (a field's value is not kept)
                self.__dict__[name] = found
            return found

    class RememberingView(base):
        remembers_names = True

        def __getattr__(self, name: str):
            found = base.__getattr__(self, name)
            if isinstance(found, JavaClass):
                found.__class__ = RememberingClass
                self.__dict__[name] = found
            return found

    view.__class__ = RememberingView


def package_zip() -> str:
    """rw_cli as a zip that Spark ships to every executor (`addPyFile`): a cluster's workers
    need only the third-party packages, not rw_cli itself, and run the driver's very code."""
    import tempfile
    import zipfile

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the rw_cli package
    path = os.path.join(tempfile.mkdtemp(prefix="rw-spark-"), "rw_cli.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if x != "__pycache__"]
            for f in files:
                full = os.path.join(d, f)
                z.write(full, os.path.relpath(full, os.path.dirname(root)))
    return path


def adopt(master: str, spark) -> None:
    """Use a SparkSession made elsewhere (spark-submit's) for `master`."""
    _sessions[master] = spark


@contextlib.contextmanager
def _jvm_output_to(path: str | None):
    """The JVM that pyspark launches inherits fd 1 and 2: point them at `path` meanwhile."""
    if path is None:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for f in (fd, *saved):
            os.close(f)


def default_parallelism(spark) -> int:
    try:
        return max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:  # noqa: BLE001 - Spark Connect: ask the server
        try:
            return max(1, int(spark.conf.get("spark.default.parallelism")))
        except Exception:  # noqa: BLE001
            return 2


def partition_keys(spark, n: int) -> list[int]:
    """For each partition index i < n, an int whose Spark hash partitioning puts it in
    partition i: `repartition(n, col)` then sends actor i's rows to task i."""
    from pyspark.sql import functions as F

    found: dict[int, int] = {}
    limit = 64 * n
    while len(found) < n:
        rows = spark.range(limit).select(F.col("id").cast("int").alias("k"),
                                         F.expr(f"pmod(hash(cast(id as int)), {n})").alias("p")).toArrow()
        for k, p in zip(rows.column("k").to_pylist(), rows.column("p").to_pylist()):
            found.setdefault(p, k)
        limit *= 4
    return [found[i] for i in range(n)]


def is_connect(spark) -> bool:
    return not hasattr(spark, "sparkContext") or type(spark).__module__.startswith("pyspark.sql.connect")


def cancel(spark, tag: str) -> None:
    """Cancel the running jobs of an epoch."""
    try:
        if is_connect(spark):
            spark.interruptTag(tag)
        else:
            spark.sparkContext.cancelJobGroup(tag)
    except Exception:  # noqa: BLE001 - best effort: the epoch fails anyway
        pass


def extra_conf() -> dict[str, str]:
    """Spark settings from $RW_SPARK_CONF ("key=value,key=value"), over rw's own: what a
    Spark user passes with --conf (event logs, executor sizes, shuffle settings)."""
    out = {}
    for item in os.environ.get("RW_SPARK_CONF", "").split(","):
        if "=" in item:
            k, v = item.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _java_options() -> str:
    """The JVM options of Spark's driver and executors: our log4j configuration, then
    $RW_SPARK_JAVA_OPTIONS. (A short run on a small machine spends as much CPU in the JIT's
    optimizing compiler as in its work: the tests set `-XX:TieredStopAtLevel=1`, halving
    Java's CPU in them; a long-running pipeline is better off with the default.)"""
    extra = os.environ.get("RW_SPARK_JAVA_OPTIONS", "").strip()
    return f"-Dlog4j2.configurationFile=file:{LOG4J}" + (f" {extra}" if extra else "")


def with_task_retries(master: str) -> str:
    """local[N] never retries a failed task; local[N,F] does (F attempts)."""
    m = _LOCAL.match(master)
    if m and m.group(1) and not m.group(3):
        return f"local[{m.group(2)},{os.environ.get('RW_SPARK_TASK_MAX_FAILURES', '4')}]"
    return master


def stop_all() -> None:
    for spark in _sessions.values():
        try:
            spark.stop()
        except Exception:  # noqa: BLE001
            pass
    _sessions.clear()
    os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)  # set by a remote session; a classic one reads it
