#!/usr/bin/env python
"""Benchmark: a new user's first ``make run``, from a clean clone to the first HTTP 200.

    python -m bench.first_run [--stack both|embedded|services] [--include-install | --both] [--port N] [--keep]

By default both stacks are measured in one run, the embedded stack first, so their figures come from one machine
in one state. Clones this checkout's HEAD (committed work only) into a temporary folder with its own ``var/`` (so its own
SQLite database; on ``--stack services`` the PostgreSQL database ``first_run_bench``, its own Celery queue,
channel prefix and cache database), ``MTG_DATA_DIR`` pointing at the real data. Without ``--include-install``
the clone's ``.venv`` is a link to this checkout's (install excluded); with it, ``make run`` creates and fills
a fresh one (network or wheels needed); ``--both`` runs the two one after the other. Runs ``make run
PORT=<free port> STACK=<stack>``, timestamps every line of its output (progress-bar updates included), polls
``http://127.0.0.1:<port>/`` until it answers 200, then stops the server. Each step's time is cut at the line
that starts it (``== stack``, ``cards: importing``, ...); a step whose output stops for more than 10 s is
flagged as silent, with the line its longest silence followed. Writes ``bench/results/first_run.json`` and
``.md``: a block per stack, and in it one section per kind of run (``install_excluded``, ``install_included``),
each with its own commit, date and load averages; a run replaces only its own sections, so the others' last
figures stay.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from bench.harness.machine import machine
from bench.harness.paths import RESULTS, ROOT, command, data_dir
from bench.harness.processes import free_port
from bench.harness.report import write_result

RESULT = RESULTS / "first_run.json"
TARGET_SECONDS = 8 * 60
SILENT_SECONDS = 10.0
BENCH_DB = "first_run_bench"
STACKS = ("embedded", "services")
# (step, the output line that starts it), in the order make run prints them; "install" starts at 0.
STEPS = [
    ("install", None),
    ("migrate", r"== debug"),
    ("cards", r"cards: (importing|already imported)"),
    ("sets", r"sets: (importing|already imported)"),
    ("decks", r"decks: (importing|already imported)"),
    ("models", r"decks: \{|card_embeddings: |register"),
    ("completion decks", r"completion decks: "),
    ("engine cards", r"engine cards: (converting the catalogue for|already built)"),
    ("server start", r"== serving"),
]


def split_steps(events: list[tuple[float, str]], end: float) -> dict:
    """Timestamped output segments (seconds from the start, text) -> ``{step: {seconds, longest_silence_seconds,
    silent, silent_after}}`` for the steps that started before ``end`` (the first 200), in order;
    ``silent_after`` is the segment the longest silence followed (the step's start when nothing came before)."""
    starts = {"install": 0.0}
    for t, text in events:
        for name, pattern in STEPS[1:]:
            if name not in starts and re.match(pattern, text.strip()):
                starts[name] = t
                break
    ordered = sorted((t, name) for name, t in starts.items() if t <= end)
    out = {}
    for k, (t0, name) in enumerate(ordered):
        t1 = ordered[k + 1][0] if k + 1 < len(ordered) else end
        inside = [(t, text) for t, text in events if t0 <= t < t1]
        # the step's start line is at t0; the gaps run from each segment to the next, the last to t1
        marks = [(t0, inside[0][1] if inside and inside[0][0] == t0 else f"({name} starts)")]
        marks += [(t, text) for t, text in inside if t > t0]
        gaps = [(b - a, text) for (a, text), (b, _) in zip(marks, marks[1:] + [(t1, "")])]
        silence, after = max(gaps, key=lambda g: g[0], default=(0.0, ""))
        out[name] = {"seconds": round(t1 - t0, 1), "longest_silence_seconds": round(silence, 1),
                     "silent": silence > SILENT_SECONDS, "silent_after": after.strip()[:100]}
    return out


def clean_clone(dest: Path, include_install: bool) -> str:
    """A clone of this checkout's HEAD at ``dest``; its .venv linked to ours unless the install is timed."""
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["git", "clone", "-q", str(ROOT), str(dest)], check=True)
    subprocess.run(["git", "checkout", "-q", "--detach", sha], cwd=dest, check=True)
    if not include_install:
        (dest / ".venv").symlink_to((ROOT / ".venv").resolve())
    return sha


def run_env(stack: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in {"MTG_VAR_DIR", "SQLITE_PATH", "DJANGO_SETTINGS_MODULE", "VIRTUAL_ENV", "PYTHONPATH"}}
    env.update(MTG_DATA_DIR=str(data_dir().resolve()), MTG_PROGRESS="1", PYTHONUNBUFFERED="1")
    if stack == "services":
        env.update(POSTGRES_DB=BENCH_DB, CELERY_DEFAULT_QUEUE=BENCH_DB, MTG_CHANNEL_PREFIX=BENCH_DB,
                   REDIS_CACHE_URL=os.environ.get("FIRST_RUN_REDIS_CACHE", "redis://127.0.0.1:6379/13"))
    return env


def reset_database(stack: str) -> None:
    if stack == "services":
        from bench.harness.processes import pg_admin  # noqa: PLC0415 - psycopg only on the services stack

        pg_admin(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")
        pg_admin(f"CREATE DATABASE {BENCH_DB}")


class Output:
    """Reads a process's output in a thread: every segment ending in \\n or \\r, with its time."""

    def __init__(self, stream, t0: float, echo: bool):
        self.events: list[tuple[float, str]] = []
        self.lines: list[tuple[float, str]] = []  # the \n-ended ones (progress-bar updates end in \r)
        self._stream, self._t0, self._echo = stream, t0, echo
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        buf = b""
        while chunk := os.read(self._stream.fileno(), 65536):
            now = time.perf_counter() - self._t0
            if self._echo:
                os.write(2, chunk)
            buf += chunk
            parts = re.split(rb"(\r|\n)", buf)
            buf = parts.pop()
            for text, sep in zip(parts[::2], parts[1::2]):
                line = text.decode("utf-8", "replace")
                if line.strip():
                    self.events.append((now, line))
                    if sep == b"\n":
                        self.lines.append((now, line))


def first_200(port: int, proc: subprocess.Popen, timeout: float, t0: float) -> float | None:
    """Seconds from ``t0`` to the first 200 on ``/`` (None when make run ended or ``timeout`` passed)."""
    while time.perf_counter() - t0 < timeout:
        if proc.poll() is not None:
            return None
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as response:
                if response.status == 200:
                    return time.perf_counter() - t0
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(0.5)
    return None


def stop(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGINT, 10), (signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def measure(args, stack: str, include_install: bool) -> dict:
    """One first ``make run`` on ``stack`` from a fresh clone: its section of the result."""
    workdir = Path(tempfile.mkdtemp(prefix="first_run-"))
    clone = workdir / "repo"
    sha = clean_clone(clone, include_install)
    reset_database(stack)
    port = args.port or free_port()
    load_before = os.getloadavg()
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = dt.datetime.now(dt.timezone.utc)
    t0 = time.perf_counter()
    proc = subprocess.Popen(["make", "run", f"PORT={port}", f"STACK={stack}"], cwd=clone, env=run_env(stack),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    out = Output(proc.stdout, t0, args.echo)
    try:
        answered = first_200(port, proc, args.timeout, t0)
    finally:
        stop(proc)
        out.thread.join(10)
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    end = answered if answered is not None else time.perf_counter() - t0
    steps = split_steps(out.events, end)
    install = steps.get("install", {}).get("seconds", 0.0)
    section = {
        "date": started.isoformat(timespec="seconds"), "commit": sha, "include_install": include_install,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "answered_200": answered is not None,
        "to_first_200_seconds": round(end, 1),
        "to_first_200_minutes": round(end / 60, 2),
        "install_seconds": install,
        "excluding_install_seconds": round(end - install, 1),
        "excluding_install_minutes": round((end - install) / 60, 2),
        "within_target": answered is not None and end - install <= TARGET_SECONDS,
        "cpu_seconds": round(cpu_after.ru_utime + cpu_after.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime, 1),
        "longest_silence_seconds": max((s["longest_silence_seconds"] for s in steps.values()), default=0.0),
        "silent_steps": [name for name, s in steps.items() if s["silent"]],
        "steps": steps,
        "events": [f"{t:7.1f}s {line}" for t, line in out.lines],
    }
    if args.keep:
        section["clone"] = str(clone)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
        if stack == "services":
            from bench.harness.processes import pg_admin  # noqa: PLC0415 - psycopg only on the services stack

            pg_admin(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")
    return section


def section_name(include_install: bool) -> str:
    return "install_included" if include_install else "install_excluded"


def stack_result(previous: dict | None, sections: dict) -> dict:
    """One stack's block: this run's ``sections`` (``{install_excluded|install_included: section}``) with the other
    kind's section kept from ``previous`` (that stack's last block), and a headline of both."""
    kept = {name: previous[name] for name in (section_name(False), section_name(True)) if previous and name in previous}
    kept.update(sections)
    ordered = {name: kept[name] for name in (section_name(False), section_name(True)) if name in kept}
    headline = {}
    for name, sec in ordered.items():
        # a run cut short (no 200 before --timeout) has no time to the first page: None, and says so
        headline[f"{name}_minutes"] = sec["excluding_install_minutes" if name == section_name(False)
                                          else "to_first_200_minutes"] if sec["answered_200"] else None
        if not sec["answered_200"]:
            headline[f"{name}_cut_short_after_minutes"] = sec["to_first_200_minutes"]
        headline[f"{name}_longest_silence_seconds"] = sec["longest_silence_seconds"]
    if section_name(True) in ordered:  # None when the run was cut short before the install ended
        included = ordered[section_name(True)]
        headline["install_seconds"] = included["install_seconds"] if "migrate" in included["steps"] else None
    if section_name(False) in ordered:
        headline["within_target"] = ordered[section_name(False)]["within_target"]
    headline["silent_steps"] = sorted({f"{step} ({name})" for name, sec in ordered.items()
                                       for step in sec["silent_steps"]})
    return {"headline": headline, **ordered}


def combine(previous: dict | None, sections: dict, stack: str) -> dict:
    """The result: one block per stack (``embedded``, ``services``); this run's ``sections`` replace their kind in
    ``stack``'s block, every other block and kind stays as the last result (``previous``) had it. A result written
    before the blocks (one stack at the top level) is read as that stack's block."""
    blocks = {}
    if previous:
        if any(section_name(kind) in previous for kind in (False, True)):
            blocks[previous.get("stack", "embedded")] = stack_result(None, {
                k: v for k, v in previous.items() if k in (section_name(False), section_name(True))})
        for name in STACKS:
            if isinstance(previous.get(name), dict):
                blocks[name] = previous[name]
    blocks[stack] = stack_result(blocks.get(stack), sections)
    ordered = {name: blocks[name] for name in STACKS if name in blocks}
    return {
        "benchmark": "first_run", "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "command": command("first_run"),
        "shared_machine": "the 2 cores may be shared with other work while a run goes on: each run's load averages "
                          "(before and after) say how busy the machine was",
        "target_seconds_excluding_install": TARGET_SECONDS,
        "silent_threshold_seconds": SILENT_SECONDS,
        "headline": {f"{name}.{key}": value for name, block in ordered.items() for key, value in block["headline"].items()},
        **ordered,
    }


def _previous(path: Path) -> dict | None:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stack", choices=[*STACKS, "both"], default="both",
                    help="both (the default): the embedded stack, then the services stack, in one run")
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--include-install", action="store_true", help="time the install too (a fresh .venv)")
    which.add_argument("--both", action="store_true", help="install excluded, then included, one after the other")
    ap.add_argument("--port", type=int, help="default: a free port")
    ap.add_argument("--timeout", type=float, default=45 * 60, help="give up after this many seconds")
    ap.add_argument("--keep", action="store_true", help="keep the clone (its var/ and log) for a look")
    ap.add_argument("--echo", action="store_true", help="show make run's output while it runs")
    ap.add_argument("--output", type=Path, default=RESULT)
    args = ap.parse_args(argv)
    kinds = [False, True] if args.both else [args.include_install]
    stacks = list(STACKS) if args.stack == "both" else [args.stack]
    ok = True
    for stack, include_install in [(st, kind) for st in stacks for kind in kinds]:
        section = measure(args, stack, include_install)
        # written after each run: a run cut short leaves the earlier ones' figures
        result = combine(_previous(args.output), {section_name(include_install): section}, stack)
        write_result(result, args.output)
        ok = ok and section["answered_200"]
        answer = "first 200 after" if section["answered_200"] else "no 200 (cut short) after"
        print(f"{stack}, {section_name(include_install)}: {answer} {section['to_first_200_seconds']}s "
              f"({section['excluding_install_seconds']}s without the install; target {TARGET_SECONDS}s)")
        for name, step in section["steps"].items():
            flag = f"  SILENT > {SILENT_SECONDS:g} s after: {step['silent_after']}" if step["silent"] else ""
            print(f"  {name:18} {step['seconds']:7.1f}s  longest silence {step['longest_silence_seconds']:5.1f}s{flag}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
