"""A benchmark's result: ``bench/results/<name>.json`` (everything it measured) and, built from that JSON,
``bench/results/<name>.md`` (its headline figures as a markdown table, the command that made them, the
machine and the date). Docs link to the .md instead of copying figures.

    python -m bench.harness.report --all          # re-render every .md from the JSON beside it
    python -m bench.harness.report results/x.json # one
"""
from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path

from bench.harness.paths import RESULTS, ROOT

# Raw records and bulky detail stay in the JSON; the .md says how many there were.
DETAIL = {"games", "per_test", "per_format", "_samples", "server_logs", "server_tracebacks",
          "decks", "pairings", "close", "invalid", "first_error", "error_samples", "problems", "ours_by_deck",
          "positions_list", "by_deck", "commands", "config", "settings", "events", "samples", "tracebacks", "history",
          "card_table"}
META = {"benchmark", "bench", "command", "date", "when", "machine"}
MAX_DEPTH = 6
MAX_INLINE = 6
MAX_COLUMNS = 14


def _value(v) -> str:
    if isinstance(v, bool) or v is None:
        return str(v).lower() if v is not None else "—"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        return f"{v:.4g}" if abs(v) < 1e5 else f"{v:,.0f}"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v).replace("|", "\\|").replace("\n", " ")


def _scalar(v) -> bool:
    if isinstance(v, dict):
        return False
    return not isinstance(v, list) or (len(v) <= MAX_INLINE and all(not isinstance(x, (dict, list)) for x in v))


def _leaves(record: dict, prefix: str = "", depth: int = 0, nested: bool = True) -> dict:
    """A record's figures: its scalars, and (``nested``) those of the dicts inside it, keys joined with dots."""
    out = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if _scalar(value):
            out[name] = value
        elif nested and isinstance(value, dict) and depth < 1 and str(key) not in DETAIL:
            out.update(_leaves(value, f"{name}.", depth + 1))
    return out


def _record_like(key, value: dict) -> bool:
    """A dict that can be a table row: any not named as detail, and one named so (a step called "decks") whose
    values are all figures, as a record of raw detail never is."""
    return str(key) not in DETAIL or all(_scalar(v) and not isinstance(v, list) for v in value.values())


def _records(value: dict) -> dict:
    """``{key: figures}`` of the values of ``value`` that are like records (dicts sharing at least two figure
    names), one table row each; empty when there are fewer than two."""
    for nested in (True, False):  # a table of at most MAX_COLUMNS columns, else the records' own scalars only
        subs = {k: _leaves(v, nested=nested) for k, v in value.items() if isinstance(v, dict) and _record_like(k, v)}
        if len(set().union(*subs.values())) <= MAX_COLUMNS:
            break
    shared = set.intersection(*(set(f) for f in subs.values())) if subs else set()
    return subs if len(subs) >= 2 and len(shared) >= 2 else {}


def _walk(value, prefix: str, depth: int, rows: list, tables: list) -> None:
    """Scalars under ``value`` become (figure, value) rows, keys joined with dots; dicts of like records become
    tables of their own; detail stays in the JSON (summarised by its size)."""
    if isinstance(value, dict):
        if depth > MAX_DEPTH:
            rows.append((prefix, f"({len(value)} entries in the JSON)"))
            return
        records = _records(value) if depth > 1 else {}
        if records:
            columns: list = []
            for figures in records.values():
                columns += [c for c in figures if c not in columns]
            table = [f"| {prefix or 'figure'} | " + " | ".join(map(str, columns)) + " |",
                     "|---" * (len(columns) + 1) + "|"]
            table += ["| " + " | ".join([str(k)] + [_value(f[c]) if c in f else "" for c in columns]) + " |"
                      for k, f in records.items()]
            tables.append((prefix, table))
        for key, sub in value.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if key in records:  # its figures are the table's row; deeper records get tables of their own
                for child, inner in sub.items():
                    if isinstance(inner, dict) and str(child) not in DETAIL \
                            and any(isinstance(x, dict) for x in inner.values()):
                        _walk(inner, f"{name}.{child}", depth + 2, rows, tables)
                continue
            if str(key) in DETAIL and isinstance(sub, (dict, list)):
                rows.append((name, f"({len(sub)} entries in the JSON)"))
            else:
                _walk(sub, name, depth + 1, rows, tables)
    elif isinstance(value, list) and not _scalar(value):
        if all(isinstance(x, dict) for x in value) and len(value) <= 20 and depth <= 2:
            _walk({(x.get("name") or x.get("mode") or x.get("with") or i): x for i, x in enumerate(value)},
                  prefix, depth + 1, rows, tables)
        else:
            rows.append((prefix, f"({len(value)} entries in the JSON)"))
    else:
        rows.append((prefix, _value(value)))


def _machine(m: dict | None) -> str:
    if not m:
        return "not recorded"
    cpus = m.get("cpu_count", m.get("cpus"))
    parts = [m.get("cpu") or "", f"{cpus} CPUs" if cpus else "",
             f"{m['memory_gib']} GiB" if m.get("memory_gib") else "", m.get("platform") or "",
             f"Python {m['python']}" if m.get("python") else ""]
    parts += [f"{k} {v}" for k, v in m.items()
              if k not in {"cpu", "cpu_count", "cpus", "memory_gib", "platform", "python"} and v not in (None, "")]
    return ", ".join(p for p in parts if p)


def render(doc: dict, name: str) -> str:
    """The markdown page of one result: what made it, on what and when, then its figures."""
    commands = doc.get("command") or doc.get("commands")
    if isinstance(commands, dict):
        commands = list(commands.values())
    if isinstance(commands, str):
        commands = [commands]
    lines = [f"# Benchmark result: {name}", "",
             f"Generated from [`{name}.json`]({name}.json) by `python -m bench.harness.report` "
             "(do not edit: rerun the benchmark, or re-render with `python -m bench.harness.report --all`).", "",
             f"- date: {doc.get('date') or doc.get('when') or 'not recorded'}",
             f"- machine: {_machine(doc.get('machine'))}"]
    lines += [f"- command: `{c}`" for c in (commands or ["not recorded"]) if isinstance(c, str)]
    rows: list = []
    tables: list = []
    body = {k: v for k, v in doc.items() if k not in META and not (k == "commands" and commands)}
    _walk(body, "", 1, rows, tables)
    if rows:
        lines += ["", "| figure | value |", "|---|---|", *[f"| {figure} | {text} |" for figure, text in rows]]
    for title, table in tables:
        lines += ["", f"## {title or name}", "", *table]
    return "\n".join(lines) + "\n"


def markdown_path(json_path: Path) -> Path:
    return Path(json_path).with_suffix(".md")


def write_markdown(json_path: Path, doc: dict | None = None) -> Path:
    """Writes the .md beside ``json_path`` (from ``doc``, else from the JSON file)."""
    json_path = Path(json_path)
    if doc is None:
        doc = json.loads(json_path.read_text(encoding="utf-8"))
    out = markdown_path(json_path)
    out.write_text(render(doc, json_path.stem), encoding="utf-8")
    return out


def write_result(doc: dict, path: Path, *, newline: bool = True, **dump) -> Path:
    """A benchmark's end: its JSON at ``path`` (``json.dumps`` options, default ``indent=2``) and the .md
    beside it (``newline``: end the JSON with one, as most benches always did). Returns the JSON's path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    dump.setdefault("indent", 2)
    tmp = path.with_suffix(".tmp")  # replaced in one step: a run cut short leaves the last whole file
    tmp.write_text(json.dumps(doc, **dump) + ("\n" if newline else ""), encoding="utf-8")
    os.replace(tmp, path)
    write_markdown(path, json.loads(json.dumps(doc, default=dump.get("default"))))
    return path


def render_all(folder: Path = RESULTS) -> list[Path]:
    return [write_markdown(p) for p in sorted(Path(folder).glob("*.json"))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Render bench/results/<name>.md from <name>.json.")
    ap.add_argument("paths", nargs="*", type=Path, help="result JSON files")
    ap.add_argument("--all", action="store_true", help="every JSON file in bench/results/")
    args = ap.parse_args(argv)
    if not args.all and not args.paths:
        ap.error("give result files or --all")
    written = render_all() if args.all else [write_markdown(p) for p in args.paths]
    for p in written:
        print(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
