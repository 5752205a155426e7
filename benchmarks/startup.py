"""How long factledger takes to start: ``import factledger``, ``factledger --help``, a command's first import.

Each figure is the median over ``--runs`` fresh interpreters. Wall seconds
include the interpreter's own start, so the bare interpreter (``python -c
pass``) is measured in the same run: on a shared machine compare what each
adds to it. ``python -X importtime`` gives the cumulative import time of the
package and of the CLI (which the wall time of ``--help`` includes), and which
of the heavy parts (asyncio, psycopg, numpy, eventsourcing, the offline rules)
were imported: none should be, for these two (``tests/test_fast_start.py``).

    python benchmarks/startup.py [--runs 9]

Targets (issue 28): ``import factledger`` ≤ 0.3 s, ``factledger --help`` ≤ 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import time

HEAVY = ("asyncio", "psycopg", "numpy", "eventsourcing", "factledger.infrastructure.offline")

#: What is measured: a name, and the interpreter's arguments.
CASES = {
    "python -c pass": ["-c", "pass"],
    "import factledger": ["-c", "import factledger"],
    "factledger --help": ["-m", "factledger", "--help"],
    "factledger ingest --help": ["-m", "factledger", "ingest", "--help"],
    "import factledger.infrastructure.bootstrap": ["-c", "import factledger.infrastructure.bootstrap"],
    "build an offline extractor": [
        "-c",
        "from factledger.infrastructure.offline import RuleExtractor; RuleExtractor()",
    ],
}
TARGETS = {"import factledger": 0.3, "factledger --help": 0.5}


def wall_seconds(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, capture_output=True)
    return time.perf_counter() - started


def import_profile(args: list[str]) -> tuple[float, list[str]]:
    """Seconds ``python -X importtime ARGS`` spent importing factledger's modules (and all they import),
    and the heavy parts among them."""
    done = subprocess.run([sys.executable, "-X", "importtime", *args], check=True, capture_output=True, text=True)
    ours = 0.0
    heavy: set[str] = set()
    for match in re.finditer(r"^import time:\s*\d+\s*\|\s*(\d+)\s*\|( *)(\S+)\s*$", done.stderr, flags=re.MULTILINE):
        cumulative, depth, module = int(match.group(1)) / 1e6, match.group(2), match.group(3)
        if len(depth) == 1 and module.startswith("factledger"):  # imported first-hand: counts all below it
            ours += cumulative
        if _heavy(module):
            heavy.add(module if module.startswith("factledger.infrastructure.offline") else module.split(".")[0])
    offline = sorted(m for m in heavy if m.startswith("factledger."))
    if offline:  # one entry for the rule modules, not fourteen
        heavy = (heavy - set(offline)) | {f"offline rules ({len(offline)} modules)"}
    return ours, sorted(heavy)


def _heavy(module: str) -> bool:
    return any(module == h or module.startswith(h + ".") for h in HEAVY)


def measure(runs: int) -> dict[str, dict[str, object]]:
    results: dict[str, dict[str, object]] = {}
    walls: dict[str, list[float]] = {name: [] for name in CASES}
    imports: dict[str, list[float]] = {name: [] for name in CASES}
    heavy: dict[str, list[str]] = {}
    for _ in range(runs):  # interleaved: a burst of load on the machine hits every case alike
        for name, args in CASES.items():
            walls[name].append(wall_seconds(args))
            seconds, heavy[name] = import_profile(args)
            imports[name].append(seconds)
    bare = statistics.median(walls["python -c pass"])
    for name in CASES:
        wall = statistics.median(walls[name])
        results[name] = {
            "wall_s": round(wall, 3),
            "over_bare_python_s": round(wall - bare, 3),
            "factledger_imports_s": round(statistics.median(imports[name]), 3),
            "heavy_imported": heavy[name],
        }
    return results


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    options.add_argument("--runs", type=int, default=7, help="fresh interpreters per case; medians (default 7)")
    options.add_argument("--quick", action="store_true", help="smoke run: one run")
    args = options.parse_args()
    if shutil.which("factledger") is None:
        print("note: no factledger script on PATH; python -m factledger is measured", file=sys.stderr)
    results = measure(1 if args.quick else args.runs)
    print(f"{'case':45} {'wall s':>7} {'- bare':>7} {'imports s':>9}  heavy parts imported")
    for name, row in results.items():
        heavy = ", ".join(row["heavy_imported"]) or "none"  # type: ignore[arg-type]
        target = f"  (target ≤ {TARGETS[name]} s)" if name in TARGETS else ""
        print(
            f"{name:45} {row['wall_s']:7.3f} {row['over_bare_python_s']:7.3f} {row['factledger_imports_s']:9.3f}"
            f"  {heavy}{target}"
        )
    print(json.dumps({"runs": 1 if args.quick else args.runs, "cases": results}, ensure_ascii=False))


if __name__ == "__main__":
    main()
