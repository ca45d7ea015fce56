#!/usr/bin/env python3
"""Progress for the install's long steps, before the project's own progress helper (tqdm) is installed.

    python3 scripts/install_progress.py LABEL DIR -- COMMAND...

Runs COMMAND (pip, or ``python -m venv``) and prints ``install: LABEL: ...`` at least every few seconds while
it runs, so no stretch of the install is silent: while pip resolves, how many packages it has found; while
it installs, the megabytes written under DIR (the virtual environment) out of what the wheels it named will
write (their files, read from the wheels themselves where they are local, plus the bytecode pip compiles;
estimated from the download size where not local), with an ETA at the rate so far. COMMAND's own output is kept back and shown only when it fails.
Standard library only: it runs on the interpreter that creates the virtual environment.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

EVERY = 5.0  # seconds between two progress lines at most
PYC_PER_PY = 1.5  # bytecode pip compiles per byte of a wheel's .py files (1.4-1.7 in this project's packages)
WRITTEN_PER_DOWNLOADED = 4.0  # bytes written (files and bytecode) per byte of a download, where only that is known
_SIZE = re.compile(r"\(([\d.]+)\s*([kMG]?B)\)")
_UNITS = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}


def wheel_bytes(line: str) -> tuple[str, float] | None:
    """A pip output line that names a wheel it will install -> (its name, the bytes installing it writes: its
    files and their bytecode, estimated from the download size where the file is not local); None for any
    other line."""
    text = line.strip()
    if text.startswith("Processing ") and ".whl" in text:
        path = Path(text.split()[1])
        try:
            with zipfile.ZipFile(path) as whl:
                files = whl.infolist()
                py = sum(i.file_size for i in files if i.filename.endswith(".py"))
                return path.name, float(sum(i.file_size for i in files) + PYC_PER_PY * py)
        except (OSError, zipfile.BadZipFile):
            return path.name, 0.0
    if text.startswith(("Downloading ", "Using cached ")) and ".whl" in text:
        size = _SIZE.search(text)
        name = text.split()[1] if text.startswith("Downloading ") else text.split()[2]
        return name, float(size.group(1)) * _UNITS[size.group(2)] * WRITTEN_PER_DOWNLOADED if size else 0.0
    return None


def tree_bytes(root: Path) -> int:
    """The size of every file under ``root`` (0 when it does not exist yet)."""
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def status(label: str, phase: str, elapsed: float, written: float, total: float, found: int) -> str:
    """One progress line: resolving (packages found so far), or installing (MB written of the expected, ETA)."""
    if phase == "resolving":
        return f"install: {label}: resolving, {found} packages found, {elapsed:.0f} s"
    mb = written / 1e6
    if total <= 0:
        return f"install: {label}: {mb:.0f} MB written, {elapsed:.0f} s"
    done = min(written / total, 0.99)
    bar = "#" * int(done * 20)
    eta = elapsed * (1 - done) / done if done > 0.01 else None
    left = f", about {eta:.0f} s left" if eta is not None else ""
    return (f"install: {label}: {done:4.0%}|{bar:<20}| {mb:.0f} of {total / 1e6:.0f} MB, {elapsed:.0f} s"
            f"{left}")


def run(label: str, root: Path, argv: list[str], every: float = EVERY, out=sys.stdout) -> int:
    """Runs ``argv``, printing progress lines to ``out``; its exit status. Its output is shown if it fails."""
    start_bytes = tree_bytes(root)
    t0 = time.monotonic()
    state = {"phase": "resolving" if "pip" in Path(argv[0]).name or "pip" in argv[1:3] else "installing",
             "total": 0.0, "found": 0}
    kept: list[str] = []
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})  # pip's lines as it prints them

    def read():
        for line in proc.stdout:
            kept.append(line)
            wheel = wheel_bytes(line)
            if wheel:
                state["found"] += 1
                state["total"] += wheel[1]
            elif line.startswith("Installing collected packages"):
                state["phase"] = "installing"

    def measure():  # walking a full .venv takes seconds on a loaded machine: never in the printing loop
        while proc.poll() is None:
            state["written"] = max(tree_bytes(root) - start_bytes, 0)
            time.sleep(every)

    state["written"] = 0
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    threading.Thread(target=measure, daemon=True).start()
    print(f"install: {label}", file=out, flush=True)
    while True:
        try:
            proc.wait(timeout=every)
            break
        except subprocess.TimeoutExpired:
            print(status(label, state["phase"], time.monotonic() - t0, state["written"], state["total"],
                         state["found"]), file=out, flush=True)
    reader.join()
    elapsed = time.monotonic() - t0
    if proc.returncode:
        out.write("".join(kept))
        print(f"install: {label}: failed (exit {proc.returncode}) after {elapsed:.0f} s", file=out, flush=True)
    else:
        print(f"install: {label}: done in {elapsed:.0f} s", file=out, flush=True)
    return proc.returncode


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    return run(argv[0], Path(argv[1]), argv[3:])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
