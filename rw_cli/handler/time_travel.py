"""Time travel: `SELECT ... FROM t FOR SYSTEM_TIME AS OF <time>` reads t as it was at that
time, from the versions the store keeps (RisingWave's time travel queries).

The time is a timestamp(tz) expression (`now() - interval '5' second`, a literal) or a
number of seconds since the Unix epoch. A time after the newest commit reads the newest
commit. A time before the relation existed, or older than the system parameter
`time_travel_retention_ms` (at least 10 minutes; compaction keeps every version that recent),
is refused as RisingWave refuses it: the version has expired. Time travel is one of
RisingWave's premium features: refused once the license key was removed.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from sqlglot import exp

from rw_cli.common.epoch import EPOCH_ORIGIN_MS, EPOCH_SHIFT
from rw_cli.errors import BindError, ExecutionError, NotSupported
from rw_cli.meta import system_params
from rw_cli.meta.catalog import RelationCatalog
from rw_cli.sql.dialect import DatePart

MIN_RETENTION_MS = 600_000


def check_retention(value) -> None:
    """ALTER SYSTEM SET time_travel_retention_ms: RisingWave's lower bound."""
    try:
        ms = int(str(value))
    except ValueError:
        raise BindError(f'invalid value "{value}" for time_travel_retention_ms') from None
    if ms < MIN_RETENTION_MS:
        raise BindError(f"time_travel_retention_ms cannot be less than {MIN_RETENTION_MS}")


def as_of_epoch(session, expr: exp.Expression, rel: RelationCatalog, run_query: Callable) -> int:
    """The store epoch `rel` is read at for `FOR SYSTEM_TIME AS OF expr`; `run_query`
    (rw_cli.handler.query's) evaluates the expression."""
    if system_params.license_missing(session.catalog.system_params):
        raise NotSupported("feature TimeTravel is not available based on your license",
                           hint="You may want to set a license key with `ALTER SYSTEM SET license_key = '...';` "
                                "command.")
    ms = _unix_ms(session, expr, run_query)
    epoch = max(ms - EPOCH_ORIGIN_MS, 0) << EPOCH_SHIFT | ((1 << EPOCH_SHIFT) - 1)
    retention = int(system_params.value(session.catalog.system_params, "time_travel_retention_ms"))
    oldest = max(rel.created_at or 0, int(time.time() * 1000) - retention)
    if ms < oldest:
        raise ExecutionError(f"Time-travel version expired: table {rel.id}, epoch {epoch if ms > EPOCH_ORIGIN_MS else 0}")
    return min(epoch, session.store.committed_epoch)


def _unix_ms(session, expr: exp.Expression, run_query: Callable) -> int:
    """The time `expr` means, in ms since the Unix epoch (a number: seconds)."""
    _, types = run_query(session, exp.select(expr.copy()), empty=True)
    if len(types) != 1:
        raise BindError("FOR SYSTEM_TIME AS OF needs one value")
    if not types[0].is_numeric:  # a time: its seconds since the Unix epoch
        expr = DatePart(this=exp.Literal.string("epoch"), expression=exp.cast(expr.copy(), "timestamptz"))
    data, _ = run_query(session, exp.select(expr))
    seconds = data.column(0)[0].as_py() if data.num_rows == 1 else None
    if seconds is None:
        raise BindError("FOR SYSTEM_TIME AS OF needs a time, not NULL")
    return int(float(seconds) * 1000)
