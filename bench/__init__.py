"""Reproducible benchmarks: each runs as ``python -m bench.<name>`` from the repository root and writes
``bench/results/<name>.json`` and ``.md`` (see bench/README.md); ``bench.harness`` is what they share."""
