"""``factledger usage`` and ``factledger retry-failed``: what the LLM cost, and a second chance.

``usage`` reads the ``llm_calls`` table (every chat and embedding call, with
tokens, latency and cache hits, attributed to a user and message);
``retry-failed`` extracts again the messages whose extraction failed (the
LLM was down, or answered nothing usable) and records what it finds.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table
from rich.text import Text

from factledger.entrypoints.terminal import shown


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "usage", parents=[common], help="LLM calls, tokens, latency and cache hits per message",
        description="calls: chat completions sent (cache hits excluded); embedding_calls: embedding requests; "
                    "gated: the message had no fact or preference signal, so it cost no call. "
                    "Calls made for no message (recall queries, projection) are reported as unattributed.",
    )
    p.add_argument("--user", help="only this user's messages (and list those that cost nothing)")
    p.set_defaults(func=cmd_usage)

    p = subparsers.add_parser(
        "retry-failed", parents=[common], help="extract again the messages whose extraction failed",
        description="Messages whose extraction failed are recorded with an ExtractionFailed event; this "
                    "extracts them again with the active extractor. Exit 1 if any still fails.",
    )
    p.add_argument("--user", help="only this user's messages")
    p.set_defaults(func=cmd_retry_failed)


def _usage_report(service: Any, user: str | None) -> dict[str, Any]:
    report = service.usage(user)
    if user:
        # Every message of the user, in order, with its text: also those that cost nothing.
        by_id = {m["message_id"]: m for m in report["messages"]}
        zero = {key: 0 for key in report["totals"] if key != "messages"}
        messages = []
        for entry in (e.to_dict() for e in service.history(user)):
            if entry["event"] == "MessageIngested":
                row = by_id.pop(entry["message_id"], None) or {"message_id": entry["message_id"], "user_id": user, **zero}
                messages.append({**row, "text": entry["text"]})
        messages.extend(by_id.values())  # calls for messages this ledger does not hold
        report["messages"] = messages
        report["totals"]["messages"] = len(messages)
    return report


def cmd_usage(args: argparse.Namespace) -> int:
    from factledger.entrypoints.cli import opened, out, print_json

    with opened(args, check_embedder=False) as service:
        report = _usage_report(service, args.user)
    if args.json:
        print_json(report)
        return 0
    table = Table(title="LLM usage" + (f" of {shown(args.user)}" if args.user else ""))
    for column in ("message", "calls", "embeddings", "cache hits", "tokens in", "tokens out", "ms", "text"):
        table.add_column(column, justify="left" if column in ("message", "text") else "right")
    for m in report["messages"]:
        table.add_row(
            shown(m["message_id"])[:8], str(m["calls"]), str(m["embedding_calls"]), str(m["cache_hits"]),
            str(m["input_tokens"]), str(m["output_tokens"]), str(m["latency_ms"]),
            shown(m.get("text") or "")[:40] + (" (no signal: no call)" if m["gated"] else ""),
        )
    for label, row in (("unattributed", report["unattributed"]), ("total", report["totals"])):
        table.add_row(
            Text(label, style="bold"), str(row["calls"]), str(row["embedding_calls"]), str(row["cache_hits"]),
            str(row["input_tokens"]), str(row["output_tokens"]), str(row["latency_ms"]), "",
        )
    out.print(table)
    return 0


def cmd_retry_failed(args: argparse.Namespace) -> int:
    from factledger.entrypoints.cli import _progress, opened, out, print_json

    with opened(args) as service, _progress(args, "retrying") as progress:
        task = progress.add_task("retry", total=None)
        results = service.retry_failed(
            user_id=args.user, progress=lambda done, total: progress.update(task, completed=done, total=total)
        )
    failed = [r for r in results if r.status == "extraction_failed"]
    summary = {
        "retried": len(results),
        "recorded": sum(1 for r in results if r.status == "recorded"),
        "still_failing": len(failed),
        "results": [r.to_dict() for r in results],
    }
    if args.json:
        print_json(summary)
    else:
        out.print(
            f"retried {summary['retried']} message(s): {summary['recorded']} recorded, "
            f"{summary['still_failing']} still failing"
        )
        for r in results:
            out.print(f"  {shown(r.user_id)} {shown(r.message_id)[:8]}  {r.status}: {r.facts_extracted} facts, "
                      f"{r.preferences_extracted} preferences")
    return 1 if failed else 0
