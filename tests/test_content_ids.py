"""Behaviour ids from content (ADR 0031): the offline extractor's, judge's and embedder's ids are a
hash of the code and data that make them up, the same in every process and install, and a new
id (so a miss in the embedding cache) when one rule changes. Copies of the package run in real
subprocesses."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from source_trees import tree_of, walk

import factledger
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.content_ids import OFFLINE_PACKAGE, modules_of
from factledger.infrastructure.offline import HashedNgramEmbedder, RuleExtractor, RuleJudge

OFFLINE_DIR = Path(factledger.__file__).parent / "infrastructure" / "offline"

# Prints the three ids as the package found on PYTHONPATH gives them; with a database in the
# environment, also how many of ``TEXTS`` its embedding cache had to compute.
CHILD = """
import json, os, sys
import factledger
from factledger.infrastructure.offline import HashedNgramEmbedder, RuleExtractor, RuleJudge
report = {
    "package": factledger.__file__,
    "ids": [RuleExtractor().extractor_id, RuleJudge().judge_id, HashedNgramEmbedder().embedder_id],
}
if os.environ.get("DATABASE_URL"):
    from factledger.infrastructure.bootstrap import open_ledger
    with open_ledger(check_embedder=False) as service:
        service.embedder.embed(json.loads(sys.argv[1]))
        report["computed"] = service.embedder.computed
print(json.dumps(report))
"""
TEXTS = ["用户住在杭州", "The user works at a bakery"]


def ids_here() -> list[str]:
    return [RuleExtractor().extractor_id, RuleJudge().judge_id, HashedNgramEmbedder().embedder_id]


def copy_of_package(into: Path) -> Path:
    """A plain copy of the installed package (the links of an editable install followed)."""
    root = into / "site"
    ignored = shutil.ignore_patterns("__pycache__", "*.pyc", "tests", "build", "benchmarks", "*.egg-info")
    shutil.copytree(Path(factledger.__file__).parent, root / "factledger", ignore=ignored)
    return root / "factledger" / "infrastructure" / "offline"


def run_child(site: Path, env: dict[str, str] | None = None) -> dict[str, object]:
    """The child's report, run with ``site`` (a folder or a wheel) first on its path."""
    environment = dict(env) if env else {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    environment["PYTHONPATH"] = str(site)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(TEXTS)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    assert str(report["package"]).startswith(str(site)), "the child must import the copy"
    return report


def change_one_rule(offline: Path, module: str) -> None:
    """The module's first pattern gains an alternative (a rule changed, whatever the rules are by then):
    in its data file (ADR 0040) when it has one, else in its code."""
    data = offline / "rules" / f"{module}.toml"
    path, first_pattern = (
        (data, r"(\n\[patterns\]\n(?:#[^\n]*\n)*\w+ = '+)")
        if data.exists()
        else (offline / f"{module}.py", r'(re\.compile\(r")')
    )
    source = path.read_text(encoding="utf-8")
    changed = re.sub(first_pattern, r"\1(?:从没人这样说过)|", source, count=1)
    assert changed != source, f"{path.name} has no pattern left to change"
    path.unlink()  # a copy, never the checkout
    path.write_text(changed, encoding="utf-8")


def test_each_id_is_a_readable_prefix_and_a_hash_of_its_own_modules() -> None:
    extractor_id, judge_id, embedder_id = ids_here()
    assert re.fullmatch(r"offline-rules/[0-9a-f]{12}", extractor_id)
    assert re.fullmatch(r"offline-rules/[0-9a-f]{12}", judge_id)
    assert re.fullmatch(r"offline-ngram/[0-9a-f]{12}:256", embedder_id)
    assert len({extractor_id, judge_id}) == 2  # the extractor's rules are more than the judge's
    assert HashedNgramEmbedder(64).embedder_id == embedder_id.replace(":256", ":64")
    # the embedder is made of fewer modules than the extractor: a change to the extractor alone
    # must not throw every cached vector away
    assert "extractor" not in modules_of("embedder") and "judge" not in modules_of("embedder")
    assert "judge" in modules_of("extractor")


def _imports_by_ast(path: Path, package: str, known: set[str]) -> set[str]:
    found: set[str] = set()
    for node in walk(tree_of(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: a relative import the id's reading does not follow"
            module = node.module or ""
            if module == package:
                found |= {a.name for a in node.names if a.name in known}
            elif module.startswith(package + "."):
                found.add(module.removeprefix(package + "."))
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix(package + ".") for a in node.names if a.name.startswith(package + ".")}
    return found


@pytest.mark.parametrize("root", ["extractor", "judge", "embedder"])
def test_the_modules_read_for_an_id_are_exactly_those_its_module_imports(root: str) -> None:
    """The id reads imports with a pattern (cheap at start); Python's own parser agrees with it."""
    known = {p.stem for p in OFFLINE_DIR.glob("*.py")}
    closure, waiting = set(), [root]
    while waiting:
        name = waiting.pop()
        if name not in closure:
            closure.add(name)
            waiting += sorted(_imports_by_ast(OFFLINE_DIR / f"{name}.py", OFFLINE_PACKAGE, known))
    assert modules_of(root) == sorted(closure)


@pytest.mark.slow
def test_the_ids_are_the_same_in_another_process_another_install_and_with_crlf_line_endings(
    tmp_path: Path,
) -> None:
    offline = copy_of_package(tmp_path)
    slots = offline / "slots.py"
    crlf = slots.read_bytes().replace(b"\n", b"\r\n")
    slots.unlink()
    slots.write_bytes(crlf)
    first, second = run_child(tmp_path / "site"), run_child(tmp_path / "site")
    assert first["ids"] == second["ids"] == ids_here()


@pytest.mark.slow
def test_the_ids_are_the_same_from_a_wheel_imported_as_a_zip(tmp_path: Path) -> None:
    """A third install mode: the built wheel itself on PYTHONPATH (zipimport, resources read from the zip)."""
    root = Path(__file__).resolve().parents[1]
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(root)]
    subprocess.run(build, check=True, capture_output=True, timeout=300)
    [wheel] = tmp_path.glob("factledger-*.whl")
    assert run_child(wheel)["ids"] == ids_here()


@pytest.mark.slow
def test_a_changed_rule_of_the_judge_is_a_new_judge_and_extractor_but_the_same_embedder(tmp_path: Path) -> None:
    offline = copy_of_package(tmp_path)
    change_one_rule(offline, "judge")
    extractor_id, judge_id, embedder_id = run_child(tmp_path / "site")["ids"]  # type: ignore[misc]
    here = ids_here()
    assert extractor_id != here[0] and judge_id != here[1]
    assert embedder_id == here[2]


@pytest.mark.postgres
def test_a_changed_slot_rule_is_a_new_id_everywhere_and_misses_the_embedding_cache(
    pg_uri: str, schema: str, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    settings = attrs.evolve(Settings.load(), database_url=pg_uri, schema=schema, home=tmp_path / "home")
    with open_ledger(settings) as service:
        service.embedder.embed(TEXTS)  # type: ignore[union-attr]
        assert service.embedder.computed == len(TEXTS)  # type: ignore[attr-defined]
    same = run_child(copy_of_package(tmp_path / "same").parents[2], cli_env)
    assert same["ids"] == ids_here() and same["computed"] == 0  # another process, another install: hits
    changed = copy_of_package(tmp_path / "changed")
    change_one_rule(changed, "slots")
    report = run_child(changed.parents[2], cli_env)
    assert all(new != old for new, old in zip(report["ids"], ids_here(), strict=True))  # type: ignore[call-overload]
    assert report["computed"] == len(TEXTS)  # nothing of the old rules' vectors is reused
