"""Complete many decks: JSONL in, JSONL out, batched on the device of MTG_DEVICE
(``plumbing.device.device``: auto, cpu or cuda).

Input lines:  {"id", "format", "main": [[name, count], ...], "side": [[name, count], ...]
               [, "collection": "N Name lines" or [[name, count], ...]]}
Output lines: {"id", "main": [[name, count], ...], "side": [...][, "missing": [[name, count], ...], "missing_table":
[[name, wanted, owned, missing], ...], "not_owned": [[name, count], ...], "notes": [...]][, "archetypes":
[{"share", "decks", "main", "side"}, ...] when the given cards fit several archetypes]}
              or  {"id", "error": "..."}
With a collection (masked model only) only its cards are added, within their counts (basic lands in any number);
"missing" lists what a tournament deck would add that it lacks.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from decks.completion.service import DEFAULT_MODEL, MODELS, CompletionRequestError, get_completer, parse_request
from decks.completion.models.common import CompletionError
from common.device import DeviceUnavailable
from plumbing.device import device
from plumbing.progress import progress
from ml.registry import NoActiveModel


class Command(BaseCommand):
    help = "Complete every task of a JSONL file with the active models; one JSON line out per line in."

    def add_arguments(self, parser):
        parser.add_argument("--in", dest="infile", required=True)
        parser.add_argument("--out", dest="outfile", required=True)
        parser.add_argument("--model", choices=list(MODELS), default=DEFAULT_MODEL,
                            help="masked (default: nearest tournament decks + masked diffusion) or manamorphosis")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--sampler", choices=["fast", "full"], default="fast", help="manamorphosis only")
        parser.add_argument("--batch", type=int, default=32, help="decks denoised together")
        parser.add_argument("--no-side", action="store_true")

    def handle(self, *args, **opts):
        src = Path(opts["infile"])
        if not src.exists():
            raise CommandError(f"{src} does not exist.")
        try:
            device()  # MTG_DEVICE=cuda without a GPU stops here, not silently on the CPU
        except DeviceUnavailable as exc:
            raise CommandError(str(exc)) from None
        try:
            completer = get_completer(opts["model"])
        except NoActiveModel as exc:
            raise CommandError(str(exc))
        lines = src.read_text(encoding="utf-8", errors="replace").splitlines()
        results: list[dict | None] = [None] * len(lines)
        pending: list[tuple[int, object, str]] = []  # (position, request, id)
        for pos, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                task = json.loads(line)
                if not isinstance(task, dict):
                    raise ValueError("not a JSON object")
            except ValueError as exc:
                results[pos] = {"id": None, "error": f"line {pos + 1}: not valid JSON ({exc})"}
                continue
            task_id = task.get("id", pos + 1)
            try:
                req = parse_request(main=task.get("main") or [], side=task.get("side") or [], fmt=str(task.get("format") or ""),
                                    generate_side=not opts["no_side"], sampler=opts["sampler"], seed=opts["seed"],
                                    model=opts["model"], collection=task.get("collection"))
            except CompletionRequestError as exc:
                results[pos] = {"id": task_id, "error": "; ".join(e["message"] for e in exc.errors)}
                continue
            pending.append((pos, req, task_id))

        started = time.perf_counter()
        batch = max(1, opts["batch"])
        bar = progress(total=len(pending), desc="completing", unit="deck")
        for start in range(0, len(pending), batch):
            chunk = pending[start:start + batch]
            if opts["model"] == "masked":
                requests = [(req.main, req.side, req.format, req.collection) for _, req, _ in chunk]
                outcomes = completer.complete_many(requests, seed=opts["seed"], generate_side=not opts["no_side"])
            else:
                requests = [(req.main, req.side, req.format) for _, req, _ in chunk]
                outcomes = completer.complete_many(requests, seed=opts["seed"], sampler=opts["sampler"],
                                                   generate_side=not opts["no_side"])
            for (pos, req, task_id), outcome in zip(chunk, outcomes):
                if isinstance(outcome, CompletionError):
                    results[pos] = {"id": task_id, "error": str(outcome)}
                else:
                    results[pos] = {"id": task_id, "main": [list(x) for x in outcome.main],
                                    "side": [list(x) for x in outcome.side]}
                    if getattr(outcome, "archetypes", None):  # the given cards fit several archetypes
                        results[pos]["archetypes"] = [
                            {"share": a.share, "decks": a.decks, "main": [list(x) for x in a.main],
                             "side": [list(x) for x in a.side]} for a in outcome.archetypes]
                    if req.collection is not None:
                        results[pos].update(missing=[list(x) for x in outcome.missing],
                                            missing_table=[list(x) for x in outcome.missing_table],
                                            not_owned=[list(x) for x in outcome.not_owned], notes=outcome.notes)
            bar.update(len(chunk))
        bar.close()
        elapsed = time.perf_counter() - started
        with open(opts["outfile"], "w", encoding="utf-8") as out:
            for r in results:
                if r is not None:
                    out.write(json.dumps(r, ensure_ascii=False) + "\n")
        done = sum(1 for r in results if r and "main" in r)
        errors = sum(1 for r in results if r and "error" in r)
        self.stdout.write(self.style.SUCCESS(
            f"{done} completed, {errors} errors, {elapsed:.1f}s ({done / elapsed if elapsed else 0:.1f} decks/s) -> {opts['outfile']}"))
