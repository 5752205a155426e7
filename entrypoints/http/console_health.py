"""The health page: the read model's lag and quarantined events, LLM calls and tokens per day
(a small inline SVG chart, and the same numbers as a table), and errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from factledger.entrypoints.http.console_html import esc, table
from factledger.entrypoints.http.console_session import Visitor
from factledger.entrypoints.http.console_text import say
from factledger.entrypoints.http.metrics import ERRORS

USAGE_DAYS = 30
QUARANTINE_SHOWN = 20
CHART_WIDTH, CHART_HEIGHT, CHART_TOP = 640, 160, 16


def health_page(visitor: Visitor) -> tuple[str, str]:
    lang, service = visitor.language, visitor.caller.service
    status = service.read_model_status().to_dict()
    model = table(
        [say(lang, "read_model"), ""],
        [
            [esc(say(lang, "lag")), f"<strong>{esc(status['lag'])}</strong>"],
            [esc(say(lang, "position")), esc(status["position"])],
            [esc(say(lang, "head")), esc(status["head"])],
            [esc("embedder"), esc(status["embedder_id"])],
            [esc(say(lang, "quarantined")), esc(status["quarantined"])],
        ],
    )
    quarantined = service.quarantined_events(QUARANTINE_SHOWN)
    days = service.usage_by_day(USAGE_DAYS)
    parts = [
        model,
        _quarantine(lang, quarantined) if quarantined else "",
        f"<h2>{esc(say(lang, 'llm_per_day'))}</h2>",
        _usage(lang, days) if days is not None else f"<p>{esc(say(lang, 'no_usage_log'))}</p>",
        f"<h2>{esc(say(lang, 'errors'))}</h2>",
        _errors(lang, days or [], len(service.ledger.users_with_failures())),
    ]
    return say(lang, "health"), "".join(parts)


def _quarantine(lang: str, rows: list[dict[str, Any]]) -> str:
    headers = sorted({key for row in rows for key in row})
    cells = [[esc(str(row.get(key, ""))[:300]) for key in headers] for row in rows]
    return f"<h2>{esc(say(lang, 'quarantined'))}</h2>" + table(headers, cells)


def _usage(lang: str, days: list[dict[str, Any]]) -> str:
    if not days:
        return f"<p>{esc(say(lang, 'none'))}</p>"
    rows = [
        [esc(d["day"]), esc(d["calls"]), esc(d["embedding_calls"]), esc(d["input_tokens"] + d["output_tokens"])]
        for d in days
    ]
    headers = [say(lang, "day"), say(lang, "calls"), say(lang, "embedding_calls"), say(lang, "tokens")]
    return usage_chart(lang, days) + table(headers, rows)


def usage_chart(lang: str, days: Sequence[dict[str, Any]]) -> str:
    """Bars of chat and embedding calls per day, and a line of tokens (each scaled to its own
    maximum); every bar and point has a title with its numbers."""
    calls = [d["calls"] + d["embedding_calls"] for d in days]
    tokens = [d["input_tokens"] + d["output_tokens"] for d in days]
    most_calls, most_tokens = max(max(calls), 1), max(max(tokens), 1)
    step = CHART_WIDTH / len(days)
    plot = CHART_HEIGHT - CHART_TOP
    shapes, points = [], []
    for n, day in enumerate(days):
        height = plot * calls[n] / most_calls
        x = n * step
        label = f"{day['day']}: {calls[n]} {say(lang, 'calls')}, {tokens[n]} {say(lang, 'tokens')}"
        shapes.append(
            f'<rect x="{x + step * 0.15:.1f}" y="{CHART_HEIGHT - height:.1f}" width="{step * 0.7:.1f}" '
            f'height="{height:.1f}" fill="#8db4e2"><title>{esc(label)}</title></rect>'
        )
        points.append(f"{x + step / 2:.1f},{CHART_HEIGHT - plot * tokens[n] / most_tokens:.1f}")
    line = f'<polyline points="{" ".join(points)}" fill="none" stroke="#c0392b" stroke-width="2"/>'
    legend = (
        f'<text x="4" y="12" font-size="11" fill="#1f3a5f">{esc(say(lang, "calls"))} ≤ {most_calls}</text>'
        f'<text x="{CHART_WIDTH - 4}" y="12" font-size="11" fill="#c0392b" text-anchor="end">'
        f"{esc(say(lang, 'tokens'))} ≤ {most_tokens}</text>"
    )
    return (
        f'<svg role="img" aria-label="{esc(say(lang, "llm_per_day"))}" width="{CHART_WIDTH}" '
        f'height="{CHART_HEIGHT}" viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT}" style="background:#fff">'
        f"{legend}{''.join(shapes)}{line}</svg>"
    )


def _errors(lang: str, days: list[dict[str, Any]], users_with_failures: int) -> str:
    by_status = {
        sample.labels["status"]: int(sample.value)
        for metric in ERRORS.collect()
        for sample in metric.samples
        if sample.name.endswith("_total")
    }
    rows = [
        [esc(say(lang, "failed_calls")), esc(sum(d["failed"] for d in days))],
        [esc(say(lang, "users_with_failures")), esc(users_with_failures)],
        [
            esc(say(lang, "http_errors")),
            esc(", ".join(f"{status}: {count}" for status, count in sorted(by_status.items())) or "0"),
        ],
    ]
    return table([say(lang, "errors"), ""], rows)
