"""Starting fast: ``import factledger`` and ``factledger --help`` load none of the heavy parts.

Every command, every MCP stdio server and every test process pays for what
``import factledger`` and the CLI's parser import. asyncio, psycopg, numpy,
eventsourcing and the offline rules (about 800 patterns compiled at import)
are imported when something that needs them runs. Timing would be flaky on a
shared machine, so this checks which modules a fresh interpreter imported
(``python -X importtime``); ``benchmarks/startup.py`` measures the seconds.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import subprocess
import sys

import pytest

import factledger

#: Modules (and their submodules) that neither ``import factledger`` nor ``factledger --help`` may import.
HEAVY = ("asyncio", "psycopg", "numpy", "eventsourcing", "factledger.infrastructure.offline")


def imported_modules(*python_args: str) -> set[str]:
    """The modules a fresh interpreter running ``python -X importtime ARGS`` imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *python_args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = re.findall(r"^import time:\s*\d+\s*\|\s*\d+\s*\|\s*(\S+)\s*$", proc.stderr, flags=re.MULTILINE)
    assert names, "python -X importtime printed no imports"
    return set(names)


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def commands_listed() -> dict[str, argparse.ArgumentParser]:
    """Each command of ``factledger --help``, and its parser."""
    from factledger.entrypoints.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_import_factledger_imports_none_of_the_heavy_parts() -> None:
    modules = imported_modules("-c", "import factledger")
    assert "factledger" in modules
    assert not heavy(modules)
    assert not [m for m in modules if m.startswith("factledger.")], "the package imports its names when asked"


def test_factledger_help_imports_none_of_the_heavy_parts() -> None:
    modules = imported_modules("-m", "factledger", "--help")
    assert "factledger.entrypoints.cli" in modules
    assert not heavy(modules)


@pytest.mark.slow
def test_no_command_s_help_imports_the_heavy_parts() -> None:
    # One interpreter for every command: the parser is built once per ``main`` call, as each command runs it.
    commands = [[name, "--help"] for name in commands_listed()]
    commands += [["partitions", "add", "--help"], ["keys", "create", "--help"]]
    assert len(commands) > 20
    code = (
        "import json, sys\n"
        "from factledger.entrypoints.cli import main\n"
        f"for argv in {commands!r}:\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code == 0, argv\n"
        "print('MODULES', json.dumps(sorted(sys.modules)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = set(json.loads(proc.stdout.rsplit("MODULES ", 1)[1]))
    assert "factledger.entrypoints.cli.server" in modules
    assert not heavy(modules)


def test_the_projection_help_names_the_projector_s_shortest_poll_interval() -> None:
    from factledger.projections.projector import MIN_POLL_INTERVAL

    help_text = " ".join(commands_listed()["projection"].format_help().split())  # argparse wraps lines
    assert f"at least {MIN_POLL_INTERVAL})" in help_text


@pytest.mark.slow
def test_the_offline_rules_are_imported_when_an_offline_extractor_is_built() -> None:
    code = (
        "import json, sys\n"
        "import factledger.infrastructure.bootstrap, factledger.infrastructure.llm\n"
        "before = sorted(sys.modules)\n"
        "from factledger.infrastructure.offline import RuleExtractor\n"
        "RuleExtractor()\n"
        "print('MODULES', json.dumps([before, sorted(sys.modules)]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    before, after = json.loads(proc.stdout.rsplit("MODULES ", 1)[1])
    assert "psycopg" in before  # the bootstrap was imported for real
    assert not [m for m in before if m.startswith("factledger.infrastructure.offline")]
    assert "factledger.infrastructure.offline.changes" in after


def test_every_public_name_is_there_when_asked_for() -> None:
    # In this process: each name comes from its module through ``__getattr__`` (or was cached by it).
    for name in factledger.__all__:
        value = getattr(factledger, name)
        if name != "__version__":
            assert getattr(importlib.import_module(value.__module__), name) is value, name
    assert set(factledger.__all__) <= set(dir(factledger))
    assert factledger.Settings is factledger.infrastructure.config.Settings
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = factledger.no_such_name  # type: ignore[attr-defined]
