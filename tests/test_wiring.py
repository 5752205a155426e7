"""How a ledger's service is put together (issue 28, item 3; ADR 0038): one ``Components`` value
per backend and one constructor, the same save hooks on every backend, given once, and no data
shared through a module-level registry."""

from __future__ import annotations

import ast
import inspect
import pickle
from pathlib import Path
from typing import Any

import attrs
import pytest
from source_trees import tree_of, walk

from factledger.application.components import Components
from factledger.application.service import LedgerService
from factledger.infrastructure.bootstrap import open_ledger, tuning
from factledger.infrastructure.config import Settings
from factledger.infrastructure.save_hooks import SaveHooks
from factledger.infrastructure.tenants import open_key_store

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = {"build", "tests", "benchmarks", "examples", "tools", "evaluation", "factledger.egg-info"}

# Module-level mutable state that is right per process, and why. Nothing else may join.
PROCESS_CACHES = {
    # the secret file read (or created) once per path: the file, not this map, is what counts
    "infrastructure/secret.py:_loaded",
    # data directories whose exit handler this process registered (atexit is per process)
    "infrastructure/embedded.py:_pruned_at_exit",
    # a bounded memo of terms' UTF-8 heads: a pure function of the term
    "projections/tsvector.py:_TERM_HEADS",
}
# Calls that make an empty container: with no argument, or whatever the argument (a default factory).
EMPTY_WHEN_BARE = {"dict", "list", "set", "Counter", "OrderedDict"}
ALWAYS_EMPTY = {"defaultdict", "WeakSet", "WeakValueDictionary", "WeakKeyDictionary"}


def test_one_constructor_takes_the_components() -> None:
    assert list(inspect.signature(LedgerService.__init__).parameters) == ["self", "components"]


def test_every_backend_builds_components_with_the_settings_tuning(settings: Settings) -> None:
    chosen = attrs.evolve(settings, fact_similarity=0.8, bulk_workers=3, candidate_cache_mb=2)
    with open_ledger(chosen, warn_if_offline=False) as service:
        assert isinstance(service.components, Components)
        assert service.components.tuning == tuning(chosen)
        assert service.components.tuning.candidate_cache_bytes == 2 * 1024 * 1024
        assert service.components.eraser is not None and service.components.directory is not None


def test_every_backend_gives_its_recorder_the_save_hooks(settings: Settings) -> None:
    with open_ledger(settings, warn_if_offline=False) as service:
        hooks = service.ledger.recorder.hooks  # type: ignore[attr-defined]
        assert isinstance(hooks, SaveHooks)
        projector = service.projector
        assert projector is not None
        assert projector.project_within_save in hooks.within_save  # type: ignore[attr-defined]
        assert projector.projection_for_save in hooks.projected_in_save  # type: ignore[attr-defined]
        assert service.embedder.write_within_save in hooks.written_in_save  # type: ignore[attr-defined]
        with pytest.raises(RuntimeError, match="save hooks already"):
            service.ledger.recorder.attach(SaveHooks())  # type: ignore[attr-defined]


def test_a_hook_that_fails_keeps_the_whole_message_out_on_every_backend(settings: Settings) -> None:
    failures = [RuntimeError("the disk is full")]

    def fail_once(*_: Any) -> None:
        if failures:
            raise failures.pop()

    with open_ledger(settings, warn_if_offline=False) as service:
        recorder: Any = service.ledger.recorder
        recorder.hooks = attrs.evolve(recorder.hooks, written_in_save=(*recorder.hooks.written_in_save, fail_once))
        with pytest.raises(RuntimeError, match="disk is full"):
            service.ingest("u", "I live in Lisbon.", message_id="m1")
        assert not service.knows("u")
        assert service.ledger.head() == 0
        # The same message again is no duplicate: nothing of it was kept.
        assert service.ingest("u", "I live in Lisbon.", message_id="m1").status == "recorded"
        assert service.profile("u").facts


def test_in_memory_data_belongs_to_the_settings_not_to_the_process(tmp_path: Path) -> None:
    first = Settings(home=tmp_path, backend="memory", schema="same")
    with open_ledger(first, warn_if_offline=False) as service:
        service.ingest("u", "I live in Lisbon.", message_id="m1")
    # Settings evolved from these ones share their data, as they would share a database_url.
    with open_ledger(attrs.evolve(first, inline_projection=False), warn_if_offline=False) as again:
        assert again.knows("u")
    assert open_key_store(first) is open_key_store(attrs.evolve(first, max_body_bytes=10_000))
    # Settings made apart, with the same home and schema, start empty.
    apart = Settings(home=tmp_path, backend="memory", schema="same")
    with open_ledger(apart, warn_if_offline=False) as other:
        assert not other.knows("u")
    assert open_key_store(apart) is not open_key_store(first)


def _makes_an_empty_container(call: ast.Call) -> bool:
    name = getattr(call.func, "id", getattr(call.func, "attr", ""))
    return name in ALWAYS_EMPTY or (name in EMPTY_WHEN_BARE and not call.args and not call.keywords)


def module_level_state(path: Path) -> list[str]:
    """Module-level names bound to an empty mutable container, and globals rebound in functions."""
    tree = tree_of(path.read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        empty = isinstance(value, (ast.Dict, ast.List, ast.Set)) and not (
            getattr(value, "keys", None) or getattr(value, "elts", None)
        )
        called = isinstance(value, ast.Call) and _makes_an_empty_container(value)
        if empty or called:
            found += [t.id for t in targets if isinstance(t, ast.Name)]
    found += [name for node in walk(tree) if isinstance(node, ast.Global) for name in node.names]
    return found


@pytest.mark.xdist_group("package_sources")  # parsed once with the other source checks
def test_no_module_keeps_state_beside_the_known_caches() -> None:
    state = set()
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT)
        if relative.parts[0] not in SKIPPED:
            state |= {f"{relative}:{name}" for name in module_level_state(path)}
    assert state - PROCESS_CACHES == set(), "module-level state: pass it in, or justify it in PROCESS_CACHES"
    assert state >= PROCESS_CACHES, f"gone, remove from PROCESS_CACHES: {PROCESS_CACHES - state}"


def test_settings_with_in_memory_data_still_go_to_another_process(tmp_path: Path) -> None:
    """Spawned workers get their settings pickled: the data stays behind, the settings go."""
    settings = Settings(home=tmp_path, backend="memory", schema="sent")
    with open_ledger(settings, warn_if_offline=False) as service:
        service.ingest("u", "I live in Lisbon.", message_id="m1")
    arrived = pickle.loads(pickle.dumps(settings))
    assert arrived == settings
    with open_ledger(arrived, warn_if_offline=False) as there:
        assert not there.knows("u")
