"""bench/ci_time.py reads make test's output: its stages, each stack's pytest summary and slowest tests."""
from bench.ci_time import failures, slowest, split_stacks, stages_of, summaries

OUTPUT = [
    (0.0, "install: creating .venv"),
    (70.0, "services: PostgreSQL 127.0.0.1:5432/mtg and Redis 127.0.0.1:6379 are up"),
    (75.0, "== ruff (ruff.toml) and the layering (tests/test_structure.py)"),
    (80.0, "== tests on the embedded stack (SQLite, in-memory layers, eager Celery)"),
    (500.0, "218.51s call     tests/gameplay/training/test_value.py::test_a_training_run"),
    (501.0, "12.00s setup    tests/gameplay/test_play_browser.py::test_x"),
    (502.0, "1,259 passed, 23 skipped in 420.33s (0:07:00)".replace("1,259", "1259")),
    (505.0, "== tests on the services stack (PostgreSQL, Redis, Celery worker and Daphne processes)"),
    (899.0, "FAILED tests/test_docs_links.py::test_relative_links_resolve[bench/README.md] - AssertionError: x"),
    (899.5, "ERROR tests/x.py::test_y"),
    (900.0, "=========== 630 passed, 3 skipped, 668 deselected, 1 failed in 390.02s (0:06:30) ==========="),
]


def test_the_stages_are_cut_at_the_makefiles_lines():
    stages = stages_of(OUTPUT, end=910.0)
    assert stages == {"install": 70.0, "services and browser": 5.0, "ruff": 5.0, "embedded stack": 425.0,
                      "services stack": 405.0}


def test_each_stacks_summary_and_slowest_tests():
    stacks = split_stacks([text for _, text in OUTPUT])
    assert summaries(stacks["embedded"]) == [{"passed": 1259, "skipped": 23, "seconds": 420.33}]
    assert summaries(stacks["services"]) == [{"passed": 630, "skipped": 3, "deselected": 668, "failed": 1,
                                              "seconds": 390.02}]
    top = slowest(stacks["embedded"])
    assert [t["seconds"] for t in top] == [218.51, 12.0] and top[0]["test"].endswith("test_a_training_run")
    assert slowest(stacks["services"]) == []


def test_the_failed_tests_are_named():
    stacks = split_stacks([text for _, text in OUTPUT])
    assert failures(stacks["services"]) == ["tests/test_docs_links.py::test_relative_links_resolve[bench/README.md]",
                                            "tests/x.py::test_y"]
    assert failures(stacks["embedded"]) == []
