"""Behaviour ids from content (ADR 0031): what an offline extractor, judge or embedder does is
named by a hash of what makes it up, never by a number someone must remember to bump.

A behaviour is the module that defines it and every module of its package it imports,
transitively (a late import inside a function counts), plus the data files shipped in that
package: a rule module's own ``rules/<module>.toml`` where the module counts (ADR 0040),
any other data file everywhere. The hash covers the names of those files relative to the
package and their bytes with line endings normalised, read through ``importlib.resources``:
an editable install whose package is a tree of links, a wheel and a copy of the files give
the same id on any machine. Computed once per process, on first use (10–50 ms for all three
on a 2-core VM at load average 12: each module read and scanned once), so importing or ``--help`` pays nothing.
"""

from __future__ import annotations

import functools
import hashlib
import re
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import attrs

#: the package whose modules make up the offline behaviours
OFFLINE_PACKAGE = "factledger.infrastructure.offline"
#: hex digits of the digest kept in an id: 48 bits, no collision between versions in practice
DIGEST_LENGTH = 12

# ``from <package>[.sub] import a, b`` (names in parentheses may span lines) and ``import <package>.sub``;
# unanchored, so the engine looks for the literal (2.5 times faster than anchoring each line); a match
# in a string or comment can only add a module. Relative imports are not used in the package (a test
# checks this reading against the AST).
_IMPORT_TEMPLATE = r"(?:from|import)[ \t]+{pkg}(?:\.(?P<sub>[\w.]+))?(?:[ \t]+import[ \t]+(?P<names>\([^)]*\)|[^\n]*))?"


def _import_pattern(package: str) -> re.Pattern[str]:
    return re.compile(_IMPORT_TEMPLATE.format(pkg=re.escape(package)), re.MULTILINE)


@attrs.frozen
class _Package:
    """A package's files, listed once: its modules by dotted name (relative to it) and its data files."""

    modules: dict[str, tuple[str, Traversable]]  # dotted name -> (relative file name, file)
    data: list[tuple[str, Traversable]]  # (relative file name, file), sorted

    @classmethod
    def listed(cls, package: str) -> _Package:
        modules: dict[str, tuple[str, Traversable]] = {}
        data: list[tuple[str, Traversable]] = []
        cls._walk(resources.files(package), "", modules, data)
        return cls(modules, sorted(data, key=lambda pair: pair[0]))

    @classmethod
    def _walk(cls, place: Traversable, prefix: str, modules: dict[str, Any], data: list[Any]) -> None:
        for entry in place.iterdir():
            name = entry.name
            if name.startswith(".") or name == "__pycache__":
                continue
            relative = f"{prefix}{name}"
            if entry.is_dir():
                cls._walk(entry, f"{relative}/", modules, data)
            elif name == "__init__.py" and prefix:
                modules[prefix.rstrip("/").replace("/", ".")] = (relative, entry)
            elif name.endswith(".py"):
                modules[relative[:-3].replace("/", ".")] = (relative, entry)
            elif not name.endswith((".pyc", ".pyo")):
                data.append((relative, entry))


def _imported(source: str, pattern: re.Pattern[str], package: _Package) -> set[str]:
    """The package's modules that ``source`` imports (dotted names relative to the package)."""
    found: set[str] = set()
    for match in pattern.finditer(source):
        sub, names = match.group("sub"), match.group("names")
        if sub in package.modules:
            found.add(sub)
        if names is None:
            continue
        for name in (n.split(" as ")[0].strip() for n in re.sub(r"#[^\n]*", "", names).strip("()").split(",")):
            dotted = f"{sub}.{name}" if sub else name
            if dotted in package.modules:
                found.add(dotted)
    return found


def modules_of(module: str, package: str = OFFLINE_PACKAGE) -> list[str]:
    """``module`` (relative to ``package``) and every module of the package it imports, transitively."""
    return sorted(_closure(module, package))


@functools.cache
def _listed(package: str) -> _Package:
    return _Package.listed(package)


def _closure(module: str, package: str) -> dict[str, bytes]:
    """The modules of the behaviour, each with its source bytes."""
    sources: dict[str, bytes] = {}
    waiting = [module]
    while waiting:
        name = waiting.pop()
        if name not in sources:
            sources[name], imported = _read(package, name)
            waiting.extend(imported - set(sources))
    return sources


@functools.cache
def _read(package: str, name: str) -> tuple[bytes, frozenset[str]]:
    """A module's source and the package's modules it imports: read once for all three ids."""
    listed = _listed(package)
    if name not in listed.modules:
        raise LookupError(f"{package}.{name} is not a module of {package}")
    source = listed.modules[name][1].read_bytes()
    return source, frozenset(_imported(source.decode("utf-8"), _import_pattern(package), listed))


def _normalised(data: bytes) -> bytes:
    """The same text checked out with CRLF or LF line endings hashes the same."""
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


@functools.cache
def behaviour_digest(module: str, package: str = OFFLINE_PACKAGE) -> str:
    """A hash of ``module``'s behaviour: its modules and the package's data files (see above)."""
    listed = _listed(package)
    closure = _closure(module, package)
    parts = [(listed.modules[name][0], source) for name, source in closure.items()]
    parts += [(relative, where.read_bytes()) for relative, where in listed.data if _belongs(relative, closure)]
    digest = hashlib.sha256()
    for relative, data in sorted(parts, key=lambda part: part[0]):
        content = _normalised(data)
        digest.update(f"{relative}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()[:DIGEST_LENGTH]


def _belongs(relative: str, closure: dict[str, bytes]) -> bool:
    """A module's rule data (``rules/<module>.toml``, ADR 0040) counts where the module does; other data everywhere."""
    folder, _, name = relative.rpartition("/")
    return folder != "rules" or not name.endswith(".toml") or name.removesuffix(".toml") in closure


def behaviour_id(prefix: str, module: str, package: str = OFFLINE_PACKAGE) -> str:
    """``prefix/<12 hex>``: e.g. ``offline-rules/3f2a9c01b7de`` for the offline extractor."""
    return f"{prefix}/{behaviour_digest(module, package)}"


__all__ = ["DIGEST_LENGTH", "OFFLINE_PACKAGE", "behaviour_digest", "behaviour_id", "modules_of"]
