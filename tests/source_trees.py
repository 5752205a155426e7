"""Each source text parsed once per test process.

The static checks (``test_import_graph``, ``test_code_limits``, ``test_wiring``) read the same
~150 modules of the package, and parsing them was most of their time (about 1 s a pass on a quiet
machine, seven passes). The trees are shared between the checks: a check reads a tree, never
changes one.
"""

from __future__ import annotations

import ast
import functools


@functools.cache
def tree_of(source: str) -> ast.Module:
    """``ast.parse(source)``, once per text."""
    return ast.parse(source)


@functools.cache
def walk(tree: ast.AST) -> tuple[ast.AST, ...]:
    """``ast.walk(tree)``, once per (shared, never changed) tree: the checks walk the same trees
    about ten times, and walking was most of their time once parsing was shared."""
    return tuple(ast.walk(tree))
