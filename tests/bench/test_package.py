"""bench/ is a package of benchmarks run as ``python -m bench.<name>``: none edits sys.path, none imports
another benchmark (what two share is in bench.harness), every one has a ``main``. Reads the source only."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
NOT_BENCHES = {"__init__", "limits_settings", "pods_asgi"}  # settings and an ASGI app used by the processes
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if p.stem not in NOT_BENCHES)


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return names


@pytest.mark.parametrize("path", SCRIPTS + sorted((BENCH / "harness").glob("*.py")), ids=lambda p: p.stem)
def test_no_path_edits_and_no_bench_imports_another(path):
    source = path.read_text(encoding="utf-8")
    assert "sys.path" not in source
    others = {n for n in imported(path) if n.startswith("bench.") and not n.startswith("bench.harness")}
    assert not others, f"{path.name} imports another benchmark: {others}"
    stems = {p.stem for p in SCRIPTS}
    assert not imported(path) & stems, f"{path.name} imports a benchmark as a top-level module"


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_every_bench_runs_as_a_module(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body)
    assert "__main__" in path.read_text(encoding="utf-8")


def test_the_harness_imports_no_benchmark():
    for path in (BENCH / "harness").glob("*.py"):
        assert not {n for n in imported(path) if n.startswith("bench.") and not n.startswith("bench.harness")}
