"""The offline size count (benchmarks/offline_size.py) sorts each line into the kind it is."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "offline_size.py"
_spec = importlib.util.spec_from_file_location("offline_size", SCRIPT)
assert _spec and _spec.loader
size = importlib.util.module_from_spec(_spec)
sys.modules["offline_size"] = size
_spec.loader.exec_module(size)

SOURCE = '''"""A module.

Its docstring has three lines."""
import re  # a trailing comment is code's


def read(text):
    """One line of docstring."""
    # a comment
    return re.sub("#", "", text)  # "#" in a string is code
'''


def test_each_line_is_counted_as_its_kind() -> None:
    # a blank line is blank, inside a docstring too
    assert size.count(SOURCE) == {"lines": 10, "code": 3, "doc": 3, "comment": 1, "blank": 3}


def test_the_working_tree_is_counted_module_by_module() -> None:
    modules = sorted((SCRIPT.parent.parent / "infrastructure" / "offline").glob("*.py"))
    found = size.total(None)
    assert found["lines"] == sum(len(m.read_text(encoding="utf-8").splitlines()) for m in modules)
    assert found["lines"] == sum(found[kind] for kind in ("code", "doc", "comment", "blank"))
