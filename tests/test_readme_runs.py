"""Every shell and Python block of the README runs as pasted (issue 28, item 9).

The blocks run in the README's order, as a reader pastes them: shell lines one by one with
``bash`` in a fresh folder holding a copy of ``examples/`` (as in a checkout), Python blocks
with this interpreter, all on one fresh ledger (a schema of the test server, as ``cli_env``
sets it). Each command must succeed and print something. A block that cannot run here (it
installs, runs the whole suite, or serves until stopped) is preceded by
``<!-- not run: why -->``; there are only a few, and each says why.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SHELLS = {"bash", "sh", "shell"}
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
NOT_RUN = re.compile(r"<!--\s*not run:\s*(?P<why>[^>]*?)\s*-->\s*\Z")
MOST_NOT_RUN = 5  # installing, the whole suite, and servers that wait for clients


def readme_blocks(text: str) -> list[tuple[str, str, str | None]]:
    """(language, body, why it is not run or None) of each fenced block, in order."""
    blocks = []
    for match in FENCE.finditer(text):
        skipped = NOT_RUN.search(text[: match.start()].rstrip() + "\n")
        blocks.append((match["lang"], match["body"], skipped["why"] if skipped else None))
    return blocks


def shell_commands(body: str) -> list[str]:
    """A shell block's commands: one a line, a trailing backslash continuing it; comments and blanks dropped."""
    commands, pending = [], ""
    for line in body.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            commands.append(command)
    return commands


def test_blocks_are_found_and_markers_are_read() -> None:
    text = (
        "a\n```bash\nfactledger profile u \\\n  --json  # x\n# a comment\n```\n"
        "<!-- not run: serves -->\n```bash\nx\n```\n"
    )
    [(lang, body, why), (_, _, skipped)] = readme_blocks(text)
    assert (lang, why, skipped) == ("bash", None, "serves")
    assert shell_commands(body) == ["factledger profile u    --json  # x"]


def test_only_a_few_blocks_are_not_run_and_each_says_why() -> None:
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    runnable = [b for b in blocks if b[0] in SHELLS | {"python"}]
    skipped = [why for _, _, why in runnable if why is not None]
    assert len(runnable) - len(skipped) >= 3, "the README's tour, embedding and serving blocks run"
    assert len(skipped) <= MOST_NOT_RUN, f"too many blocks not run: {skipped}"
    assert all(why.strip() for why in skipped)


def test_every_json_block_of_the_readme_parses() -> None:
    """A configuration file the README shows is pasted whole into a client: it must be JSON."""
    bodies = [body for lang, body, _ in readme_blocks(README.read_text(encoding="utf-8")) if lang == "json"]
    assert bodies
    for body in bodies:
        json.loads(body)


def environment(cli_env: dict[str, str]) -> dict[str, str]:
    """The test's fresh ledger, and the ``factledger`` this interpreter installed first on PATH."""
    scripts = str(Path(sys.executable).parent)
    return {**cli_env, "PATH": os.pathsep.join([scripts, cli_env.get("PATH", "")])}


def run(argv: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None) -> str:
    proc = subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    shown = " ".join(argv) if stdin is None else f"the Python block:\n{stdin}"
    assert proc.returncode == 0, f"{shown}\nexit {proc.returncode}\nstdout:{proc.stdout}\nstderr:{proc.stderr}"
    assert proc.stdout.strip(), f"{shown}\nprinted nothing (stderr: {proc.stderr})"
    return proc.stdout


@pytest.mark.slow
def test_every_shell_and_python_block_of_the_readme_runs_as_pasted(cli_env: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "reader"
    shutil.copytree(ROOT / "examples", folder / "examples")
    env = environment(cli_env)
    ran = []
    for lang, body, why in readme_blocks(README.read_text(encoding="utf-8")):
        if why is not None or lang not in SHELLS | {"python"}:
            continue
        if lang == "python":
            run([sys.executable, "-"], env, folder, stdin=body)
            ran.append("python")
            continue
        for command in shell_commands(body):
            printed = run(["bash", "-o", "pipefail", "-c", command], env, folder)
            ran.append(command)
            if command.startswith("factledger recall"):
                # what the README's own ingest told is found again
                assert "no memory of" not in printed, f"{command} found nothing:\n{printed}"
    assert "python" in ran and any(c.startswith("factledger recall") for c in ran), ran
