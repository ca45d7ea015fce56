"""scripts/install_progress.py: the install's long steps print a progress line at least every few seconds
(what pip found, then the MB written of what the wheels will write, with an ETA), and a failing command's own
output is shown. Pure: real subprocesses and real wheel files, no Django."""
from __future__ import annotations

import importlib.util
import io
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("install_progress", ROOT / "scripts" / "install_progress.py")
install_progress = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(install_progress)


def test_a_local_wheel_counts_its_files_and_bytecode_and_a_download_its_estimate(tmp_path):
    whl = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("demo/__init__.py", "x = 1\n" * 1000)
        z.writestr("demo-1.0.dist-info/METADATA", "Name: demo\n")
    assert install_progress.wheel_bytes(f"Processing {whl} (from -r requirements.txt (line 3))") == \
        (whl.name, 6000.0 * (1 + install_progress.PYC_PER_PY) + len("Name: demo\n"))
    name, size = install_progress.wheel_bytes("  Downloading filelock-4.3.1-py3-none-any.whl (244 kB)")
    assert name == "filelock-4.3.1-py3-none-any.whl" and size == 244e3 * install_progress.WRITTEN_PER_DOWNLOADED
    assert install_progress.wheel_bytes("  Using cached pip-26.3-py3-none-any.whl (2.0 MB)")[1] == \
        2e6 * install_progress.WRITTEN_PER_DOWNLOADED
    for other in ("Collecting packaging>=24.0 (from wheel)", "Installing collected packages: pip",
                  "WARNING: Location 'file:///opt/pypi-more/simple/wheel/' is ignored", "Processing ./src"):
        assert install_progress.wheel_bytes(other) is None


def test_status_lines_say_what_is_found_then_written_with_an_eta():
    assert install_progress.status("req", "resolving", 12.0, 0, 0, 7) == "install: req: resolving, 7 packages found, 12 s"
    line = install_progress.status("torch", "installing", 20.0, 200e6, 800e6, 1)
    assert line.startswith("install: torch:  25%|#####") and "200 of 800 MB, 20 s, about 60 s left" in line
    # more written than expected (bytecode) stays under 100 % until the command ends
    assert "99%" in install_progress.status("torch", "installing", 90.0, 900e6, 800e6, 1)
    assert install_progress.status("venv", "installing", 6.0, 3e6, 0, 0) == "install: venv: 3 MB written, 6 s"


WRITER = """
import os, pathlib, sys, time
print("Collecting demo", flush=True)
print("Installing collected packages: demo", flush=True)
for k in range(6):
    pathlib.Path(sys.argv[1], f"f{k}").write_bytes(b"x" * 100_000)
    time.sleep(0.2)
os.close(1), os.close(2)  # its output ends a while before it does, as pip's can
time.sleep(0.3)
os._exit(int(sys.argv[2]))
"""


def test_a_silent_command_gets_a_line_every_interval_and_its_output_only_when_it_fails(tmp_path):
    out = io.StringIO()
    code = install_progress.run("demo", tmp_path, [sys.executable, "-c", WRITER, str(tmp_path), "0"], every=0.3, out=out)
    lines = out.getvalue().splitlines()
    assert code == 0 and lines[0] == "install: demo" and lines[-1].startswith("install: demo: done in ")
    ticks = [line for line in lines[1:-1] if "MB written" in line]
    assert 3 <= len(ticks) <= 1.5 / 0.3 + 3, lines  # ~1.5 s of work, a line every 0.3 s (and no more)
    assert "Collecting demo" not in out.getvalue()  # pip's own chatter is kept back

    out = io.StringIO()
    code = install_progress.run("demo", tmp_path / "b", [sys.executable, "-c", WRITER, str(tmp_path), "3"],
                                every=0.3, out=out)
    assert code == 3 and "Collecting demo" in out.getvalue()
    assert out.getvalue().splitlines()[-1].startswith("install: demo: failed (exit 3)")


@pytest.mark.parametrize("argv", [[], ["label"], ["label", "dir", "cmd"]])
def test_usage_errors_exit_2(argv):
    assert install_progress.main(argv) == 2
