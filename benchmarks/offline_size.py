"""How much Python the offline rules take, by kind of line (issue 27: at most half of 10,244 / 8,025).

Run: ``python3 benchmarks/offline_size.py [--rev REV ...]`` (default: the working tree). For each
revision, prints the lines of ``infrastructure/offline/*.py`` as code, docstring, comment and blank
(code: not blank, not a comment, not a docstring, as ``cloc`` counts code), then one JSON object.
The rules' data files (``rules/*.toml``) are not counted: issue 27 moves rules into them.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OFFLINE = "infrastructure/offline"
KINDS = ("lines", "code", "doc", "comment", "blank")


def count(source: str) -> dict[str, int]:
    """The lines of one module's ``source`` by kind."""
    docs: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        owner = isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        first = node.body[0] if owner and node.body else None  # type: ignore[attr-defined]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            docs.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    found = dict.fromkeys(KINDS, 0)
    for number, line in enumerate(source.splitlines(), 1):
        text = line.strip()
        kind = "blank" if not text else "doc" if number in docs else "comment" if text.startswith("#") else "code"
        found["lines"] += 1
        found[kind] += 1
    return found


def sources(rev: str | None) -> list[str]:
    """The offline modules' sources, in the working tree or at ``rev``."""
    if rev is None:
        return [path.read_text(encoding="utf-8") for path in sorted((ROOT / OFFLINE).glob("*.py"))]
    git = ["git", "-C", str(ROOT)]
    names = subprocess.run([*git, "ls-tree", "--name-only", f"{rev}:{OFFLINE}"], capture_output=True, text=True)
    names.check_returncode()
    files = [f"{OFFLINE}/{name}" for name in names.stdout.split() if name.endswith(".py")]
    return [subprocess.run([*git, "show", f"{rev}:{f}"], capture_output=True, text=True).stdout for f in files]


def total(rev: str | None) -> dict[str, int]:
    """The lines of every offline module at ``rev`` (None: the working tree), by kind."""
    found = dict.fromkeys(KINDS, 0)
    for source in sources(rev):
        for kind, n in count(source).items():
            found[kind] += n
    return found


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rev", action="append", default=[], help="a git revision to count (repeatable)")
    revs = p.parse_args().rev or [None]
    out = {rev or "working tree": total(rev) for rev in revs}
    for name, found in out.items():
        print(f"{name:14s} " + "  ".join(f"{kind} {found[kind]:,}" for kind in KINDS))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
