"""Screening what a user sends for secrets before anything is recorded or sent to an LLM (issue 11).

The message and every context turn go through ``sensitive.redact`` with the
installation's policy per kind (``FACTLEDGER_SENSITIVE``): a redacted value
becomes its typed placeholder (``[手机号]``) in the recorded message, hence
in the extraction, every event and every prompt; a refused kind stops the
ingest with ``InvalidInput`` before anything is written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import attrs

from factledger.application.errors import InvalidInput
from factledger.application.sensitive import Kind, Policy, redact
from factledger.domain.values import Turn

DEFAULT_POLICIES: Mapping[Kind, Policy] = {kind: Policy.REDACT for kind in Kind}


@attrs.frozen
class Screened:
    """The text to record, and how many values of each kind were replaced."""

    message: str
    turns: tuple[Turn, ...]
    redacted: dict[str, int]


def screen_text(where: str, text: str, policies: Mapping[Kind, Policy], counts: Counter[str]) -> str:
    """``text`` with its secrets handled by ``policies``; counts what was replaced."""
    result = redact(text, policies)
    if result.refused:
        kinds = ", ".join(kind.value for kind in result.refused)
        raise InvalidInput(
            f"{where} contains {kinds}, which FACTLEDGER_SENSITIVE refuses; nothing was recorded "
            "(remove it, or set that kind to redact or keep)"
        )
    counts.update({kind.value: n for kind, n in result.counts.items()})
    return result.text


def screen(message: str, turns: Sequence[Turn], policies: Mapping[Kind, Policy]) -> Screened:
    """Screen a message and its context turns."""
    counts: Counter[str] = Counter()
    clean = screen_text("the message", message, policies, counts)
    clean_turns = tuple(
        Turn(role=turn.role, content=screen_text(f"context turn {n}", turn.content, policies, counts))
        for n, turn in enumerate(turns, start=1)
    )
    return Screened(clean, clean_turns, dict(sorted(counts.items())))


def parse_policies(name: str, value: object) -> dict[Kind, Policy]:
    """``redact`` | ``keep`` | ``refuse`` for every kind, then ``kind=policy`` overrides, comma-separated:
    ``"redact,email=keep,password=refuse"``."""
    policies = dict(DEFAULT_POLICIES)
    kinds = ", ".join(kind.value for kind in Kind)
    choices = ", ".join(policy.value for policy in Policy)
    for part in (p.strip() for p in str(value).split(",")):
        if not part:
            continue
        kind_name, _, policy_name = part.rpartition("=")
        try:
            policy = Policy(policy_name.strip().lower())
        except ValueError:
            raise InvalidInput(f"{name}: {policy_name.strip()!r} is not a policy ({choices})") from None
        if not kind_name:
            policies = dict.fromkeys(Kind, policy)
            continue
        try:
            policies[Kind(kind_name.strip().lower())] = policy
        except ValueError:
            raise InvalidInput(f"{name}: {kind_name.strip()!r} is not a kind ({kinds})") from None
    return policies
