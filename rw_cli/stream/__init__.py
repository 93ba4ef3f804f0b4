"""The life of a stream job, in one package: built from a stream plan (`builder`), filled
from its upstreams' snapshots and connected (`job`), rebuilt on recovery (`recovery`),
driven by barriers (`driver`), reported on (`progress`) and dropped (`job`).

Handlers plan with `rw_cli.sql` and hand the plan (`plan`) here; this package knows nothing
of sqlglot, and the actor factories that Spark pickles live here, so a Spark worker never
imports the SQL frontend.
"""
