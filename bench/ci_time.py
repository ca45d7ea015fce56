#!/usr/bin/env python
"""Benchmark: how long CI's test command takes on a clean clone of this checkout.

    python -m bench.ci_time [--include-install] [--keep] [--echo] [--timeout SECONDS]

Clones this checkout's HEAD (committed work only) into a temporary folder, links its ``.venv`` to this checkout's
(``--include-install``: ``make test`` creates and fills a fresh one, as CI does) and runs ``make test`` there, the
README's test command, with its output timestamped. It cuts the run into its stages at the lines the Makefile
prints (install, ruff, the embedded stack, the services stack), reads each stack's pytest summary (passed,
skipped, deselected, failed) and the slowest tests pytest lists (``--durations``), and writes
``bench/results/ci_time.json`` and ``.md``: the minutes of each stage and of the whole run, the counts, the exit
status, the load averages before and after (the 2 cores may be shared: say how busy they were), the commit.

Never run it beside another test run on this machine: the services stack's tests use fixed Redis databases and
test-database names, and restart Redis in their fault tests. CI's limit is 90 minutes; issue 35 asks for at most
25 on this 2-core machine with nothing else running.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from bench.harness.machine import machine
from bench.harness.paths import RESULTS, ROOT, command
from bench.harness.report import write_result

RESULT = RESULTS / "ci_time.json"
TARGET_MINUTES = 25.0
# (stage, the line of `make test`'s output that starts it), in order; "install" starts at 0
STAGES = [("install", None), ("services and browser", r"services: PostgreSQL"), ("ruff", r"== ruff"),
          ("embedded stack", r"== tests on the embedded stack"), ("services stack", r"== tests on the services stack")]
SUMMARY = re.compile(r"^=*\s*(?P<body>(\d+ (passed|failed|skipped|deselected|error|errors|xfailed|xpassed|warnings?)"
                     r"(, )?)+) in (?P<seconds>[\d.]+)s")
DURATION = re.compile(r"^(?P<seconds>[\d.]+)s (?P<when>call|setup|teardown)\s+(?P<test>\S+)")


def stages_of(lines: list[tuple[float, str]], end: float) -> dict:
    """Timestamped output lines -> ``{stage: seconds}`` for the stages that started, in order."""
    starts = {"install": 0.0}
    for t, text in lines:
        for name, pattern in STAGES[1:]:
            if name not in starts and re.search(pattern, text):
                starts[name] = t
    ordered = sorted((t, name) for name, t in starts.items())
    return {name: round((ordered[k + 1][0] if k + 1 < len(ordered) else end) - t0, 1)
            for k, (t0, name) in enumerate(ordered)}


def summaries(lines: list[str]) -> list[dict]:
    """Each pytest summary line (``12 passed, 3 skipped in 40.1s``) as counts, in the order they came."""
    out = []
    for text in lines:
        match = SUMMARY.search(text.strip())
        if not match:
            continue
        counts = {kind.rstrip("s") if kind in ("errors", "warnings") else kind: int(n)
                  for n, kind in re.findall(r"(\d+) (\w+)", match["body"])}
        out.append({**counts, "seconds": float(match["seconds"])})
    return out


def failures(lines: list[str]) -> list[str]:
    """The tests pytest's short summary names as failed or in error (``FAILED tests/x.py::test_y - ...``)."""
    return [text.split(" - ")[0].split(maxsplit=1)[1] for text in (t.strip() for t in lines)
            if text.startswith(("FAILED ", "ERROR ")) and len(text.split()) > 1]


def slowest(lines: list[str], n: int = 15) -> list[dict]:
    found = []
    for text in lines:
        match = DURATION.match(text.strip())
        if match:
            found.append({"seconds": float(match["seconds"]), "when": match["when"], "test": match["test"]})
    return sorted(found, key=lambda d: -d["seconds"])[:n]


def split_stacks(lines: list[str]) -> dict[str, list[str]]:
    """The output lines of each stack's pytest run."""
    parts: dict[str, list[str]] = {"before": []}
    current = "before"
    for text in lines:
        if "== tests on the embedded stack" in text:
            current = "embedded"
        elif "== tests on the services stack" in text:
            current = "services"
        parts.setdefault(current, []).append(text)
    return parts


def run(args) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="ci_time-"))
    clone = workdir / "repo"
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "checkout", "-q", "--detach", sha], cwd=clone, check=True)
    if not args.include_install:
        (clone / ".venv").symlink_to((ROOT / ".venv").resolve())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MTG_", "PYTEST_", "DJANGO_"))
           and k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["MTG_DATA_DIR"] = str((ROOT.parent / "shared" / "data").resolve()) if not os.environ.get("MTG_DATA_DIR") \
        else os.environ["MTG_DATA_DIR"]
    load_before = os.getloadavg()
    started = dt.datetime.now(dt.timezone.utc)
    t0 = time.perf_counter()
    proc = subprocess.Popen(["make", "test"], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    lines: list[tuple[float, str]] = []

    def read():
        for raw in iter(proc.stdout.readline, b""):
            text = raw.decode("utf-8", "replace").rstrip("\n")
            lines.append((time.perf_counter() - t0, text))
            if args.echo:
                print(text, flush=True)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        rc = proc.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        rc = None
    reader.join(30)
    end = time.perf_counter() - t0
    texts = [text for _, text in lines]
    stacks = split_stacks(texts)
    per_stack = {}
    for name in ("embedded", "services"):
        found = summaries(stacks.get(name, []))
        per_stack[name] = {"summary": found[-1] if found else None, "failures": failures(stacks.get(name, [])),
                           "slowest": slowest(stacks.get(name, []))}
    stage_seconds = stages_of(lines, end)
    result = {
        "benchmark": "ci_time", "date": started.isoformat(timespec="seconds"), "commit": sha,
        "machine": machine(), "command": command("ci_time"),
        "what": "`make test` (the README's test command, which .ci/run runs) on a clean clone of the commit",
        "include_install": args.include_install, "target_minutes": TARGET_MINUTES,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "headline": {
            "minutes": round(end / 60, 1), "exit_status": rc, "within_target": rc == 0 and end / 60 <= TARGET_MINUTES,
            **{f"{name}_minutes": round(seconds / 60, 1) for name, seconds in stage_seconds.items()},
            **{f"{name}_{kind}": (s["summary"] or {}).get(kind) for name, s in per_stack.items()
               for kind in ("passed", "skipped", "deselected", "failed")},
        },
        "stages_seconds": stage_seconds, "stacks": per_stack,
        "tail": texts[-40:] if rc != 0 else [],
    }
    if args.keep:
        result["clone"] = str(clone)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--include-install", action="store_true", help="a fresh .venv in the clone, as CI makes")
    ap.add_argument("--timeout", type=float, default=90 * 60, help="CI's limit (seconds)")
    ap.add_argument("--keep", action="store_true", help="keep the clone")
    ap.add_argument("--echo", action="store_true", help="show make test's output as it runs")
    ap.add_argument("--output", type=Path, default=RESULT)
    args = ap.parse_args(argv)
    result = run(args)
    write_result(result, args.output)
    head = result["headline"]
    print(f"make test on a clean clone of {result['commit'][:10]}: {head['minutes']} minutes, exit {head['exit_status']}")
    for name, seconds in result["stages_seconds"].items():
        print(f"  {name:22} {seconds / 60:6.1f} min")
    for name, stack in result["stacks"].items():
        print(f"  {name}: {stack['summary']}")
    return 0 if head["exit_status"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
