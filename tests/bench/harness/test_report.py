"""bench.harness.report: a result's .md is built from its JSON alone, and the committed ones are up to date
(docs link to them instead of copying figures, so they must not drift from the JSON). Pure: no Django."""
from __future__ import annotations

import json

import pytest

from bench.harness import report
from bench.harness.paths import RESULTS

DOC = {
    "benchmark": "demo", "command": "python -m bench.demo --n 3", "date": "2026-11-27T12:00:00",
    "machine": {"platform": "Linux", "cpu": "EPYC", "cpu_count": 2, "memory_gib": 23.5, "python": "3.11.7",
                "torch": "2.13"},
    "n": 3, "ok": True, "ci95": [0.1234567, 0.9],
    "quality": {"masked": {"main_recall": 0.76063, "side_recall": 0.5, "per_format": {"0": {"n": 1}}},
                "vote": {"main_recall": 0.754, "side_recall": 0.49}},
    "games": [{"seed": i} for i in range(50)],
}


def test_render_has_the_command_machine_date_and_figures():
    text = report.render(DOC, "demo")
    assert text.startswith("# Benchmark result: demo\n")
    assert "- command: `python -m bench.demo --n 3`" in text
    assert "- date: 2026-11-27T12:00:00" in text
    assert "- machine: EPYC, 2 CPUs, 23.5 GiB, Linux, Python 3.11.7, torch 2.13" in text
    assert "| n | 3 |" in text and "| ok | true |" in text and "| ci95 | [0.1235, 0.9] |" in text
    # like records become one table, their detail stays in the JSON
    assert "| quality | main_recall | side_recall |" in text
    assert "| masked | 0.7606 | 0.5 |" in text and "| vote | 0.754 | 0.49 |" in text
    assert "per_format" not in text
    assert "| games | (50 entries in the JSON) |" in text


def test_an_older_machine_record_and_a_command_list_render():
    text = report.render({"when": "2026-11-01", "commands": ["a", "b"], "machine": {"cpus": 4}, "x": None}, "old")
    assert "- machine: 4 CPUs" in text and "- command: `a`\n- command: `b`" in text and "| x | — |" in text


def test_write_result_writes_the_json_and_the_md_beside_it(tmp_path):
    path = report.write_result(DOC, tmp_path / "demo.json", indent=1)
    assert path.read_text(encoding="utf-8") == json.dumps(DOC, indent=1) + "\n"
    assert (tmp_path / "demo.md").read_text(encoding="utf-8") == report.render(DOC, "demo")
    assert not list(tmp_path.glob("*.tmp"))
    report.write_result({"a": 1}, tmp_path / "b.json", newline=False)
    assert (tmp_path / "b.json").read_text(encoding="utf-8") == '{\n  "a": 1\n}'


def test_render_all_rewrites_every_md(tmp_path):
    (tmp_path / "one.json").write_text(json.dumps({"n": 1}), encoding="utf-8")
    (tmp_path / "two.json").write_text(json.dumps({"n": 2}), encoding="utf-8")
    assert [p.name for p in report.render_all(tmp_path)] == ["one.md", "two.md"]
    assert "| n | 2 |" in (tmp_path / "two.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda p: p.name)
def test_the_committed_md_matches_its_json(path):
    md = report.markdown_path(path)
    assert md.exists(), f"{md.name} is missing: python -m bench.harness.report --all"
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert md.read_text(encoding="utf-8") == report.render(doc, path.stem), \
        f"{md.name} is stale: python -m bench.harness.report --all"
