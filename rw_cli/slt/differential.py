"""`rw slt --mv`: every query of a file also as a materialized view, checked against itself.

A query's batch result is what the MV must hold. Each `query` record that passes in batch is
created as a materialized view right after it ran (the outermost ORDER BY dropped unless a
LIMIT, OFFSET or FETCH needs it; the columns named c1..cN, so that unnamed or repeated output
columns are no reason to refuse), and its rows are compared with the query's as multisets.
The view then lives through the file's later statements: after any of them that may change
its rows (a write to a relation it reads, directly or through views, indexes, MVs and sinks;
any statement but a write or a CREATE TABLE, INDEX or VIEW) the view is compared again (its
query re-run in batch) at the next query record, and at the end of the file after a FLUSH. A
view no later statement can change is dropped once compared; views done with are dropped a
batch at a time (one DROP, one barrier), and always before the file's next statement.

Each view ends in one of three outcomes: equal, refused (CREATE failed: grouped by the error
message with its literals and names normalized), or different (the first comparison that
failed, with the query). Values compare as values, not as text: numbers by value (fractions to
10 significant digits, so that a float sum added up in another order is the same sum), so a
numeric printed with another scale is no difference.

Cross products, which RisingWave (and rw by default) refuse in streaming jobs, are
maintained in this mode (the runner sets rw_streaming_allow_cross_join): the question is
whether a view holds what its query returns, for every query.

Views are dropped before a statement that drops or alters a relation their query names (RW,
like PostgreSQL, refuses to drop a table an MV reads): CASCADE, for the views made here only.
"""
from __future__ import annotations

import decimal
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import pyarrow as pa

from rw_cli.common.numeric import python_values
from rw_cli.result import Result
from rw_cli.slt.parser import Record

MV_PREFIX = "rw_slt_mv_"
SHOWN_ROWS = 10  # rows listed per side of a difference
# views done with are dropped this many at a time, in one DROP (one barrier and commit for
# them all, where a DROP each cost one per view)
DROP_BATCH = 16


# -- the query of a view -------------------------------------------------------------------

_QUERY_START = re.compile(r"^\s*(\(|select\b|with\b|values\b)", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def _top_level_words(sql: str) -> list[tuple[int, str]]:
    """The words outside parentheses, strings, quoted names and comments, with their offsets,
    lower-cased."""
    words: list[tuple[int, str]] = []
    depth, i, n = 0, 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in ("'", '"'):
            j = i + 1
            while j < n:
                if sql[j] == ch:
                    if j + 1 < n and sql[j + 1] == ch:  # a doubled quote inside
                        j += 2
                        continue
                    break
                j += 1
            i = j + 1
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif ch == "(":
            depth += 1
            i += 1
        elif ch == ")":
            depth -= 1
            i += 1
        elif ch.isalpha() or ch == "_":
            m = _WORD.match(sql, i)
            if depth == 0:
                words.append((i, m.group(0).lower()))
            i = m.end()
        else:
            i += 1
    return words


def view_query(sql: str) -> str | None:
    """The query a view is made of: the SQL without its trailing `;` and its outermost ORDER
    BY (which orders nothing in a view) unless a LIMIT, OFFSET or FETCH after it needs it.
    None for SQL that is no SELECT (SHOW, EXPLAIN, DML with RETURNING, ...)."""
    text = sql.strip().rstrip(";").rstrip()
    if not _QUERY_START.match(text):
        return None
    words = _top_level_words(text)
    order_at = None
    for (pos, w), (_, nxt) in zip(words, words[1:]):
        if w == "order" and nxt == "by":
            order_at = pos
    if order_at is None:
        return text
    if any(pos > order_at and w in ("limit", "offset", "fetch") for pos, w in words):
        return text
    return text[:order_at].rstrip()


def referenced_words(sql: str) -> frozenset[str]:
    """Every word of a query, lower-cased: a superset of the relations it reads."""
    return frozenset(w.lower() for w in _WORD.findall(sql))


_DDL_TARGETS = re.compile(
    r"^\s*(?:drop\s+(?:table|view|materialized\s+view|source|sink|index|function|schema)"
    r"|alter\s+(?:table|view|materialized\s+view|source))"
    r"\s+(?:if\s+exists\s+)?(.*)$", re.IGNORECASE | re.DOTALL)


_WRITES = re.compile(
    r"^\s*(?:insert\s+into|update|delete\s+from|truncate(?:\s+table)?)\s+(?:only\s+)?"
    r"((?:\"(?:[^\"]|\"\")*\"|[A-Za-z_][A-Za-z0-9_$]*)(?:\s*\.\s*(?:\"(?:[^\"]|\"\")*\"|[A-Za-z_][A-Za-z0-9_$]*))*)",
    re.IGNORECASE)
_CREATES_NEW = re.compile(r"^\s*create\s+(?:unique\s+)?(?:table|index|view)\b", re.IGNORECASE)


_NAME_PART = re.compile(r'"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*')


def written_relations(sql: str) -> frozenset[str] | None:
    """The relations whose rows a statement may change (last part of each name,
    lower-cased): the target of INSERT, UPDATE, DELETE or TRUNCATE; none for a CREATE TABLE,
    INDEX or VIEW (which change no existing rows); None (any) for every other statement."""
    m = _WRITES.match(sql)
    if m:
        last = _NAME_PART.findall(m.group(1))[-1]
        return frozenset([(last[1:-1].replace('""', '"') if last.startswith('"') else last).lower()])
    if _CREATES_NEW.match(sql):
        return frozenset()
    return None


_SETS_TIME_ZONE = re.compile(r"^\s*set\s+(?:(?:session|local)\s+)?(?:time\s+zone|timezone)\b", re.IGNORECASE)


def dropped_names(sql: str) -> frozenset[str]:
    """The relations a DROP or ALTER statement names (last part of each name, lower-cased);
    empty for any other statement."""
    m = _DDL_TARGETS.match(sql.strip().rstrip(";"))
    if not m:
        return frozenset()
    rest = m.group(1)
    if sql.lstrip()[:5].lower() == "alter":
        rest = rest.split(None, 1)[0] if rest.split() else ""
    names = set()
    for part in rest.split(","):
        tokens = part.strip().split()
        if tokens and tokens[0].lower() not in ("cascade", "restrict"):
            names.add(tokens[0].split(".")[-1].strip('"').lower())
    return frozenset(names)


# -- comparing rows ------------------------------------------------------------------------

def _canonical(value):
    """A value as the comparison sees it: numbers by value, fractions to 10 significant
    digits; nested values by their repr."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return str(value)
        if value == value.to_integral_value():
            return int(value)
        value = float(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value.is_integer() and abs(value) < 2**63:
            return int(value)
        if abs(value) < 1e-12:
            return 0
        return float(f"{value:.10g}")
    if isinstance(value, (list, tuple, dict)):
        return repr(value)
    return value


def canonical_rows(result: Result | None) -> Counter:
    """A result's rows as a multiset of tuples of canonical values."""
    if result is None or result.table is None or result.table.num_columns == 0:
        return Counter()
    columns = [[_canonical(v) for v in _python_values(c)] for c in result.table.columns]
    return Counter(zip(*columns))


def _python_values(column) -> list:
    """A column's values as Python objects; dates and times past Python's years 1-9999 (which
    PostgreSQL and Arrow hold) compare by Arrow's text for them instead."""
    try:
        return python_values(column)
    except (OverflowError, ValueError):
        if not pa.types.is_temporal(column.type):
            raise
        return column.cast(pa.string()).to_pylist()


def describe_difference(query_rows: Counter, view_rows: Counter) -> str:
    def listing(rows: Counter) -> str:
        items = sorted(rows.elements(), key=repr)
        lines = [" ".join("NULL" if v is None else str(v) for v in row) for row in items[:SHOWN_ROWS]]
        if len(items) > SHOWN_ROWS:
            lines.append(f"... {len(items) - SHOWN_ROWS} more")
        return "\n".join(lines) if lines else "(none)"

    missing, extra = query_rows - view_rows, view_rows - query_rows
    return (f"[Rows of the query missing from the MV: {sum(missing.values())}]\n{listing(missing)}\n"
            f"[Rows of the MV not in the query: {sum(extra.values())}]\n{listing(extra)}")


# -- reasons -------------------------------------------------------------------------------

_SINGLE_QUOTED = re.compile(r"'(?:[^']|'')*'")
_DOUBLE_QUOTED = re.compile(r'"(?:[^"]|"")*"')
_NUMBER = re.compile(r"(?<![A-Za-z_$])[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b")


def refusal_reason(message: str, view_name: str) -> str:
    """An error message as a group of refusals: its first line, the view's name as `<mv>`,
    literals as `'?'`, quoted names as `"?"`, numbers as `N`."""
    first = message.strip().splitlines()[0] if message.strip() else "(no message)"
    first = first.replace(view_name, "<mv>")
    first = _SINGLE_QUOTED.sub("'?'", first)
    first = _DOUBLE_QUOTED.sub('"?"', first)
    return _NUMBER.sub("N", first)


# -- the outcome of a file -----------------------------------------------------------------

@dataclass
class Refusal:
    path: str
    line: int
    sql: str
    message: str


@dataclass
class Difference:
    path: str
    line: int
    sql: str
    when: str
    detail: str


@dataclass
class MvReport:
    """The MV outcomes of one file (or, added up, of a run)."""

    equal: int = 0
    refused: dict[str, list[Refusal]] = field(default_factory=dict)
    different: list[Difference] = field(default_factory=list)

    @property
    def refused_count(self) -> int:
        return sum(len(v) for v in self.refused.values())

    def add(self, other: "MvReport") -> None:
        self.equal += other.equal
        for reason, items in other.refused.items():
            self.refused.setdefault(reason, []).extend(items)
        self.different.extend(other.different)


@dataclass
class _View:
    name: str
    rec: Record
    query: str
    words: frozenset[str]
    # the relations whose changes reach the view (last part of each name, lower-cased;
    # None: not known, every statement may change it)
    upstreams: frozenset[str] | None = None
    dirty: bool = False


def _message(err: BaseException) -> str:
    message = getattr(err, "message", None)
    if message:
        return str(message)
    from rw_cli.errors import RwError

    return str(err) if isinstance(err, RwError) else f"internal error: {type(err).__name__}: {err}"


class Differential:
    """The views of one file, from their creation to their drop.

    `session` returns the runner's current session (a `restart` record replaces it);
    `implicit_flush` says whether every statement's effect is visible to the next query (else
    a FLUSH comes before each comparison); `keeps` says whether a view made at a record may
    still see a change (a statement after it)."""

    def __init__(self, session: Callable[[], object], implicit_flush: bool,
                 keeps: Callable[[Record], bool]):
        self.session = session
        self.implicit_flush = implicit_flush
        self.keeps = keeps
        self.report = MvReport()
        self.views: list[_View] = []
        self.created = 0
        self.unused: list[str] = []  # views done with, not yet dropped

    # hooks the runner calls around records
    def before_statement(self, rec: Record) -> None:
        for view in self._ending(rec):
            if view.dirty:
                self._recheck(view, f"before the statement at line {rec.line}")
            if view in self.views:
                self._retire(view)
        # the file's own statements run over the views still compared only
        self._drop_unused()

    def _ending(self, rec: Record) -> list[_View]:
        """The views a statement ends: those it drops or alters a relation of."""
        if _SETS_TIME_ZONE.match(rec.sql):
            # an MV keeps the zone it was created in (RisingWave's too): its query means
            # something else from here on
            return list(self.views)
        names = dropped_names(rec.sql)
        if not names:
            return []
        ours = {v.name for v in self.views} & self._dependents(names)
        return [v for v in self.views if v.words & names or v.name in ours]

    def after_statement(self, rec: Record) -> None:
        """A statement ran: the views it may have changed are compared at the next query."""
        written = written_relations(rec.sql)
        for view in self.views:
            if written is None or view.upstreams is None or written & view.upstreams:
                view.dirty = True

    def before_query(self, rec: Record) -> None:
        for view in [v for v in self.views if v.dirty]:
            self._recheck(view, f"after statements, at the query at line {rec.line}")

    def after_query(self, rec: Record, result: Result | None) -> None:
        """The query passed in batch with `result`: make it a view and compare."""
        query = view_query(rec.sql)
        if query is None or result is None or result.table is None or result.table.num_columns == 0:
            return
        self.created += 1
        name = f"{MV_PREFIX}{self.created}"
        columns = ", ".join(f"c{i + 1}" for i in range(result.table.num_columns))
        try:
            self._execute(f"CREATE MATERIALIZED VIEW {name} ({columns}) AS {query}")
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:  # noqa: BLE001 - every refusal is counted, none is fatal
            message = _message(err)
            self.report.refused.setdefault(refusal_reason(message, name), []).append(
                Refusal(rec.path, rec.line, rec.sql, message))
            self._drop(name)  # a failed CREATE may leave its view behind
            return
        view = _View(name, rec, query, referenced_words(query), self._upstreams(name))
        self.views.append(view)
        if self.implicit_flush:
            equal = self._compare(view, "at creation", result)
        else:  # the batch result may predate a barrier the view has already seen
            equal = self._recheck(view, "at creation")
        if equal and not self.keeps(rec):
            self._retire(view)

    def finish(self) -> None:
        """The end of the file: a FLUSH, every view compared once more, then dropped."""
        if self.views:
            try:
                self._execute("FLUSH")
            except Exception:  # noqa: BLE001 - the comparisons below report what went wrong
                pass
        for view in list(self.views):
            if self._recheck(view, "at the end of the file"):
                self._retire(view)
        self._drop_unused()

    def _upstreams(self, name: str) -> frozenset[str] | None:
        """The relations a view reads, directly or not (through views, indexes and MVs, and
        the sinks into a table it reads), by the last part of their names, lower-cased."""
        catalog = getattr(self.session(), "catalog", None)
        rel = catalog.get(name) if catalog is not None else None
        if rel is None:
            return None
        relations = catalog.relations
        seen = {rel.id}
        frontier = [rel]
        while frontier:
            r = frontier.pop()
            feeders = [relations.get(i) for i in r.dependencies]
            feeders += [s for s in relations.values() if getattr(s, "target", None) == r.id]
            for f in feeders:
                if f is not None and f.id not in seen:
                    seen.add(f.id)
                    frontier.append(f)
        names = [relations[i].name.lower() for i in seen if i != rel.id]
        return frozenset(names + [n.split(".")[-1] for n in names])

    def _dependents(self, names: frozenset[str]) -> set[str]:
        """The names of the relations that depend on the named ones, directly or not (a view
        may read a table through an index the query never names)."""
        catalog = getattr(self.session(), "catalog", None)
        if catalog is None:
            return set()
        out: set[str] = set()
        frontier = [rel for rel in (catalog.get(n) for n in names) if rel is not None]
        while frontier:
            rel = frontier.pop()
            for d in catalog.dependents(rel.id):
                if d.name not in out:
                    out.add(d.name)
                    frontier.append(d)
        return out

    # the life of a view
    def _execute(self, sql: str) -> Result:
        return self.session().execute(sql)

    def _recheck(self, view: _View, when: str) -> bool:
        view.dirty = False
        if not self.implicit_flush:
            try:
                self._execute("FLUSH")
            except Exception:  # noqa: BLE001
                pass
        return self._compare(view, when, None)

    def _compare(self, view: _View, when: str, expected: Result | None) -> bool:
        """Compare a view with its query (re-run unless `expected` is given); a difference
        ends the view. True when equal."""
        try:
            if expected is None:
                expected = self._execute(view.query)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception:  # noqa: BLE001 - the query itself no longer runs (an object it
            # names was dropped; a row it reads now fails in a SELECT, where an MV, non-strict,
            # stores NULL): the view stayed equal while it could be compared
            self._retire(view)
            return False
        try:
            actual = self._execute(f"SELECT * FROM {view.name}")
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:  # noqa: BLE001
            return self._differ(view, when, f"reading the MV failed: {_message(err)}")
        want, got = canonical_rows(expected), canonical_rows(actual)
        if want == got:
            return True
        return self._differ(view, when, describe_difference(want, got))

    def _differ(self, view: _View, when: str, detail: str) -> bool:
        self.report.different.append(Difference(view.rec.path, view.rec.line, view.rec.sql, when, detail))
        self.views.remove(view)
        self._drop(view.name)
        return False

    def _retire(self, view: _View) -> None:
        """A view that stayed equal to its query to the last comparison."""
        self.report.equal += 1
        self.views.remove(view)
        self._drop(view.name)

    def _drop(self, name: str) -> None:
        """Drop a view done with (or what a failed CREATE may have left): with the next
        DROP_BATCH - 1 others, or before the file's next statement, or at its end."""
        self.unused.append(name)
        if len(self.unused) >= DROP_BATCH:
            self._drop_unused()

    def _drop_unused(self) -> None:
        names, self.unused = self.unused, []
        if not names:
            return
        try:
            self._execute(f"DROP MATERIALIZED VIEW IF EXISTS {', '.join(names)}")
            return
        except Exception:  # noqa: BLE001 - one at a time, then
            pass
        for name in names:
            try:
                self._execute(f"DROP MATERIALIZED VIEW IF EXISTS {name}")
            except Exception:  # noqa: BLE001 - a view that cannot be dropped only costs memory
                pass
