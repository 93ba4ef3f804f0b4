"""jsonb's text form and containment (rw_cli.common.pg_json)."""
import pytest

from rw_cli.common.pg_json import jsonb_contains, jsonb_in


@pytest.mark.parametrize("text, expected", [
    ('{"f2": 1, "f10": 2, "f1": 3}', '{"f1": 3, "f10": 2, "f2": 1}'),  # RisingWave: keys by bytes
    ('[1.50, {"b":null,"a":true}]', '[1.5, {"a": true, "b": null}]'),
    # RisingWave's jsonb: a 64-bit integer exactly, any other number a double as Rust writes it
    ('[9223372036854775807, -9223372036854775808, 18446744073709551615]',
     '[9223372036854775807, -9223372036854775808, 18446744073709551615]'),
    ('{"": 114514191981011451419198101145141919810}', '{"": 1.1451419198101145e38}'),
    ('[3.141592653589793238462, 1.0, 2e16, 1e15, 1e-7, 0.0001, 10.00]',
     '[3.141592653589793, 1.0, 2e16, 1000000000000000.0, 1e-7, 0.0001, 10.0]'),
    ('"x\\"y"', '"x\\"y"'),
])
def test_jsonb_in(text, expected):
    assert jsonb_in(text) == expected


def test_jsonb_in_rejects_bad_input():
    with pytest.raises(ValueError, match="invalid input syntax for type json"):
        jsonb_in("{oops")


@pytest.mark.parametrize("a, b, expected", [
    ('{"a": 1, "b": {"c": 2}}', '{"b": {"c": 2}}', True),
    ('{"a": {"b": 1}}', '{"b": 1}', False),  # only from the top level down
    ('[1, [2, 3]]', '[2]', False),
    ('[1, [2, 3]]', '[[3]]', True),
    ('[1, 2]', '1', True),  # a top-level array contains its scalar elements
    ('[[1]]', '1', False),
    ('1', '1.0', True),
    ('true', '1', False),
    ('"a"', '["a"]', False),
    ('{}', '{}', True),
])
def test_jsonb_contains(a, b, expected):
    assert jsonb_contains(a, b) is expected
