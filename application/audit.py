"""Reading a user's events back: why an item is what it is, and the profile at a time.

Pure functions over domain events, so they need no read model and give the
same answer however the read model stands.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from factledger.domain.memory import UserMemory, project_memory

NO_VERDICT = {"judge_id": None, "judge_prompt_id": None, "similarity": None, "raw_answer": None}
PROFILE_FACTS = 50
PROFILE_PREFERENCES = 20


def profile_shape(
    user_id: str,
    facts: list[tuple[str, dict[str, Any]]],
    preferences: list[tuple[str, dict[str, Any]]],
) -> dict[str, Any]:
    """The spec's ``get_user_profile`` result from (category, entry) pairs, in order."""
    facts_by_category: dict[str, list[dict[str, Any]]] = {}
    for category, entry in facts:
        facts_by_category.setdefault(category, []).append(entry)
    prefs_by_category: dict[str, list[dict[str, Any]]] = {}
    for category, entry in preferences:
        prefs_by_category.setdefault(category, []).append(entry)
    return {
        "user_id": user_id,
        "facts": facts_by_category,
        "preferences": prefs_by_category,
        "facts_count": len(facts),
        "preferences_count": len(preferences),
    }


def profile_of(memory: UserMemory | None, user_id: str) -> dict[str, Any]:
    """The profile computed from an aggregate (same order as the read model's)."""
    facts = sorted(
        memory.active_facts() if memory else [], key=lambda f: (-f.importance, f.first_seen, f.id)
    )[:PROFILE_FACTS]
    prefs = sorted(
        memory.all_preferences() if memory else [], key=lambda p: (-p.strength, p.first_seen, p.id)
    )[:PROFILE_PREFERENCES]
    return profile_shape(
        user_id,
        [(f.category, {"fact": f.text, "confidence": f.confidence, "times_mentioned": f.times_mentioned, "id": f.id})
         for f in facts],
        [(p.category, {"preference": p.text, "strength": p.strength, "id": p.id}) for p in prefs],
    )


def memory_as_of(events: Iterable[Any], until: datetime) -> UserMemory | None:
    """The aggregate as it stood after every event recorded at or before ``until``."""
    return project_memory([e for e in events if e.timestamp <= until])


def _messages(events: list[Any]) -> dict[str, Any]:
    return {e.message_id: e for e in events if isinstance(e, UserMemory.MessageIngested)}


def _message_summary(messages: dict[str, Any], message_id: str | None) -> dict[str, Any] | None:
    if message_id is None or message_id not in messages:
        return None
    m = messages[message_id]
    return {"message_id": m.message_id, "text": m.text, "session_id": m.session_id, "at": m.at}


def explain(events: list[Any], item_id: str) -> dict[str, Any]:
    """The whole life of one fact or preference, from its events."""
    messages = _messages(events)
    texts = {
        getattr(e, "fact_id", None) or getattr(e, "preference_id", None): e.text
        for e in events
        if isinstance(e, (UserMemory.FactObserved, UserMemory.PreferenceObserved))
    }
    life: dict[str, Any] = {"id": item_id, "confirmations": [], "contested": [], "reinforcements": []}
    for e in events:
        if isinstance(e, UserMemory.FactObserved) and e.fact_id == item_id:
            life.update(
                kind="fact", text=e.text, category=e.category, authority=e.authority,
                observed={
                    "at": e.at, "recorded_at": e.timestamp, "confidence": e.confidence,
                    "extractor_id": e.extractor_id, "prompt_id": e.prompt_id, "actor": e.actor,
                    "session_id": e.session_id, "message": _message_summary(messages, e.message_id),
                },
            )
        elif isinstance(e, UserMemory.FactInvalidated) and e.superseded_by == item_id:
            life["supersedes"] = {"id": e.fact_id, "text": texts.get(e.fact_id), "relation": e.relation}
        elif isinstance(e, UserMemory.FactConfirmed) and e.fact_id == item_id:
            life["confirmations"].append({
                "at": e.last_confirmed, "times_mentioned": e.times_mentioned, "importance": e.importance,
                **e.verdict.as_dict(), "message": _message_summary(messages, e.message_id),
            })
        elif isinstance(e, UserMemory.FactContested) and e.fact_id == item_id:
            life["contested"].append({
                "at": e.at, "challenger": e.challenger_text, "relation": e.relation,
                **e.verdict.as_dict(), "message": _message_summary(messages, e.message_id),
            })
        elif isinstance(e, UserMemory.FactInvalidated) and e.fact_id == item_id:
            life["invalidated"] = {
                "at": e.at, "relation": e.relation, "reason": e.reason, "actor": e.actor,
                "superseded_by": (
                    {"id": e.superseded_by, "text": texts.get(e.superseded_by)} if e.superseded_by else None
                ),
                **(e.verdict.as_dict() if e.verdict else NO_VERDICT),
                "message": _message_summary(messages, e.message_id),
            }
        elif isinstance(e, UserMemory.PreferenceObserved) and e.preference_id == item_id:
            life.update(
                kind="preference", text=e.text, category=e.category,
                observed={
                    "at": e.at, "recorded_at": e.timestamp, "strength": e.strength, "evidence": e.evidence,
                    "extractor_id": e.extractor_id, "prompt_id": e.prompt_id, "session_id": e.session_id,
                    "message": _message_summary(messages, e.message_id),
                },
            )
        elif isinstance(e, UserMemory.PreferenceReinforced) and e.preference_id == item_id:
            life["reinforcements"].append({
                "at": e.at, "observed_strength": e.observed_strength, "old_strength": e.old_strength,
                "new_strength": e.new_strength, "evidence": e.evidence, "times_observed": e.times_observed,
                "similarity": e.similarity, "message": _message_summary(messages, e.message_id),
            })
    if "kind" not in life:
        raise LookupError(item_id)
    if life["kind"] == "fact":
        del life["reinforcements"]
        life["is_active"] = "invalidated" not in life
    else:
        del life["confirmations"], life["contested"]
    return life


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
        e for e in events
        if (since is None or e.timestamp >= since)
        and (until is None or e.timestamp <= until)
        and (wanted is None or isinstance(e, wanted))
    ]
