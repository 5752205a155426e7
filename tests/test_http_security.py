"""Security of the served API: who a correction is recorded as, which hosts ``/mcp`` answers
under ``serve``, failed authentications limited per client address, and the ``mcp`` pin."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def test_the_mcp_pin_admits_the_api_the_code_imports_and_no_other_major() -> None:
    """The code imports ``mcp.server.mcpserver`` and ``mcp_types`` (the 2.x layout): the extra
    must not let pip pick a 1.x release, nor a 3.x one nobody has run it on."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    pins = [Requirement(r) for group in ("server", "test") for r in extras[group] if Requirement(r).name == "mcp"]
    assert len(pins) == 2, pins
    installed = importlib.metadata.version("mcp")
    for pin in pins:
        assert pin.specifier.contains(installed), (pin, installed)
        for outside in ("1.9.0", "1.26.0", "3.0.0"):
            assert not pin.specifier.contains(outside), (pin, outside)
    import mcp.server.mcpserver  # noqa: F401  the modules the pin promises
    import mcp_types  # noqa: F401
