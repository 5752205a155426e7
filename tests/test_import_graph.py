"""The package's import graph has no cycle and keeps its layers (issue 28).

The graph is read from the source (every ``import`` and ``from … import``, inside functions and
``TYPE_CHECKING`` blocks too: an import moved into a function hides a cycle from Python's import
order, not from the design). Layers, inner to outer: ``domain`` → ``application`` →
``projections`` → ``infrastructure`` → ``entrypoints`` (and the package's own ``__init__`` and
``__main__``, the public façade). An inner layer never imports an outer one; ``projections`` and
``application`` never import ``infrastructure``.

``python3 tests/test_import_graph.py`` prints the cycles and violations as they are now.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from source_trees import tree_of, walk

ROOT = Path(__file__).resolve().parent.parent
# One xdist worker runs the checks that read the package's sources, so they are parsed once (source_trees).
pytestmark = pytest.mark.xdist_group("package_sources")
PACKAGE = "factledger"
SKIPPED = {"build", "tests", "benchmarks", "examples", "tools", "evaluation", "factledger.egg-info"}

# What each layer may import of the package (beside itself).
ALLOWED: dict[str, set[str]] = {
    "domain": set(),
    "application": {"domain"},
    "projections": {"domain", "application"},
    "infrastructure": {"domain", "application", "projections"},
    "entrypoints": {"domain", "application", "projections", "infrastructure", "facade"},
    "facade": {"domain", "application", "projections", "infrastructure", "entrypoints"},
}

# Imports that still close a cycle, each for type annotations only (under ``TYPE_CHECKING``): the
# list may shrink, never grow (a ratchet; an edge that no longer closes a cycle must leave it).
# The first two go when ``LedgerDirectory.open`` and a replay's target are typed by the ``Ledger``
# protocol (issue 28, item 2) instead of ``LedgerService``; the third when ``SaidOrder`` is given
# the few ``Decider`` methods it calls back as a protocol of its own.
TYPE_ONLY_CYCLE_EDGES: set[tuple[str, str]] = {
    ("factledger.application.ports", "factledger.application.service"),
    ("factledger.application.replay", "factledger.application.service"),
    ("factledger.application.said_order", "factledger.application.decisions"),
}


def module_files() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in SKIPPED or any(part.startswith(".") for part in relative.parts):
            continue
        parts = [PACKAGE, *relative.with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imported_names(
    tree: ast.AST, module: str, is_package: bool, left_out: set[int] | frozenset[int] = frozenset()
) -> Iterator[str]:
    """The dotted names a module's import statements name (relative ones resolved), but for the
    import nodes whose ``id`` is in ``left_out``."""
    for node in walk(tree):
        if id(node) in left_out:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            yield source
            yield from (f"{source}.{alias.name}" for alias in node.names)


def _under_type_checking(tree: ast.AST) -> set[int]:
    """The ``id`` of every node in the body of an ``if TYPE_CHECKING:`` block (what is annotated,
    not what runs); the tree itself is shared (``source_trees``) and stays as it is."""
    found: set[int] = set()
    for node in walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            found |= {id(inner) for statement in node.body for inner in ast.walk(statement)}
    return found


@functools.cache
def import_graph(type_checking: bool = True) -> dict[str, set[str]]:
    """Module → the package's modules it imports (a name resolved to the longest module it names);
    ``type_checking=False``: without the imports made for annotations only. Computed once per
    process for each (the checks only read it)."""
    files = module_files()
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree = tree_of(path.read_text(encoding="utf-8"))
        left_out = set() if type_checking else _under_type_checking(tree)
        targets: set[str] = set()
        for name in _imported_names(tree, module, path.name == "__init__.py", left_out):
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                parts = name.split(".")
                while parts and ".".join(parts) not in files:
                    parts.pop()
                if parts:
                    targets.add(".".join(parts))
        targets.discard(module)
        graph[module] = targets
    # ``from factledger.x import y`` where y is a module also names the package x: only y counts.
    for module, targets in graph.items():
        graph[module] = {t for t in targets if not any(o.startswith(t + ".") for o in targets)}
    return graph


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return "facade"
    return parts[1]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in sorted(graph.items()):
        own = layer(module)
        for target in sorted(targets):
            other = layer(target)
            if other != own and other not in ALLOWED[own]:
                found.append(f"{module} ({own}) imports {target} ({other})")
    return found


def test_the_graph_is_read_from_every_kind_of_import() -> None:
    graph = import_graph()
    # A top-level import, an import inside a function, and a package's re-export.
    assert "factledger.application.ports" in graph["factledger.application.service"]
    assert "factledger.infrastructure.offline" in graph["factledger.infrastructure.bootstrap"]
    assert "factledger.domain" in graph
    assert all(layer(m) in ALLOWED for m in graph)


def test_the_checks_see_a_cycle_and_a_violation() -> None:
    """The checks themselves can fail: on a made-up graph with both faults they report both."""
    graph = {
        "factledger.domain.a": {"factledger.application.b"},
        "factledger.application.b": {"factledger.domain.a"},
    }
    assert cycles(graph) == [["factledger.application.b", "factledger.domain.a"]]
    assert layer_violations(graph) == ["factledger.domain.a (domain) imports factledger.application.b (application)"]


def without(graph: dict[str, set[str]], edges: set[tuple[str, str]]) -> dict[str, set[str]]:
    return {module: {t for t in targets if (module, t) not in edges} for module, targets in graph.items()}


def test_no_import_cycle() -> None:
    graph = import_graph()
    found = cycles(without(graph, TYPE_ONLY_CYCLE_EDGES))
    assert not found, "import cycles: " + "; ".join(" ↔ ".join(c) for c in found)


def test_every_allowed_edge_still_closes_a_cycle() -> None:
    """The ratchet: an allowed edge that is gone, or no longer closes a cycle, leaves the list."""
    graph, at_run_time = import_graph(), import_graph(type_checking=False)
    for edge in sorted(TYPE_ONLY_CYCLE_EDGES):
        module, target = edge
        assert target in graph[module], f"{module} no longer imports {target}: remove it from the list"
        assert target not in at_run_time[module], f"{module} imports {target} at run time, not for types only"
        assert cycles(without(graph, TYPE_ONLY_CYCLE_EDGES - {edge})), f"{edge} closes no cycle: remove it"


def test_layers_point_inward() -> None:
    violations = layer_violations(import_graph())
    assert not violations, "layer violations:\n" + "\n".join(violations)


if __name__ == "__main__":
    current = import_graph()
    for cycle in cycles(without(current, TYPE_ONLY_CYCLE_EDGES)):
        print("cycle:", " ↔ ".join(cycle))
    for violation in layer_violations(current):
        print("violation:", violation)
