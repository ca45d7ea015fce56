"""Faults, counted: the fault tests (tests/*/test_faults.py and test_review_faults.py, services stack) run ``--rounds`` times, each fault's
counts added up.

    .venv/bin/python -m bench.faults [--rounds 3] [--quick] [--output PATH]

Each round runs, in one pytest process on PostgreSQL database ``bench_faults`` (created and dropped by the
tests' own machinery) and a private redis-server per test (tests/faults.py), every fault test with the
Celery worker killed whole (main process and pool process at once), then the job faults again with only the
pool process killed (MTG_FAULTS_KILL=pool):

- ``kill -9`` of the worker during a deck completion (run again: must finish, once), during its last allowed
  run (must fail with the reason), during a training run (must fail with the reason), during a gauntlet game
  (played again, counted once) and during an advice search (searched again, answered once);
- Redis killed and restarted empty (no persistence) during a draft pod (2 people, 6 bots, Daphne + worker)
  and during a game against the AI over its websocket;
- PostgreSQL sessions terminated (``pg_terminate_backend``) during a pick and in the middle of two HTTP
  requests' transactions (a deck import, a completion request).

Every test writes its counts (``tests.faults.record``) to a file this script reads: jobs queued, succeeded
after a retry, failed with a reason, stuck ("running" when it ends: must be 0); picks and actions lost or
duplicated (0); requests answered with a clean error, succeeded on retry, rows half-written (0); reconnects,
stalls, seconds from the kill to the job's end. Writes bench/results/faults.json and prints a table; exits 1
when a test failed or a must-be-zero count is not zero. --quick: one round, no pool-process round.
"""
from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from bench.harness.machine import machine, tool_versions
from bench.harness.paths import RESULTS, ROOT, command
from bench.harness.report import write_result

FILES = ["tests/decks/completion/test_faults.py", "tests/ml/test_faults.py", "tests/gameplay/test_faults.py",
         "tests/gameplay/test_review_faults.py",
         "tests/drafts/test_faults.py", "tests/mtgsite/test_faults.py"]
JOB_FAULTS = "killed"  # -k: the tests that kill a worker
MUST_BE_ZERO = ("stuck", "lost_picks", "duplicated_picks", "lost_actions", "duplicated_actions", "unknown_actions",
                "half_written_rows", "stalls")


def run_tests(report: Path, junit: Path, kill: str, select: str | None) -> tuple[float, list[str]]:
    """One pytest process over the fault tests; (seconds, its failure lines: the ``E`` lines of its report)."""
    env = {**os.environ, "MTG_STACK": "services", "POSTGRES_TEST_DB": "bench_faults", "MTG_FAULTS_REPORT": str(report),
           "MTG_FAULTS_KILL": kill, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "services", "--create-db",
            f"--junitxml={junit}", *FILES]
    if select:
        argv += ["-k", select]
    t = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith(("E ", "FAILED", "ERROR"))]
    return time.monotonic() - t, lines[:40]


def outcomes(junit: Path, kill: str) -> list[dict]:
    out = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        failed = case.find("failure") is not None or case.find("error") is not None
        skipped = case.find("skipped") is not None
        out.append({"test": f"{case.get('classname')}::{case.get('name')}", "kill": kill,
                    "outcome": "failed" if failed else "skipped" if skipped else "passed",
                    "seconds": round(float(case.get("time") or 0), 1)})
    return out


def aggregate(records: list[dict]) -> dict:
    faults: dict[str, dict] = {}
    for rec in records:
        f = faults.setdefault(rec["fault"], {"runs": 0, "recovered_s": []})
        f["runs"] += 1
        for key, value in rec.items():
            if key == "recovered_s":
                f["recovered_s"].append(value)
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and key != "attempts":
                f[key] = f.get(key, 0) + value
    for f in faults.values():
        seconds = f.pop("recovered_s")
        if seconds:
            f["recovery_seconds"] = {"median": round(statistics.median(seconds), 1), "max": max(seconds)}
    return faults


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one round, without the pool-process round")
    parser.add_argument("--output", default=str(RESULTS / "faults.json"))
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else max(1, args.rounds)
    records, tests, seconds, failure_lines = [], [], 0.0, []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(rounds):
            plan = [("worker", None)] + ([] if args.quick else [("pool", JOB_FAULTS)])
            for kill, select in plan:
                report, junit = Path(tmp) / f"report-{n}-{kill}.jsonl", Path(tmp) / f"junit-{n}-{kill}.xml"
                took, lines = run_tests(report, junit, kill, select)
                seconds += took
                failure_lines += lines
                round_tests = outcomes(junit, kill) if junit.exists() else [
                    {"test": "pytest", "kill": kill, "outcome": "failed", "seconds": round(took, 1)}]
                tests += round_tests
                if report.exists():
                    records += [json.loads(line) for line in report.read_text().splitlines() if line.strip()]
                failed = sum(t["outcome"] == "failed" for t in round_tests)
                print(f"round {n + 1}/{rounds}, kill {kill}: {len(round_tests)} tests, {failed} failed, {took:.0f} s",
                      flush=True)
    faults = aggregate(records)
    totals = collections.Counter()
    for f in faults.values():
        for key in MUST_BE_ZERO + ("queued", "succeeded_after_retry", "failed_with_reason", "clean_errors",
                                   "succeeded_on_retry", "reconnects"):
            totals[key] += f.get(key, 0)
    failed_tests = [t for t in tests if t["outcome"] == "failed"]
    ok = not failed_tests and all(totals[k] == 0 for k in MUST_BE_ZERO)
    doc = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "command": command("faults", argv),
        "machine": machine(**tool_versions(postgresql=["psql", "--version"], redis=["redis-server", "--version"])),
        "rounds": rounds, "seconds": round(seconds, 1),
        "ok": ok, "totals": dict(totals), "faults": faults,
        "tests": {"run": len(tests), "passed": sum(t["outcome"] == "passed" for t in tests),
                  "failed": [t["test"] + f" (kill {t['kill']})" for t in failed_tests],
                  "failure_lines": failure_lines},
        "per_test": tests,
    }
    out = Path(args.output)
    write_result(doc, out, indent=1)
    print(f"\n{'fault':<62} runs  ok-after-retry  failed-with-reason  stuck  lost  dup  recovery s (median/max)")
    for name, f in sorted(faults.items()):
        rec = f.get("recovery_seconds") or {}
        lost = f.get("lost_picks", 0) + f.get("lost_actions", 0) + f.get("half_written_rows", 0)
        dup = f.get("duplicated_picks", 0) + f.get("duplicated_actions", 0)
        ok_retry = f.get("succeeded_after_retry", 0) + f.get("succeeded_on_retry", 0)
        print(f"{name:<62} {f['runs']:>4}  {ok_retry:>14}  {f.get('failed_with_reason', 0):>18}  "
              f"{f.get('stuck', 0):>5}  {lost:>4}  {dup:>3}  {rec.get('median', '-')}/{rec.get('max', '-')}")
    print(f"\ntests: {doc['tests']['passed']}/{len(tests)} passed; totals {dict(totals)}; "
          f"{'OK' if ok else 'FAILED'} -> {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
