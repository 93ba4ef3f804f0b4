"""Property tests (hypothesis): the memcomparable encoding orders rows like the SQL order of
their pk values, and the sortable key forms order byte keys like memcmp."""
import decimal

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from rw_cli.store.keys import KeyForm, sortable_keys
from test_store_keys import _arrow, _check_order

_DEC = decimal.Context(prec=38)

TYPE_VALUES = {
    pa.int16(): st.integers(-2**15, 2**15 - 1),
    pa.int32(): st.integers(-2**31, 2**31 - 1),
    pa.int64(): st.integers(-2**63, 2**63 - 1),
    pa.float32(): st.floats(width=32, allow_nan=True, allow_infinity=True),
    pa.float64(): st.floats(allow_nan=True, allow_infinity=True),
    pa.decimal128(38, 6): st.decimals(min_value=-10**20, max_value=10**20, places=6, allow_nan=False,
                                      allow_infinity=False),
    pa.string(): st.text(alphabet=st.sampled_from(["a", "b", "\x00", "\x01", "é", "中", "\U0010ffff"]), max_size=6),
    pa.binary(): st.binary(max_size=6),
    pa.bool_(): st.booleans(),
    pa.date32(): st.integers(-10**6, 10**6),
    pa.timestamp("us"): st.integers(-2**62, 2**62),
}
TYPES = list(TYPE_VALUES)


@st.composite
def tables(draw):
    k = draw(st.integers(1, 3))
    types = [draw(st.sampled_from(TYPES)) for _ in range(k)]
    desc = [draw(st.booleans()) for _ in range(k)]
    n = draw(st.integers(1, 30))
    cols = []
    for t in types:
        pool = draw(st.lists(st.one_of(st.none(), TYPE_VALUES[t]), min_size=1, max_size=5))
        cols.append([draw(st.sampled_from(pool)) for _ in range(n)])
    return types, desc, cols


@settings(max_examples=300, deadline=None)
@given(tables())
def test_encoding_orders_like_sql(tab):
    types, desc, cols = tab
    arrays = []
    for t, vals in zip(types, cols):
        if pa.types.is_decimal(t):
            vals = [None if v is None else _DEC.create_decimal(v).quantize(decimal.Decimal("0.000001")) for v in vals]
        arrays.append(_arrow(t, vals))
    # compare what Arrow holds (float32 rounding, decimal scale); temporal types by their integers
    per_col = [vals if pa.types.is_temporal(t) else a.to_pylist() for t, vals, a in zip(types, cols, arrays)]
    rows = list(zip(*per_col))
    _check_order(rows, arrays, desc)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=10), min_size=1, max_size=40), st.booleans())
def test_sortable_forms_order_like_bytes(keys, fixed_only):
    if fixed_only:
        keys = [k.ljust(6, b"\0")[:6] for k in keys]
    arr = pa.array(keys, pa.binary())
    lens = np.array([len(k) for k in keys])
    form = KeyForm.of_lengths(lens)
    sk, ok = sortable_keys(arr, form)
    assert ok is None
    order = np.argsort(sk, kind="stable")
    assert [keys[i] for i in order] == sorted(keys)
    for i in range(len(keys)):
        for j in range(len(keys)):
            assert (sk[i] == sk[j]) == (keys[i] == keys[j])
    # a wider variable form (as used when merging SSTs of different widths) orders the same
    wide, _ = sortable_keys(arr, KeyForm(False, form.width + 3))
    assert [keys[i] for i in np.argsort(wide, kind="stable")] == sorted(keys)
