"""Replay into named ledgers, diff and promote."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import attrs
import psycopg
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from psycopg.sql import SQL, Identifier
from scripted import MESSAGES

from factledger.application.errors import InvalidInput
from factledger.application.service import LedgerService
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.ledgers import LedgerError

RULES = """
name = "v2"
[[drop]]
kind = "fact"
category = "relationship"
[[recategorise]]
pattern = "在.+工作"
from_category = "location"
category = "work"
"""


def _drop_schemas(settings: Settings, base: str) -> None:
    if settings.backend != "postgres":
        return  # an in-memory store is gone with its settings
    with psycopg.connect(settings.database_url, autocommit=True) as conn:  # type: ignore[arg-type]
        for (name,) in conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE %s", (base + "%",)):
            conn.execute(SQL("DROP SCHEMA {} CASCADE").format(Identifier(name)))


@hsettings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.sampled_from(["u1", "u2"]), st.sampled_from(MESSAGES)), min_size=1, max_size=8))
def test_replaying_with_the_same_extractor_reproduces_the_ledger(
    settings: Settings, steps: list[tuple[str, str]]
) -> None:
    example = attrs.evolve(settings, schema=f"{settings.schema}_{uuid.uuid4().hex[:6]}")
    service = open_ledger(example)
    try:
        for user, text in steps:
            service.ingest(user, text, session_id="s")
        report = service.replay("same", "offline")
        assert report.finished and report.replayed == len(steps)
        with service.directory.open("same") as same:  # type: ignore[union-attr]
            for user in {"u1", "u2"}:
                assert same.profile(user).to_dict() == service.profile(user).to_dict()
            assert same.read_model.all_items() == service.read_model.all_items()
        diff = service.diff("same").to_dict()
        assert all(row["only_in_a"] == row["only_in_b"] == row["changed"] == 0 for row in diff["summary"])
    finally:
        service.close()
        _drop_schemas(settings, example.schema)


def test_a_changed_rule_set_changes_exactly_the_expected_items(service: LedgerService, tmp_path: Path) -> None:
    for text in ["我住在杭州", "我在杭州工作，老板姓张，平时喜欢简短的回复", "我搬到上海了"]:
        service.ingest("u", text)
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES, encoding="utf-8")
    report = service.replay("v2", "offline", rules=str(rules))
    assert report.extractor_id.startswith("offline-rules/") and "+rules:v2@" in report.extractor_id
    diff = service.diff("v2").to_dict()
    [user] = diff["users"]
    assert [i["content"] for i in user["only_in_a"]] == ["用户的老板姓张"]
    assert user["only_in_b"] == []
    [changed] = user["changed"]
    assert changed["a"]["content"] == "用户在杭州工作"
    assert changed["changes"] == {"category": ["location", "work"]}
    assert user["same"] == 3  # 住在杭州 (invalidated), 住在上海, the preference
    assert service.profile("u").to_dict()["facts"]["relationship"], "the source ledger is never written"


def test_replay_resumes_after_a_limit_and_ends_as_an_uninterrupted_one(service: LedgerService) -> None:
    for i in range(12):
        service.ingest(f"u{i % 3}", MESSAGES[i % len(MESSAGES)])
    first = service.replay("part", "offline", limit=5)
    assert not first.finished and first.replayed == 5
    second = service.replay("part", "offline")
    assert second.finished and second.replayed == 7
    service.replay("whole", "offline")
    with service.directory.open("part") as part, service.directory.open("whole") as whole:  # type: ignore[union-attr]
        assert part.read_model.all_items() == whole.read_model.all_items()
        for user in ("u0", "u1", "u2"):
            assert [e.to_dict() for e in part.history(user)] != []
            assert [e["event"] for e in [e.to_dict() for e in part.history(user)]] == [
                e["event"] for e in [e.to_dict() for e in whole.history(user)]
            ]


def test_a_killed_replay_resumes_to_the_same_result(service: LedgerService, cli_env: dict[str, str]) -> None:
    for i in range(150):
        service.ingest(f"u{i % 5}", MESSAGES[i % len(MESSAGES)], session_id=f"s{i}")
    head = service.ledger.recorder.max_notification_id()
    command = [
        sys.executable,
        "-m",
        "factledger.entrypoints.cli",
        "replay",
        "--into",
        "killed",
        "--extractor",
        "offline",
        "-q",
    ]
    proc = subprocess.Popen(command, env=cli_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    position = 0
    while time.monotonic() < deadline and proc.poll() is None:
        entries = {e.name: e for e in service.directory.entries()}  # type: ignore[union-attr]
        position = entries["killed"].replay_position if "killed" in entries else 0
        if position > 0:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.005)
    proc.wait(30)
    assert proc.returncode == -signal.SIGKILL, "the replay must be killed half way for this test to mean anything"
    assert 0 < position < head  # type: ignore[operator]
    resumed = subprocess.run([*command, "--json"], env=cli_env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["finished"] is True
    service.replay("uninterrupted", "offline")
    with service.directory.open("killed") as killed, service.directory.open("uninterrupted") as whole:  # type: ignore[union-attr]
        assert killed.read_model.all_items() == whole.read_model.all_items()
        for user in (f"u{i}" for i in range(5)):
            assert killed.profile(user).to_dict() == whole.profile(user).to_dict()


def test_promote_swaps_ledgers_and_keeps_the_old_one(
    settings: Settings, service: LedgerService, tmp_path: Path
) -> None:
    service.ingest("u", "我在杭州工作，老板姓张，平时喜欢简短的回复")
    old_events = service.ledger.recorder.max_notification_id()
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES, encoding="utf-8")
    service.replay("v2", "offline", rules=str(rules))
    kept = service.promote("v2")
    assert kept.startswith("previous_")
    with open_ledger(settings) as live:
        assert live.ledger_name == "live"
        assert "relationship" not in live.profile("u").to_dict()["facts"]
        assert live.profile("u").to_dict()["facts"]["work"][0]["fact"] == "用户在杭州工作"
    with open_ledger(settings, ledger=kept) as previous:
        assert previous.ledger.recorder.max_notification_id() == old_events
        assert previous.profile("u").to_dict()["facts"]["relationship"][0]["fact"] == "用户的老板姓张"
    names = {row["name"] for row in service.ledgers()}
    assert names == {"live", kept}
    with pytest.raises(LedgerError, match="no ledger named"):
        service.promote("nope")


def test_dry_run_counts_messages_and_llm_cost(service: LedgerService) -> None:
    for text in ["我住在杭州", "谢谢", "我有车"]:
        service.ingest("u", text)
    estimate = service.estimate_replay("offline")
    assert (estimate.messages, estimate.llm_messages, estimate.llm_calls, estimate.input_tokens) == (3, 0, 0, 0)
    assert service.ledgers()[0]["name"] == "live", "a dry run creates no ledger"
    assert len(service.ledgers()) == 1


def test_bad_ledger_names_are_refused(service: LedgerService) -> None:
    service.ingest("u", "我住在杭州")
    for bad in ("Live", "live", "1abc", "a-b", "x" * 31):
        with pytest.raises(LedgerError, match="ledger name"):
            service.replay(bad, "offline")


def test_a_replay_for_some_users_is_only_resumed_for_the_same_users(service: LedgerService) -> None:
    for user in ("a", "b"):
        service.ingest(user, "我住在杭州")
        service.ingest(user, "我有车")
    report = service.replay("some", "offline", users=["a"])
    assert (report.replayed, report.skipped_users, report.finished) == (2, 2, True)
    with pytest.raises(LedgerError, match="replayed for users"):
        service.replay("some", "offline")
    assert service.replay("some", "offline", users=["a"]).replayed == 0
    everyone = service.replay("everyone", "offline")
    assert everyone.replayed == 4
    with service.directory.open("everyone") as ledger:  # type: ignore[union-attr]
        assert ledger.profile("b").to_dict()["facts_count"] == 2


def test_a_name_can_be_replayed_again_after_it_was_promoted(service: LedgerService) -> None:
    service.ingest("u", "我住在杭州")
    service.replay("v2", "offline")
    first = service.promote("v2")
    service.replay("v2", "offline")  # the live ledger now owns the first v2's schema
    second = service.promote("v2")
    assert first != second
    names = [row["name"] for row in service.ledgers()]
    assert sorted(names) == sorted(["live", first, second])
    schemas = [row["schema"] for row in service.ledgers()]
    assert len(set(schemas)) == 3


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ('[[adjust]]\nkind = "fact"\nscore = "abc"\n', "score must be a number"),
        ('[[adjust]]\nkind = "fact"\nscore = 1.5\n', "score must be a number"),
        ('[[add]]\npattern = "我养了(?P<pet>\\\\w+)"\nfact = "用户养了{animal}"\n', "animal"),
        ('[[add]]\npattern = "("\nfact = "x"\n', "bad pattern"),
        ('[[drop]]\nkind = "facts"\n', "kind must be"),
        ("[[bogus]]\n", "unknown sections"),
    ],
)
def test_bad_rules_files_are_refused_before_anything_is_replayed(
    service: LedgerService, tmp_path: Path, rules: str, message: str
) -> None:
    from factledger.infrastructure.rule_overrides import RulesError

    service.ingest("u", "我住在杭州")
    path = tmp_path / "rules.toml"
    path.write_text(rules, encoding="utf-8")
    with pytest.raises(RulesError, match=message):
        service.replay("v2", "offline", rules=str(path))
    assert [row["name"] for row in service.ledgers()] == ["live"]


def test_replay_and_promote_keep_operator_corrections(service: LedgerService, tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES, encoding="utf-8")
    service.ingest("u", "我住在杭州")
    service.ingest("u", "我在上海工作，我有一只猫")
    home = next(f for f in service.profile("u").facts if "住在杭州" in f.text)
    service.invalidate("u", home.id, "用户说搬走很久了", actor="ops")
    service.restate("u", "用户住在北京", category="location", actor="ops")
    service.ingest("u", "我住在杭州")  # after the correction: it only contests the manual fact
    report = service.replay("v2", "offline", rules=str(rules))
    assert (report.corrections, report.corrections_without_fact) == (2, 0)
    with service.directory.open("v2", inline_projection=False) as v2:  # type: ignore[union-attr]
        v2.catch_up()
        active = {f.text for f in v2.profile("u").facts}
        events = [e.event for e in v2.history("u", kind="fact")]
    assert "用户住在北京" in active and "用户住在杭州" not in active
    assert "FactContested" in events, "the later message contests the manual fact, as in the live ledger"
    assert service.diff("v2").to_dict()["summary"][0]["only_in_a"] == 0
    service.promote("v2")
    with service.directory.open("live", inline_projection=False) as live:  # type: ignore[union-attr]
        assert {f.text for f in live.profile("u").facts} == active


def test_promote_refuses_a_ledger_that_lost_a_correction_unless_forced(service: LedgerService) -> None:
    service.ingest("u", "我住在杭州")
    service.replay("v2", "offline")
    service.restate("u", "用户住在北京", category="location", actor="ops")  # made after the replay
    with pytest.raises(InvalidInput, match="would lose 1 operator correction"):
        service.promote("v2")
    assert service.promote("v2", force=True).startswith("previous_")
