"""``/docs``: the API reference, rendered in the browser from ``/openapi.json`` by a small page
served from the package.

FastAPI's own ``/docs`` and ``/redoc`` load Swagger UI or ReDoc from a CDN
(blank without internet, and a third party's script next to the API keys);
no installed wheel ships those assets. This page loads nothing from another
host: its script and style come from this server, and its
``Content-Security-Policy`` forbids anything else. It lists every operation
(parameters, body, answers with their schemas) and every schema; text from
the schema is set as text, never as HTML.
"""

from __future__ import annotations

import html

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

router = APIRouter(include_in_schema=False)

POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>factledger API</title>
<link rel="stylesheet" href="{root}/docs/docs.css">
</head>
<body data-openapi="{root}/openapi.json">
<header><h1 id="title">factledger API</h1><p id="version"></p></header>
<main><p id="description"></p><nav id="toc"></nav><section id="operations"></section>
<h2>Schemas</h2><section id="schemas"></section></main>
<script src="{root}/docs/docs.js"></script>
</body>
</html>
"""

STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 64rem; padding: 1rem 2rem; color: #222; }
h1 { margin-bottom: 0; } #version { color: #666; margin-top: 0; }
#description { white-space: pre-wrap; }
.op { border: 1px solid #ddd; border-radius: 6px; margin: 1rem 0; padding: .5rem 1rem; }
.op h3 { margin: .25rem 0; font-family: ui-monospace, monospace; font-size: 1rem; }
.method { display: inline-block; min-width: 4.5rem; font-weight: bold; }
.get { color: #0a6; } .post { color: #06c; } .delete { color: #c30; } .put, .patch { color: #a60; }
table { border-collapse: collapse; margin: .25rem 0 .75rem; }
td, th { border-bottom: 1px solid #eee; padding: .15rem .6rem; text-align: left; vertical-align: top; }
code, pre { font-family: ui-monospace, monospace; font-size: .85rem; }
pre { background: #f6f6f6; padding: .5rem; overflow-x: auto; }
details { margin: .25rem 0; }
"""

SCRIPT = """
"use strict";
(async function () {
  const url = document.body.dataset.openapi;
  const spec = await (await fetch(url)).json();
  const el = (tag, text, cls) => {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  };
  const refName = (schema) => (schema && schema.$ref ? schema.$ref.split("/").pop() : null);
  const typeOf = (schema) => {
    if (!schema) return "";
    if (schema.$ref) return refName(schema);
    if (schema.anyOf) return schema.anyOf.map(typeOf).join(" | ");
    if (schema.type === "array") return "array of " + typeOf(schema.items);
    if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
    return schema.type || "any";
  };
  document.getElementById("title").textContent = spec.info.title + " API";
  document.getElementById("version").textContent = "version " + spec.info.version + " · " + url;
  document.getElementById("description").textContent = spec.info.description || "";
  const operations = document.getElementById("operations");
  const toc = el("ul");
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const id = (method + path).replace(/[^a-zA-Z0-9]+/g, "-");
      const item = el("li");
      const link = el("a", method.toUpperCase() + " " + path + " — " + (op.summary || ""));
      link.href = "#" + id;
      item.appendChild(link);
      toc.appendChild(item);
      const box = el("div", null, "op");
      box.id = id;
      const head = el("h3");
      head.appendChild(el("span", method.toUpperCase(), "method " + method));
      head.appendChild(document.createTextNode(path));
      box.appendChild(head);
      box.appendChild(el("p", op.summary));
      if (op.description) box.appendChild(el("p", op.description));
      if (op.parameters && op.parameters.length) {
        const table = el("table");
        const header = el("tr");
        ["parameter", "in", "type", "required", "description"].forEach((h) => header.appendChild(el("th", h)));
        table.appendChild(header);
        for (const p of op.parameters) {
          const row = el("tr");
          [p.name, p.in, typeOf(p.schema), p.required ? "yes" : "", p.description || (p.schema || {}).description || ""]
            .forEach((v) => row.appendChild(el("td", v)));
          table.appendChild(row);
        }
        box.appendChild(table);
      }
      if (op.requestBody) {
        const media = Object.entries(op.requestBody.content || {});
        for (const [type, body] of media) box.appendChild(el("p", "Body (" + type + "): " + typeOf(body.schema)));
      }
      const answers = el("table");
      const header = el("tr");
      ["status", "answer", "type"].forEach((h) => header.appendChild(el("th", h)));
      answers.appendChild(header);
      for (const [status, answer] of Object.entries(op.responses || {})) {
        const row = el("tr");
        const kinds = Object.entries(answer.content || {})
          .map(([t, c]) => t + (c.schema ? ": " + typeOf(c.schema) : ""));
        [status, answer.description || "", kinds.join(", ")].forEach((v) => row.appendChild(el("td", v)));
        answers.appendChild(row);
      }
      box.appendChild(answers);
      operations.appendChild(box);
    }
  }
  document.getElementById("toc").appendChild(toc);
  const schemas = document.getElementById("schemas");
  for (const [name, schema] of Object.entries((spec.components || {}).schemas || {})) {
    const details = el("details");
    details.id = "schema-" + name;
    details.appendChild(el("summary", name + (schema.description ? " — " + schema.description : "")));
    const table = el("table");
    const required = new Set(schema.required || []);
    for (const [field, prop] of Object.entries(schema.properties || {})) {
      const row = el("tr");
      [field, typeOf(prop), required.has(field) ? "required" : "", prop.description || ""]
        .forEach((v) => row.appendChild(el("td", v)));
      table.appendChild(row);
    }
    details.appendChild(table);
    schemas.appendChild(details);
  }
})();
"""


def _headers() -> dict[str, str]:
    return {"Content-Security-Policy": POLICY, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}


@router.get("/docs")
def docs_page(request: Request) -> HTMLResponse:
    root = html.escape(request.scope.get("root_path", "").rstrip("/"))
    return HTMLResponse(PAGE.replace("{root}", root), headers=_headers())


@router.get("/docs/docs.js")
def docs_script() -> Response:
    return Response(SCRIPT, media_type="text/javascript; charset=utf-8", headers=_headers())


@router.get("/docs/docs.css")
def docs_style() -> Response:
    return Response(STYLE, media_type="text/css; charset=utf-8", headers=_headers())
