"""The shape of rw_cli: no import circles, and no import that runs up the layers written in
`rw_cli.common.layers`. Run this file as a script to print the graph's violations."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import rw_cli
from rw_cli.common.layers import LAYERS, layer_of

from .import_graph import cycles, imports, module_files
from .private_names import private_uses

PACKAGE = Path(rw_cli.__file__).parent


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{m} -> {t}" for m, targets in graph.items() for t in targets if layer_of(t) < layer_of(m))


def test_every_module_has_a_layer():
    for name in module_files(PACKAGE):
        layer_of(name)


def test_no_import_circles():
    assert cycles(imports(PACKAGE)) == []


def test_no_import_runs_up_the_layers():
    assert upward_imports(imports(PACKAGE)) == []


def _defines_executor(path: Path) -> bool:
    tree = ast.parse(path.read_text())
    return any(isinstance(n, ast.ClassDef) and n.name.endswith("Executor") for n in tree.body)


def test_sql_plans_and_builds_no_executors_nor_state_tables():
    """sql/ hands stream plans to stream/; it imports no executor and nothing of the store."""
    files = module_files(PACKAGE)
    graph = imports(PACKAGE)
    wrong = sorted(f"{m} -> {t}" for m, targets in graph.items() if m.startswith("rw_cli.sql.")
                   for t in targets if t.startswith("rw_cli.store") or t.startswith("rw_cli.stream.builder")
                   or (t.startswith("rw_cli.engine.") and _defines_executor(files[t])))
    assert wrong == []


def test_a_spark_worker_never_imports_the_sql_frontend():
    """What a Spark task unpickles (actor factories, the worker's entry point) imports no sqlglot."""
    code = ("import sys, rw_cli.stream.builder, rw_cli.spark.worker, rw_cli.spark.exchange; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sqlglot' or m.startswith('rw_cli.sql')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_no_module_uses_another_modules_private_names():
    assert private_uses(PACKAGE) == []


def test_the_guard_sees_a_circle_and_an_upward_import(tmp_path):
    pkg = tmp_path / "rw_cli"
    (pkg / "store").mkdir(parents=True)
    (pkg / "sql").mkdir()
    for d in (pkg, pkg / "store", pkg / "sql"):
        (d / "__init__.py").write_text("")
    (pkg / "store" / "a.py").write_text("def f():\n    from rw_cli.sql import b\n")
    (pkg / "sql" / "b.py").write_text("from rw_cli.store.a import f\n")
    graph = imports(pkg)
    assert cycles(graph) == [["rw_cli.sql.b", "rw_cli.store.a"]]
    assert upward_imports(graph) == ["rw_cli.store.a -> rw_cli.sql.b"]
    assert [n for layer in LAYERS for n in layer].count("rw_cli.store") == 1


if __name__ == "__main__":
    g = imports(PACKAGE)
    for c in cycles(g):
        print("circle:", " <-> ".join(c))
    for u in upward_imports(g):
        print("upward:", u)
    for u in private_uses(PACKAGE):
        print("private:", u)
