"""The README's Python block runs as pasted (on the in-memory backend, in a fresh process)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def embed_block() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Embed it in a backend") :]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "the README has no Python block under 'Embed it in a backend'"
    return match.group(1)


def test_the_readme_python_block_runs_as_pasted(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "FACTLEDGER_", "DATABASE_URL"))}
    env.update(FACTLEDGER_BACKEND="memory", FACTLEDGER_HOME=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-"],
        input=embed_block(),
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "用户在杭州工作" in proc.stdout
