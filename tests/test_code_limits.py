"""The limits the developers' guide and issue 27 set, kept by a tool rather than by review.

* no function over 60 lines;
* cyclomatic complexity (ruff's mccabe, C901) at most 12;
* no import of another module's private (``_name``) names.

What broke a limit before the limit was kept is listed below with its size then: it may shrink
or go, never grow, and nothing new may join it (a ratchet). Most of it is the offline extractor,
whose rewrite into staged rule registries (issue 27) is what will empty these lists.
``python3 tests/test_code_limits.py`` prints the lists as they are now.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from source_trees import tree_of, walk

ROOT = Path(__file__).resolve().parent.parent
# One xdist worker runs the checks that read the package's sources, so they are parsed once (source_trees).
pytestmark = pytest.mark.xdist_group("package_sources")
SKIPPED = {"build", "tests", "benchmarks", "examples", "factledger.egg-info"}
MAX_LINES = 60
MAX_COMPLEXITY = 12

LONG_FUNCTIONS: dict[str, int] = {}
COMPLEX_FUNCTIONS: dict[str, int] = {}
PRIVATE_IMPORTS: set[str] = set()


def package_files() -> list[Path]:
    return sorted(
        p for p in ROOT.rglob("*.py") if p.relative_to(ROOT).parts[0] not in SKIPPED and not p.name.startswith(".")
    )


def long_functions(source: str) -> dict[str, int]:
    """Function name → lines, for every function of ``source`` over the limit (nested ones too)."""
    found: dict[str, int] = {}
    for node in walk(tree_of(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > MAX_LINES:
                found[node.name] = max(found.get(node.name, 0), lines)
    return found


def function_lengths() -> dict[str, int]:
    """``file:function`` → lines, for every function of the package over the limit."""
    return {
        f"{path.relative_to(ROOT)}:{name}": lines
        for path in package_files()
        for name, lines in long_functions(path.read_text(encoding="utf-8")).items()
    }


def complexities(where: Path = ROOT) -> dict[str, int]:
    """``file:function`` → complexity, for every function over the limit, as ruff's C901 reports it."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "C901", "--output-format", "json", "--exit-zero",
         "--config", f"lint.mccabe.max-complexity={MAX_COMPLEXITY}", str(where)],
        capture_output=True, text=True, check=True, cwd=where,
    )  # fmt: skip
    found: dict[str, int] = {}
    for finding in json.loads(done.stdout):
        path = Path(finding["filename"]).resolve().relative_to(where)
        if path.parts[0] in SKIPPED:
            continue
        # "`name` is too complex (17 > 12)"
        message = finding["message"]
        name = message.split("`")[1]
        found[f"{path}:{name}"] = int(message.split("(")[-1].split(" ")[0])
    return found


def private_names_taken(source: str) -> set[str]:
    """``module._name`` for every private name ``source`` imports from a module of ours, or reads
    as an attribute of one of our modules it imported (``rules_en._clause``)."""
    tree = tree_of(source)
    modules: dict[str, str] = {}  # a name bound to one of our modules -> the module
    taken: set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.Import):
            modules.update({a.asname: a.name for a in node.names if a.asname and a.name.startswith("factledger")})
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("factledger"):
            for alias in node.names:
                if _is_private(alias.name):
                    taken.add(f"{node.module}.{alias.name}")
                elif _is_module(f"{node.module}.{alias.name}"):
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            taken.update([f"{modules[node.value.id]}.{node.attr}"] if _is_private(node.attr) else [])
    return taken


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_module(dotted: str) -> bool:
    """Whether ``factledger.a.b`` names a module (or package) of ours, not a name in one."""
    path = ROOT.joinpath(*dotted.split(".")[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def private_imports() -> set[str]:
    """``file <- module._name`` for every private name imported from another module of ours."""
    return {
        f"{path.relative_to(ROOT)} <- {taken}"
        for path in package_files()
        for taken in private_names_taken(path.read_text(encoding="utf-8"))
    }


def _ratchet(now: dict[str, int], before: dict[str, int], what: str) -> list[str]:
    wrong = [
        f"{key}: {size} {what} (new; the limit holds for new code)" for key, size in now.items() if key not in before
    ]
    wrong += [f"{key}: {now[key]} {what}, was {before[key]}" for key in now if key in before and now[key] > before[key]]
    return wrong


def test_no_function_grows_past_sixty_lines() -> None:
    assert _ratchet(function_lengths(), LONG_FUNCTIONS, "lines") == []


def test_no_function_grows_past_complexity_twelve() -> None:
    assert _ratchet(complexities(), COMPLEX_FUNCTIONS, "complexity") == []


def test_no_module_takes_another_modules_private_names() -> None:
    assert sorted(private_imports() - PRIVATE_IMPORTS) == []


def test_the_checks_find_what_they_are_meant_to(tmp_path: Path) -> None:
    # A ratchet passes on a tree it cannot read: each check must find a breach put before it.
    assert len(package_files()) > 100
    body = "".join(f"    x{n} = {n}\n" for n in range(MAX_LINES))
    assert long_functions(f"def long():\n{body}") == {"long": MAX_LINES + 1}
    assert long_functions(f"def fits():\n{body[: body.rindex('    x')]}") == {}
    branches = "".join(f"    if a == {n}:\n        return {n}\n" for n in range(MAX_COMPLEXITY))
    (tmp_path / "tangled.py").write_text(f"def tangled(a):\n{branches}    return -1\n")
    assert complexities(tmp_path) == {"tangled.py:tangled": MAX_COMPLEXITY + 1}
    assert private_names_taken("from factledger.domain.memory import _Shape, Public, __all__") == {
        "factledger.domain.memory._Shape"
    }
    reading = "from factledger.domain import memory\nimport factledger.domain.memory as m\nmemory._a(m._b, m.__doc__)"
    assert private_names_taken(reading) == {"factledger.domain.memory._a", "factledger.domain.memory._b"}


if __name__ == "__main__":
    print("LONG_FUNCTIONS =", json.dumps(function_lengths(), indent=4, sort_keys=True))
    print("COMPLEX_FUNCTIONS =", json.dumps(complexities(), indent=4, sort_keys=True))
    print("PRIVATE_IMPORTS =", json.dumps(sorted(private_imports()), indent=4))
