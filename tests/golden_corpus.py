"""The offline extractor's golden corpus: committed inputs, their committed outputs, and a diff.

Issue 27 asks for the rules to be restructured without changing what they read. This corpus is
the yardstick: every message the tests hand the rule extractor (recorded from a test run, see
``--collect``) and the dev sets whose licences allow committing them, each with what today's
rules make of it. ``tests/test_golden_corpus.py`` shows any change as a diff per case id; a change
that is meant is reviewed and committed with ``python3 tests/golden_corpus.py --update``.

Two kinds of case, in ``tests/fixtures/golden/``:
- ``cases.jsonl``: one message with its context turns and the known facts it is read against;
- ``conversations.jsonl``: a user's messages in order, each read against the facts still standing
  after the ones before (those a message names as replaced, or takes back, are dropped), so a
  change early in a conversation shows in every message it reaches.

LoCoMo is not here: its licence allows evaluation only, never shipping (data/eval/README.md).
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from factledger.domain.values import Extraction, Turn
from factledger.infrastructure.offline import RuleExtractor

HERE = Path(__file__).parent / "fixtures" / "golden"
CASES = HERE / "cases.jsonl"
CONVERSATIONS = HERE / "conversations.jsonl"
EXPECTED = HERE / "expected.jsonl"
# Where the dev sets live on a development machine (never needed by the test itself).
EVAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "eval"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8")


def outcome(extraction: Extraction) -> dict[str, Any]:
    """What a case's output is compared on: the items and what they replace, not ids or timings."""
    data = extraction.as_dict()
    for volatile in ("extractor_id", "raw_output", "prompt_id"):
        data.pop(volatile, None)
    return data


def _turns(rows: Sequence[dict[str, str]]) -> tuple[Turn, ...]:
    return tuple(Turn(role=r["role"], content=r["content"]) for r in rows)


def run_case(extractor: RuleExtractor, case: dict[str, Any]) -> dict[str, Any]:
    extraction = extractor.extract(case["message"], _turns(case.get("context", ())), case.get("known", ()))
    return {"id": case["id"], "output": outcome(extraction)}


def run_conversation(extractor: RuleExtractor, conversation: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Each message read against the facts standing after the ones before it."""
    standing: list[str] = []
    for index, message in enumerate(conversation["messages"]):
        extraction = extractor.extract(message, (), tuple(standing))
        ended = set(extraction.retracted)
        for fact in extraction.facts:
            ended.update(t for t in (fact.conflicts_with, *fact.also_conflicts_with) if t)
        standing = [f for f in standing if f not in ended]
        standing += [f.text for f in extraction.facts if f.text not in standing]
        yield {"id": f"{conversation['id']}#{index}", "output": outcome(extraction)}


def actual_outputs(extractor: RuleExtractor | None = None, every: int = 1) -> list[dict[str, Any]]:
    """The outputs of the whole corpus; ``every=n``: of every n-th case and conversation only."""
    extractor = extractor or RuleExtractor()
    rows = [run_case(extractor, case) for case in read_jsonl(CASES)[::every]]
    for conversation in read_jsonl(CONVERSATIONS)[::every]:
        rows.extend(run_conversation(extractor, conversation))
    return rows


def differences(expected: list[dict[str, Any]], actual: list[dict[str, Any]]) -> list[str]:
    """One readable diff per case whose output changed, appeared or went."""
    want = {row["id"]: row["output"] for row in expected}
    got = {row["id"]: row["output"] for row in actual}
    found: list[str] = []
    for case_id in sorted(want.keys() | got.keys()):
        if want.get(case_id) == got.get(case_id):
            continue
        before = json.dumps(want.get(case_id), ensure_ascii=False, indent=1, sort_keys=True).splitlines()
        after = json.dumps(got.get(case_id), ensure_ascii=False, indent=1, sort_keys=True).splitlines()
        diff = difflib.unified_diff(before, after, "committed", "now", lineterm="", n=1)
        found.append(f"{case_id}:\n" + "\n".join(diff))
    return found


# -- building the corpus (a development step; the test reads only the committed files) --


def _single_messages() -> Iterator[dict[str, Any]]:
    """Dev lines under MIT / Apache-2.0: personas, DuLeMon, KvPI (utterance and context)."""
    for name in ("zh_personas_dev", "en_personas_dev", "zh_dulemon_dev", "zh_kvpi_dev"):
        for row in read_jsonl(EVAL / f"{name}.jsonl"):
            message = row.get("utterance_unsegmented") or row["utterance"]
            context = [{"role": t["role"], "content": t["content"]} for t in row.get("context", ())]
            yield {"id": f"{name}/{row['id']}", "message": message, "context": context, "known": []}


def _dev_conversations() -> Iterator[dict[str, Any]]:
    """The knowledge-update conversations (written for this project) and MemoryBank-cn's users (MIT)."""
    for row in read_jsonl(EVAL / "knowledge_updates_dev.jsonl"):
        yield {"id": f"knowledge_updates_dev/{row['id']}", "messages": row["messages"]}
    users: dict[str, list[str]] = {}
    for turn in read_jsonl(EVAL / "memorybank_cn" / "turns_dev.jsonl"):
        users.setdefault(turn["user_id"], []).append(turn["message"])
    for user, messages in users.items():
        yield {"id": f"memorybank_cn/{user}", "messages": messages}


def _recorded(path: Path) -> Iterator[dict[str, Any]]:
    """Calls recorded from a test run (FACTLEDGER_RECORD_EXTRACTIONS), each once, in first-seen order."""
    seen: set[str] = set()
    for row in read_jsonl(path):
        key = json.dumps([row["message"], row["context"], row["known"]], ensure_ascii=False)
        if key not in seen and isinstance(row["message"], str):
            seen.add(key)
            yield {"id": f"tests/{len(seen):05d}", **row}


def collect(recorded: Path | None) -> None:
    cases = list(_recorded(recorded)) if recorded else [c for c in read_jsonl(CASES) if c["id"].startswith("tests/")]
    write_jsonl(CASES, [*cases, *_single_messages()])
    write_jsonl(CONVERSATIONS, _dev_conversations())


def _without_rules(value: Any) -> Any:
    """``value`` with every ``rules`` key dropped, at any depth."""
    if isinstance(value, dict):
        return {key: _without_rules(item) for key, item in value.items() if key != "rules"}
    if isinstance(value, list):
        return [_without_rules(item) for item in value]
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collect", type=Path, metavar="RECORDED", help="rebuild the inputs from a recorded run")
    parser.add_argument("--dev-sets", action="store_true", help="rebuild the dev-set inputs, keeping tests' cases")
    parser.add_argument("--update", action="store_true", help="write today's outputs as the committed ones")
    parser.add_argument(
        "--without-rules", action="store_true", help="compare without the trace's rule ids (a renamed rule)"
    )
    args = parser.parse_args(argv)
    if args.collect or args.dev_sets:
        collect(args.collect)
    actual = actual_outputs()
    if args.update or args.collect or args.dev_sets:
        write_jsonl(EXPECTED, actual)
        print(f"{len(actual)} outputs written to {EXPECTED}")
        return 0
    expected = read_jsonl(EXPECTED)
    if args.without_rules:
        expected, actual = _without_rules(expected), _without_rules(actual)
    changed = differences(expected, actual)
    print("\n\n".join(changed) or "no change", file=sys.stderr)
    print(f"{len(changed)} of {len(actual)} cases changed")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
