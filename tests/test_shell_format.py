import pyarrow as pa

from rw_cli.common import types as T
from rw_cli.errors import NotSupported, RwError, SqlSyntaxError
from rw_cli.result import Result
from rw_cli.shell.format import render_error, render_result, render_table


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
