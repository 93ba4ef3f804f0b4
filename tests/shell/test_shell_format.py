import pyarrow as pa

from rw_cli.common import types as T
from rw_cli.errors import NotSupported, RwError, SqlSyntaxError
from rw_cli.result import Result
from rw_cli.shell.render import render_error, render_result, render_table


def test_single_number_column():
    assert render_table(["?column?"], [["1"]], [T.INTEGER]) == (
        " ?column? \n"
        "----------\n"
        "        1\n"
        "(1 row)\n\n")


def test_mixed_columns_and_null():
    out = render_table(["id", "name", "score"], [["1", "alice", "1.5"], ["22", None, None]],
                       [T.INTEGER, T.VARCHAR, T.DOUBLE])
    assert out == (
        " id | name  | score \n"
        "----+-------+-------\n"
        "  1 | alice |   1.5\n"
        " 22 |       |      \n"
        "(2 rows)\n\n")


def test_text_last_column_not_padded_and_header_centered():
    out = render_table(["a", "b"], [["x", "hello"], ["yy", "z"]], [T.VARCHAR, T.VARCHAR])
    assert out == (
        " a  |   b   \n"
        "----+-------\n"
        " x  | hello\n"
        " yy | z\n"
        "(2 rows)\n\n")


def test_zero_rows():
    assert render_table(["v"], [], [T.INTEGER]) == " v \n---\n(0 rows)\n\n"


def test_multiline_cell():
    out = render_table(["a", "b"], [["x\ny", "z"]], [T.VARCHAR, T.VARCHAR])
    assert out == (
        " a | b \n"
        "---+---\n"
        " x+| z\n"
        " y | \n"
        "(1 row)\n\n")


def test_render_result():
    r = Result("SELECT 1", pa.table({"v": pa.array([7], pa.int32())}), [T.INTEGER])
    assert render_result(r) == " v \n---\n 7\n(1 row)\n\n"
    assert render_result(Result("CREATE_TABLE")) == "CREATE_TABLE\n"
    assert render_result(Result("INSERT 0 3")) == "INSERT 0 3\n"


def test_error_without_position():
    assert render_error(RwError("table not found: t"), "select * from t") == "ERROR:  table not found: t\n"


def test_error_with_position_and_hint():
    sql = "select 1;\nselect * fron t;"
    err = SqlSyntaxError('syntax error at or near "fron"', position=sql.index("fron"), hint="check it")
    assert render_error(err, sql) == (
        'ERROR:  syntax error at or near "fron"\n'
        "LINE 2: select * fron t;\n"
        "                 ^\n"
        "HINT:  check it\n")


def test_error_position_first_line_and_end():
    err = RwError("boom", position=0)
    assert render_error(err, "selec") == "ERROR:  boom\nLINE 1: selec\n        ^\n"
    err = RwError("unexpected end", position=5)
    assert render_error(err, "selec") == "ERROR:  unexpected end\nLINE 1: selec\n             ^\n"


def test_not_supported_has_hint():
    out = render_error(NotSupported("engine spark"))
    assert out.startswith("ERROR:  not supported: engine spark\nHINT:  ")


# -- expanded layout (\x) ----------------------------------------------------------------------

def test_expanded_short_values():
    from rw_cli.shell.render import render_expanded

    assert render_expanded(["a", "bb"], [["1", "hello"]]) == (
        "-[ RECORD 1 ]\n"
        "a  | 1\n"
        "bb | hello\n\n")


def test_expanded_long_values_and_null():
    from rw_cli.shell.render import render_expanded

    out = render_expanded(["id", "name"], [["1", "a rather long value"], ["2", None]], null="<null>")
    assert out == (
        "-[ RECORD 1 ]-------------\n"
        "id   | 1\n"
        "name | a rather long value\n"
        "-[ RECORD 2 ]-------------\n"
        "id   | 2\n"
        "name | <null>\n\n")


def test_expanded_wide_header_and_multiline():
    from rw_cli.shell.render import render_expanded

    out = render_expanded(["a_very_long_column_name", "b"], [["x", "l1\nl2"]])
    assert out == (
        "-[ RECORD 1 ]-----------+---\n"
        "a_very_long_column_name | x\n"
        "b                       | l1+\n"
        "                        | l2\n\n")


def test_expanded_empty():
    from rw_cli.shell.render import render_expanded

    assert render_expanded(["a"], []) == "(0 rows)\n\n"


def _result():
    table = pa.table({"id": pa.array([1, 2], pa.int32()), "name": pa.array(["a,b", None]),
                      "ok": pa.array([True, False]), "x": pa.array([1.5, float("nan")])})
    return Result("SELECT 2", table, [T.INTEGER, T.VARCHAR, T.BOOLEAN, T.DOUBLE])


def test_render_result_formats():
    r = _result()
    assert render_result(r, "csv") == 'id,name,ok,x\n1,"a,b",t,1.5\n2,,f,NaN\n'
    assert render_result(r, "tsv") == "id\tname\tok\tx\n1\ta,b\tt\t1.5\n2\t\\N\tf\tNaN\n"
    assert render_result(r, "jsonl") == (
        '{"id": 1, "name": "a,b", "ok": true, "x": 1.5}\n'
        '{"id": 2, "name": null, "ok": false, "x": "NaN"}\n')
    assert render_result(r, "json") == (
        '[\n{"id": 1, "name": "a,b", "ok": true, "x": 1.5},\n'
        '{"id": 2, "name": null, "ok": false, "x": "NaN"}\n]\n')
    assert render_result(r, "markdown") == (
        "| id | name | ok | x |\n|---:|---|---|---:|\n| 1 | a,b | t | 1.5 |\n| 2 |  | f | NaN |\n")
    assert render_result(r, "expanded").startswith("-[ RECORD 1 ]\nid   | 1\n")
    assert render_result(r, "table", expanded="on") == render_result(r, "expanded")
    # the data formats print no command tags
    for fmt in ("csv", "tsv", "json", "jsonl", "markdown"):
        assert render_result(Result("CREATE_TABLE"), fmt) == ""
    assert render_result(Result("CREATE_TABLE"), "expanded") == "CREATE_TABLE\n"


def test_expanded_auto_depends_on_width():
    r = _result()
    assert render_result(r, expanded="auto", width=200).startswith(" id |")
    assert render_result(r, expanded="auto", width=10).startswith("-[ RECORD 1 ]")
    assert render_result(r, expanded="auto", width=None).startswith(" id |")


def test_escapes_in_data_formats():
    from rw_cli.shell.data_formats import write_csv, write_json, write_markdown, write_tsv

    rows = [['a"b\nc', "x|y\t\\"]]
    assert write_csv(["p", "q"], rows) == 'p,q\n"a""b\nc",x|y\t\\\n'
    assert write_tsv(["p", "q"], rows) == "p\tq\na\"b\\nc\tx|y\\t\\\\\n"
    assert write_markdown(["p", "q"], rows) == '| p | q |\n|---|---|\n| a"b<br>c | x\\|y\t\\\\ |\n'
    assert write_json(["p"], [['{"k": [1]}']], [T.DataType("jsonb")]) == '[\n{"p": {"k": [1]}}\n]\n'
    assert write_json(["p"], []) == "[]\n"


def test_table_title_and_footer():
    out = render_table(["Column", "Type"], [["v", "integer"]], title='Table "t"', footer="Primary key: _row_id")
    assert out == (
        '    Table "t"     \n'.rstrip() + "\n"
        " Column |  Type   \n"
        "--------+---------\n"
        " v      | integer\n"
        "Primary key: _row_id\n\n")
