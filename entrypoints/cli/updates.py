"""``factledger eval-updates``: does the active extractor keep a ledger true through a conversation?

Each labelled conversation (``knowledge_updates_*.jsonl``) is ingested for a
fresh user in a throwaway in-memory ledger with the active extractor, judge
and embedder; nothing is recorded anywhere else.
"""

from __future__ import annotations

import argparse
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from factledger.entrypoints.cli.present import err, out, print_json, progress, shown, styled, table

if TYPE_CHECKING:
    from factledger.evaluation.updates import UpdatesReport


def cmd_eval_updates(args: argparse.Namespace) -> int:
    # Imported when the command runs: the parser is built without them (tests/test_fast_start.py).
    from factledger.evaluation.updates import evaluate_updates, load_conversations
    from factledger.infrastructure.bootstrap import open_ledger
    from factledger.infrastructure.config import Settings

    conversations = load_conversations(args.file)  # a DatasetError is an InvalidInput: exit 2
    base = attrs.evolve(
        Settings.load(prompts=getattr(args, "prompts", None)), backend="memory", inline_projection=False
    )
    with tempfile.TemporaryDirectory() as home:

        def fresh() -> Any:
            settings = attrs.evolve(base, home=Path(home), schema=f"u{uuid.uuid4().hex[:12]}")
            return open_ledger(settings, warn_if_offline=False)

        probe = fresh()
        extractor_id = probe.extractor.extractor_id
        probe.close()
        if not args.quiet and not args.json:
            err.print(f"factledger: extractor {extractor_id}; each conversation in a throwaway ledger", style="dim")
        with progress(args, "conversations") as bar:
            task = bar.add_task("updates", total=len(conversations))
            report = evaluate_updates(conversations, fresh, extractor_id, lambda n: bar.advance(task, n))
    if args.json:
        print_json({"file": str(args.file), **report.to_dict()})
    else:
        _print(str(args.file), report, verbose=bool(args.verbose))
    return 0


def _print(source: str, report: UpdatesReport, verbose: bool) -> None:
    summary = report.to_dict()
    rows = [("all", *_cells(summary["overall"]))]
    rows += [(f"kind {name}", *_cells(s)) for name, s in summary["by_kind"].items()]
    rows += [(f"language {name}", *_cells(s)) for name, s in summary["by_lang"].items()]
    columns = ("set", "conversations", "passed", "accuracy")
    out.print(table(f"{shown(source)} — {shown(report.extractor_id)}", columns, rows, numbers=set(columns) - {"set"}))
    failures = [o for o in report.outcomes if not o.passed]
    if failures and not verbose:
        out.print(f"{len(failures)} failing; -v shows each with its final active items")
    for o in failures if verbose else []:
        c = o.conversation
        out.print(styled((f"{shown(c.id)}", "bold"), f"  {c.kind} ({c.lang})  {shown(c.note)}"))
        for message in c.messages:
            out.print(f"    said: {shown(message)}")
        for item in o.items or ("— (nothing active)",):
            out.print(f"    active: {shown(item)}")
        for group in o.missing:
            out.print(styled("    ", ("missing", "red"), f": {shown(' + '.join(group))}"))
        for group in o.lingering:
            out.print(styled("    ", ("still active", "red"), f": {shown(' + '.join(group))}"))


def _cells(stats: dict[str, Any]) -> tuple[str, str, str]:
    accuracy = stats["accuracy"]
    return str(stats["conversations"]), str(stats["passed"]), "—" if accuracy is None else f"{accuracy:.0%}"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    """Add ``eval-updates``."""
    p = sub.add_parser(
        "eval-updates",
        parents=[common],
        help="score how true the ledger stays through conversations with updates and corrections",
        description="Ingest each labelled conversation (id, lang, kind, messages, active, stale; see "
        "data/eval/README) for a fresh user in a throwaway in-memory ledger with the active extractor, and "
        "print the share of conversations that end with exactly the right active items, overall, by kind "
        "and by language; -v lists each failing conversation with its final active items.",
    )
    p.add_argument("file", help="knowledge-updates JSONL file")
    p.set_defaults(func=cmd_eval_updates)
