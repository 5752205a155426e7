"""Installed, everything lives under ``factledger``: nothing called domain/application at the top."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_holds_only_the_factledger_namespace(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = tmp_path.glob("factledger-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"factledger", next(t for t in tops if t.endswith(".dist-info"))}
    for part in ("domain", "application", "infrastructure", "projections", "entrypoints"):
        assert f"factledger/{part}/__init__.py" in names
    assert "factledger/entrypoints/demo.jsonl" in names
    assert "factledger/entrypoints/cli/__main__.py" in names
    assert "factledger/evaluation/sample.jsonl" in names  # `factledger eval --sample` on a fresh install
    assert not any(name.startswith("factledger/tests/") for name in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "factledger = factledger.entrypoints.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_a_backend_with_its_own_domain_package_can_embed_us(tmp_path: Path) -> None:
    (tmp_path / "domain").mkdir()
    (tmp_path / "domain" / "__init__.py").write_text("BACKEND = True\n")
    code = "import domain, factledger.domain as ours; assert domain.BACKEND; assert ours.UserMemory; print('ok')"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
