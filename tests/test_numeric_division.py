"""rw_cli.common.numeric's vectorized division (div_arrays, avg_int_arrays, sum_parts_arrays)
against rw_cli.common.rust_decimal, which is rust_decimal 1.40's algorithm on Python ints: every
row must give the reference's digits and scale, or its error. The random values lean on what
the numpy kernel must get right itself (28-digit quotients, the remainder rounded half to even,
_unscale's partial trimming, negative scale differences, values near 2^96, divisors on either
side of 2^32, lost scales) and mix in what it leaves to the reference (NaN, the infinities, zero
and wide divisors, overflows). `recorded` checks that the kernel, not the reference, computed
the rows it can."""
from __future__ import annotations

import decimal
import random

import numpy as np
import pyarrow as pa
import pytest

from rw_cli.common import numeric as N
from rw_cli.common import rust_decimal as rd
from rw_cli.engine import numeric_udfs

MAX = rd.MAX_MANTISSA
I128 = pa.decimal128(38, 0)


def _sign(r: random.Random, m: int) -> int:
    return -m if r.random() < 0.5 else m


def _dividend(r: random.Random):
    k = r.random()
    if k < 0.04:
        return None
    if k < 0.08:
        return r.choice([rd.NAN, rd.POS_INF, rd.NEG_INF])
    if k < 0.13:
        return 0, r.randint(0, 28)
    if k < 0.45:
        return _sign(r, r.randint(0, 10 ** r.randint(1, 18))), r.randint(0, 12)
    if k < 0.6:
        return _sign(r, r.randint(1, MAX)), r.randint(0, 28)
    if k < 0.72:
        return _sign(r, MAX - r.randint(0, 10 ** r.randint(0, 12))), r.randint(0, 28)
    if k < 0.85:
        return _sign(r, r.randint(1, 2 ** 63)), r.randint(0, 28)
    return _sign(r, r.randint(1, 10 ** r.randint(1, 6))), r.randint(0, 28)


def _divisor(r: random.Random):
    k = r.random()
    if k < 0.03:
        return None
    if k < 0.06:
        return r.choice([rd.NAN, rd.POS_INF, rd.NEG_INF])
    if k < 0.1:
        return 0, r.randint(0, 28)
    if k < 0.45:
        return _sign(r, r.randint(1, 1000)), r.randint(0, 4)
    if k < 0.55:
        return _sign(r, 2 ** r.randint(0, 31)), r.randint(0, 10)
    if k < 0.65:
        return _sign(r, r.randint(1, 2 ** 31)), r.randint(0, 28)
    if k < 0.75:
        return _sign(r, 2 ** 32 + r.randint(-3, 3)), r.randint(0, 28)
    if k < 0.85:
        return _sign(r, r.randint(1, 10 ** 4)), r.randint(10, 28)  # negative scale differences
    return _sign(r, r.randint(2 ** 32, MAX)), r.randint(0, 28)


def _pairs(seed: str, n: int) -> tuple[list, list]:
    """Random (dividend, divisor) pairs; some dividends are a multiple of their divisor (exact
    quotients, trailing zeros) or one off it (a long quotient that rounds)."""
    r = random.Random(seed)
    xs, ys = [], []
    for _ in range(n):
        x, y = _dividend(r), _divisor(r)
        if isinstance(x, tuple) and isinstance(y, tuple) and y[0] and r.random() < 0.2:
            m = y[0] * r.randint(-10 ** r.randint(0, 12), 10 ** r.randint(0, 12)) + r.choice([0, 0, 1, -1])
            if abs(m) <= MAX:
                x = m, r.randint(0, 28)
        xs.append(x)
        ys.append(y)
    return xs, ys


def _reference(op, *args):
    """op's value, None where an argument is NULL or it fails (the `_or_null` forms)."""
    if any(a is None for a in args):
        return None
    try:
        return op(*args)
    except rd.NumericError:
        return None


@pytest.fixture
def recorded(monkeypatch):
    """The rows each kernel call hands to the reference, in order of the calls."""
    calls: list[list[int]] = []
    original = N._reference_rows

    def record(op, args, rows, strict):
        calls.append(rows.tolist())
        return original(op, args, rows, strict)
    monkeypatch.setattr(N, "_reference_rows", record)
    return calls


def _reaches_overflow(x, y) -> bool:
    """Whether rd.div fails on x / y or its quotient reaches 2^96 and loses a digit (the rows
    the kernel leaves to the reference)."""
    seen = []
    original = rd._unscale_from_overflow

    def spy(*args):
        seen.append(True)
        return original(*args)
    rd._unscale_from_overflow = spy
    try:
        rd.div(x, y)
    except rd.NumericError:
        return True
    finally:
        rd._unscale_from_overflow = original
    return bool(seen)


@pytest.mark.parametrize("seed", ["a", "b", "c", "d"])
def test_div_arrays_is_rust_decimals_div(seed, recorded):
    xs, ys = _pairs(seed, 12000)
    got = N.unpack(N.div_arrays(N.pack(xs), N.pack(ys), strict=False))
    for x, y, g in zip(xs, ys, got):
        assert g == _reference(rd.div, x, y), (x, y)
    # the kernel computed every row it can: only these went to the reference
    slow = set(recorded[0])
    for i, (x, y) in enumerate(zip(xs, ys)):
        narrow = isinstance(y, tuple) and 0 < abs(y[0]) < 2 ** 32
        if isinstance(x, tuple) and narrow:
            assert (i in slow) == _reaches_overflow(x, y), (x, y)
    assert len(slow) < len(xs) * 0.35


@pytest.mark.parametrize("divisor", ["3", "-7", "2", "0.5", "1.000", "4294967295", "0.0000000000000000000000000007"])
def test_div_arrays_by_one_divisor_for_all_rows(divisor):
    # (numpy divides by a scalar otherwise than by a column)
    r = random.Random(divisor)
    xs = [_dividend(r) for _ in range(3000)]
    y = rd.parse(divisor)
    got = N.unpack(N.div_arrays(N.pack(xs), N.pack([y] * len(xs)), strict=False))
    for x, g in zip(xs, got):
        assert g == _reference(rd.div, x, y), x


def test_fit_digits_is_exact_at_rust_decimals_limits():
    # _find_scale's fit: the most digits (<= 9) q grows by within 96 bits; doubles cannot tell
    # q from q + 1 there, so the kernel must fall back on the limbs
    qs = [0, 1, 7, MAX, MAX - 1]
    for k in range(1, 10):
        limit = MAX // 10 ** k
        qs += [limit + j for j in range(-3, 4)]
    limbs = np.array([[(q >> (32 * i)) & 0xFFFFFFFF for q in qs] for i in range(3)], dtype=np.uint64)
    want = [max([0] + [k for k in range(1, 10) if q * 10 ** k <= MAX]) for q in qs]
    assert N._fit_digits(limbs).tolist() == want


EDGE_CASES = [
    ("14841035", "2", "7420517.50"),  # _unscale trims 10^4 and 10 but not the last zero's 10^2
    ("1", "3", "0.3333333333333333333333333333"),
    ("-1", "3", "-0.3333333333333333333333333333"),
    ("2", "-3", "-0.6666666666666666666666666667"),
    ("-2", "-3", "0.6666666666666666666666666667"),
    ("10", "4", "2.50"),
    ("-7.5", "2", "-3.750"),
    ("0.00", "7", "0"),  # a zero dividend is 0 at scale 0
    ("0.000", "-0.07", "0"),
    ("1", "0.0001", "10000"),  # a negative scale difference grows the exact quotient
    ("5", "0.0000000000000000000000000001", "50000000000000000000000000000"),
    ("0.0000000000000000000000000001", "3", "0"),
    ("0.0000000000000000000000000002", "4", "0"),  # half to even: 0.5e-28 rounds to 0
    ("0.0000000000000000000000000006", "4", "0.0000000000000000000000000002"),
    ("4", "2147483648", "0.0000000018626451492309570312"),  # a remainder of exactly half, q even
    ("12", "2147483648", "0.0000000055879354476928710938"),  # half, q odd: up
    ("79228162514264337593543950335", "1", "79228162514264337593543950335"),
    ("79228162514264337593543950335", "-1.0", "-79228162514264337593543950335"),
    ("79228162514264337593543950335", "3", "26409387504754779197847983445"),
    ("7922816251426433759354395033.5", "2", "3961408125713216879677197516.8"),  # 2^96: a digit less
    ("1.50", "1.50", "1"),
    ("100.000", "8", "12.500"),
    ("178092420", "24", "7420517.50"),
    ("-0.5", "4294967295", "-0.0000000001164153218540398688"),
    ("123456789.123456789", "0.001", "123456789123.456789"),
    # a negative quotient whose n_frac has a zero low word (2^64 * 10^-28)
    ("-0.0000000036893488147419103232", "2", "-0.0000000018446744073709551616"),
    ("0.0000000018446744073709551616", "-1", "-0.0000000018446744073709551616"),
    ("-18446744073709551616", "1", "-18446744073709551616"),
]


@pytest.mark.parametrize("a, b, expected", EDGE_CASES)
def test_div_arrays_edge_cases(a, b, expected):
    x, y = rd.parse(a), rd.parse(b)
    assert rd.to_text(rd.div(x, y)) == expected  # (the reference agrees)
    assert N.texts(N.div_arrays(N.pack([x]), N.pack([y]))) == [expected]


def test_div_arrays_errors_when_strict_and_nulls_when_not():
    a = N.pack([rd.parse("1"), rd.parse("79228162514264337593543950335"), rd.parse("0"), rd.NAN, rd.POS_INF])
    zero = N.pack([rd.parse("0.00"), rd.parse("2"), rd.parse("0"), rd.parse("0"), rd.parse("0")])
    over = N.pack([rd.parse("1"), rd.parse("0.1"), rd.parse("1"), rd.parse("0"), rd.parse("0")])
    with pytest.raises(rd.NumericError, match="Division by zero"):
        N.div_arrays(a, zero)
    with pytest.raises(rd.NumericError, match="Numeric out of range"):
        N.div_arrays(a, over)
    assert N.texts(N.div_arrays(a, zero, strict=False)) == [None, "39614081257132168796771975168", None, "NaN",
                                                             "Infinity"]
    assert N.texts(N.div_arrays(a, over, strict=False)) == ["1", None, "0", "NaN", "Infinity"]
    div, div_or_null = numeric_udfs.UDFS["rw_num_div"][0], numeric_udfs.UDFS["rw_num_div_or_null"][0]
    with pytest.raises(rd.NumericError, match="Division by zero"):
        div(a, zero)
    assert N.texts(div_or_null(a, zero))[0] is None


def test_div_arrays_takes_lost_scales_slices_and_chunks():
    arr = N.pack([rd.parse(t) for t in ["1.50", "-2.250", "7", "0.1000", "NaN", "3"]])
    lost = pa.StructArray.from_arrays([N.child(arr, 0), N.child(arr, 1), pa.array([float("nan")] * 6)],
                                      fields=list(N.NUMERIC_ARROW))
    divisor = N.pack([rd.parse(t) for t in ["3", "0.30", "-4", "0.001", "2", "7"]])
    want = [rd.div(x, y) for x, y in zip(N.unpack(lost), N.unpack(divisor))]
    assert N.unpack(N.div_arrays(lost, divisor)) == want
    assert N.unpack(N.div_arrays(lost.slice(2), divisor.slice(2))) == want[2:]
    chunked = pa.chunked_array([lost.slice(0, 3), lost.slice(3)])
    assert N.unpack(N.div_arrays(chunked, pa.chunked_array([divisor]))) == want
    empty = N.pack([])
    assert N.unpack(N.div_arrays(empty, empty)) == []


def _sums_and_counts(seed: str, n: int) -> tuple[list, list]:
    r = random.Random(seed)
    sums, counts = [], []
    for _ in range(n):
        k = r.random()
        if k < 0.04:
            s = None
        elif k < 0.5:
            s = _sign(r, r.randint(0, 10 ** r.randint(1, 18)))
        elif k < 0.7:
            s = _sign(r, r.randint(0, 2 ** 63))
        elif k < 0.85:
            s = _sign(r, MAX - r.randint(0, 10 ** r.randint(0, 9)))
        elif k < 0.95:
            s = _sign(r, r.randint(0, MAX))
        else:
            s = _sign(r, r.randint(MAX + 1, 10 ** 37))  # out of range
        j = r.random()
        if j < 0.03:
            c = None
        elif j < 0.06:
            c = 0
        elif j < 0.7:
            c = r.randint(1, 10 ** r.randint(1, 6))
        elif j < 0.85:
            c = r.randint(1, 2 ** 32 - 1)
        elif j < 0.9:
            c = 2 ** 32 + r.randint(-2, 2)
        else:
            c = r.randint(1, 2 ** 62)
        sums.append(s)
        counts.append(c)
    return sums, counts


def _int128s(values: list) -> pa.Array:
    return pa.array([None if v is None else decimal.Decimal(v) for v in values], I128)


@pytest.mark.parametrize("seed", ["a", "b"])
def test_avg_int_arrays_is_rust_decimals_avg_int(seed, recorded):
    sums, counts = _sums_and_counts(seed, 12000)
    got = N.unpack(N.avg_int_arrays(_int128s(sums), pa.array(counts, pa.int64()), strict=False))
    for s, c, g in zip(sums, counts, got):
        assert g == _reference(rd.avg_int, s, c), (s, c)
    slow = set(recorded[0])
    for i, (s, c) in enumerate(zip(sums, counts)):
        if s is not None and abs(s) <= MAX and c is not None and 0 < c < 2 ** 32:
            assert (i in slow) == _reaches_overflow((s, 0), (c, 0)), (s, c)


def test_avg_int_arrays_errors_and_udfs():
    sums, counts = _int128s([10 ** 30, 7, 5, None]), pa.array([3, 2, 0, 1], pa.int64())
    with pytest.raises(rd.NumericError, match="Numeric out of range"):
        N.avg_int_arrays(sums, counts)
    assert N.texts(N.avg_int_arrays(sums, counts, strict=False)) == [None, "3.50", None, None]
    assert N.texts(numeric_udfs.UDFS["rw_num_avg_int_or_null"][0](sums, counts)) == [None, "3.50", None, None]
    assert N.texts(N.avg_int_arrays(sums.slice(1, 2), pa.chunked_array([counts.slice(1, 2)]))) == ["3.50", None]


def _group_parts(values: list) -> tuple:
    """What DuckDB hands rw_num_sum_parts / rw_num_avg_parts for a group of numerics (the
    non-NULL ones): the sums of n_int and n_frac, the largest scale, the greatest and least
    n_int, the count."""
    present = [v for v in values if v is not None]
    if not present:
        return None, None, None, None, None, 0
    split = [N._split(v) for v in present]
    ints = [i for i, _, _ in split]
    return (sum(ints), sum(f for _, f, _ in split), max(rd.scale(v) if isinstance(v, tuple) else 0 for v in present),
            max(ints), min(ints), len(present))


def _groups(seed: str, n: int) -> list[list]:
    r = random.Random(seed)
    out = []
    for _ in range(n):
        k = r.random()
        size = r.choice([0, 1, 1, 2, 3, 5, 10, 40])
        if k < 0.1:
            group = [_dividend(r) for _ in range(size)]
        elif k < 0.2:  # sums past 96 bits: rounded to fewer digits, or out of range
            group = [(_sign(r, MAX - r.randint(0, 10 ** 6)), r.randint(0, 28)) for _ in range(size)]
        else:
            group = [(_sign(r, r.randint(0, 10 ** r.randint(1, 15))), r.randint(0, 8)) for _ in range(size)]
        out.append(group)
    return out


@pytest.mark.parametrize("name, reference", [
    ("rw_num_sum_parts_or_null", numeric_udfs._sum_parts), ("rw_num_avg_parts_or_null", numeric_udfs._avg_parts)])
def test_sum_and_avg_of_numerics_are_the_row_functions(name, reference, recorded):
    groups = _groups(name, 4000)
    parts = [_group_parts(g) for g in groups]
    columns = list(zip(*parts))
    arrays = [_int128s(columns[0]), _int128s(columns[1]), pa.array(columns[2], pa.int8()),
              _int128s(columns[3]), _int128s(columns[4]), pa.array(columns[5], pa.int64())]
    fn = numeric_udfs.UDFS[name][0]
    got = N.unpack(fn(*arrays[:5]) if "sum" in name else fn(*arrays))
    for p, g in zip(parts, got):
        args = p[:5] if "sum" in name else p
        assert g == _reference(reference, *args), p
    assert len(recorded[0]) < len(groups) * 0.3  # (the sums' reference rows)


def test_avg_int_arrays_takes_chunks_and_zero_counts():
    # as the stream's avg of integers (hash_agg._exact_avg) hands over its states' columns
    sums, counts = _int128s([14841035, -1, None, 6]), pa.chunked_array([pa.array([2, 3, 5, 0], pa.int64())])
    assert N.texts(N.avg_int_arrays(pa.chunked_array([sums]), counts)) == [
        "7420517.50", "-0.3333333333333333333333333333", None, None]
