"""``LedgerDirectory`` on PostgreSQL: named ledgers in one database (ADR 0007)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from factledger.application.ports import Extractor, LedgerInfo, RelationJudge
from factledger.application.service import LedgerService
from factledger.infrastructure.config import ConfigError, Settings
from factledger.infrastructure.ledgers import LedgerCatalog
from factledger.infrastructure.rule_overrides import OverriddenExtractor, RuleOverrides

EXTRACTORS = ("offline", "llm")


class PostgresLedgerDirectory:
    """Opens, creates and promotes the ledgers of one database and base schema."""

    def __init__(
        self, settings: Settings, catalog: LedgerCatalog, datastore: Any, opener: Callable[..., LedgerService]
    ) -> None:
        self.settings = settings
        self.catalog = catalog
        # The response cache and call log of LLM extractors live beside the live ledger.
        self.datastore = datastore
        # Opens a ledger of the catalog (the bootstrap's ``open_ledger``, given in: the bootstrap
        # builds on this module, not the other way round).
        self.opener = opener

    def entries(self) -> list[LedgerInfo]:
        return self.catalog.entries()

    def create(self, name: str, extractor_id: str, source: str, users: list[str] | None = None) -> LedgerInfo:
        return self.catalog.create(name, extractor_id, source, users)

    def event_count(self, name: str) -> int:
        """The ledger's events (the highest position in its log: events are never deleted)."""
        entry = self.catalog.entry(name)
        return self.catalog.max_position(entry.schema)

    def set_position(self, name: str, position: int, share: tuple[int, int] | None = None) -> None:
        self.catalog.set_position(name, position, share)

    def share_position(self, name: str, share: tuple[int, int]) -> int:
        return self.catalog.share_position(name, share)

    def promote(self, name: str) -> str:
        return self.catalog.promote(name)

    def open(
        self,
        name: str,
        extractor: Extractor | None = None,
        judge: RelationJudge | None = None,
        inline_projection: bool = True,
    ) -> LedgerService:
        settings = attrs.evolve(self.settings, inline_projection=inline_projection)
        # Only a ledger that will be written to must match the active embedder.
        return self.opener(
            settings, extractor=extractor, judge=judge, ledger=name, check_embedder=extractor is not None
        )

    def extractor(self, name: str | None, rules: str | None = None, prompts: str | None = None) -> Extractor:
        return choose_extractor(self.settings, self.datastore, name, rules, prompts)


def choose_extractor(
    settings: Settings, datastore: Any, name: str | None, rules: str | None = None, prompts: str | None = None
) -> Extractor:
    """An extractor by name (``offline``, ``llm``: default the configured one), with an optional
    rules file (offline overrides) or prompts file (llm); ``datastore`` holds the LLM's cache."""
    name = name or ("llm" if prompts or settings.openai_api_key else "offline")
    if name not in EXTRACTORS:
        raise ConfigError(f"unknown extractor {name!r}; choose one of {', '.join(EXTRACTORS)}")
    if prompts is not None:
        if name != "llm":
            raise ConfigError("--prompts applies to the llm extractor; give --extractor llm")
        settings = attrs.evolve(settings, prompts=prompts)
    if name == "llm":
        if not settings.openai_api_key:
            raise ConfigError("the llm extractor needs OPENAI_API_KEY")
        from factledger.infrastructure.llm import llm_parts

        chosen: Extractor = llm_parts(settings, datastore)[0]
    else:
        from factledger.infrastructure.offline import RuleExtractor

        chosen = RuleExtractor()
    if rules is not None:
        chosen = OverriddenExtractor(chosen, RuleOverrides(rules))
    return chosen
