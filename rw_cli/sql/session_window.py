"""Session frames: `f(x) OVER (PARTITION BY p ORDER BY k SESSION WITH GAP g)`.

A row's frame is its session: the rows of its partition whose order keys follow each other
by less than the gap (a row whose key is at least the previous key plus the gap starts a new
session). DuckDB has no such frame, so a session window is computed in two steps over the
rows that carry its inputs: the session of each row is numbered (`session_numbers_sql`), and
the window becomes an ordinary one over partition + session number whose frame is the whole
session.

Also here: named windows (`WINDOW w AS (...)`, `OVER w`, `OVER (w ORDER BY ...)`) written
into the windows that use them, which both rewrites need first."""

from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError, NotSupported
from rw_cli.sql.dialect import SESSION_FRAME
from rw_cli.sql.walk import nodes

def is_session(w: exp.Expression) -> bool:
    spec = w.args.get("spec") if isinstance(w, exp.Window) else None
    return spec is not None and str(spec.args.get("kind") or "").upper() == SESSION_FRAME


def session_key(w: exp.Window) -> exp.Expression:
    """The one ascending order key a session frame needs (RisingWave's rule)."""
    order = w.args.get("order")
    keys = order.expressions if order is not None else []
    if len(keys) != 1 or keys[0].args.get("desc"):
        raise BindError("session frame requires exactly one ascending ORDER BY column")
    return keys[0].this


def without_frame(w: exp.Window) -> exp.Window:
    """A copy of `w` over its partition's default frame (of the same type)."""
    copy = w.copy()
    copy.set("spec", None)
    return copy


def gap_of(w: exp.Window) -> exp.Expression:
    """The gap, a string literal read as an interval (`'10 minutes'`)."""
    gap = w.args["spec"].args["start"].copy()
    if isinstance(gap, exp.Literal) and gap.is_string:
        return exp.Cast(this=gap, to=exp.DataType.build("INTERVAL"))
    return gap


def session_numbers_sql(source: str, partition: list[str], key: str, gap: str, name: str) -> str:
    """`source`'s rows with one more column, `name`: the number of the row's session within
    its partition (0, 1, ...). Peers (rows of one key) are in one session."""
    over = f"OVER ({'PARTITION BY ' + ', '.join(partition) + ' ' if partition else ''}ORDER BY {key})"
    starts = (f"SELECT *, CASE WHEN {key} >= lag({key}) {over} + {gap} THEN 1 ELSE 0 END AS {name}__start "
              f"FROM ({source})")
    return f"SELECT * EXCLUDE ({name}__start), sum({name}__start) {over} AS {name} FROM ({starts})"


def inline_named_windows(select: exp.Select) -> None:
    """Write each named window of `select`'s WINDOW clause into the windows that use it."""
    named = {w.alias_or_name if not isinstance(w.this, exp.Identifier) else w.this.name: w
             for w in select.args.get("windows") or []}
    if not named:
        return
    for w in list(select.find_all(exp.Window)):
        if w.find_ancestor(exp.Select) is not select:
            continue
        ref = w.args.get("alias")
        base = named.get(ref.name) if isinstance(ref, exp.Identifier) else None
        if base is None:
            continue
        if not w.args.get("partition_by") and base.args.get("partition_by"):
            w.set("partition_by", [p.copy() for p in base.args["partition_by"]])
        if w.args.get("order") is None and base.args.get("order") is not None:
            w.set("order", base.args["order"].copy())
        if w.args.get("spec") is None and base.args.get("spec") is not None:
            w.set("spec", base.args["spec"].copy())
        w.set("alias", None)
    select.set("windows", None)


def rewrite_batch(tree: exp.Expression) -> exp.Expression:
    """Every SELECT of `tree` (qualified: stars expanded, columns named by their tables) with
    a session window in its select list becomes a query over the rows of its inputs:

        SELECT <list> FROM (<session numbers> FROM (SELECT <inputs> FROM ... WHERE ...
                                                    GROUP BY ... HAVING ...))

    The inner SELECT computes, per row, each output that has no session window, and the
    arguments, partition and order keys of each session window (and the parts of an output
    around one); the outer one applies the windows over partition + session number, then
    DISTINCT, ORDER BY, LIMIT and OFFSET."""
    for select in reversed(nodes(tree, exp.Select)):
        if select.args.get("windows") and any(is_session(w) for w in select.args["windows"]):
            inline_named_windows(select)
        if any(is_session(w) for e in select.expressions for w in e.find_all(exp.Window)):
            replacement = _rewrite_select(select)
            if select is tree:
                tree = replacement
            else:
                select.replace(replacement)
    return tree


class _Inputs:
    """The inner SELECT's columns: each expression once, as __s0, __s1, ..."""

    def __init__(self) -> None:
        self.items: list[exp.Expression] = []
        self.keys: dict[str, str] = {}

    def add(self, e: exp.Expression) -> exp.Column:
        key = e.sql()
        if key not in self.keys:
            name = f"__s{len(self.items)}"
            self.keys[key] = name
            self.items.append(exp.alias_(e.copy(), name))
        return exp.column(self.keys[key])


def _rewrite_select(select: exp.Select) -> exp.Expression:
    distinct = select.args.get("distinct")
    if distinct is not None and distinct.args.get("on") is not None:
        raise NotSupported("DISTINCT ON with a session window")
    inputs = _Inputs()
    sessions: list[tuple[list[str], str, exp.Expression, str]] = []  # partition, key, gap, number's name
    outer_items = []
    for i, e in enumerate(select.expressions):
        name = e.alias_or_name
        body = e.this if isinstance(e, exp.Alias) else e
        if not any(is_session(w) for w in body.find_all(exp.Window)):
            outer_items.append(exp.alias_(inputs.add(body), name, quoted=True))
            continue
        outer_items.append(exp.alias_(_outer_expression(body.copy(), inputs, sessions), name, quoted=True))
    inner = select.copy()
    for key in ("order", "limit", "offset", "distinct", "with_", "with", "fetch"):
        inner.set(key, None)
    order = select.args.get("order")
    if order is not None:
        outputs = {item.alias for item in outer_items}
        order = order.copy()
        for o in order.expressions:
            if isinstance(o.this, exp.Literal) or (isinstance(o.this, exp.Column) and not o.this.table
                                                  and o.this.name in outputs):
                continue
            if o.this.find(exp.Window):
                raise NotSupported("ORDER BY a window function in a query with a session window")
            o.set("this", inputs.add(o.this))
    inner.set("expressions", inputs.items)
    source: exp.Expression = inner
    for partition, key, gap, number in sessions:
        source = _numbered(source, partition, key, gap, number)
    outer = exp.select(*outer_items).from_(exp.Subquery(this=source, alias=exp.TableAlias(
        this=exp.to_identifier("__session"))))
    if order is not None:
        outer.set("order", order)
    for key in ("limit", "offset", "distinct", "fetch"):
        if select.args.get(key) is not None:
            outer.set(key, select.args[key].copy())
    for key in ("with_", "with"):
        if select.args.get(key) is not None:
            outer.set(key, select.args[key].copy())
    return outer


def _numbered(source: exp.Expression, partition: list[str], key: str, gap: exp.Expression,
              name: str) -> exp.Select:
    """`session_numbers_sql` as a tree, over a query of the inner SELECT's columns."""
    def over(fn: exp.Expression) -> exp.Window:
        return exp.Window(this=fn, partition_by=[exp.column(p) for p in partition],
                          order=exp.Order(expressions=[exp.Ordered(this=exp.column(key))]))
    start = exp.Case(ifs=[exp.If(this=exp.GTE(this=exp.column(key), expression=exp.Add(
        this=over(exp.Lag(this=exp.column(key))), expression=gap.copy())), true=exp.Literal.number(1))],
        default=exp.Literal.number(0))
    starts = exp.select(exp.Star(), exp.alias_(start, f"{name}__start")).from_(
        exp.Subquery(this=source, alias=exp.TableAlias(this=exp.to_identifier(f"{name}__in"))))
    return exp.select(exp.Star(), exp.alias_(over(exp.Sum(this=exp.column(f"{name}__start"))), name)).from_(
        exp.Subquery(this=starts, alias=exp.TableAlias(this=exp.to_identifier(f"{name}__starts"))))


def _outer_expression(body: exp.Expression, inputs: _Inputs, sessions: list) -> exp.Expression:
    """An output with a session window: its session windows over the session numbers, the
    rest of it (columns, aggregates, other windows) read from the inner SELECT."""
    def repl(n: exp.Expression):
        if isinstance(n, exp.Window) and is_session(n):
            return _session_window(n, inputs, sessions)
        if isinstance(n, (exp.Column, exp.AggFunc, exp.Window, exp.Subquery)):
            return inputs.add(n)
        return n
    return body.transform(repl, copy=False)


def _session_window(w: exp.Window, inputs: _Inputs, sessions: list) -> exp.Window:
    key = session_key(w)
    partition = [inputs.add(p) for p in w.args.get("partition_by") or []]
    key_col = inputs.add(key)
    gap = gap_of(w)
    signature = ([p.name for p in partition], key_col.name, gap.sql())
    number = next((n for p, k, g, n in sessions if (p, k, g.sql()) == signature), None)
    if number is None:
        number = f"__session{len(sessions)}"
        sessions.append((signature[0], signature[1], gap, number))
    fn = w.this.copy()
    holder = fn
    while isinstance(holder, (exp.IgnoreNulls, exp.RespectNulls)):
        holder = holder.this
    for arg_key, value in list(holder.args.items()):
        if isinstance(value, exp.Expression) and not isinstance(value, (exp.Star, exp.Literal)):
            holder.set(arg_key, inputs.add(value))
        elif isinstance(value, list):
            holder.set(arg_key, [inputs.add(v) if isinstance(v, exp.Expression) and not isinstance(
                v, (exp.Star, exp.Literal)) else v for v in value])
    return exp.Window(this=fn, partition_by=[*partition, exp.column(number)],
                      order=exp.Order(expressions=[exp.Ordered(this=key_col)]),
                      spec=exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING",
                                          end="UNBOUNDED", end_side="FOLLOWING"))
