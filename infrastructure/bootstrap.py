"""Wires a ``LedgerService`` to PostgreSQL (embedded unless ``DATABASE_URL`` is set)."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.sql import SQL, Identifier, Literal

from factledger.application.components import Components, Tuning
from factledger.application.ledger import MemoryLedger
from factledger.application.ports import Embedder, Extractor, RelationJudge
from factledger.application.service import LedgerService
from factledger.infrastructure.config import ConfigError, Settings
from factledger.infrastructure.directory import PostgresLedgerDirectory
from factledger.infrastructure.embedded import start_embedded_postgres
from factledger.infrastructure.embedding_cache import CachedEmbedder
from factledger.infrastructure.encryption import check_key, cipher_env
from factledger.infrastructure.erasure import PostgresEraser
from factledger.infrastructure.event_store import DATABASE_ROLE, LedgerRecorder, connection_options
from factledger.infrastructure.ledgers import LIVE, LedgerCatalog
from factledger.infrastructure.llm.usage import UsageLog
from factledger.infrastructure.memory import (
    InMemoryEraser,
    InMemoryLedgerDirectory,
    InMemoryRecorder,
    memory_store,
    view_for,
)
from factledger.infrastructure.save_hooks import NO_HOOKS, SaveHooks
from factledger.infrastructure.tenant_roles import run_as_schema_role
from factledger.projections.postgres_view import PostgresMemoryView
from factledger.projections.projector import Projector

logger = logging.getLogger(__name__)


def message_text_hash(settings: Settings) -> Callable[[str], str]:
    """The hash kept beside a message id: keyed (the installation secret), since texts are personal."""
    secret = settings.installation_secret()
    return lambda text: secret.hexdigest("message-text", text)


def database_uri(settings: Settings) -> str:
    """The server to use: ``DATABASE_URL``, or the embedded one under ``FACTLEDGER_HOME``."""
    if settings.database_url:
        return settings.database_url
    return start_embedded_postgres(settings.home)


def eventsourcing_env(
    uri: str, schema: str, settings: Settings | None = None, role: str | None = None
) -> dict[str, str]:
    """The eventsourcing library's PostgreSQL settings for a connection URI (``role``: the one its
    connections run as, a tenant's)."""
    settings = settings or Settings()
    try:
        parts = conninfo_to_dict(uri)
    except psycopg.ProgrammingError as exc:
        raise ConfigError(f"DATABASE_URL is not a valid PostgreSQL URI: {exc}") from None
    return {
        "PERSISTENCE_MODULE": "factledger.infrastructure.event_store:Factory",
        "POSTGRES_DBNAME": str(parts.get("dbname") or parts.get("user") or "postgres"),
        "POSTGRES_HOST": str(parts.get("host") or "localhost"),
        "POSTGRES_PORT": str(parts.get("port") or "5432"),
        "POSTGRES_USER": str(parts.get("user") or "postgres"),
        "POSTGRES_PASSWORD": str(parts.get("password") or ""),
        "POSTGRES_SCHEMA": schema,
        # Without these a stuck writer blocks every ingest forever: a lock wait,
        # a statement, and a transaction left idle (a paused or hung client) all end.
        "POSTGRES_LOCK_TIMEOUT": str(max(1, round(settings.lock_timeout))),
        "POSTGRES_STATEMENT_TIMEOUT": str(settings.statement_timeout),
        "POSTGRES_IDLE_IN_TRANSACTION_SESSION_TIMEOUT": "5",
        "POSTGRES_POOL_SIZE": "2",
        "POSTGRES_MAX_OVERFLOW": "4",
        "CREATE_TABLE": "y",
        **({DATABASE_ROLE: role} if role else {}),
        **cipher_env(settings.encryption_key),
    }


def mapper_env(settings: Settings) -> dict[str, str]:
    """An environment for decoding events outside a ledger (the same transcodings and cipher)."""
    return {"PERSISTENCE_MODULE": "eventsourcing.popo", **cipher_env(settings.encryption_key)}


# pg_advisory_lock key ("fact") taken by every process while it creates what it needs.
STARTUP_LOCK = 0x66616374
STARTUP_WAIT_S = 120


@contextmanager
def startup_lock(uri: str) -> Iterator[psycopg.Connection[Any]]:
    """Serialise the creation of extensions, schemas, types and tables across processes.

    ``IF NOT EXISTS`` is not enough: two sessions creating the same type or
    extension at once fail on a unique index of the catalogue.
    """
    try:
        conn = psycopg.connect(uri, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise ConfigError(f"cannot connect to PostgreSQL at DATABASE_URL: {exc}") from None
    except psycopg.ProgrammingError as exc:
        raise ConfigError(f"DATABASE_URL is not a valid PostgreSQL URI: {exc}") from None
    with conn:
        conn.execute(SQL("SET lock_timeout = {}").format(Literal(f"{STARTUP_WAIT_S}s")))
        conn.execute("SELECT pg_advisory_lock(%s)", (STARTUP_LOCK,))
        try:
            yield conn
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (STARTUP_LOCK,))


def prepare_database(conn: psycopg.Connection[Any], schema: str) -> None:
    """pgvector and the ledger's schema must exist before any table does."""
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    conn.execute(SQL("CREATE SCHEMA IF NOT EXISTS {}").format(Identifier(schema)))


def offline_parts(settings: Settings) -> tuple[Extractor, RelationJudge, Embedder]:
    from factledger.infrastructure.offline import HashedNgramEmbedder, RuleExtractor, RuleJudge

    return RuleExtractor(), RuleJudge(), HashedNgramEmbedder(dimension=settings.offline_dimension)


def free_judge() -> RelationJudge:
    """The judge that costs no call (the offline rules): where an LLM extraction already related
    its facts to the known ones, it only looks for duplicates (ADR 0019)."""
    from factledger.infrastructure.offline import RuleJudge

    return RuleJudge()


def default_parts(
    settings: Settings, datastore: Any, usage: UsageLog | None = None
) -> tuple[Extractor, RelationJudge, Embedder]:
    """LLM-backed parts when an API key is configured (metered into ``usage``), else the offline ones."""
    if settings.openai_api_key:
        from factledger.infrastructure.llm import llm_parts

        return llm_parts(settings, datastore, usage)
    return offline_parts(settings)


class OfflineRulesWarning(UserWarning):
    """The offline rules decide: no LLM is configured (shown once per place it is raised from,
    as Python's warning filters show any warning; ``-W`` and ``warnings.filterwarnings`` apply)."""


def warn_offline(service: LedgerService) -> None:
    """Say that the offline rules decide: an embedding backend sees no CLI notice."""
    warnings.warn(
        f"factledger is using its offline rule extractor ({service.extractor.extractor_id}): "
        "set OPENAI_API_KEY for an LLM",
        OfflineRulesWarning,
        stacklevel=3,
    )


def describe_components(service: LedgerService) -> dict[str, str]:
    """Which extractor, judge and embedder are active: the CLI shows this."""
    return {
        "extractor": service.extractor.extractor_id,
        "judge": service.judge.judge_id,
        "embedder": service.embedder.embedder_id,
    }


def open_ledger(
    settings: Settings | None = None,
    *,
    extractor: Extractor | None = None,
    judge: RelationJudge | None = None,
    embedder: Embedder | None = None,
    check_embedder: bool = True,
    ledger: str | None = None,
    warn_if_offline: bool = True,
    **overrides: Any,
) -> LedgerService:
    """Open the ledger described by ``settings`` (default: environment and config file).

    ``backend="memory"`` (``FACTLEDGER_BACKEND``) keeps everything in this
    process, in the settings' ``memory_database``: opening the same settings (or
    settings evolved from them) again sees the same data. The default is
    PostgreSQL (``DATABASE_URL``, else an embedded server). ``check_embedder=False``:
    skip the check that the read model was built by the active embedder, for
    callers that do not touch its vectors (reading events, listing, replaying
    from it) or are about to rebuild it. ``ledger``: a named ledger (see
    ``factledger ledgers``) instead of the live one. With no LLM configured, an
    ``OfflineRulesWarning`` says that the offline rules decide, unless
    ``warn_if_offline`` is False (the CLI says so itself).
    """
    if settings is not None and overrides:
        raise TypeError(f"open_ledger got both settings and overrides: {', '.join(overrides)}")
    settings = settings or Settings.load(**overrides)
    chosen = ChosenParts(extractor, judge, embedder)
    build = components_in_memory if settings.backend == "memory" else components_on_postgres
    service = LedgerService(build(settings, chosen, check_embedder, ledger or LIVE))
    if service.offline and warn_if_offline:
        warn_offline(service)
    return service


@attrs.frozen
class ChosenParts:
    """The parts a caller chose; the others are the configured ones (``default_parts``)."""

    extractor: Extractor | None = None
    judge: RelationJudge | None = None
    embedder: Embedder | None = None

    def completed(
        self, settings: Settings, datastore: Any, usage: UsageLog | None = None
    ) -> tuple[Extractor, RelationJudge, Embedder]:
        extractor, judge, embedder = self.extractor, self.judge, self.embedder
        if extractor is None or judge is None or embedder is None:
            default_extractor, default_judge, default_embedder = default_parts(settings, datastore, usage)
            extractor, judge, embedder = (
                extractor or default_extractor,
                judge or default_judge,
                embedder or default_embedder,
            )
        return extractor, judge, embedder


def tuning(settings: Settings) -> Tuning:
    """What the settings say about deciding and limits: the same on every backend."""
    return Tuning(
        inline_projection=settings.inline_projection,
        fact_similarity=settings.fact_similarity,
        preference_similarity=settings.preference_similarity,
        limits=settings.limits,
        policies=settings.sensitive_policies,
        bulk_workers=settings.bulk_workers,
        candidate_cache_bytes=settings.candidate_cache_mb * 1024 * 1024,
    )


def save_hooks(cached: CachedEmbedder, usage: UsageLog | None, projector: Projector, inline: bool) -> SaveHooks:
    """One commit a message: the vectors deciding made, the call log's rows, and the read model's rows
    when it is projected inline, go in with the events (ADR 0020). Every backend's recorder gets these."""
    return SaveHooks(
        written_in_save=(cached.write_within_save, *([usage.write_within_save] if usage else [])),
        projected_in_save=(projector.projection_for_save,) if inline else (),
        within_save=(projector.project_within_save,) if inline else (),
        after_commit=(usage.committed,) if usage else (),
    )


def components_on_postgres(settings: Settings, chosen: ChosenParts, check_embedder: bool, name: str) -> Components:
    """The parts of a ledger on PostgreSQL (``DATABASE_URL``, else the embedded server)."""
    uri = database_uri(settings)
    with startup_lock(uri) as conn:
        prepare_database(conn, settings.schema)
        role = run_as_schema_role(conn, settings.schema)
        options = connection_options(settings.statement_timeout, settings.lock_timeout, role)
        catalog = LedgerCatalog(uri, settings.schema, options)
        catalog.ensure()
        has_events = any(catalog.max_position(e.schema) for e in catalog.entries())
        check_key(conn, settings.schema, settings.encryption_key, has_events)
        entry = catalog.entry(name)
        if entry.schema != settings.schema:
            prepare_database(conn, entry.schema)
        memory_ledger = MemoryLedger(
            env=eventsourcing_env(uri, entry.schema, settings, role), snapshot_interval=settings.snapshot_interval
        )
        memory_ledger.text_hash = message_text_hash(settings)
        try:
            recorder = memory_ledger.recorder
            assert isinstance(recorder, LedgerRecorder)
            recorder.ensure_message_index(memory_ledger.recorded_message_ids)
            datastore = recorder.datastore
            # The call log the ledger's own LLM client meters into, holding a message's
            # readings for its save (written with its events, ADR 0020).
            usage = UsageLog(datastore, settings.schema, hold=True)
            extractor, judge, embedder = chosen.completed(settings, datastore, usage)
            cached = CachedEmbedder(embedder, datastore, settings.installation_secret())
            view = _read_model(datastore, cached, memory_ledger.name, recorder, entry.schema, check_embedder)
        except Exception:
            memory_ledger.close()
            raise
    projector = Projector(memory_ledger, view, cached)
    # Deciding's vectors wait for the save that records them (a save hook writes them).
    cached.defer_writes = True
    recorder.attach(save_hooks(cached, usage, projector, settings.inline_projection))
    return Components(
        memory_ledger,
        extractor,
        judge,
        cached,
        view,
        projector,
        ledger_name=entry.name,
        directory=PostgresLedgerDirectory(settings, catalog, datastore, open_ledger),
        usage=usage,
        eraser=_eraser(settings, uri, catalog),
        free_judge=free_judge(),
        tuning=tuning(settings),
    )


def _eraser(settings: Settings, uri: str, catalog: LedgerCatalog) -> PostgresEraser:
    """Forgetting on PostgreSQL: across every ledger of the catalog, with the keys it erases by."""
    return PostgresEraser(uri, catalog, settings.installation_secret(), mapper_env(settings), catalog.options)


def _read_model(
    datastore: Any, cached: CachedEmbedder, name: str, recorder: LedgerRecorder, schema: str, check_embedder: bool
) -> PostgresMemoryView:
    """The ledger's read model, its table made (or checked against the embedder) now."""
    view = PostgresMemoryView(
        datastore,
        embedder_id=cached.embedder_id,
        dimension=cached.dimension,
        application_name=name,
        channel=recorder.channel_name,
        events_table=Identifier(schema, recorder.events_table_name),
    )
    view.create_table(check_embedder=check_embedder)
    return view


def components_in_memory(settings: Settings, chosen: ChosenParts, check_embedder: bool, name: str) -> Components:
    """The parts of a ledger kept in this process, in the settings' ``memory_database``."""
    store = memory_store(settings)
    entry = store.get(name)
    entry.ledger.text_hash = message_text_hash(settings)
    extractor, judge, embedder = chosen.completed(settings, None)
    cached = CachedEmbedder(embedder, None, settings.installation_secret(), shared=store.embeddings)
    view = view_for(entry, cached.embedder_id, cached.dimension, check_embedder)
    projector = Projector(entry.ledger, view, cached)
    # The same hooks as on PostgreSQL. Unlike there, the ledger object (and so its recorder) is the
    # store's, shared by every open of it: the first open gives the hooks, later opens find them.
    recorder = entry.ledger.recorder
    assert isinstance(recorder, InMemoryRecorder)
    if recorder.hooks is NO_HOOKS:
        recorder.attach(save_hooks(cached, None, projector, settings.inline_projection))
    return Components(
        entry.ledger,
        extractor,
        judge,
        cached,
        view,
        projector,
        ledger_name=entry.info.name,
        directory=InMemoryLedgerDirectory(settings, store, open_ledger),
        eraser=InMemoryEraser(store, settings.installation_secret()),
        free_judge=free_judge(),
        tuning=tuning(settings),
    )
