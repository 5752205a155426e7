"""Audit and replay commands: why, invalidate, restate, replay, ledgers, diff, promote."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from factledger.entrypoints.terminal import shown, styled


def _cli() -> Any:
    # Imported late: cli.py imports this module while building its parser.
    from factledger.entrypoints import cli

    return cli


def _message(m: dict[str, Any] | None) -> str:
    if not m:
        return "(no message: set by an operator)"
    return (f"“{shown(m['text'])}” (session {shown(m['session_id'])}, {m['at']:%Y-%m-%d %H:%M:%S}, "
            f"message {shown(m['message_id'])[:8]})")


def cmd_why(args: argparse.Namespace) -> int:
    cli = _cli()
    with cli.opened(args, check_embedder=False) as service:
        life = service.why(args.user, args.id).to_dict()
    if args.json:
        cli.print_json(life)
        return 0
    out = cli.out
    observed = life["observed"]
    out.print(styled((f"{life['kind']} {life['id']}", "bold"), f": {shown(life['text'])}  ", (life["category"], "cyan")))
    if life["kind"] == "fact":
        out.print(f"  authority: {life['authority']}; {'active' if life['is_active'] else 'no longer active'}")
        out.print(
            f"  observed {observed['at']:%Y-%m-%d %H:%M:%S} with confidence {observed['confidence']} by "
            f"{observed['extractor_id']}" + (f" (prompt {observed['prompt_id']})" if observed["prompt_id"] else "")
            + (f", actor {shown(observed['actor'])}" if observed.get("actor") else "")
        )
        out.print(f"    from {_message(observed['message'])}")
        if "supersedes" in life:
            s = life["supersedes"]
            out.print(f"  it replaced {s['id'][:8]} “{shown(s['text'])}” ({s['relation']})")
        for c in life["confirmations"]:
            out.print(f"  confirmed ({c['times_mentioned']}×, similarity {c['similarity']}, judge {c['judge_id']}) by {_message(c['message'])}")
        for c in life["contested"]:
            out.print(styled(
                "  ", ("contested", "yellow"),
                f" by “{shown(c['challenger'])}” ({c['relation']}, judge {c['judge_id']}: {shown(c['raw_answer'])}) "
                f"in {_message(c['message'])}; kept",
            ))
        if "invalidated" in life:
            inv = life["invalidated"]
            by = inv["superseded_by"]
            out.print(styled(
                "  ", ("invalidated", "red"), f" {inv['at']:%Y-%m-%d %H:%M:%S} ({inv['relation']}): {shown(inv['reason'])}"
            ))
            if by:
                out.print(f"    superseded by {by['id'][:8]} “{shown(by['text'])}”")
            out.print(f"    triggered by {_message(inv['message'])}")
            if inv["judge_id"]:
                prompt = f" (prompt {inv['judge_prompt_id']})" if inv["judge_prompt_id"] else ""
                out.print(f"    judge {inv['judge_id']}{prompt}, similarity {inv['similarity']}: {shown(inv['raw_answer'])}")
            if inv.get("actor"):
                out.print(f"    by {shown(inv['actor'])}")
    else:
        out.print(f"  observed {observed['at']:%Y-%m-%d %H:%M:%S} with strength {observed['strength']} by {observed['extractor_id']}")
        out.print(f"    from {_message(observed['message'])}")
        for r in life["reinforcements"]:
            out.print(f"  strength {r['old_strength']} → {r['new_strength']} (observed {r['observed_strength']}) by {_message(r['message'])}")
    return 0


def cmd_invalidate(args: argparse.Namespace) -> int:
    cli = _cli()
    with cli.opened(args) as service:
        fact_id = service.invalidate(args.user, args.id, args.reason, actor=args.actor)
        life = service.why(args.user, fact_id).to_dict()
    if args.json:
        cli.print_json({"fact_id": fact_id, "text": life["text"], "invalidated": life["invalidated"]})
    else:
        cli.out.print(f"invalidated {fact_id[:8]} “{shown(life['text'])}”: {shown(args.reason)}")
    return 0


def cmd_restate(args: argparse.Namespace) -> int:
    cli = _cli()
    with cli.opened(args) as service:
        outcome = service.restate(args.user, args.text, category=args.category, actor=args.actor)
    if args.json:
        cli.print_json(outcome.to_dict())
    else:
        extra = f" (replaces “{shown(outcome.superseded_text)}”)" if outcome.superseded_text else ""
        cli.out.print(f"recorded {outcome.id[:8]} “{shown(outcome.text)}” as a manual fact{extra}")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    cli = _cli()
    with cli.opened(args, check_embedder=False) as service:
        if args.dry_run:
            estimate = service.estimate_replay(args.extractor, rules=args.rules, prompts=args.prompts, users=args.user)
            if args.json:
                cli.print_json(estimate.to_dict())
            else:
                cli.out.print(
                    f"{estimate.messages} messages; {estimate.llm_messages} would reach the LLM in "
                    f"{estimate.llm_calls} calls, about {estimate.input_tokens} input tokens ({estimate.extractor_id})"
                )
            return 0
        with cli._progress(args, f"replaying into {args.into}") as progress:
            task = progress.add_task("replay", total=None)
            report = service.replay(
                args.into, args.extractor, rules=args.rules, prompts=args.prompts, users=args.user,
                limit=args.limit, progress=lambda d, t: progress.update(task, completed=d, total=t),
            )
    if args.json:
        cli.print_json(report.to_dict())
    else:
        state = "finished" if report.finished else "stopped early: run the same command again to resume"
        cli.out.print(
            f"replayed {report.replayed} messages into {report.into} with {report.extractor_id} "
            f"({report.already_there} already there); {state}"
        )
    return 0


def cmd_ledgers(args: argparse.Namespace) -> int:
    cli = _cli()
    with cli.opened(args, check_embedder=False) as service:
        rows = service.ledgers()
    if args.json:
        cli.print_json(rows)
        return 0
    table = Table(title="ledgers")
    for column in ("name", "schema", "extractor", "events", "replayed up to", "created"):
        table.add_column(column)
    for r in rows:
        table.add_row(r["name"], r["schema"], r["extractor_id"] or "(as ingested)", str(r["events"]),
                      str(r["replay_position"]), f"{r['created_at']:%Y-%m-%d %H:%M}")
    cli.out.print(table)
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    cli = _cli()
    args.ledger = args.a
    with cli.opened(args, check_embedder=False) as service:
        report = service.diff(args.b, user_id=args.user).to_dict()
    if args.json:
        cli.print_json(report)
        return 0
    table = Table(title=f"{report['a']} (A) vs {report['b']} (B)")
    for column in ("user", "only in A", "only in B", "changed", "same"):
        table.add_column(column)
    for row in report["summary"]:
        table.add_row(shown(row["user_id"]), str(row["only_in_a"]), str(row["only_in_b"]), str(row["changed"]), str(row["same"]))
    cli.out.print(table)
    for user in report["users"]:
        for item in user["only_in_a"]:
            cli.out.print(styled(f"{shown(user['user_id'])}: ", ("- A only", "red"),
                                 f" {item['type']} “{shown(item['content'])}” [{item['category']}]"))
        for item in user["only_in_b"]:
            cli.out.print(styled(f"{shown(user['user_id'])}: ", ("+ B only", "green"),
                                 f" {item['type']} “{shown(item['content'])}” [{item['category']}]"))
        for change in user["changed"]:
            what = ", ".join(f"{k} {shown(v[0])} → {shown(v[1])}" for k, v in change["changes"].items())
            cli.out.print(styled(f"{shown(user['user_id'])}: ", ("~ changed", "yellow"),
                                 f" “{shown(change['a']['content'])}”: {what}"))
    return 0


def cmd_promote(args: argparse.Namespace) -> int:
    cli = _cli()
    with cli.opened(args, check_embedder=False) as service:
        kept = service.promote(args.name)
    if args.json:
        cli.print_json({"live": args.name, "previous_live": kept})
    else:
        cli.out.print(f"{args.name} is now the live ledger; the previous one is kept as {kept}")
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    """Add the audit and replay commands to the CLI."""
    p = sub.add_parser("why", parents=[common], help="the whole life of a fact or preference",
                       description="When it was observed, confirmed, contested, reinforced or invalidated, "
                                   "with the messages, extractor, judge, prompt ids, similarity and raw answers.")
    p.add_argument("user")
    p.add_argument("id", help="fact or preference id (a unique prefix is enough)")
    p.set_defaults(func=cmd_why)

    p = sub.add_parser("invalidate", parents=[common], help="mark a fact wrong (manual correction)")
    p.add_argument("user")
    p.add_argument("id", help="fact id (a unique prefix is enough)")
    p.add_argument("--reason", required=True, help="why it is wrong (recorded)")
    p.add_argument("--actor", help="who corrects it (recorded)")
    p.set_defaults(func=cmd_invalidate)

    p = sub.add_parser("restate", parents=[common], help="record a fact set by an operator",
                       description="Records a manual fact; it replaces a similar automatic fact it updates or "
                                   "contradicts, and later messages can only contest it, never invalidate it.")
    p.add_argument("user")
    p.add_argument("text", help="the fact, in the third person (用户住在北京)")
    p.add_argument("--category", default="other", help="fact category (default other)")
    p.add_argument("--actor", help="who states it (recorded)")
    p.set_defaults(func=cmd_restate)

    p = sub.add_parser("replay", parents=[common], help="re-decide recorded messages into another ledger",
                       description="Feeds the recorded messages, in order, with their times, sessions and context, "
                                   "through another extractor (--extractor, --rules, or --prompts for the llm "
                                   "extractor) into the ledger NAME; the source is never written. "
                                   "Run again to resume after an interruption.")
    p.add_argument("--into", required=True, metavar="NAME", help="target ledger (created if missing)")
    p.add_argument("--extractor", choices=["offline", "llm"], help="extractor (default: the active one)")
    p.add_argument("--rules", metavar="PATH", help="a modified offline rule set (TOML; see factledger.infrastructure.rule_overrides)")
    p.add_argument("--user", action="append", help="only this user (repeatable)")
    p.add_argument("--limit", type=int, help="stop after this many messages (resume later)")
    p.add_argument("--dry-run", action="store_true", help="only say how many messages would reach the LLM and the tokens")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("ledgers", parents=[common], help="list ledgers with their extractor and event counts")
    p.set_defaults(func=cmd_ledgers)

    p = sub.add_parser("diff", parents=[common], help="compare two ledgers per user")
    p.add_argument("a", help="ledger A (e.g. live)")
    p.add_argument("b", help="ledger B")
    p.add_argument("--user", help="only this user")
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("promote", parents=[common], help="make a replayed ledger the live one (atomically)")
    p.add_argument("name")
    p.set_defaults(func=cmd_promote)
