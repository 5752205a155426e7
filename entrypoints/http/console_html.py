"""Small HTML builders for the console: everything that comes from data goes through ``esc``.

No template engine and no asset from anywhere: one inline style sheet, no script (the
Content-Security-Policy forbids any), so a user's text can at worst be shown, never run.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from datetime import datetime
from urllib.parse import quote, urlencode

from factledger.application.access import Scope
from factledger.entrypoints.http.console_session import Visitor
from factledger.entrypoints.http.console_text import say

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{background:#1f3a5f;color:#fff;padding:.5rem 1rem;display:flex;flex-wrap:wrap;gap:1rem;align-items:center}
header a,header button{color:#fff}header .muted{color:#d5deea}header nav{display:flex;gap:1rem;flex-wrap:wrap}
header form{margin:0}header button{background:none;border:1px solid #fff;border-radius:4px;cursor:pointer}
main{padding:1rem 1.5rem;max-width:72rem}
a{color:#0b57b0}a:focus,button:focus,input:focus,select:focus{outline:3px solid #f4b400;outline-offset:1px}
.skip{position:absolute;left:-999px}.skip:focus{left:.5rem;top:.5rem;background:#fff;color:#000;padding:.3rem}
table{border-collapse:collapse;background:#fff;margin:.5rem 0}td,th{border:1px solid #d0d5dd;padding:.3rem .6rem;
text-align:left;vertical-align:top}th{background:#eef1f5}
.card{background:#fff;border:1px solid #d0d5dd;border-radius:6px;padding:.6rem 1rem;margin:.6rem 0}
.muted{color:#5b6470;font-size:.9em}.retired{text-decoration:line-through;color:#6b7280}
.flow{display:flex;flex-wrap:wrap;align-items:center;gap:.6rem}
.fact{background:#eef6ff;border:1px solid #8db4e2;border-radius:6px;padding:.2rem .5rem}
.fact.old{background:#fff1f0;border-color:#e2a29b}.arrow{font-size:1.4em;color:#1f3a5f}
ol.timeline{list-style:none;padding:0}ol.timeline>li{border-left:3px solid #1f3a5f;margin:0 0 .6rem;
padding:.3rem .8rem;background:#fff}ol.timeline>li.supersession{border-left-color:#c0392b}
label{display:block;margin:.3rem 0 .1rem}input[type=text],input[type=password],select{padding:.3rem;min-width:16rem}
button.primary{background:#1f3a5f;color:#fff;border:0;border-radius:4px;padding:.35rem .9rem;cursor:pointer}
button.danger{background:#b42318;color:#fff;border:0;border-radius:4px;padding:.35rem .9rem;cursor:pointer}
.notice{background:#ecfdf3;border:1px solid #75e0a7;padding:.4rem .8rem}
.problem{background:#fef3f2;border:1px solid #f97066;padding:.4rem .8rem}
pre{white-space:pre-wrap;word-break:break-word;background:#fff;border:1px solid #d0d5dd;padding:.5rem}
"""


def esc(value: object) -> str:
    """``value`` as text safe in HTML content and in quoted attributes."""
    return html.escape("" if value is None else str(value), quote=True)


def path_part(value: str) -> str:
    """``value`` as one segment of a URL path (a user id may hold '/' or '?')."""
    return quote(value, safe="")


def href(path: str, **query: object) -> str:
    kept = {k: v for k, v in query.items() if v not in (None, "")}
    return path + ("?" + urlencode(kept) if kept else "")


def link(url: str, text: object, **attributes: str) -> str:
    extra = "".join(f' {name}="{esc(value)}"' for name, value in attributes.items())
    return f'<a href="{esc(url)}"{extra}>{esc(text)}</a>'


def when(value: object) -> str:
    """A time as the operator reads it: the date and minute, UTC."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return esc(value)
    if isinstance(value, datetime):
        return f'<time datetime="{esc(value.isoformat())}">{esc(value.strftime("%Y-%m-%d %H:%M"))}</time>'
    return ""


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], caption: str = "") -> str:
    """A table of ready-made cells (each cell is HTML already escaped by its maker)."""
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    caption_html = f"<caption>{esc(caption)}</caption>" if caption else ""
    return f"<table>{caption_html}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def hidden_csrf(visitor: Visitor) -> str:
    return f'<input type="hidden" name="csrf" value="{esc(visitor.csrf)}">' if visitor.csrf else ""


def form(visitor: Visitor, action: str, fields: str, button: str, *, danger: bool = False, label: str = "") -> str:
    """A POST form carrying the session's CSRF token."""
    kind = "danger" if danger else "primary"
    aria = f' aria-label="{esc(label)}"' if label else ""
    return (
        f'<form method="post" action="{esc(action)}"{aria}>{hidden_csrf(visitor)}{fields}'
        f'<p><button type="submit" class="{kind}">{esc(button)}</button></p></form>'
    )


def text_input(name: str, label: str, value: str = "", *, required: bool = True, kind: str = "text") -> str:
    field_id = f"f-{name}"
    need = " required" if required else ""
    return (
        f'<label for="{field_id}">{esc(label)}</label>'
        f'<input type="{kind}" id="{field_id}" name="{esc(name)}" value="{esc(value)}"{need}>'
    )


def select(name: str, label: str, options: Sequence[tuple[str, str]], chosen: str = "") -> str:
    field_id = f"f-{name}"
    items = "".join(
        f'<option value="{esc(value)}"{" selected" if value == chosen else ""}>{esc(text)}</option>'
        for value, text in options
    )
    return f'<label for="{field_id}">{esc(label)}</label><select id="{field_id}" name="{esc(name)}">{items}</select>'


def pager(visitor: Visitor, path: str, offset: int, shown: int, total: int, size: int, **query: object) -> str:
    """Previous / next links and which part of the list this page shows."""
    lang = visitor.language
    parts = []
    if offset > 0:
        parts.append(link(href(path, offset=max(0, offset - size), **query), say(lang, "previous"), rel="prev"))
    if offset + shown < total:
        parts.append(link(href(path, offset=offset + shown, **query), say(lang, "next"), rel="next"))
    first = offset + 1 if shown else 0
    count = esc(say(lang, "shown", first=first, last=offset + shown, total=total))
    return f'<nav class="flow" aria-label="pages"><span class="muted">{count}</span>{" ".join(parts)}</nav>'


def layout(visitor: Visitor | None, language: str, title: str, body: str) -> str:
    """A whole page: the navigation (when signed in), the title and ``body`` (HTML)."""
    nav = _navigation(visitor, language) if visitor is not None else ""
    switch_to = "en" if language == "zh" else "zh"
    here = visitor.path if visitor is not None else "/console/sign-in"
    switch = link(href(f"/console/language/{switch_to}", next=here), say(language, "language"), lang=switch_to)
    return (
        f'<!doctype html><html lang="{"zh-CN" if language == "zh" else "en"}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{esc(title)} · factledger</title><style>{STYLE}</style></head><body>"
        f'<a class="skip" href="#main">{esc(say(language, "skip"))}</a>'
        f"<header><strong>{esc(say(language, 'console'))}</strong>{nav}{switch}</header>"
        f'<main id="main" tabindex="-1"><h1>{esc(title)}</h1>{body}</main></body></html>'
    )


def _navigation(visitor: Visitor, language: str) -> str:
    key = visitor.caller.key
    links = [
        link("/console/users", say(language, "users")),
        link("/console/tombstones", say(language, "tombstones")),
        link("/console/health", say(language, "health")),
    ]
    if visitor.allows(Scope.ADMIN):
        links.append(link("/console/ledgers", say(language, "ledgers")))
    who = say(language, "signed_in_as", tenant=key.tenant, key=key.key_id, scope=key.scope.label)
    sign_out = ""
    if visitor.csrf is not None:
        sign_out = form(visitor, "/console/sign-out", "", say(language, "sign_out")).replace(
            'class="primary"', 'class="plain"'
        )
    return f'<nav aria-label="console">{"".join(links)}</nav><span class="muted">{esc(who)}</span>{sign_out}'
