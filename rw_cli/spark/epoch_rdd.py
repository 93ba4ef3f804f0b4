"""The RDDs of an epoch's Spark job (`EpochRDD`), made in the JVM with a few Py4J calls.

A compiled job's graph (`JobGraph`) is the same every epoch; only a shuffle's map output is
an epoch's own, so every epoch runs on RDDs of its own. PySpark's RDD API makes them by
wrapping and pickling each stage's Python function again and asking the JVM ~40 times per
epoch (~20 ms of the driver's CPU, beside the epoch's tasks on a small machine). Here each
stage's function is wrapped for the JVM once per graph (`_Functions`), and an epoch's RDDs
are then made directly — Python RDD over the stage's input, `PairwiseRDD`,
`partitionBy`, values — as PySpark's `mapPartitionsWithIndex` and `partitionBy` would
make them.

A stage's output records are (partition, record) pairs, a record's first field the stage
it goes to; a stage that feeds another is keyed for the shuffle in its own task (the
records of each partition pickled as one batch, what `partitionBy` sends), the filter for
its consumer and the keying pipelined with the stage's own function.
"""
from __future__ import annotations

import struct
import time
from dataclasses import dataclass, field

from rw_cli.spark.graph import SOURCE_STAGE, JobGraph
from rw_cli.spark.stage import stage_function


def _partition(k: int) -> int:
    """partitionBy's function: a record's key is its partition (the actor index)."""
    return k


def shuffle_to(rdd, n: int):
    """Spark's shuffle of a PySpark RDD of (partition, record) pairs into `n` partitions,
    each by its key, as an epoch's RDDs shuffle (the Python workers' warm-up runs it).
    What it moves are a few large pickled batches per task, which Java's serialization
    writes as fast as Kryo; Spark would pick Kryo for them and build one anew in every
    task (a sixth of the JVM's CPU in an epoch job)."""
    out = rdd.partitionBy(n, _partition)
    shuffled = out._jrdd.rdd().dependencies().head().rdd()  # the ShuffledRDD, before it runs
    shuffled.setSerializer(_java_serializer(rdd.ctx))
    return out


_jvm_objects: dict[tuple, object] = {}  # (SparkContext id, what) -> a JVM object made for it


def _per_context(sc, what: tuple, make):
    """A JVM object `make()` builds, kept for `sc` (objects of an earlier SparkContext go)."""
    key = (id(sc), *what)
    if key not in _jvm_objects:
        if len(_jvm_objects) > 64 or any(k[0] != id(sc) for k in _jvm_objects):
            _jvm_objects.clear()
        _jvm_objects[key] = make()
    return _jvm_objects[key]


def _java_serializer(sc):
    return _per_context(sc, ("serializer",),
                        lambda: sc._jvm.org.apache.spark.serializer.JavaSerializer(sc._jsc.sc().conf()))


def _indexes_rdd(sc, n: int):
    """The JVM RDD of `n` empty partitions (and its deserializer): stage 0's task i reads
    the epoch's split range i (by its partition index). It is the same RDD every epoch (no
    data goes to the JVM for it)."""
    def make():
        rdd = sc.parallelize([], n)
        return rdd._jrdd.rdd(), rdd._jrdd_deserializer
    return _per_context(sc, ("indexes", n), make)


_pickled: dict[int, tuple[JobGraph, bytes]] = {}


def pickled_graph(graph: JobGraph) -> bytes:
    """The graph pickled once: every epoch's stage functions ship these bytes (pickling
    the executors and readers again each epoch cost the driver ~9 ms)."""
    got = _pickled.get(id(graph))
    if got is None or got[0] is not graph:
        from pyspark import cloudpickle

        if len(_pickled) > 16:
            _pickled.clear()
        got = _pickled[id(graph)] = (graph, cloudpickle.dumps(graph))
    return got[1]


def keyed_for(stage_fn, consumer: int, n: int, pickle_batch):
    """`stage_fn`'s records for `consumer`, keyed for a shuffle into its `n` partitions as
    PySpark's `partitionBy` keys them: per partition, its index packed as a long, then the
    partition's (partition, record) pairs pickled as one batch."""
    def run(index, records):
        buckets: dict[int, list] = {}
        for kv in stage_fn(index, records):
            if kv[1][0] == consumer:
                buckets.setdefault(kv[0] % n, []).append(kv)
        for part, items in buckets.items():
            yield struct.pack("!q", part)
            yield pickle_batch(items)
    return run


class _Functions:
    """A graph's stage functions wrapped for the JVM (PySpark's SimplePythonFunction), once
    per graph and SparkContext: a stage's own (`plain`, output pickled for Python), and
    each producer's keyed for each consumer (`keyed`, output framed bytes)."""

    def __init__(self, sc, graph: JobGraph, source_deserializer):
        from pyspark.core.rdd import _wrap_function
        from pyspark.serializers import BatchedSerializer, NoOpSerializer

        self.sc_id = id(sc)
        self.graph = graph
        shipped = pickled_graph(graph)
        batches = BatchedSerializer(sc._unbatched_serializer)  # what a shuffle's values hold
        self.plain: dict[int, object] = {}
        self.keyed: dict[tuple[int, int], object] = {}
        self.output = sc.serializer
        for st in graph.stages:
            fn = stage_function(shipped, st.id)
            source = source_deserializer if st.id == SOURCE_STAGE else batches
            if len(st.consumers) != 1:  # the root, or a stage persisted for its consumers
                self.plain[st.id] = _wrap_function(sc, fn, source, self.output)
            # one consumer: keyed in the stage's own function; several: over the persisted output
            body, body_in = (fn, source) if len(st.consumers) == 1 else (_records, self.output)
            for c in st.consumers:
                n = graph.stages[c].parallelism
                self.keyed[(st.id, c)] = _wrap_function(sc, keyed_for(body, c, n, sc._unbatched_serializer.dumps),
                                                        body_in, NoOpSerializer())


def _records(_index, records):
    return records


_functions: dict[int, _Functions] = {}


def functions(sc, graph: JobGraph, source_deserializer) -> _Functions:
    got = _functions.get(id(graph))
    if got is None or got.graph is not graph or got.sc_id != id(sc):
        if len(_functions) > 16:
            _functions.clear()
        got = _functions[id(graph)] = _Functions(sc, graph, source_deserializer)
    return got


@dataclass
class ReadAhead:
    """Stage 0 of an epoch run before its barrier: the split ranges the driver expects the
    next tick to assign, read (and their stateless chain run, their deltas combined) while
    the epoch before runs its stateful stages — Spark's map stages of the shuffles out of
    stage 0, submitted on their own (`SparkContext.submitMapStage`). The epoch's job then
    finds their map output and starts with its actors. Only an epoch whose ranges, columns
    and functions are exactly these uses it; otherwise it is cancelled."""
    key: tuple  # (ranges, columns read per source, Python functions): what stage 0 reads
    futures: list  # the map stages' FutureActions

    def wait(self, job_done, poll_s: float = 0.003) -> None:
        """Until its map stages have finished, or `job_done()` (the epoch job that needs them
        has ended: it failed, or it ran them itself). (Polled: Spark's own timed waits
        raise on time out, and a Java exception costs PySpark ~70 ms to convert.)"""
        for f in self.futures:
            while not job_done() and not f.isCompleted():
                time.sleep(poll_s)

    def cancel(self) -> None:
        for f in self.futures:
            try:
                f.cancel()
            except Exception:  # noqa: BLE001 - finished, or its SparkContext is gone
                pass


@dataclass
class EpochRDD:
    """An epoch job's RDD graph — stage 0 over the split ranges, then one shuffle into each
    fragment's stage and into the materialize stage — ready to run for any epoch: what
    changes per epoch (`EpochInfo`) travels as a property of the job (`stage.EPOCH_INFO`),
    not in the stages' functions. So the next epoch's RDDs are built while this epoch's job
    runs, off its path (`epoch_job.run_epoch`); a shuffle's map output is its epoch's own,
    so an EpochRDD runs once."""
    graph: JobGraph
    splits: int  # stage 0's partitions
    sc_id: int
    root: object  # the last stage's RDD: the action collects its records (metadata only)
    persisted: list  # JVM RDDs of stages read by two stages, persisted for the epoch
    ahead_deps: list = field(default_factory=list)  # the shuffles that only stage 0 writes
    ahead: ReadAhead | None = None  # its stage 0, already submitted for these ranges

    def fits(self, graph: JobGraph, splits: int, sc) -> bool:
        """Whether these RDDs run an epoch of `graph` with `splits` ranges to read (a stage-0
        task past the last range reads nothing)."""
        return self.graph is graph and self.splits >= splits and self.sc_id == id(sc)

    def release(self) -> None:
        """Its epoch ran (or failed): the persisted stages' blocks go."""
        for r in self.persisted:
            r.unpersist(False)

    def discard(self) -> None:
        """Never to run: its read-ahead is cancelled, its persisted RDDs let go."""
        if self.ahead is not None:
            self.ahead.cancel()
        self.release()


def _memory_and_disk(sc):
    from pyspark import StorageLevel

    return _per_context(sc, ("level",), lambda: sc._getJavaStorageLevel(StorageLevel.MEMORY_AND_DISK))


def build_rdd(sc, graph: JobGraph, splits: int) -> EpochRDD:
    """The RDDs of an epoch's job with `splits` split ranges to read. A stage whose output
    feeds two stages (q5's shared window count, q7's bid scan feeding an aggregation and a
    join) is persisted for the epoch, so its tasks run once."""
    from pyspark.core.rdd import RDD

    jvm = sc._jvm
    src, source_deserializer = _indexes_rdd(sc, max(1, splits))
    fns = functions(sc, graph, source_deserializer)
    keyed: dict[int, list] = {}  # stage -> its producers' records for it, keyed
    persisted, ahead_deps, root = [], [], None
    for st in graph.stages:  # (producers first)
        if st.id == SOURCE_STAGE:
            base = src
        else:
            base, dep = _shuffled(sc, keyed.pop(st.id), st.parallelism)
            if list(st.producers) == [SOURCE_STAGE]:
                ahead_deps.append(dep)
        if not st.consumers:  # the root: its records come back to the driver
            root = RDD(jvm.PythonRDD(base, fns.plain[st.id], False, False).asJavaRDD(), sc, fns.output)
            continue
        if len(st.consumers) > 1:  # computed once, read by every consumer
            base = jvm.PythonRDD(base, fns.plain[st.id], False, False)
            base.persist(_memory_and_disk(sc))
            persisted.append(base)
        for c in st.consumers:
            keyed.setdefault(c, []).append(jvm.PythonRDD(base, fns.keyed[(st.id, c)], False, False))
    return EpochRDD(graph, splits, id(sc), root, persisted, ahead_deps)


def _partitioner(sc, n: int):
    """PySpark's partitioner of `partitionBy(n, _partition)` (a record's key is its partition)."""
    return _per_context(sc, ("partitioner", n), lambda: sc._jvm.PythonPartitioner(n, id(_partition)))


def _shuffled(sc, keyed: list, n: int):
    """The keyed records of a stage's producers shuffled into its `n` partitions (one
    shuffle of their union): the RDD its tasks read, and the shuffle's dependency."""
    jvm = sc._jvm
    if len(keyed) == 1:
        both = keyed[0]
    else:
        rdds = sc._gateway.new_array(jvm.org.apache.spark.api.java.JavaRDD, len(keyed))
        for i, k in enumerate(keyed):
            rdds[i] = k.asJavaRDD()
        both = sc._jsc.union(rdds).rdd()
    pairs = jvm.PairwiseRDD(both).asJavaPairRDD().partitionBy(_partitioner(sc, n))
    shuffled = pairs.rdd()
    shuffled.setSerializer(_java_serializer(sc))
    return _values(sc, pairs), shuffled.dependencies().head()


def _values(sc, pairs):
    """The records of a shuffle's (partition, record) pairs: `PythonRDD.valueOfPair`'s RDD,
    made with the function of the first one it made for `sc`. valueOfPair hands Spark's
    closure cleaner its function anew on every call, which reads PythonRDD's class file
    from its jar and parses it each time (~15 ms of the JVM's CPU per shuffle per epoch);
    the function itself (drop each pair's key) is the same for every RDD. The RDD's
    constructor is called through reflection: its flags (after `preservesPartitioning`,
    all false here) differ between Spark versions."""
    key = (id(sc), "values")
    if key not in _jvm_objects:
        made = sc._jvm.PythonRDD.valueOfPair(pairs).rdd()
        _per_context(sc, ("values",), lambda: _constructor_args(sc, made, pairs.rdd()))
        return made
    ctor, args = _jvm_objects[key]
    args[0] = pairs.rdd()
    return ctor.newInstance(args)


def _constructor_args(sc, made, parent) -> tuple:
    """(the constructor of `made`, a MapPartitionsRDD, and its arguments for another
    parent: `made`'s function, partitioning preserved, other flags false, its class tags)."""
    cls = made.getClass()
    f = cls.getDeclaredField("f")
    f.setAccessible(True)
    ctor = cls.getConstructors()[0]
    flags = sum(1 for t in ctor.getParameterTypes() if t.getName() == "boolean")
    values = [parent, f.get(made), True] + [False] * (flags - 1) + [made.elementClassTag(), parent.elementClassTag()]
    args = sc._gateway.new_array(sc._jvm.java.lang.Object, len(values))
    for i, v in enumerate(values):
        args[i] = v
    return ctor, args


def run_rdd(sc, rdd) -> list:
    """Every record of `rdd`, through `PythonRDD.runJob`."""
    from pyspark.util import _load_from_socket

    sock_info = sc._jvm.PythonRDD.runJob(sc._jsc.sc(), rdd._jrdd, list(range(rdd.getNumPartitions())))
    with _load_from_socket(sock_info, rdd._jrdd_deserializer) as stream:
        return list(stream)
