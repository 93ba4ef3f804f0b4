"""rw_cli.common.numeric: RisingWave's numeric as a struct DuckDB compares by value while each
value keeps its scale in a NaN's payload. These tests guard what that rests on in DuckDB (a
DuckDB upgrade that canonicalized NaNs on copy would fail here first) and the conversions."""
from __future__ import annotations

import decimal
import random

import pyarrow as pa
import pytest

from rw_cli.common import numeric as N
from rw_cli.common import rust_decimal as rd
from rw_cli.engine import duck


def _arr(texts):
    return N.pack([None if t is None else rd.parse(t) for t in texts])


def test_pack_and_unpack_round_trip_every_kind_of_value():
    texts = ["1.50", "1.5", "-2.25", "0", "0.00", "NaN", "Infinity", "-Infinity", None,
             "79228162514264337593543950335", "-79228162514264337593543950335",
             "0.0000000000000000000000000001", "-0.0000000000000000000000000001", "123456789.123456789"]
    assert N.texts(_arr(texts)) == texts


def test_duckdb_compares_groups_and_joins_by_value_and_keeps_each_scale():
    t = pa.table({"v": _arr(["1.50", "1.5", "2", "2.0", "-0.5", None]), "k": [1, 2, 3, 4, 5, 6]})
    q = duck.query
    assert q("SELECT count(*) AS c FROM t WHERE v = (SELECT v FROM t WHERE k = 2)", {"t": t}).column(0).to_pylist() == [2]
    groups = q("SELECT v, count(*) AS c FROM t GROUP BY v ORDER BY v", {"t": t})
    assert N.texts(groups.column("v").combine_chunks()) == ["-0.5", "1.50", "2", None]
    assert groups.column("c").to_pylist() == [1, 2, 2, 1]
    assert q("SELECT count(*) FROM t a JOIN t b ON a.v = b.v", {"t": t}).column(0).to_pylist() == [9]
    ordered = q("SELECT v FROM t ORDER BY v DESC NULLS LAST, k", {"t": t}).column(0).combine_chunks()
    assert N.texts(ordered) == ["2", "2.0", "1.50", "1.5", "-0.5", None]  # copies keep the payload
    union = q("SELECT v FROM t UNION ALL SELECT CASE WHEN k > 0 THEN v END FROM t", {"t": t}).column(0)
    assert N.texts(union.combine_chunks())[:6] == ["1.50", "1.5", "2", "2.0", "-0.5", None]


def test_a_lost_scale_prints_the_fewest_digits_never_fewer():
    arr = _arr(["1.50", "2.250"])
    canonical = pa.StructArray.from_arrays([N.child(arr, 0), N.child(arr, 1), pa.array([float("nan")] * 2)],
                                           fields=list(N.NUMERIC_ARROW))
    assert N.texts(canonical) == ["1.5", "2.25"]


def test_order_and_specials_follow_postgresql():
    t = pa.table({"v": _arr(["NaN", "Infinity", "-Infinity", "7", "-7"])})
    out = duck.query("SELECT v FROM t ORDER BY v", {"t": t}).column(0).combine_chunks()
    assert N.texts(out) == ["-Infinity", "-7", "7", "Infinity", "NaN"]


def test_coerce_keeps_arrow_decimals_scale_and_integers():
    assert N.texts(N.coerce(pa.array([decimal.Decimal("1.50"), None], pa.decimal128(10, 2)))) == ["1.50", None]
    assert N.texts(N.coerce(pa.array([3, -4, None], pa.int32()))) == ["3", "-4", None]
    assert N.texts(N.coerce(pa.array(["2.500", " nan "]))) == ["2.500", "NaN"]
    assert N.texts(N.coerce(pa.array([0.1]))) == ["0.1"]


def test_python_values_and_plain_arrow():
    arr = _arr(["1.50", None, "-3"])
    assert N.python_values(arr) == [decimal.Decimal("1.50"), None, decimal.Decimal("-3")]
    assert N.plain(arr).type == pa.decimal128(38, 2)
    assert N.plain(_arr(["NaN", "1"])).to_pylist()[1] == 1.0  # NaN has no Arrow decimal: doubles
    nested = pa.array([[1, 2], None], pa.list_(pa.int32()))
    assert N.python_values(nested) == [[1, 2], None]


def test_equal_ignores_scale():
    assert N.equal(_arr(["1.5", "1", None]), _arr(["1.50", "1.0000", "1"])).to_pylist() == [True, True, None]


def _random_value(r: random.Random):
    k = r.random()
    if k < 0.05:
        return None
    if k < 0.08:
        return r.choice([rd.NAN, rd.POS_INF, rd.NEG_INF])
    if k < 0.2:
        return r.randint(-2 ** 96 + 1, 2 ** 96 - 1), r.randint(0, 28)
    return r.randint(-10 ** r.randint(0, 18), 10 ** r.randint(0, 18)), r.randint(0, 12)


@pytest.mark.parametrize("name, vectorized, reference", [
    ("add", lambda a, b: N.add_arrays(a, b, strict=False), rd.add),
    ("sub", lambda a, b: N.add_arrays(a, b, subtract=True, strict=False), rd.sub),
    ("mul", lambda a, b: N.mul_arrays(a, b, strict=False), rd.mul),
])
def test_vectorized_arithmetic_is_rust_decimals(name, vectorized, reference):
    r = random.Random(name)
    xs = [_random_value(r) for _ in range(5000)]
    ys = [_random_value(r) for _ in range(5000)]
    got = N.unpack(vectorized(N.pack(xs), N.pack(ys)))
    for x, y, g in zip(xs, ys, got):
        try:
            want = None if x is None or y is None else reference(x, y)
        except rd.NumericError:
            want = None
        assert g == want, (x, y)


def test_vectorized_arithmetic_raises_out_of_range_when_strict():
    big = _arr(["79228162514264337593543950335"])
    with pytest.raises(rd.NumericError, match="Numeric out of range"):
        N.add_arrays(big, big)


def _random_text(r: random.Random) -> str | None:
    k = r.random()
    if k < 0.05:
        return None
    if k < 0.15:
        return r.choice(["nan", " Infinity", "-inf", "1e3", "1.5E-2", "1_000", ".5", "-.5", "1.", "+1.", "  -0.0 ",
                         "-0", "00012.3400", "x", "", " 1 ", "1.2.3", "9" * 18, "9" * 19, "1." + "9" * 27,
                         "1." + "9" * 28, "0." + "1" * 28, "-0." + "0" * 27 + "1", "-" + "9" * 18 + ".5",
                         "\t7\n", "\u0661", "--1", "+-1"])
    digits = str(r.randint(0, 10 ** r.randint(0, 18)))
    frac = "".join(r.choice("0123456789") for _ in range(r.randint(0, 12)))
    return r.choice(["", "-", "+"]) + digits + ("." + frac if r.random() < 0.7 else "")


@pytest.mark.parametrize("seed", [1, 2])
def test_a_text_column_parses_as_each_of_its_values_does(seed):
    """`parse_texts` (a column at a time: loads, casts) gives what `rd.parse` gives each value,
    its scale too; a value it cannot read is `rd.parse`'s error, or NULL when not strict."""
    r = random.Random(seed)
    texts = [_random_text(r) for _ in range(5000)]
    want = []
    for t in texts:
        try:
            want.append(None if t is None else rd.parse(t))
        except rd.NumericError:
            want.append(None)
    got = N.parse_texts(pa.array(texts, pa.string()), strict=False)
    assert N.unpack(got) == want
    assert N.texts(got) == N.texts(N.pack(want))  # the scales: 1.50 stays 1.50
    with pytest.raises(rd.NumericError, match='invalid input syntax for type numeric: "x"'):
        N.parse_texts(pa.array(["1.5", "x", "2"]))
    assert N.texts(N.parse_texts(pa.chunked_array([["-0.5", "12"], ["-3.25"]]))) == ["-0.5", "12", "-3.25"]


def _numeric_texts(r: random.Random, n: int, short: int = 9) -> list[str]:
    """`n` numbers as text: up to 19 integer digits, a sign, mostly up to `short` fraction
    digits, sometimes as many as 28 digits in all allow."""
    out = []
    for _ in range(n):
        whole = str(r.randint(0, 10 ** r.randint(0, 19)))
        frac = "".join(r.choice("0123456789")
                       for _ in range(r.randint(0, short if r.random() < .8 else max(0, 28 - len(whole)))))
        out.append(r.choice(["", "-"]) + whole + ("." + frac if frac or r.random() < 0.3 else ""))
    return out


@pytest.mark.parametrize("lost_scale", [False, True])
def test_a_numeric_column_prints_as_each_of_its_values_does(lost_scale):
    """`text_array` (a column at a time: output, COPY TO, casts to text) prints what
    `rd.to_text` prints for each value: every digit of its scale, or the fewest digits that
    hold it where the scale was lost (min/max in DuckDB); the specials and floors beyond 64
    bits too."""
    import numpy as np

    r = random.Random(7)
    texts = ["nan", "Infinity", "-inf", "0", "-0.0", "0.000", "79228162514264337593543950335",
             "-79228162514264337593543950335", "0.0000000000000000000000000001", "-0.0000000000000000000000000001",
             "9223372036854775807.5", "-9223372036854775808.5", "-9223372036854775807.25", "-9223372036854775808",
             "18446744073709551616.1", "-0.5", "-1", "-1.000", None]
    texts += _numeric_texts(r, 3000)
    arr = N.pack([None if t is None else rd.parse(t) for t in texts])
    if lost_scale:
        arr = pa.StructArray.from_arrays([N.child(arr, "n_int"), N.child(arr, "n_frac"),
                                          N.scale_array(np.full(len(arr), -1))],
                                         fields=list(N.NUMERIC_ARROW), mask=pa.compute.invert(arr.is_valid()))
    want = [None if v is None else rd.to_text(v) for v in N.unpack(arr)]
    assert N.text_array(arr).to_pylist() == want
    assert N.text_array(arr.slice(7, 20)).to_pylist() == want[7:27]
    if not lost_scale:
        assert want[:6] == ["NaN", "Infinity", "-Infinity", "0", "0.0", "0.000"]


@pytest.mark.parametrize("chunk", [N.F64_CHUNK, 1000])
def test_a_double_column_becomes_numerics_as_each_of_its_values_does(chunk, monkeypatch):
    """`from_f64_column` (double precision into numeric, a column at a time) gives what
    `rd.from_f64` gives each value — rust_decimal's from_f64, bit for bit: its 96-bit
    steps, its rounding one digit at a time — for doubles of every magnitude, subnormals,
    the specials and NULL; a value rust_decimal cannot hold is its error, or NULL when not
    strict."""
    import math
    import struct

    r = random.Random(13)
    values = [0.0, -0.0, 0.1, 0.2, 0.3, 1 / 3, 2 / 3, math.pi, -math.e, 1e-30, 1e-33, 5e-324, 2.0 ** 53,
              2.0 ** 53 + 2, 9007199254740991.0, math.nan, math.inf, -math.inf, 0.5, -0.5, 1.5, 2.5, 123.456,
              1e22, 1e-7, 4.35, 0.615, 7.9e28, None]
    for _ in range(6000):
        k = r.random()
        if k < 0.3:
            v = r.random()
        elif k < 0.5:
            v = round(r.uniform(-1e6, 1e6), r.randint(0, 6))
        elif k < 0.75:
            v = r.uniform(-1, 1) * 10 ** r.randint(-40, 30)
        elif k < 0.85:
            v = float(r.randint(-10 ** 15, 10 ** 15))
        else:
            v = struct.unpack("<d", struct.pack("<Q", r.getrandbits(64)))[0]
        values.append(v)
    want = []
    for v in values:
        try:
            want.append(None if v is None else rd.from_f64(v))
        except rd.NumericError:
            want.append(None)
    monkeypatch.setattr(N, "F64_CHUNK", chunk)
    got = N.from_f64_column(pa.array(values, pa.float64()), strict=False)
    assert N.unpack(got) == want
    assert N.texts(got) == N.texts(N.pack(want))
    with pytest.raises(rd.NumericError, match="out of range"):
        N.from_f64_column(pa.array([1.0, 1e30]))


@pytest.mark.parametrize("digits", [None, 0, 2, 18, 20, -1, "mixed"])
def test_round_of_a_column_is_round_of_each_value(digits):
    """`round_dp_arrays` (round(x) and round(x, d) a column at a time) gives `rd.round_` /
    `rd.round_dp` of each value: half away from zero, a value with fewer digits keeping its
    scale, carries into the integer part, negative and large digits, the specials, NULLs."""
    r = random.Random(17)
    texts = ["nan", "Infinity", "-inf", "0", "-0.001", "0.005", "-0.005", "0.0049", "9.995", "-9.995", "99.5",
             "-99.5", "0.5", "-0.5", "1.5", "-2.5", "79228162514264337593543950335",
             "-7922816251426433759354395033.5", "4611686018427387903.5", None]
    texts += _numeric_texts(r, 3000)
    values = [None if t is None else rd.parse(t) for t in texts]
    if digits == "mixed":
        ds = [r.choice([None, -2, 0, 1, 3, 18, 19, 30]) for _ in values]
    else:
        ds = None if digits is None else [digits] * len(values)
    want = []
    for i, v in enumerate(values):
        if v is None or (ds is not None and ds[i] is None):
            want.append(None)
            continue
        try:
            want.append(rd.round_(v) if ds is None else rd.round_dp(v, ds[i]))
        except rd.NumericError:
            want.append(None)
    got = N.round_dp_arrays(N.pack(values), None if ds is None else pa.array(ds, pa.int32()), strict=False)
    assert N.unpack(got) == want
    assert N.texts(got) == N.texts(N.pack(want))


def test_a_numeric_column_into_double_is_each_value_into_double():
    """`to_f64_array` (numeric into double precision a column at a time) gives `rd.to_f64` of
    each value bit for bit — its quotient of the fraction, its rounding through 10^scale
    (`_powi`), the sign of a zero — the specials and wide values too; NULL slots are NaN."""
    import math

    r = random.Random(19)
    texts = ["nan", "Infinity", "-inf", "0", "-0.001", "0.005", "-0.005", "1.5", "-2.5", "0.1", "0.3", "-0.7",
             "79228162514264337593543950335", "123.456", "9007199254740993", "1.00000000000000000001",
             "-9223372036854775808", "4611686018427387904.5", None]
    texts += _numeric_texts(r, 4000, short=12)
    values = [None if t is None else rd.parse(t) for t in texts]
    got = N.to_f64_array(N.pack(values)).tolist()
    for v, g in zip(values, got):
        w = math.nan if v is None else rd.to_f64(v)
        assert (w == g and math.copysign(1, w) == math.copysign(1, g)) or (math.isnan(w) and math.isnan(g)), (v, w, g)
