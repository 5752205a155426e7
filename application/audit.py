"""Reading a user's events back: why an item is what it is, the profile at a time, the history.

Pure functions over domain events, so they need no read model and give the
same answer however the read model stands.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from factledger.application.results import (
    Confirmation,
    Contest,
    Explanation,
    Invalidation,
    ItemRef,
    MessageRef,
    Observation,
    Profile,
    ProfileFact,
    ProfilePreference,
    Reinforcement,
)
from factledger.domain.memory import UserMemory, project_memory

PROFILE_FACTS = 50
PROFILE_PREFERENCES = 20


def profile_of(memory: UserMemory | None, user_id: str) -> Profile:
    """The profile computed from an aggregate (same order as the read model's)."""
    if memory is None:
        return Profile(user_id, known=False)
    facts = sorted(memory.active_facts(), key=lambda f: (-f.importance, f.first_seen, f.id))[:PROFILE_FACTS]
    prefs = sorted(memory.all_preferences(), key=lambda p: (-p.strength, p.first_seen, p.id))[:PROFILE_PREFERENCES]
    return Profile(
        user_id,
        tuple(ProfileFact(f.id, f.text, f.category, f.confidence, f.times_mentioned) for f in facts),
        tuple(ProfilePreference(p.id, p.text, p.category, p.strength) for p in prefs),
    )


def memory_as_of(events: Iterable[Any], until: datetime) -> UserMemory | None:
    """The aggregate as it stood after every event recorded at or before ``until``."""
    return project_memory([e for e in events if e.timestamp <= until])


def explain(events: Sequence[Any], item_id: str) -> Explanation:
    """The whole life of one fact or preference, from its events."""
    messages = {e.message_id: e for e in events if isinstance(e, UserMemory.MessageIngested)}
    texts = {
        e.fact_id if isinstance(e, UserMemory.FactObserved) else e.preference_id: e.text
        for e in events
        if isinstance(e, (UserMemory.FactObserved, UserMemory.PreferenceObserved))
    }

    def message(message_id: str | None) -> MessageRef | None:
        m = messages.get(message_id) if message_id is not None else None
        return MessageRef(m.message_id, m.text, m.session_id, m.at) if m is not None else None

    found: dict[str, Any] = {}
    confirmations: list[Confirmation] = []
    contests: list[Contest] = []
    reinforcements: list[Reinforcement] = []
    for e in events:
        if isinstance(e, UserMemory.FactObserved) and e.fact_id == item_id:
            found.update(
                kind="fact",
                text=e.text,
                category=e.category,
                authority=e.authority,
                observed=Observation(
                    at=e.at,
                    recorded_at=e.timestamp,
                    extractor_id=e.extractor_id,
                    prompt_id=e.prompt_id,
                    session_id=e.session_id,
                    message=message(e.message_id),
                    confidence=e.confidence,
                    actor=e.actor,
                ),
            )
        elif isinstance(e, UserMemory.FactInvalidated) and e.superseded_by == item_id:
            found["supersedes"] = ItemRef(e.fact_id, texts.get(e.fact_id), e.relation)
        elif isinstance(e, UserMemory.FactConfirmed) and e.fact_id == item_id:
            confirmations.append(
                Confirmation(e.last_confirmed, e.times_mentioned, e.importance, e.verdict, message(e.message_id))
            )
        elif isinstance(e, UserMemory.FactContested) and e.fact_id == item_id:
            contests.append(Contest(e.at, e.challenger_text, e.relation, e.verdict, message(e.message_id)))
        elif isinstance(e, UserMemory.FactInvalidated) and e.fact_id == item_id:
            found["invalidated"] = Invalidation(
                at=e.at,
                relation=e.relation,
                reason=e.reason,
                actor=e.actor,
                superseded_by=ItemRef(e.superseded_by, texts.get(e.superseded_by)) if e.superseded_by else None,
                verdict=e.verdict,
                message=message(e.message_id),
            )
        elif isinstance(e, UserMemory.PreferenceObserved) and e.preference_id == item_id:
            found.update(
                kind="preference",
                text=e.text,
                category=e.category,
                observed=Observation(
                    at=e.at,
                    recorded_at=e.timestamp,
                    extractor_id=e.extractor_id,
                    prompt_id=e.prompt_id,
                    session_id=e.session_id,
                    message=message(e.message_id),
                    strength=e.strength,
                    evidence=tuple(e.evidence),
                ),
            )
        elif isinstance(e, UserMemory.PreferenceReinforced) and e.preference_id == item_id:
            reinforcements.append(
                Reinforcement(
                    at=e.at,
                    observed_strength=e.observed_strength,
                    old_strength=e.old_strength,
                    new_strength=e.new_strength,
                    evidence=tuple(e.evidence),
                    times_observed=e.times_observed,
                    similarity=e.similarity,
                    message=message(e.message_id),
                )
            )
    if "kind" not in found:
        raise LookupError(item_id)
    return Explanation(
        id=item_id,
        confirmations=tuple(confirmations),
        contested=tuple(contests),
        reinforcements=tuple(reinforcements),
        **found,
    )


HISTORY_KINDS = {
    "message": (UserMemory.MessageIngested, UserMemory.ExtractionRecorded, UserMemory.ExtractionFailed),
    "fact": (UserMemory.FactObserved, UserMemory.FactConfirmed, UserMemory.FactInvalidated, UserMemory.FactContested),
    "preference": (UserMemory.PreferenceObserved, UserMemory.PreferenceReinforced),
}


def select_history(
    events: Iterable[Any], since: datetime | None = None, until: datetime | None = None, kind: str | None = None
) -> list[Any]:
    """Events recorded in [since, until] of one kind (message | fact | preference), oldest first."""
    wanted = HISTORY_KINDS[kind] if kind else None
    return [
        e
        for e in events
        if (since is None or e.timestamp >= since)
        and (until is None or e.timestamp <= until)
        and (wanted is None or isinstance(e, wanted))
    ]
