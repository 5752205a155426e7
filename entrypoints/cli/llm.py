"""What the LLM cost, and a second chance: ``usage`` and ``retry-failed``.

``usage`` reads the ``llm_calls`` log (every chat and embedding call, with
tokens, latency and cache hits, attributed to a user and message);
``retry-failed`` extracts again the messages whose extraction failed (the
LLM was down, or answered nothing usable) and records what it finds.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from factledger.entrypoints.cli.present import count, out, print_json, progress, short, shown, styled, table
from factledger.entrypoints.cli.session import opened

if TYPE_CHECKING:
    from factledger.application.service import LedgerService

COUNTERS = ("calls", "embedding_calls", "cache_hits", "input_tokens", "output_tokens", "latency_ms")
USAGE_HEADINGS = ("calls", "embed-\ndings", "cache\nhits", "tokens\nin", "tokens\nout", "ms")


def usage_report(service: LedgerService, user: str | None) -> dict[str, Any]:
    """The usage log's report; for one user, every message in order with its text, those that cost nothing too."""
    report = service.usage(user)
    if user:
        by_id = {m["message_id"]: m for m in report["messages"]}
        zero = {key: 0 for key in report["totals"] if key != "messages"}
        messages = []
        for entry in service.history(user, kind="message"):
            if entry.event == "MessageIngested":
                message_id = entry.fields["message_id"]
                row = by_id.pop(message_id, None) or {"message_id": message_id, "user_id": user, **zero}
                messages.append({**row, "text": entry.fields["text"]})
        messages.extend(by_id.values())  # calls for messages this ledger does not hold
        report["messages"] = messages
        report["totals"]["messages"] = len(messages)
    return report


def cmd_usage(args: argparse.Namespace) -> int:
    """LLM calls, tokens, latency and cache hits per message."""
    with opened(args, check_embedder=False) as service:
        report = usage_report(service, args.user)
    if args.json:
        print_json(report)
        return 0
    rows: list[tuple[Any, ...]] = [
        (
            short(m["message_id"]),
            *(str(m[key]) for key in COUNTERS),
            shown(m.get("text") or "") + (" (no signal: no call)" if m["gated"] else ""),
        )
        for m in report["messages"]
    ]
    rows += [
        (styled((label, "bold")), *(str(row[key]) for key in COUNTERS), "")
        for label, row in (("unattributed", report["unattributed"]), ("total", report["totals"]))
    ]
    out.print(
        table(
            "LLM usage" + (f" of {shown(args.user)}" if args.user else ""),
            ("message", *USAGE_HEADINGS, "text"),
            rows,
            text={"text"},
            numbers=USAGE_HEADINGS,
        )
    )
    redacted = report.get("redacted") or {}
    if redacted:
        out.print("redacted before recording: " + ", ".join(f"{kind} {n}" for kind, n in redacted.items()))
    return 0


def cmd_retry_failed(args: argparse.Namespace) -> int:
    """Extract again every message whose extraction failed; exit 1 if any still fails."""
    with opened(args) as service, progress(args, "retrying") as bar:
        task = bar.add_task("retry", total=None)
        results = service.retry_failed(
            user_id=args.user, progress=lambda done, total: bar.update(task, completed=done, total=total)
        )
    failed = sum(r.status == "extraction_failed" for r in results)
    recorded = sum(r.status == "recorded" for r in results)
    if args.json:
        print_json(
            {
                "retried": len(results),
                "recorded": recorded,
                "still_failing": failed,
                "results": [r.to_dict() for r in results],
            }
        )
        return 1 if failed else 0
    out.print(f"retried {count(len(results), 'message')}: {recorded} recorded, {failed} still failing")
    for r in results:
        out.print(
            f"  {shown(r.user_id)} {short(r.message_id)}  {r.status}: {count(r.facts_extracted, 'fact')}, "
            f"{count(r.preferences_extracted, 'preference')}"
        )
    return 1 if failed else 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    """Add ``usage`` and ``retry-failed``."""
    p = sub.add_parser(
        "usage",
        parents=[common],
        help="LLM calls, tokens, latency and cache hits per message",
        description="calls: chat completions sent (cache hits excluded); embedding_calls: embedding requests; "
        "gated: the message had no fact or preference signal, so it cost no call. "
        "Calls made for no message (recall queries, projection) are reported as unattributed.",
    )
    p.add_argument("--user", help="only this user's messages (and list those that cost nothing)")
    p.set_defaults(func=cmd_usage)

    p = sub.add_parser(
        "retry-failed",
        parents=[common],
        help="extract again the messages whose extraction failed",
        description="Messages whose extraction failed are recorded with an ExtractionFailed event; this "
        "extracts them again with the active extractor. Exit 1 if any still fails.",
    )
    p.add_argument("--user", help="only this user's messages")
    p.set_defaults(func=cmd_retry_failed)
