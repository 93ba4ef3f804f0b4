"""rw_cli.common.pg_template: to_date's templates read row by row (BC years as PostgreSQL)."""
from __future__ import annotations

import datetime

import pytest

from rw_cli.common.pg_template import days_from_civil, parse_date

EPOCH = datetime.date(1970, 1, 1)


@pytest.mark.parametrize("d", [datetime.date(1970, 1, 1), datetime.date(2000, 2, 29), datetime.date(1, 1, 1),
                               datetime.date(1600, 3, 1), datetime.date(9999, 12, 31)])
def test_days_from_civil_matches_python(d):
    assert days_from_civil(d.year, d.month, d.day) == (d - EPOCH).days


@pytest.mark.parametrize("text,template,expected", [
    ("2022-12-25", "YYYY-MM-DD", (2022, 12, 25)),
    ("12/25/2022", "MM/DD/YYYY", (2022, 12, 25)),
    ("2022-2-5", "YYYY-MM-DD", (2022, 2, 5)),
    ("Dec/25/2022", "Mon/DD/YYYY", (2022, 12, 25)),
    ("2022-December-25", "YYYY-Month-DD", (2022, 12, 25)),
    ("2022-12-25 15:24:33", "YYYY-MM-DD HH24:MI:SS", (2022, 12, 25)),
    ("0000-12-25", "YYYY-MM-DD", (0, 12, 25)),      # year 0 is 1 BC
    ("-0001-12-25", "YYYY-MM-DD", (0, 12, 25)),     # and so is -1
    ("-2022-12-25", "YYYY-MM-DD", (-2021, 12, 25)),  # 2022 BC
])
def test_parse_date(text, template, expected):
    assert parse_date(text, template) == days_from_civil(*expected)


@pytest.mark.parametrize("text,template", [("2022-13-01", "YYYY-MM-DD"), ("2022-Foo-01", "YYYY-Mon-DD"),
                                           ("nope", "YYYY-MM-DD")])
def test_parse_date_errors(text, template):
    with pytest.raises(ValueError):
        parse_date(text, template)
