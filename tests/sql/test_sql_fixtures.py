"""The fixture files are canonical (regeneration rewrites only expected parts) and the
regeneration itself works."""
from __future__ import annotations

import glob
import os

import pytest

import sql_fixtures
from sql_fixtures import FIXTURES, Case, parse, render

FILES = sorted(glob.glob(os.path.join(FIXTURES, "*", "*.sql")))


@pytest.mark.parametrize("path", FILES, ids=[os.path.relpath(p, FIXTURES) for p in FILES])
def test_file_is_canonical(path):
    text = open(path).read()
    assert render(parse(text)) == text
    titles = [b.title for b in parse(text) if isinstance(b, Case)]
    assert len(titles) == len(set(titles)), "titles name cases: they must differ within a file"


def test_parse_and_render():
    text = "-- a comment\n-- block\n\n-- one\n-- more\nselect 1\nfrom t;\nA\nB\n\n-- two\nselect 2;\n"
    blocks = parse(text)
    assert blocks[0] == "-- a comment\n-- block"
    assert blocks[1] == Case("one", "select 1\nfrom t", ["A", "B"], ["-- more"])
    assert blocks[2] == Case("two", "select 2", [], [])
    assert render(blocks) == text


def test_update_rewrites_only_the_expected_part(tmp_path, monkeypatch):
    path = tmp_path / "f.sql"
    path.write_text("-- doc\n\n-- one\nselect 1;\nold\n\n-- two\nselect 2;\nkept\n")
    monkeypatch.setattr(sql_fixtures, "UPDATE", True)
    sql_fixtures.check((str(path), 1, parse(path.read_text())[1]), ["new", "lines"])
    assert path.read_text() == "-- doc\n\n-- one\nselect 1;\nnew\nlines\n\n-- two\nselect 2;\nkept\n"
