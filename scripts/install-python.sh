#!/usr/bin/env bash
# Create .venv and install the pinned requirements. torch is the CPU build: a local wheel when the
# machine has one (/opt/wheels), else PyTorch's CPU index (an unpinned torch pulls GBs of CUDA).
set -euo pipefail
VENV=${VENV:-.venv}
REQ=${1:-requirements-dev.txt}
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required (Django 5.2 LTS)"'
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
stamp="$VENV/.installed-$(cat requirements.txt "$REQ" | sha1sum | cut -c1-12)"
[ -f "$stamp" ] && exit 0
"$VENV/bin/pip" install -q --upgrade pip wheel
if ! "$VENV/bin/python" -c 'import torch, sys; sys.exit(torch.__version__.split("+")[0] != "2.13.0")' 2>/dev/null; then
  wheel=$(ls /opt/wheels/torch-2.13.0+cpu-cp311-*.whl 2>/dev/null | head -n1 || true)
  if [ -n "$wheel" ]; then
    "$VENV/bin/pip" install -q "$wheel"
  else
    "$VENV/bin/pip" install -q torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
  fi
fi
"$VENV/bin/pip" install -q -r "$REQ"
rm -f "$VENV"/.installed-*
touch "$stamp"
