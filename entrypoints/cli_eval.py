"""``factledger extract`` and ``factledger eval``: look at the active extractor without recording anything.

``extract`` shows what the extractor finds in one message; ``eval`` scores it
on a labelled file (the format of data/eval, see ``infrastructure.evaluation``).
Neither records anything; with the offline extractor neither opens the database.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from factledger.application.ports import Extractor
from factledger.application.service import InvalidInput
from factledger.domain.values import Turn
from factledger.entrypoints.cli import _progress, err, out, print_json
from factledger.entrypoints.terminal import shown, styled
from factledger.infrastructure.config import Settings
from factledger.infrastructure.evaluation import (
    DatasetError,
    Report,
    Scores,
    evaluate,
    load_lines,
    predict_all,
)
from rich.table import Table


@contextmanager
def active_extractor(args: argparse.Namespace) -> Iterator[Extractor]:
    """The extractor the commands use, as ``open_ledger`` would choose it.

    Offline (no database needed) unless ``OPENAI_API_KEY`` is set; an LLM
    extractor needs the database for its response cache and call log, so the
    ledger is opened for it (and nothing is recorded in the ledger).
    """
    settings = Settings.load(prompts=getattr(args, "prompts", None))
    if not settings.openai_api_key:
        from factledger.infrastructure.offline import RuleExtractor

        yield RuleExtractor()
        return
    from factledger.infrastructure.bootstrap import open_ledger

    with open_ledger(settings, ledger=getattr(args, "ledger", None)) as service:
        yield service.extractor


def _notice(args: argparse.Namespace, extractor: Extractor) -> None:
    if not args.quiet:
        err.print(f"factledger: extractor {extractor.extractor_id}; nothing is recorded", style="dim")


# ---- extract ----------------------------------------------------------------------------


def _context(raw: str | None) -> list[Turn]:
    if not raw:
        return []
    try:
        turns = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"--context is not valid JSON: {exc}") from None
    if not isinstance(turns, list):
        raise InvalidInput("--context must be a JSON list of {role, content} turns")
    try:
        return [Turn.from_dict(t) for t in turns]
    except ValueError as exc:
        raise InvalidInput(f"--context: {exc}") from None


def cmd_extract(args: argparse.Namespace) -> int:
    if not args.text.strip():
        raise InvalidInput("message must not be empty")
    with active_extractor(args) as extractor:
        _notice(args, extractor)
        extraction = extractor.extract(args.text, context=_context(args.context))
    if args.json:
        print_json(extraction.as_dict())
        return 0
    signals = extraction.signals or {}
    categories = [*signals.get("fact_categories", []), *signals.get("pref_categories", [])]
    out.print(f"signals: {', '.join(categories) if categories else 'none'}")
    if not extraction.facts and not extraction.preferences:
        out.print("nothing extracted")
    for f in extraction.facts:
        out.print(styled(f"  fact        {shown(f.text)}  ", (f.category, "cyan"), f"  confidence {f.confidence:.2f}"))
    for p in extraction.preferences:
        out.print(styled(f"  preference  {shown(p.text)}  ", (p.category, "cyan"),
                         f"  strength {p.strength:.2f}  ({shown(p.evidence)})"))
    return 0


# ---- eval -------------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _row(table: Table, name: str, s: Scores) -> None:
    table.add_row(
        name, str(s.lines), str(s.gold_lines),
        _fmt(s.detection_precision), _fmt(s.detection_recall), _fmt(s.flagged_share),
        f"{s.matched}/{s.predicted}/{s.gold_items}",
        _fmt(s.extraction_precision), _fmt(s.extraction_recall), _fmt(s.extraction_f1),
    )


def _print_report(path: str, report: Report) -> None:
    table = Table(title=f"{shown(path)} — {report.extractor_id}")
    for column in ("set", "n", "with gold", "det. P", "det. R", "flagged", "matched/pred/gold", "ext. P", "ext. R", "ext. F1"):
        table.add_column(column, justify="left" if column == "set" else "right")
    _row(table, "all", report.overall)
    for name, scores in report.groups.items():
        _row(table, shown(name), scores)
    out.print(table)


def _write_predictions(path: str, predictions: list[Any]) -> None:
    try:
        with Path(path).open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(prediction.as_dict(), ensure_ascii=False) + "\n" for prediction in predictions)
    except OSError as exc:
        raise InvalidInput(f"--predictions {path}: cannot write ({exc.strerror})") from None


def cmd_eval(args: argparse.Namespace) -> int:
    try:
        lines = load_lines(args.file)
    except DatasetError as exc:
        raise InvalidInput(str(exc)) from None
    with active_extractor(args) as extractor, _progress(args, "evaluating") as progress:
        _notice(args, extractor)
        task = progress.add_task("eval", total=len(lines))
        predictions = predict_all(extractor, lines, lambda n: progress.advance(task, n))
        extractor_id = extractor.extractor_id
    report = evaluate(lines, predictions, extractor_id)
    if args.predictions:
        _write_predictions(args.predictions, predictions)
    if args.json:
        print_json({"file": str(args.file), **report.as_dict()})
    else:
        _print_report(str(args.file), report)
    return 0


# ---- registration -----------------------------------------------------------------------


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    """Add ``extract`` and ``eval`` to the ``factledger`` command line."""
    p = subparsers.add_parser(
        "extract", parents=[common], help="show what the active extractor finds in one message (records nothing)",
        description="Run the active extractor (and its signal detector) on one message and print the "
                    "facts, preferences and signals it finds. Nothing is recorded; no database is opened.",
    )
    p.add_argument("--context", help='earlier turns as JSON: [{"role": "assistant", "content": "..."}]')
    p.add_argument("text", help="the message text")
    p.set_defaults(func=cmd_extract)

    p = subparsers.add_parser(
        "eval", parents=[common], help="score the active extractor on a labelled JSONL file",
        description="Run the active detector and extractor on a labelled file (one JSON object a line: id, "
                    "utterance or utterance_unsegmented, context, gold_persona) and print detection precision, "
                    "recall and share of lines flagged, and extraction precision, recall and F1 (a prediction "
                    "matches a gold item at bigram / word F1 >= 0.5 after normalising). Lines with kvpi_domain "
                    "are also scored by domain. Exit 2 on an unreadable file or a bad line.",
    )
    p.add_argument("file", help="labelled JSONL file")
    p.add_argument("--predictions", metavar="OUT.jsonl",
                   help='also write one line per input: {"id", "signal", "facts", "preferences"}')
    p.set_defaults(func=cmd_eval)
