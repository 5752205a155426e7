"""The documents say what the code is (issue 28, item 1): a module map that lists every module,
ADRs that each carry a status, an event table that is the event classes, a README short enough
to read, and links that lead somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from factledger.domain.memory import UserMemory

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
ADRS = sorted((ROOT / "ADR").glob("[0-9][0-9][0-9][0-9]-*.md"))
PACKAGE_DIRS = ("domain", "application", "infrastructure", "projections", "entrypoints", "evaluation")
README_MOST_LINES = 300


def package_modules() -> set[str]:
    """Every module file of the package, relative to the repository root (which is the package)."""
    modules = {p.name for p in ROOT.glob("*.py")}
    for folder in PACKAGE_DIRS:
        modules |= {str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts}
    return modules


def mapped_modules() -> set[str]:
    """The modules the map in docs/architecture.md lists: the first cell of each row of its tables."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    section = text[text.index("## Module map") :]
    return set(re.findall(r"^\| `([\w/]+\.py)` \|", section, re.MULTILINE))


def test_the_module_map_lists_every_module_and_nothing_else() -> None:
    modules, mapped = package_modules(), mapped_modules()
    assert "application/service.py" in modules and "domain/memory.py" in mapped
    missing, gone = sorted(modules - mapped), sorted(mapped - modules)
    assert not missing, f"docs/architecture.md's module map lacks {missing}: add a line for each"
    assert not gone, f"docs/architecture.md's module map lists modules that do not exist: {gone}"


STATUS = re.compile(r"^Status: (Accepted|Proposed|Deprecated|Superseded by (\d{4}))\b.*$", re.MULTILINE)


@pytest.mark.parametrize("adr", ADRS, ids=[a.stem[:4] for a in ADRS])
def test_every_adr_has_a_status(adr: Path) -> None:
    head = "\n".join(adr.read_text(encoding="utf-8").splitlines()[:4])
    status = STATUS.search(head)
    assert status, f"{adr.name}: no 'Status: Accepted|Proposed|Deprecated|Superseded by NNNN' line under its title"
    if status.group(2):
        assert any(a.name.startswith(status.group(2)) for a in ADRS), f"{adr.name}: no ADR {status.group(2)}"


def event_classes() -> dict[str, int]:
    """The aggregate's event classes and their class versions."""
    return {
        name: getattr(cls, "class_version", 1)
        for name, cls in vars(UserMemory).items()
        if isinstance(cls, type)
        and issubclass(cls, UserMemory.Event)
        and not name.startswith("_")
        and name not in {"Event", "Created"}
    }


def test_adr_0001_lists_every_event_with_its_class_version() -> None:
    text = (ROOT / "ADR" / "0001-event-model.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| (\d+) \|", text, re.MULTILINE))
    events = event_classes()
    assert {"Started", "MessageIngested", "FactMentioned"} <= events.keys()
    assert {name: int(v) for name, v in rows.items()} == events, "ADR 0001's event table is not the event classes"


def test_the_snapshot_interval_documented_is_the_one_the_code_uses() -> None:
    from factledger.application.ledger import DEFAULT_SNAPSHOT_INTERVAL, MemoryLedger
    from factledger.infrastructure.config import Settings

    assert Settings().snapshot_interval == DEFAULT_SNAPSHOT_INTERVAL
    stated = f"every {DEFAULT_SNAPSHOT_INTERVAL} events"
    assert stated in (ROOT / "ADR" / "0002-aggregate-boundaries.md").read_text(encoding="utf-8")
    assert f"(default {DEFAULT_SNAPSHOT_INTERVAL})" in (MemoryLedger.__doc__ or "")


def test_the_readme_is_short_and_leads_into_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MOST_LINES
    for page in ("architecture", "operations", "reliability", "privacy", "configuration", "evaluation"):
        assert f"docs/{page}.md" in readme, f"the README does not link docs/{page}.md"


LINK = re.compile(r"\]\((?!https?://|mailto:|#)([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", ["README.md", *(f"docs/{p.name}" for p in sorted(DOCS.glob("*.md")))])
def test_every_relative_link_leads_to_a_file(page: str) -> None:
    path = ROOT / page
    broken = [t for t in LINK.findall(path.read_text(encoding="utf-8")) if not (path.parent / t).exists()]
    assert not broken, f"{page} links to files that do not exist: {broken}"


def test_the_readme_shows_the_command_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    [command] = [line for line in ci.splitlines() if line.startswith("python3 -m pip install")]
    assert command in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
