"""eval-updates: conversations scored by the active items they end with (invented conversations)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from factledger.entrypoints import cli
from factledger.evaluation.dataset import DatasetError
from factledger.evaluation.updates import Conversation, evaluate_updates, judge, load_conversations
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings

CONVERSATIONS = [
    {
        "id": "t-move",
        "lang": "zh",
        "kind": "update",
        "messages": ["我住在苏州", "最近在学做菜", "我搬到南京了"],
        "active": [["南京"]],
        "stale": [["苏州"]],
    },
    {
        "id": "t-repeat",
        "lang": "zh",
        "kind": "repeat",
        "messages": ["我养了一只狗", "我养了一只狗"],
        "active": [["狗"]],
        "stale": [],
    },
    {
        "id": "t-two",
        "lang": "en",
        "kind": "coexist",
        "messages": ["I live in Oslo.", "I work as a teacher."],
        "active": [["Oslo"], ["teacher"]],
        "stale": [],
    },
    # Labelled so that it cannot pass: the scorer must say so and name the group.
    {
        "id": "t-impossible",
        "lang": "en",
        "kind": "update",
        "messages": ["I live in Oslo."],
        "active": [["Lima"]],
        "stale": [["Oslo"]],
    },
]


def write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "updates.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def fresh_ledger(tmp_path: Path) -> Any:
    return open_ledger(
        Settings(home=tmp_path, backend="memory", schema=f"e{uuid.uuid4().hex[:10]}"), warn_if_offline=False
    )


def test_scoring_follows_the_groups_of_keys() -> None:
    conversation = Conversation("c", "zh", "update", ("x",), active=(("南京", "工作"),), stale=(("苏州",),))
    assert judge(conversation, ["用户在南京工作"]).passed
    assert not judge(conversation, ["用户住在南京", "用户在上海工作"]).passed, "both keys must be in one item"
    lingering = judge(conversation, ["用户在南京工作", "用户以前住在苏州"])
    assert not lingering.passed and lingering.lingering == (("苏州",),)
    assert judge(Conversation("e", "en", "k", ("x",), (("Oslo",),), ()), ["The user lives in OSLO"]).passed


def test_each_conversation_runs_for_a_fresh_user_in_a_throwaway_ledger(tmp_path: Path) -> None:
    conversations = load_conversations(write(tmp_path, CONVERSATIONS))
    report = evaluate_updates(conversations, lambda: fresh_ledger(tmp_path), "offline")
    by_id = {o.conversation.id: o for o in report.outcomes}
    assert by_id["t-repeat"].passed and by_id["t-two"].passed
    assert not by_id["t-impossible"].passed and by_id["t-impossible"].missing == (("Lima",),)
    summary = report.to_dict()
    assert summary["overall"]["conversations"] == 4
    assert set(summary["by_kind"]) == {"update", "repeat", "coexist"} and set(summary["by_lang"]) == {"zh", "en"}
    assert "t-impossible" in {f["id"] for f in summary["failures"]}


def test_bad_files_name_the_line(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"updates\.jsonl:2: 'messages' must be a non-empty list"):
        load_conversations(write(tmp_path, [CONVERSATIONS[0], {"id": "x", "messages": []}]))
    with pytest.raises(DatasetError, match="'active' must be a list of non-empty lists"):
        load_conversations(write(tmp_path, [{**CONVERSATIONS[0], "active": ["南京"]}]))


def test_the_command_prints_accuracy_by_kind_and_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("FACTLEDGER_HOME", str(tmp_path))
    path = write(tmp_path, CONVERSATIONS)
    assert cli.main(["eval-updates", str(path), "--json", "-q"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["overall"]["conversations"] == 4 and report["by_lang"]["en"]["conversations"] == 2
    assert cli.main(["eval-updates", str(path), "-v", "-q"]) == 0
    shown = capsys.readouterr().out
    assert "kind update" in shown and "t-impossible" in shown and "missing" in shown
