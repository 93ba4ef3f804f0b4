"""A hash agg fed deltas per group (AggDelta, what a Spark task sends after its map-side
combine) ends each epoch exactly as one fed the rows: the same output, the same state."""
from __future__ import annotations

import random

import pytest

from rw_cli.common.epoch import EpochPair
from rw_cli.common.types import BIGINT, DOUBLE, INTEGER, VARCHAR
from rw_cli.engine.agg_call import AggCall, agg_return_type, state_types
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.hash_agg import HashAggExecutor


def _agg(make_table, kinds, input_types, group_keys=(0,), minput=False) -> HashAggExecutor:
    calls = []
    for kind, arg in kinds:
        arg_type = input_types[arg] if arg is not None else None
        calls.append(AggCall(kind, arg, arg_type, agg_return_type(kind, arg_type)))
    keys = [input_types[k] for k in group_keys]
    types = keys + [BIGINT] + [t for c in calls for _, t in state_types(c)]
    tables = {i: make_table(keys + [c.arg_type, BIGINT], list(range(len(keys) + 1)))
              for i, c in enumerate(calls) if minput and c.needs_minput}
    return HashAggExecutor(input_types, list(group_keys), calls, make_table(types, list(range(len(keys)))), tables)


def _chunks(rng: random.Random, live: list[str], append_only: bool) -> list[StreamChunk]:
    """A few chunks of inserts (and, unless append-only, deletes of live rows)."""
    out = []
    for _ in range(rng.randint(1, 4)):
        lines = []
        for _ in range(rng.randint(1, 6)):
            if live and not append_only and rng.random() < 0.3:
                lines.append("- " + live.pop(rng.randrange(len(live))))
            else:
                row = f"{rng.choice(['1', '2', '3', '.'])} {rng.choice(['5', '-7', '40', '.'])} {rng.choice(['a', 'b'])}"
                live.append(row)
                lines.append("+ " + row)
        out.append(StreamChunk.from_pretty("\n".join(lines), [INTEGER, BIGINT, VARCHAR]))
    return out


def _sorted(chunks: list[StreamChunk]) -> list[str]:
    return sorted(line for c in chunks for line in c.to_pretty().splitlines())


@pytest.mark.parametrize("append_only", [True, False])
@pytest.mark.parametrize("group_keys", [(0,), (2, 0)])
def test_deltas_give_what_rows_give(make_table, append_only, group_keys):
    kinds = [("count_star", None), ("count", 1), ("sum", 1), ("avg", 1), ("sum", 0)]
    if append_only:
        kinds += [("max", 1), ("min", 1)]
    types = [INTEGER, BIGINT, VARCHAR]
    by_rows, by_deltas = _agg(make_table, kinds, types, group_keys), _agg(make_table, kinds, types, group_keys)
    combiner = by_deltas.combiner(list(group_keys))
    assert combiner is not None
    rng, live = random.Random(7 + len(group_keys) + append_only), []
    for n in range(1, 12):
        chunks = _chunks(rng, live, append_only)
        for c in chunks:
            by_rows.on_chunk(c)
        # the epoch's rows split among "tasks", each sending one delta of its share; one
        # share of rows goes to the actor as rows (an input that is not combined)
        cut = sorted(rng.sample(range(len(chunks) + 1), 2))
        for part in (chunks[:cut[0]], chunks[cut[0]:cut[1]]):
            if part:
                by_deltas.on_delta(combiner.of_chunks(part))
        for c in chunks[cut[1]:]:
            by_deltas.on_chunk(c)
        epoch = EpochPair((n + 1) << 16, n << 16)
        assert _sorted(by_deltas.on_barrier(epoch)) == _sorted(by_rows.on_barrier(epoch)), n
    keys = by_rows.result_table.schema.names[:len(group_keys)]
    assert by_deltas.result_table.scan().sort_by([(k, "ascending") for k in keys]).to_pylist() == \
        by_rows.result_table.scan().sort_by([(k, "ascending") for k in keys]).to_pylist()


def test_deltas_combine_over_any_split(make_table):
    ex = _agg(make_table, [("count_star", None), ("sum", 1), ("max", 1)], [INTEGER, BIGINT, VARCHAR])
    delta = ex.combiner([0])
    chunks = _chunks(random.Random(3), [], True) + _chunks(random.Random(4), [], True)
    whole = delta.of_chunks(chunks)
    parts = delta.combine([delta.of_chunks(chunks[:1]), delta.of_chunks(chunks[1:3]), delta.of_chunks(chunks[3:])])
    assert parts.column_names == whole.column_names
    assert parts.sort_by("_0").to_pylist() == whole.sort_by("_0").to_pylist()


def test_no_combiner_where_the_epoch_needs_the_rows(make_table):
    """A retractable min/max keeps its input, a float sum is DuckDB's, and deltas routed by
    other columns than the group key would reach the wrong actor."""
    types = [INTEGER, BIGINT, DOUBLE]
    assert _agg(make_table, [("max", 1)], types, minput=True).combiner([0]) is None
    assert _agg(make_table, [("sum", 2)], types).combiner([0]) is None
    assert _agg(make_table, [("sum", 1)], types).combiner([1]) is None
    assert _agg(make_table, [("sum", 1)], types).combiner(None) is None
    assert _agg(make_table, [("sum", 1)], types).combiner([0]) is not None


def test_deltas_of_inserts_only_match_the_general_form(make_table):
    """Rows that are all inserts take a shorter path (no deletes' partials to aggregate):
    its delta has the general one's columns and types, and combines with it."""
    import pyarrow as pa

    from rw_cli.engine.chunk import concat_chunks

    types = [INTEGER, BIGINT, VARCHAR]
    ex = _agg(make_table, [("count_star", None), ("count", 1), ("sum", 1), ("avg", 0), ("max", 1)], types,
              minput=True)
    delta = ex.agg_delta

    def rows(text):
        buf = concat_chunks([StreamChunk.from_pretty(text, types)], delta.input_schema)
        return buf.data.append_column("_sign", pa.array(buf.signs()))
    inserts, mixed = "+ 1 5 a\n+ 1 . b\n+ 2 40 a\n+ 3 9 a", "- 1 5 a\n+ 3 -7 b\n+ 2 . a"
    whole = delta.of_rows(rows(inserts + "\n" + mixed), [4])
    parts = delta.combine([delta.of_rows(rows(inserts), [4]), delta.of_rows(rows(mixed), [4])])
    assert delta.of_rows(rows(inserts), [4]).schema == whole.schema == parts.schema
    assert parts.sort_by("_0").to_pylist() == whole.sort_by("_0").to_pylist()
