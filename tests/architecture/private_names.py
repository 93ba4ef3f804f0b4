"""Where a module uses another module's private names: `from m import _x`, or `obj._x` where
`_x` is defined (as a function, class, attribute or variable) in another module of the
package and not in this one. Names of the standard library and other packages are theirs."""
from __future__ import annotations

import ast
from pathlib import Path


def _defined(tree: ast.AST) -> set[str]:
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
            names.add(n.attr)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            names.add(n.target.id)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def private_uses(package_dir: Path) -> list[str]:
    trees = {p: ast.parse(p.read_text(), str(p)) for p in sorted(package_dir.rglob("*.py"))}
    own = {p: _defined(t) for p, t in trees.items()}
    everywhere = set().union(*own.values())
    root = package_dir.name
    out = []
    for path, tree in trees.items():
        rel = path.relative_to(package_dir.parent)
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith(root):
                out += [f"{rel}:{n.lineno}: from {n.module} import {a.name}" for a in n.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
            elif isinstance(n, ast.Attribute) and n.attr in everywhere and n.attr not in own[path] \
                    and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls")):
                out.append(f"{rel}:{n.lineno}: .{n.attr}")
    return out
