"""Questions about a user's memory: profile, recall, memory context, why, history.

``profile``, ``recall`` and ``memory_context`` read the projected read model
(fast, possibly a little behind); ``why``, ``history`` and ``profile(as_of=)``
read the user's events (exact, and as of any time).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import attrs

from factledger.application.audit import (
    explain,
    memory_as_of,
    page_limits,
    profile_of,
    said_times,
)
from factledger.application.audit import select_history as select_events
from factledger.application.calls import calls_for
from factledger.application.errors import InvalidInput, NotFound
from factledger.application.ledger import MemoryLedger
from factledger.application.lexical import query_terms
from factledger.application.ports import Embedder, MemoryReadModel, RecallHit, RecallQuery
from factledger.application.results import (
    Explanation,
    HistoryEntry,
    HistoryPage,
    MemoryContext,
    Profile,
    ProfileFact,
    ProfilePreference,
)
from factledger.application.validation import (
    InputLimits,
    clean_text,
    require_page,
    require_top_k,
    require_unit,
    resolve_prefix,
    utc,
)
from factledger.application.writing import require_memory
from factledger.domain.kinds import CLOCKS, HISTORY_KINDS, Clock, HistoryKind
from factledger.domain.language import main_language

MEMORY_TYPES = ("fact", "preference")
# What ``recall`` searches unless told otherwise: memories and what the user said (ADR 0030).
RECALL_TYPES = (*MEMORY_TYPES, "message")
CONTEXT_ITEMS = 5
# Each ranking (by meaning, by words) offers this many candidates to the fusion, at least.
FUSION_DEPTH = 50
# The ranking by meaning counts a quarter of the ranking by words: measured on the LoCoMo and
# MemoryBank-cn dev sets with the offline embedder (ADR 0030: 1:1 lost 6 points of hit@10).
MEANING_WEIGHT = 0.25
WORDS_WEIGHT = 1.0


@attrs.define
class Queries:
    """``profile``, ``recall``, ``memory_context``, ``why`` and ``history``."""

    ledger: MemoryLedger
    read_model: MemoryReadModel
    embedder: Embedder
    limits: InputLimits

    def knows(self, user_id: str) -> bool:
        """Whether anything is recorded for the user (since they were last forgotten, if ever)."""
        return self.ledger.find_memory(self.ledger.user_id(user_id, self.limits)) is not None

    def profile(
        self,
        user_id: str,
        as_of: datetime | None = None,
        clock: Clock = "said",
        *,
        limit: int | None = None,
        offset: int = 0,
    ) -> Profile:
        """The spec's ``get_user_profile``: a page of the active facts and preferences, most
        important first (``Profile`` states the order), with how many there are in all.

        ``limit`` facts and ``limit`` preferences from ``offset`` on (by default the first
        50 facts and 20 preferences; ``limit`` up to ``max_profile_limit``). With ``as_of``,
        computed from the events (no read model), paged alike: what the user had said by
        then (``clock="said"``, the messages' own times), or what the ledger had recorded
        by then (``clock="recorded"``). A user nothing was ever recorded for has an empty
        profile with ``known`` False.
        """
        user_id = self.ledger.user_id(user_id, self.limits)
        require_clock(clock)
        limit, offset = require_page(limit, offset, self.limits)
        known = self.ledger.find_memory(user_id) is not None
        if as_of is not None:
            events = list(self.ledger.user_events(user_id)) if known else []
            memory = memory_as_of(events, utc(as_of), clock)
            return attrs.evolve(profile_of(memory, user_id, limit, offset), known=known)
        facts_limit, preferences_limit = page_limits(limit)
        facts, facts_total = self.read_model.page(user_id, "fact", facts_limit, offset)
        prefs, preferences_total = self.read_model.page(user_id, "preference", preferences_limit, offset)
        return Profile(
            user_id,
            tuple(
                ProfileFact(
                    f.id, f.content, f.category, f.metadata.get("confidence", 0.5), f.metadata.get("times_mentioned", 1)
                )
                for f in facts
            ),
            tuple(ProfilePreference(p.id, p.content, p.category, p.metadata.get("strength", 0.5)) for p in prefs),
            known=known,
            facts_total=facts_total,
            preferences_total=preferences_total,
            offset=offset,
            facts_limit=facts_limit,
            preferences_limit=preferences_limit,
        )

    def recall(
        self,
        user_id: str,
        query: str,
        types: Sequence[str] | None = None,
        top_k: int = 5,
        min_similarity: float | None = None,
    ) -> list[RecallHit]:
        """The user's active facts and preferences and what they said, best evidence first.

        Two rankings over exactly the user's rows, fused by reciprocal rank (ADR 0030): by
        meaning (cosine to the query's vector: facts and preferences; ``min_similarity``,
        by default the embedder's ``recall_threshold``, drops the unrelated ones) and by
        words (BM25 over the terms of ``lexical.terms``: facts, preferences and messages,
        each message with the turn it answered). An item is found when it is near enough in
        meaning or shares a word of the question; with ``min_similarity`` given, only items
        that near in meaning (no message). ``types``: any of fact, preference, message
        (default all three).
        """
        user_id = self.ledger.user_id(user_id, self.limits)
        query = clean_text("query", query, self.limits.query_chars, "max_query_chars")
        chosen = tuple(dict.fromkeys(types)) if types else RECALL_TYPES
        unknown = [t for t in chosen if t not in RECALL_TYPES]
        if unknown:
            raise InvalidInput(f"unknown memory type(s) {unknown}; use 'fact', 'preference' or 'message'")
        top_k = require_top_k(top_k, self.limits)
        threshold = (
            self.embedder.recall_threshold if min_similarity is None else require_unit("min_similarity", min_similarity)
        )
        embedded = tuple(t for t in chosen if t in MEMORY_TYPES)
        vector = None
        if embedded:
            # Attributed to the user: the query is their words, and forgetting them drops its vector.
            # (``embed_query``: a cache that need not keep a query's vector does not.)
            embed = getattr(self.embedder, "embed_query", self.embedder.embed)
            with calls_for(user_id, None, "recall", self.ledger.storage_key):
                vector = embed([query])[0]
        return self.read_model.recall(
            RecallQuery(
                user_id,
                vector,
                tuple(query_terms(query)),
                chosen,
                embedded,
                top_k,
                threshold,
                strict=min_similarity is not None,
                depth=max(FUSION_DEPTH, top_k),
                meaning_weight=MEANING_WEIGHT,
                words_weight=WORDS_WEIGHT,
            )
        )

    def memory_context(
        self, user_id: str, query: str, top_k: int = CONTEXT_ITEMS, language: str = "auto"
    ) -> MemoryContext:
        """What an assistant should know about the user to answer ``query``: the
        profile and the recalled items, and ``.text`` for a system prompt.

        The profile is its default first page on purpose (the 50 most important facts
        and 20 strongest preferences): a prompt has room for that much, and the items
        the query is about are recalled whatever their rank. ``profile.facts_total``
        says how many there are. Recalled: the ``top_k`` best memories and the ``top_k``
        best messages (``recall`` with each kind); ``.text`` shows the memories first, then
        the messages as dated snippets (the date they were said answers "when"). Its headings are
        in ``language``: ``zh``, ``en``, or under ``auto`` the language most of what it shows is in
        (the memories are in the user's, ADR 0029), the query's when it shows nothing.
        """
        if language not in ("auto", "zh", "en"):
            raise InvalidInput(f"language must be 'auto', 'zh' or 'en', got {language!r}")
        profile = self.profile(user_id, limit=None, offset=0)
        hits: list[RecallHit] = []
        if profile.known:
            hits = self.recall(user_id, query, types=MEMORY_TYPES, top_k=top_k)
            hits += self.recall(user_id, query, types=("message",), top_k=top_k)
        if language == "auto":
            shown = [f.text for f in profile.facts] + [p.text for p in profile.preferences]
            shown += [h.record.content for h in hits]
            language = main_language("\n".join(shown) or query)
        return MemoryContext(user_id, query, profile, tuple(hits), language)

    def why(self, user_id: str, item_id: str) -> Explanation:
        """The whole life of a fact or preference: observation, confirmations,
        reinforcements, contests and invalidation, each with its message and provenance.
        ``item_id`` may be a unique prefix."""
        user_id = self.ledger.user_id(user_id, self.limits)
        memory = require_memory(self.ledger, user_id)
        full_id = resolve_prefix(item_id, memory.item_ids(), "fact or preference")
        try:
            return explain(list(self.ledger.user_events(user_id)), full_id)
        except LookupError:
            raise NotFound(f"no fact or preference {full_id!r} for user {user_id!r}") from None

    def history(
        self,
        user_id: str,
        since: datetime | None = None,
        until: datetime | None = None,
        kind: HistoryKind | None = None,
        *,
        offset: int = 0,
        limit: int | None = None,
        clock: Clock = "said",
    ) -> HistoryPage:
        """Events recorded for the user, in recorded order; optionally only those said
        (``clock="recorded"``: recorded) in [since, until], of one kind (message | fact |
        preference), and a page of them. A user nothing was ever recorded for has an empty
        page with ``known`` False (no error, ADR 0036)."""
        user_id = self.ledger.user_id(user_id, self.limits)
        require_clock(clock)
        if kind is not None and kind not in HISTORY_KINDS:
            raise InvalidInput(f"kind must be one of {', '.join(HISTORY_KINDS)}, got {kind!r}")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise InvalidInput(f"offset must be a non-negative integer, got {offset!r}")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise InvalidInput(f"limit must be a positive integer, got {limit!r}")
        if self.ledger.find_memory(user_id) is None:
            return HistoryPage(user_id, (), offset, 0, known=False)
        everything = list(self.ledger.user_events(user_id))
        said = said_times(everything)
        events = select_events(
            everything,
            since=None if since is None else utc(since),
            until=None if until is None else utc(until),
            kind=kind,
            clock=clock,
        )
        page = events[offset:] if limit is None else events[offset : offset + limit]
        entries = tuple(HistoryEntry.of(e, said[e.originator_version]) for e in page)
        return HistoryPage(user_id, entries, offset, len(events))


def require_clock(clock: object) -> Clock:
    """``clock`` as one of the two clocks (a caller's string, typed); InvalidInput naming them otherwise."""
    for known in CLOCKS:
        if clock == known:
            return known
    raise InvalidInput(f"clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
