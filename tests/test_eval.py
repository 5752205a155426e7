"""``factledger eval`` / ``extract``: loading, matching and the arithmetic on a file with a known answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factledger.domain.values import ExtractedFact, Extraction
from factledger.entrypoints import cli
from factledger.evaluation import (
    DatasetError,
    count_matches,
    evaluate,
    load_lines,
    load_sample,
    predict_all,
    similarity,
)


class ListExtractor:
    """Answers from a table: message → (signal, facts)."""

    extractor_id = "table/1"

    def __init__(self, table: dict[str, tuple[bool, list[str]]]) -> None:
        self.table = table
        self.seen_context: list[tuple] = []

    def extract(self, message, context=(), known_facts=()):
        self.seen_context.append(tuple(context))
        signal, facts = self.table.get(message, (False, []))
        return Extraction(
            extractor_id=self.extractor_id,
            facts=[ExtractedFact(text=f) for f in facts],
            signals={"has_fact_signal": signal, "has_pref_signal": False, "fact_categories": [], "pref_categories": []},
        )


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    return path


TINY = [
    # gold, flagged, one right fact and one wrong one
    {
        "id": "a",
        "utterance": "我 住在 杭州",
        "utterance_unsegmented": "我住在杭州，我有车",
        "gold_persona_unsegmented": ["我住在杭州"],
        "gold_persona": ["我 住在 杭州"],
        "context": [{"role": "assistant", "content": "你 好"}],
        "context_unsegmented": [{"role": "assistant", "content": "你好"}],
    },
    # gold, not flagged, nothing predicted
    {"id": "b", "utterance": "我是程序员", "gold_persona": ["我是程序员"], "context": [], "kvpi_domain": "job"},
    # no gold, flagged, one (wrong) fact
    {"id": "c", "utterance": "你好吗？", "gold_persona": [], "context": [], "kvpi_domain": "job"},
    # no gold, not flagged
    {"id": "d", "utterance": "谢谢", "gold_persona": [], "context": []},
    # English, speaker's name dropped before matching
    {
        "id": "e",
        "utterance": "I work at a museum.",
        "gold_persona": ["Anna works at a museum."],
        "speaker": "Anna",
        "context": [],
    },
]
TABLE = {
    "我住在杭州，我有车": (True, ["用户住在杭州", "用户有车"]),
    "你好吗？": (True, ["用户很好"]),
    "I work at a museum.": (True, ["The user works at a museum"]),
}


def test_known_answer_on_a_tiny_file(tmp_path):
    lines = load_lines(write(tmp_path / "tiny.jsonl", TINY))
    extractor = ListExtractor(TABLE)
    report = evaluate(lines, predict_all(extractor, lines), extractor.extractor_id)
    s = report.overall
    # detection: flagged a, c, e; gold on a, b, e
    assert (s.lines, s.gold_lines, s.flagged, s.flagged_gold) == (5, 3, 3, 2)
    assert s.detection_precision == pytest.approx(2 / 3)
    assert s.detection_recall == pytest.approx(2 / 3)
    assert s.flagged_share == pytest.approx(3 / 5)
    # extraction: 4 predictions, 3 gold items, 2 matches (杭州, museum)
    assert (s.predicted, s.gold_items, s.matched) == (4, 3, 2)
    assert s.extraction_precision == pytest.approx(0.5)
    assert s.extraction_recall == pytest.approx(2 / 3)
    assert s.extraction_f1 == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    # the unsegmented text and context are what the extractor is fed
    assert extractor.seen_context[0][0].content == "你好"
    # lines carrying kvpi_domain are also scored as a group
    job = report.groups["job"]
    assert (job.lines, job.gold_lines, job.flagged, job.predicted, job.matched) == (2, 1, 1, 1, 0)
    assert job.extraction_recall == 0.0


def test_rates_with_nothing_to_divide_by_are_none(tmp_path):
    lines = load_lines(write(tmp_path / "none.jsonl", [TINY[3]]))
    report = evaluate(lines, predict_all(ListExtractor({}), lines), "table/1")
    assert report.overall.detection_precision is None
    assert report.overall.extraction_f1 is None
    assert report.as_dict()["detection"]["recall"] is None


def test_extractor_without_signals_flags_what_it_found(tmp_path):
    class Bare(ListExtractor):
        def extract(self, message, context=(), known_facts=()):
            found = [ExtractedFact(text="用户住在杭州")] if "杭州" in message else []
            return Extraction(extractor_id="bare/1", facts=found)

    lines = load_lines(write(tmp_path / "t.jsonl", TINY))
    predictions = predict_all(Bare({}), lines)
    assert [p.signal for p in predictions] == [True, False, False, False, False]


def test_matching_rule():
    # subject words and punctuation go; bigram F1 for Chinese
    assert similarity("用户住在杭州", "我住在杭州。") == 1.0
    assert similarity("用户的老板姓张", "我住在杭州") == 0.0
    # word F1 for English; "the user", "I", "my" and the speaker's name are dropped
    assert similarity("The user's favorite tea is oolong", "my favorite tea is oolong.") == 1.0
    assert similarity("The user works at a museum", "Anna works at a museum", speaker="Anna") == 1.0
    # one to one: two predictions cannot both take the same gold item
    assert count_matches(["用户住在杭州", "用户住在杭州市"], ["我住在杭州"]) == 1
    assert count_matches(["用户有车", "用户住在杭州"], ["我住在杭州", "我有车"]) == 2


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "x", "utterance": "hi"}\n{not json}\n', "line 2: not valid JSON"),
        ('{"id": "x"}\n', "line 1: no 'utterance' text"),
        ("[1, 2]\n", "line 1: expected a JSON object"),
        ('{"utterance": "hi", "gold_persona": "oops"}\n', "'gold_persona' must be a list of strings"),
        ("\n\n", "no labelled lines"),
    ],
)
def test_bad_files_name_the_line(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match=message.replace("(", r"\(")):
        load_lines(path)


def test_missing_file(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        load_lines(tmp_path / "absent.jsonl")


# -- the command line (in process: no database is opened) ---------------------------------


@pytest.fixture
def run_cli(monkeypatch, capsys):
    # Offline: no key, whatever the developer's shell has.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    def run(*argv: str) -> tuple[int, str, str]:
        code = cli.main(list(argv))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def test_eval_command_prints_scores_and_writes_predictions(run_cli, tmp_path):
    data = write(tmp_path / "tiny.jsonl", TINY)
    out_file = tmp_path / "pred.jsonl"
    code, out, _ = run_cli("eval", str(data), "--json", "-q", "--predictions", str(out_file))
    assert code == 0
    report = json.loads(out)
    assert report["lines"] == 5 and report["detection"]["lines_with_gold"] == 3
    assert report["extractor_id"].startswith("offline-rules/")
    assert set(report["by_group"]) == {"job"}
    predictions = [json.loads(line) for line in out_file.read_text(encoding="utf-8").splitlines()]
    assert [p["id"] for p in predictions] == ["a", "b", "c", "d", "e"]
    assert set(predictions[0]) == {"id", "signal", "facts", "preferences"}
    assert predictions[0]["signal"] is True and "用户住在杭州" in predictions[0]["facts"]
    assert predictions[3] == {"id": "d", "signal": False, "facts": [], "preferences": []}


def test_eval_command_human_table(run_cli, tmp_path):
    code, out, _ = run_cli("eval", str(write(tmp_path / "tiny.jsonl", TINY)), "-q")
    # Headers are on two lines ("det." over "R") so ten columns fit 80 characters.
    assert code == 0 and "det." in out and "F1" in out and "job" in out and "…" not in out


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "no such file"), ('{"utterance": "hi"}\n{oops\n', "line 2: not valid JSON")],
)
def test_eval_command_exits_2_on_a_bad_file(run_cli, tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    code, _, err = run_cli("eval", str(path))
    assert code == 2
    assert message in " ".join(err.split())


def test_extract_command(run_cli):
    code, out, err = run_cli("extract", "--json", "我在杭州工作，老板姓张，平时喜欢简短的回复")
    assert code == 0
    result = json.loads(out)
    assert [f["fact"] for f in result["facts"]] == ["用户在杭州工作", "用户的老板姓张"]
    assert [p["preference"] for p in result["preferences"]] == ["偏好简短的回复风格"]
    assert result["signals"]["has_fact_signal"] is True
    assert "nothing is recorded" in err
    code, out, _ = run_cli("extract", "-q", "谢谢")
    assert code == 0 and "nothing extracted" in out
    code, _, err = run_cli("extract", "  ")
    assert code == 2 and "must not be empty" in err


def test_the_shipped_sample_is_labelled_chinese_and_english():
    lines = load_sample()
    assert len(lines) == 30 and len({line.id for line in lines}) == 30
    chinese = [line for line in lines if any("\u4e00" <= ch <= "\u9fff" for ch in line.text)]
    assert 10 <= len(chinese) <= 20
    assert sum(bool(line.gold) for line in lines) >= 15, "most lines reveal something"
    assert any(not line.gold for line in lines), "some reveal nothing (questions, thanks)"


def test_eval_sample_scores_the_active_extractor(run_cli):
    code, out, _ = run_cli("eval", "--sample", "--json", "-q")
    assert code == 0
    report = json.loads(out)
    assert report["file"] == "sample.jsonl" and report["lines"] == 30
    assert report["extractor_id"].startswith("offline-rules/")
    # The offline rules find most of what the sample's lines state.
    assert report["detection"]["recall"] >= 0.8 and report["extraction"]["f1"] >= 0.4
    code, out, _ = run_cli("eval", "--sample", "-q")
    assert code == 0 and "sample.jsonl" in out and "det." in out


@pytest.mark.parametrize("argv", [("eval",), ("eval", "--sample", "some.jsonl")])
def test_eval_needs_a_file_or_the_sample(run_cli, argv):
    code, _, err = run_cli(*argv)
    assert code == 2 and "labelled FILE or --sample" in err
