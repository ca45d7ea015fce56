"""The one description of the machine a benchmark ran on, recorded under ``"machine"`` in every result."""
from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path


def _proc_field(path: str, prefix: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def package_version(name: str) -> str | None:
    """An installed distribution's version, None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415 - only for the machine record

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def tool_versions(**argvs: list[str]) -> dict:
    """``{name: the output of its argv}`` for command-line tools' version commands, those that can be run
    (``postgresql=["psql", "--version"]``)."""
    out = {}
    for name, argv in argvs.items():
        try:
            out[name] = subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
        except OSError:
            pass
    return out


def machine(**extra) -> dict:
    """Platform, CPU model and count, memory, Python; ``extra`` adds what a benchmark depends on (torch, the
    services' versions, ...)."""
    cpu = _proc_field("/proc/cpuinfo", "model name") or platform.processor() or ""
    mem = _proc_field("/proc/meminfo", "MemTotal:")
    memory = round(int(mem.split()[0]) / 1024 / 1024, 1) if mem else None
    return {"platform": platform.platform(), "cpu": cpu, "cpu_count": os.cpu_count(), "memory_gib": memory,
            "python": platform.python_version(), **extra}
