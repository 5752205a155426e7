"""Auditing and correcting a user's memory: ``why``, ``invalidate`` and ``restate``."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from factledger.entrypoints.cli.present import (
    human,
    message_line,
    out,
    print_json,
    quoted,
    short,
    shown,
    styled,
    when,
)
from factledger.entrypoints.cli.session import opened


def _verdict(step: Mapping[str, Any]) -> str:
    """The judge that decided a step, its prompt, the similarity and its raw answer."""
    prompt = f" (prompt {human(step['judge_prompt_id'])})" if step.get("judge_prompt_id") else ""
    return (
        f"judge {human(step['judge_id'])}{prompt}, similarity {human(step['similarity'])}: {human(step['raw_answer'])}"
    )


def _print_rules(indent: str, step: Mapping[str, Any] | None) -> None:
    """The ids of the rules that decided a step (issue 27), when rules decided it."""
    if step and step.get("rules"):
        out.print(f"{indent}rules: {', '.join(shown(rule) for rule in step['rules'])}")


def _print_fact(life: Mapping[str, Any]) -> None:
    observed = life["observed"]
    out.print(f"  authority: {human(life['authority'])}")
    out.print(f"  active: {human(life['is_active'])}")
    out.print(
        f"  observed {when(observed['at'])} with confidence {human(observed['confidence'])} by "
        f"{human(observed['extractor_id'])} (prompt {human(observed['prompt_id'])})"
        + (f", actor {human(observed['actor'])}" if observed.get("actor") else "")
    )
    out.print(f"    from {message_line(observed['message'])}")
    _print_rules("    ", observed)
    if "supersedes" in life:
        s = life["supersedes"]
        out.print(f"  it replaced {short(s['id'])} {quoted(s['text'])} ({human(s['relation'])})")
        _print_rules("    ", s)
    for c in life["confirmations"]:
        out.print(f"  confirmed {when(c['at'])} (mentioned {c['times_mentioned']}×; {_verdict(c)})")
        out.print(f"    by {message_line(c['message'])}")
        _print_rules("    ", c)
    for c in life["contested"]:
        out.print(
            styled(
                "  ",
                ("contested", "yellow"),
                f" {when(c['at'])} by {quoted(c['challenger'])} ({human(c['relation'])}): kept",
            )
        )
        out.print(f"    {_verdict(c)}")
        _print_rules("    ", c)
        out.print(f"    in {message_line(c['message'])}")
    _print_invalidation(life)


def _print_invalidation(life: Mapping[str, Any]) -> None:
    if "invalidated" in life:
        inv = life["invalidated"]
        out.print(
            styled(
                "  ", ("invalidated", "red"), f" {when(inv['at'])} ({human(inv['relation'])}): {human(inv['reason'])}"
            )
        )
        if inv["superseded_by"]:
            by = inv["superseded_by"]
            out.print(f"    superseded by {short(by['id'])} {quoted(by['text'])}")
        out.print(f"    triggered by {message_line(inv['message'])}")
        if inv["judge_id"]:
            out.print(f"    {_verdict(inv)}")
        _print_rules("    ", inv)
        if inv.get("actor"):
            out.print(f"    by {human(inv['actor'])}")


def _print_preference(life: Mapping[str, Any]) -> None:
    observed = life["observed"]
    out.print(
        f"  observed {when(observed['at'])} with strength {human(observed['strength'])} by "
        f"{human(observed['extractor_id'])} (prompt {human(observed['prompt_id'])})"
    )
    out.print(f"    from {message_line(observed['message'])}")
    if observed.get("evidence"):
        out.print(f"    evidence: {human(observed['evidence'])}")
    _print_rules("    ", observed)
    if "supersedes" in life:
        s = life["supersedes"]
        out.print(f"  it replaced {short(s['id'])} {quoted(s['text'])}")
        _print_rules("    ", s)
    for r in life["reinforcements"]:
        out.print(
            f"  reinforced {when(r['at'])}: strength {human(r['old_strength'])} → {human(r['new_strength'])} "
            f"(observed {human(r['observed_strength'])}, similarity {human(r['similarity'])})"
        )
        out.print(f"    by {message_line(r['message'])}")
    _print_invalidation(life)


def cmd_why(args: argparse.Namespace) -> int:
    """The whole life of a fact or preference, with the message and provenance of every step."""
    with opened(args, check_embedder=False) as service:
        life = service.why(args.user, args.id).to_dict()
    if args.json:
        print_json(life)
        return 0
    out.print(
        styled(
            (f"{life['kind']} {life['id']}", "bold"),
            f": {shown(life['text'])}  ",
            (f"[{shown(life['category'])}]", "cyan"),
        )
    )
    if life["kind"] == "fact":
        _print_fact(life)
    else:
        _print_preference(life)
    return 0


def cmd_invalidate(args: argparse.Namespace) -> int:
    """An operator marks a fact wrong."""
    with opened(args) as service:
        fact_id = service.invalidate(args.user, args.id, args.reason, actor=args.actor)
        life = service.why(args.user, fact_id).to_dict()
    if args.json:
        print_json({"fact_id": fact_id, "text": life["text"], "invalidated": life["invalidated"]})
    else:
        out.print(f"invalidated {short(fact_id)} {quoted(life['text'])}: {shown(args.reason)}")
    return 0


def cmd_restate(args: argparse.Namespace) -> int:
    """An operator records a fact that nothing automatic will override."""
    with opened(args) as service:
        outcome = service.restate(args.user, args.text, category=args.category, actor=args.actor)
    if args.json:
        print_json(outcome.to_dict())
    else:
        replaces = f" (replaces {quoted(outcome.superseded_text)})" if outcome.superseded_text else ""
        out.print(f"recorded {short(outcome.id)} {quoted(outcome.text)} as a manual fact{replaces}")
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    """Add ``why``, ``invalidate`` and ``restate``."""
    p = sub.add_parser(
        "why",
        parents=[common],
        help="the whole life of a fact or preference",
        description="When it was observed, confirmed, contested, reinforced or invalidated, "
        "with the messages, extractor, judge, prompt ids, similarity, raw answers and the ids of the "
        "offline rules that decided each step.",
    )
    p.add_argument("user")
    p.add_argument("id", help="fact or preference id (a unique prefix is enough)")
    p.set_defaults(func=cmd_why)

    p = sub.add_parser("invalidate", parents=[common], help="mark a fact wrong (manual correction)")
    p.add_argument("user")
    p.add_argument("id", help="fact id (a unique prefix is enough)")
    p.add_argument("--reason", required=True, help="why it is wrong (recorded)")
    p.add_argument("--actor", help="who corrects it (recorded)")
    p.set_defaults(func=cmd_invalidate)

    p = sub.add_parser(
        "restate",
        parents=[common],
        help="record a fact set by an operator",
        description="Records a manual fact; it replaces a similar automatic fact it updates or "
        "contradicts, and later messages can only contest it, never invalidate it.",
    )
    p.add_argument("user")
    p.add_argument("text", help="the fact, in the third person (用户住在北京)")
    p.add_argument("--category", default="other", help="fact category (default other)")
    p.add_argument("--actor", help="who states it (recorded)")
    p.set_defaults(func=cmd_restate)
