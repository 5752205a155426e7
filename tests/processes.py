"""Running the ``factledger`` CLI as real processes, for the tests that need more than one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "factledger.entrypoints.cli"]


def run_cli(
    env: dict[str, str], *args: str, expect: int | None = 0, timeout: float = 180, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run one command to its end; ``expect`` is the exit status it must have (None: any)."""
    proc = subprocess.run(
        [*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout, input=stdin, check=False
    )
    if expect is not None and proc.returncode != expect:
        raise AssertionError(f"exit {proc.returncode} (wanted {expect})\nstdout:{proc.stdout}\nstderr:{proc.stderr}")
    return proc


def run_cli_json(env: dict[str, str], *args: str, expect: int | None = 0) -> Any:
    return json.loads(run_cli(env, *args, "--json", expect=expect).stdout)


def spawn_cli(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """Start a command without waiting for it."""
    return subprocess.Popen([*CLI, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def spawn_python(env: dict[str, str], code: str) -> subprocess.Popen[str]:
    """Run a Python snippet in a separate process (with the tests' import path)."""
    env = {**env, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def wait_until(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)
