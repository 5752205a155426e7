"""Looking at the active extractor without recording anything: ``extract`` and ``eval``.

``extract`` shows what the extractor finds in one message; ``eval`` scores it
on a labelled file (``factledger.evaluation``), or on the sample shipped with
factledger (``--sample``). With the offline extractor neither opens the database.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from factledger.application.errors import InvalidInput
from factledger.domain.values import Turn
from factledger.entrypoints.cli.files import json_text, write_private_file
from factledger.entrypoints.cli.present import err, human, out, print_json, progress, shown, styled, table

# The commands import the extractor, the ledger and the scoring when they run: the parser is
# built without them (fast start, tests/test_fast_start.py).
if TYPE_CHECKING:
    from factledger.application.ports import Extractor
    from factledger.evaluation import Prediction, Report, Scores


@contextmanager
def active_extractor(args: argparse.Namespace) -> Iterator[Extractor]:
    """The extractor the commands use, as ``open_ledger`` would choose it.

    Offline (no database needed) unless ``OPENAI_API_KEY`` is set; an LLM
    extractor needs the database for its response cache and call log, so the
    ledger is opened for it (and nothing is recorded in the ledger).
    """
    from factledger.infrastructure.bootstrap import open_ledger
    from factledger.infrastructure.config import Settings
    from factledger.infrastructure.offline import RuleExtractor

    settings = Settings.load(prompts=getattr(args, "prompts", None))
    if not settings.openai_api_key:
        yield RuleExtractor()
        return
    with open_ledger(settings, ledger=getattr(args, "ledger", None)) as service:
        yield service.extractor


def _notice(args: argparse.Namespace, extractor: Extractor) -> None:
    if not args.quiet:
        err.print(f"factledger: extractor {extractor.extractor_id}; nothing is recorded", style="dim")


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
    """What the active extractor (and its signal detector) finds in one message."""
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
    out.print(f"signals: {human(categories) if categories else 'none'}")
    if not extraction.facts and not extraction.preferences:
        out.print("nothing extracted")
    for f in extraction.facts:
        out.print(
            styled(
                f"  fact        {shown(f.text)}  ",
                (f"[{shown(f.category)}]", "cyan"),
                f"  confidence {f.confidence:.2f}",
            )
        )
    for p in extraction.preferences:
        out.print(
            styled(
                f"  preference  {shown(p.text)}  ",
                (f"[{shown(p.category)}]", "cyan"),
                f"  strength {p.strength:.2f}  ({human(p.evidence)})",
            )
        )
    return 0


# Headers on two lines: ten columns of numbers fit 80 columns without folding a number.
SCORE_COLUMNS = (
    "set",
    "n",
    "with\ngold",
    "det.\nP",
    "det.\nR",
    "flagged",
    "matched/\npred/\ngold",
    "ext.\nP",
    "ext.\nR",
    "ext.\nF1",
)


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _scores(name: str, s: Scores) -> tuple[str, ...]:
    return (
        name,
        str(s.lines),
        str(s.gold_lines),
        _rate(s.detection_precision),
        _rate(s.detection_recall),
        _rate(s.flagged_share),
        f"{s.matched}/{s.predicted}/{s.gold_items}",
        _rate(s.extraction_precision),
        _rate(s.extraction_recall),
        _rate(s.extraction_f1),
    )


def _print_report(source: str, report: Report) -> None:
    rows = [_scores("all", report.overall), *(_scores(shown(name), s) for name, s in report.groups.items())]
    out.print(
        table(
            f"{shown(source)} — {shown(report.extractor_id)}", SCORE_COLUMNS, rows, numbers=set(SCORE_COLUMNS) - {"set"}
        )
    )


def _write_predictions(path: str, predictions: Sequence[Prediction]) -> None:
    lines = "".join(json_text(p.as_dict(), indent=None) + "\n" for p in predictions)
    write_private_file(path, lines, "--predictions")


def cmd_eval(args: argparse.Namespace) -> int:
    """Score the active detector and extractor on a labelled file, or on the shipped sample."""
    if args.sample == bool(args.file):
        raise InvalidInput("eval needs a labelled FILE or --sample (not both)")
    from factledger.evaluation import SAMPLE, evaluate, load_lines, load_sample, predict_all

    # DatasetError is an InvalidInput: an unreadable file or bad line exits 2 naming it.
    lines = load_sample() if args.sample else load_lines(args.file)
    source = f"{SAMPLE} (shipped with factledger)" if args.sample else str(args.file)
    with active_extractor(args) as extractor, progress(args, "evaluating") as bar:
        _notice(args, extractor)
        task = bar.add_task("eval", total=len(lines))
        predictions = predict_all(extractor, lines, lambda n: bar.advance(task, n))
        extractor_id = extractor.extractor_id
    report = evaluate(lines, predictions, extractor_id)
    if args.predictions:
        _write_predictions(args.predictions, predictions)
    if args.json:
        print_json({"file": SAMPLE if args.sample else str(args.file), **report.as_dict()})
    else:
        _print_report(source, report)
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    """Add ``extract`` and ``eval``."""
    p = sub.add_parser(
        "extract",
        parents=[common],
        help="show what the active extractor finds in one message (records nothing)",
        description="Run the active extractor (and its signal detector) on one message and print the "
        "facts, preferences and signals it finds. Nothing is recorded; no database is opened.",
    )
    p.add_argument("--context", help='earlier turns as JSON: [{"role": "assistant", "content": "..."}]')
    p.add_argument("text", help="the message text")
    p.set_defaults(func=cmd_extract)

    p = sub.add_parser(
        "eval",
        parents=[common],
        help="score the active extractor on a labelled JSONL file (or --sample)",
        description="Run the active detector and extractor on a labelled file (one JSON object a line: id, "
        "utterance or utterance_unsegmented, context, gold_persona) and print detection precision, "
        "recall and share of lines flagged, and extraction precision, recall and F1 (a prediction "
        "matches a gold item at bigram / word F1 >= 0.5 after normalising). Lines with kvpi_domain "
        "are also scored by domain. --sample scores the 30 labelled Chinese and English lines shipped "
        "with factledger. Exit 2 on an unreadable file or a bad line.",
    )
    p.add_argument("file", nargs="?", help="labelled JSONL file")
    p.add_argument("--sample", action="store_true", help="score the labelled sample shipped with factledger")
    p.add_argument(
        "--predictions",
        metavar="OUT.jsonl",
        help='also write one line per input: {"id", "signal", "facts", "preferences"} (mode 0600, all at once)',
    )
    p.set_defaults(func=cmd_eval)
