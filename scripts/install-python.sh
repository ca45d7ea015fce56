#!/usr/bin/env bash
# Create .venv and install the pinned requirements. torch is the CPU build: a local wheel when the
# machine has one (/opt/wheels), else PyTorch's CPU index (an unpinned torch pulls GBs of CUDA).
set -euo pipefail
VENV=${VENV:-.venv}
REQ=${1:-requirements-dev.txt}
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required (Django 5.2 LTS)"'
# Each long step prints a progress line at least every 5 s (what pip found, then the MB written of what the
# wheels will write, with an ETA); pip's own output is shown when it fails.
progress() { local label=$1; shift; "$PY" "$(dirname "$0")/install_progress.py" "$label" "$VENV" -- "$@"; }
[ -x "$VENV/bin/python" ] || progress "creating $VENV (Python 3.11)" "$PY" -m venv "$VENV"
stamp="$VENV/.installed-$(cat requirements.txt "$REQ" | sha1sum | cut -c1-12)"
[ -f "$stamp" ] && exit 0
echo "== install: the Python packages into $VENV (a few minutes the first time)"
progress "pip and wheel" "$VENV/bin/pip" install --upgrade pip wheel
if ! "$VENV/bin/python" -c 'import torch, sys; sys.exit(torch.__version__.split("+")[0] != "2.13.0")' 2>/dev/null; then
  wheel=$(ls /opt/wheels/torch-2.13.0+cpu-cp311-*.whl 2>/dev/null | head -n1 || true)
  if [ -n "$wheel" ]; then
    progress "torch 2.13.0 (CPU build, local wheel)" "$VENV/bin/pip" install "$wheel"
  else
    progress "torch 2.13.0 (CPU build)" "$VENV/bin/pip" install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
  fi
fi
progress "the requirements ($REQ)" "$VENV/bin/pip" install -r "$REQ"
rm -f "$VENV"/.installed-*
touch "$stamp"
