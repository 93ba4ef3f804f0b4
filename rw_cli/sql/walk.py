"""One fast walk over a syntax tree, for the passes every statement goes through.

sqlglot's `find_all` is a generator over a generator (`walk` -> `bfs` -> `iter_expressions`)
and costs about twice this loop; binding and transpiling a statement walk its tree a dozen
times, so on a workload of many short queries the walks alone were a tenth of the cost.
"""
from __future__ import annotations

from sqlglot import exp

_Expr = exp.Expr  # the base of every node (iter_expressions' test)


def nodes(tree: exp.Expression, *types: type) -> list:
    """The nodes of `tree` that are instances of `types`, in sqlglot's `find_all` order
    (breadth first, arguments in order). A list, taken before the caller changes the tree."""
    queue = [tree]
    out = []
    i = 0
    while i < len(queue):
        node = queue[i]
        i += 1
        if isinstance(node, types):
            out.append(node)
        for value in node.args.values():
            if isinstance(value, list):
                for v in value:
                    if isinstance(v, _Expr):
                        queue.append(v)
            elif isinstance(value, _Expr):
                queue.append(value)
    return out
