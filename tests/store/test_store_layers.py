"""The store is layered: no import circle among its modules (imports inside functions
included), and no module imports another's private names."""
from __future__ import annotations

import ast
from pathlib import Path

STORE = Path(__file__).resolve().parents[2] / "rw_cli" / "store"
PACKAGE = "rw_cli.store"


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import of a store module in `path`, wherever it stands."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == PACKAGE:  # from rw_cli.store import x: x is a module
                out += [(f"{PACKAGE}.{a.name}", []) for a in node.names]
            elif node.module.startswith(PACKAGE + "."):
                out.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.startswith(PACKAGE + ".")]
    return out


def _graph() -> dict[str, set[str]]:
    modules = {f"{PACKAGE}.{p.stem}": p for p in STORE.glob("*.py") if p.stem != "__init__"}
    return {m: {dep for dep, _ in _imports(p) if dep in modules and dep != m} for m, p in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state and (found := visit(d)):
                return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_no_import_circle_in_the_store():
    assert _cycle(_graph()) is None


def test_no_store_module_imports_private_names():
    bad = [(p.name, mod, n) for p in STORE.glob("*.py") for mod, names in _imports(p) for n in names
           if n.startswith("_")]
    assert bad == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
