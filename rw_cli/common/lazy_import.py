"""A module imported on first use.

`pyarrow.compute` builds ~300 wrapper functions with their docstrings when imported (about
30 ms, a tenth of what `rw -c "select 1"` may spend beyond its libraries), and a statement
that only reads a little state or prints a result never calls it. Modules on that path name
it through `lazy_import` instead of importing it; the stream's executors import it as usual.

Python's `importlib.util.LazyLoader` is no substitute on 3.11: a later plain
`import pyarrow.compute` anywhere touches the lazy module's `__spec__` and loads it.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for module `name`: the first attribute read imports it; each attribute read
    is then kept on this object, so later reads cost what a module attribute costs."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _module(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._module(), attr)
        setattr(self, attr, value)
        return value

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_import(name: str) -> Any:
    """The module `name` if it is already imported, else a LazyModule for it."""
    import sys

    return sys.modules.get(name) or LazyModule(name)
