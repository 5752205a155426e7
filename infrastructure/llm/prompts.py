"""Prompt sets: the LLM prompts as data files, each with a stable id.

A prompt set is a TOML file (``prompts/seed.toml`` and ``prompts/combined.toml``
ship in the package; ``--prompts PATH`` loads a user's own). Its id is
``<name>@<first 8 hex of sha256 of the file>``, so any edit to a prompt gives
a new id, and the id recorded on an event names exactly the text that decided it.

A file is checked when it is loaded: every template its mode needs must be
there, and must use exactly the placeholders factledger fills in.
"""

from __future__ import annotations

import hashlib
import json
import string
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import attrs

from factledger.infrastructure.config import ConfigError

# The placeholders each template is rendered with.
TEMPLATE_FIELDS: dict[str, frozenset[str]] = {
    "fact": frozenset({"user_message"}),
    "fact_with_context": frozenset({"conversation", "user_message", "existing_facts"}),
    "preference": frozenset({"user_message", "context"}),
    "combined": frozenset({"conversation", "user_message", "existing_facts"}),
    "conflict_check": frozenset({"old_fact", "new_fact"}),
    "preference_check": frozenset({"old_preference", "new_preference"}),
}

# The placeholders a template may go without: a combined prompt without ``{existing_preferences}``
# (one written before it was offered) is shown no known preferences and names none replaced; a
# fact template without ``{said_at}`` (the seed set's) is told when the message was said in a
# system line beside it (``said_time``).
OPTIONAL_FIELDS: dict[str, frozenset[str]] = {
    "fact": frozenset({"said_at"}),
    "fact_with_context": frozenset({"said_at"}),
    "combined": frozenset({"existing_preferences", "said_at"}),
}

# separate: the spec's flow (a fact call and a preference call); combined: one call.
MODE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "separate": ("fact", "fact_with_context", "preference", "conflict_check"),
    "combined": ("combined", "conflict_check"),
}

# templates a mode may have: without one, the judge asks ``conflict_check`` instead
MODE_OPTIONAL: dict[str, tuple[str, ...]] = {"separate": ("preference_check",), "combined": ("preference_check",)}

BUILTIN = ("seed", "combined")


class PromptError(ConfigError):
    """A prompt file factledger cannot use; the message names the file and the problem."""


@attrs.frozen
class PromptSet:
    """A validated set of templates, identified by name and content hash."""

    name: str
    mode: str
    templates: dict[str, str]
    digest: str
    origin: str
    description: str = ""
    temperature: float | None = 0.0
    json_schema: dict[str, Any] | None = None

    @property
    def id(self) -> str:
        """``seed@1a2b3c4d``: recorded on every event this set decided."""
        return f"{self.name}@{self.digest}"

    def uses(self, key: str, field: str) -> bool:
        """Whether template ``key`` shows ``field`` (an optional placeholder, such as known preferences)."""
        return key in self.templates and field in _placeholders(self.origin, key, self.templates[key])

    def template_id(self, key: str) -> str:
        """Id of one template of the set, e.g. ``seed@1a2b3c4d#fact``."""
        return f"{self.id}#{key}"

    def render(self, key: str, **values: str) -> str:
        return self.templates[key].format(**values)


def _placeholders(origin: str, key: str, template: str) -> set[str]:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise PromptError(
            f"prompt file {origin}: template {key!r} is not a valid format string ({exc}); "
            "write literal braces as {{ and }}"
        ) from None
    return {field for _, field, _, _ in parsed if field is not None}


def _check_template(origin: str, key: str, template: Any) -> str:
    if not isinstance(template, str) or not template.strip():
        raise PromptError(f"prompt file {origin}: template {key!r} must be a non-empty string")
    used = _placeholders(origin, key, template)
    wanted = TEMPLATE_FIELDS[key]
    missing = sorted(wanted - used)
    if missing:
        names = ", ".join("{" + m + "}" for m in missing)
        raise PromptError(f"prompt file {origin}: template {key!r} is missing the placeholder(s) {names}")
    optional = OPTIONAL_FIELDS.get(key, frozenset())
    unknown = sorted(used - wanted - optional)
    if unknown:
        names = ", ".join("{" + u + "}" for u in unknown)
        allowed = ", ".join("{" + w + "}" for w in sorted(wanted | optional))
        raise PromptError(
            f"prompt file {origin}: template {key!r} uses unknown placeholder(s) {names} "
            f"(it may use {allowed}; write literal braces as {{{{ and }}}})"
        )
    return template


def parse_prompt_set(data: bytes, origin: str, default_name: str) -> PromptSet:
    """Validate a prompt file's content; raise ``PromptError`` naming what is wrong."""
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PromptError(f"prompt file {origin} is not valid TOML: {exc}") from None
    templates = doc.get("templates")
    if not isinstance(templates, dict) or not templates:
        raise PromptError(f"prompt file {origin} has no [templates] table")
    mode = doc.get("mode") or ("combined" if "combined" in templates else "separate")
    if mode not in MODE_TEMPLATES:
        raise PromptError(f"prompt file {origin}: mode must be 'separate' or 'combined', got {mode!r}")
    needed = MODE_TEMPLATES[mode]
    missing = [k for k in needed if k not in templates]
    if missing:
        raise PromptError(f"prompt file {origin}: mode {mode!r} needs template(s) {', '.join(missing)}")
    optional = tuple(k for k in MODE_OPTIONAL[mode] if k in templates)
    extra = sorted(set(templates) - set(needed) - set(optional))
    if extra:
        raise PromptError(
            f"prompt file {origin}: unknown template(s) {', '.join(extra)} for mode {mode!r} "
            f"(expected {', '.join(needed)})"
        )
    checked = {k: _check_template(origin, k, templates[k]) for k in (*needed, *optional)}
    schema = doc.get("json_schema")
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise PromptError(f"prompt file {origin}: json_schema is not valid JSON: {exc}") from None
    if schema is not None and not isinstance(schema, dict):
        raise PromptError(f"prompt file {origin}: json_schema must be a JSON object")
    temperature = doc.get("temperature", 0.0)
    if temperature is not None and not isinstance(temperature, (int, float)):
        raise PromptError(f"prompt file {origin}: temperature must be a number")
    name = str(doc.get("name") or default_name).strip()
    if not name or any(c in name for c in "@#/ "):
        raise PromptError(f"prompt file {origin}: name must be a word without @, #, / or spaces, got {name!r}")
    return PromptSet(
        name=name,
        mode=mode,
        templates=checked,
        digest=hashlib.sha256(data).hexdigest()[:8],
        origin=origin,
        description=str(doc.get("description", "")),
        temperature=None if temperature is None else float(temperature),
        json_schema=schema,
    )


def load_prompt_set(spec: str) -> PromptSet:
    """A bundled set by name (``seed``, ``combined``) or a prompt file by path."""
    if spec in BUILTIN:
        data = resources.files("factledger.infrastructure.llm").joinpath(f"prompts/{spec}.toml").read_bytes()
        return parse_prompt_set(data, f"<bundled {spec}>", spec)
    path = Path(spec).expanduser()
    if not path.is_file():
        raise PromptError(
            f"--prompts / FACTLEDGER_PROMPTS: {spec!r} is neither a bundled prompt set "
            f"({', '.join(BUILTIN)}) nor an existing file"
        )
    return parse_prompt_set(path.read_bytes(), str(path), path.stem)
