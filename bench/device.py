"""CPU and GPU speed of the models, in one run: deck completions/s, draft-bot picks/s, training steps/s.

    python -m bench.device --export var/device-inputs            # here: write the small inputs (no database)
    python -m bench.device --inputs var/device-inputs [--output bench/results/device.json]

``--export DIR`` writes what the measurement needs, from the shipped weights (``ml/weights/``) and the real
deck corpus (``MTG_DATA_DIR``): ``--decks`` corpus decks (every ``--stride``-th line, so all formats and dates)
whose cards the shipped vocabulary knows (arrays: the retrieval index of the completer and the training decks),
``--jobs`` more as completion jobs (their first 20 main-deck cards), the card names, the masked completer's weights and config and the neural
pick bot of BLB: a few MB, kept out of git (``var/`` is ignored). Without the database there is no card table:
a card is taken as legal in a format when one of the exported decks of that format plays it (basic lands in
every format), the copy limit is 4 (basic lands: any number) and nothing is restricted.

``--inputs DIR`` needs only numpy, scipy, torch, safetensors and rapidfuzz (imported by the draft code's card
names; carry its wheel where it is missing): no Django, no database, no data folder, so it runs on a GPU machine. On the CPU and, where ``torch.cuda.is_available()``, on the GPU (the network on
that device, as ``MTG_DEVICE`` puts it; the retrieval and the sampler's bookkeeping stay numpy on the CPU):

- **completion**: jobs/s of the masked completer (``complete_many`` on batches of 8, as the worker batches);
- **draft bot**: picks/s of the neural pick bot's network (one seat at a time, and the 8 seats of a pod
  together), beside the site's own numpy forward pass on the CPU;
- **training**: steps/s of the masked completion model (``train`` for ``--steps`` steps of batch 64 with the
  shipped model's size; the examples are built on the CPU, as in a real run); the planning before is not timed.

Ratios are GPU/CPU of the same run. Writes ``bench/results/device.json`` and ``.md``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import lzma
import sys
import time
from pathlib import Path

import numpy as np

from bench.harness.machine import machine
from bench.harness.paths import RESULTS, ROOT, command, data_dir
from bench.harness.report import write_result

CORPUS = ("mtg_decklistcache", "decks_60main_15side.jsonl.xz")
WEIGHTS = ROOT / "ml" / "weights"
DRAFT_BOT = "neural-BLB.safetensors"
KNOWN = 20  # main-deck cards a completion job gives
WORKER_BATCH = 8


# --- export (here) -------------------------------------------------------------------------------------------

def _slots(entries, index: dict, size: int) -> list[int] | None:
    """A board's card indices, one per copy, sorted (the DeckArrays layout); None when a card is unknown or the
    board is not ``size`` cards."""
    out = []
    for name, count in entries or ():
        i = index.get(name)
        if i is None:
            return None
        out += [i] * int(count)
    return sorted(out) if len(out) == size else None


def export(folder: Path, decks: int, jobs: int, stride: int) -> dict:
    from safetensors import safe_open  # noqa: PLC0415 kept off the --inputs path's start-up
    from safetensors.torch import load_file, save_file  # noqa: PLC0415 kept off the --inputs path's start-up

    from decks.core.cards import BASIC_LAND_NAMES  # noqa: PLC0415 only for the export
    from decks.core.rules import FORMATS  # noqa: PLC0415 only for the export

    folder.mkdir(parents=True, exist_ok=True)
    with safe_open(str(WEIGHTS / "card_embeddings.safetensors"), framework="pt") as fh:
        names = json.loads(fh.metadata()["names"])
    index = {n: i for i, n in enumerate(names)}
    fmt_index = {f: k for k, f in enumerate(FORMATS)}
    manifest = {e["kind"]: e for e in json.loads((WEIGHTS / "manifest.json").read_text(encoding="utf-8"))
                if e["kind"] in ("deck_masked",)}
    rows, job_rows = [], []
    corpus = data_dir().joinpath(*CORPUS)
    with lzma.open(corpus, "rt", encoding="utf-8") as fh:
        for number, line in enumerate(fh):
            if number % stride:
                continue
            deck = json.loads(line)
            f = fmt_index.get(str(deck.get("format", "")).lower())
            main, side = _slots(deck.get("main"), index, 60), _slots(deck.get("side"), index, 15)
            if f is None or main is None or side is None:
                continue
            day = (dt.date.fromisoformat(str(deck["date"])[:10]) - dt.date(1970, 1, 1)).days
            if len(rows) < decks:
                rows.append((main, side, f, day))
            else:
                job_rows.append((deck["main"], FORMATS[f]))
                if len(job_rows) == jobs:
                    break
    main = np.array([r[0] for r in rows], np.int32)
    side = np.array([r[1] for r in rows], np.int32)
    fmt = np.array([r[2] for r in rows], np.int16)
    legal = np.zeros((len(FORMATS), len(names)), bool)
    for f in range(len(FORMATS)):
        legal[f, np.unique(np.concatenate([main[fmt == f].ravel(), side[fmt == f].ravel()]))] = True
    copy_limit = np.full(len(names), 4, np.int16)
    for name in BASIC_LAND_NAMES:
        if name in index:
            legal[:, index[name]] = True
            copy_limit[index[name]] = 0
    np.savez_compressed(folder / "decks.npz", main=main, side=side, fmt=fmt,
                        day=np.array([r[3] for r in rows], np.int32), weight=np.ones(len(rows), np.float32),
                        legal=legal, copy_limit=copy_limit, restricted=np.zeros_like(legal))
    jobs_out = []
    for entries, f in job_rows:  # the first KNOWN main-deck cards of each job deck
        taken, left = [], KNOWN
        for name, count in entries:
            if left <= 0:
                break
            taken.append([name, min(int(count), left)])
            left -= taken[-1][1]
        jobs_out.append({"main": taken, "format": f})
    meta = {"names": names, "formats": list(FORMATS), "jobs": jobs_out, "corpus": str(corpus),
            "masked_config": manifest["deck_masked"]["config"], "masked_sha256": manifest["deck_masked"]["sha256"]}
    (folder / "inputs.json").write_text(json.dumps(meta), encoding="utf-8")
    save_file(load_file(str(WEIGHTS / "deck_masked.safetensors")), str(folder / "deck_masked.safetensors"))
    (folder / DRAFT_BOT).write_bytes((WEIGHTS / "drafts" / DRAFT_BOT).read_bytes())
    sizes = {p.name: p.stat().st_size for p in sorted(folder.iterdir())}
    print(f"exported {len(rows)} decks, {len(jobs_out)} jobs to {folder}: {sizes}")
    return sizes


# --- measurement (anywhere) ----------------------------------------------------------------------------------

def _sync(device: str) -> None:
    import torch  # noqa: PLC0415 torch takes seconds to import: only once measuring

    if device == "cuda":
        torch.cuda.synchronize()


def _completion(inputs, arrays, device: str, n_jobs: int) -> dict:
    from safetensors.torch import load_file  # noqa: PLC0415 torch takes seconds to import: only once measuring

    from decks.completion.models.common import CompletionError  # noqa: PLC0415 torch: only once measuring
    from decks.completion.models.masked.build import masked_completer  # noqa: PLC0415 torch: only once measuring

    started = time.perf_counter()
    completer = masked_completer(inputs["masked_config"], load_file(str(inputs["dir"] / "deck_masked.safetensors")),
                                 inputs["names"], arrays, inputs["legal"], inputs["copy_limit"],
                                 inputs["restricted"], inputs["formats"], device=device)
    build = time.perf_counter() - started
    requests = [(j["main"], [], j["format"]) for j in inputs["jobs"][:n_jobs]]
    completer.complete_many(requests[:WORKER_BATCH], seed=0)  # warm-up (allocations, kernels)
    _sync(device)
    errors, batch_seconds = 0, []
    started = time.perf_counter()
    for start in range(0, len(requests), WORKER_BATCH):
        t0 = time.perf_counter()
        outs = completer.complete_many(requests[start:start + WORKER_BATCH], seed=start)
        _sync(device)
        batch_seconds.append(time.perf_counter() - t0)
        errors += sum(isinstance(o, CompletionError) for o in outs)
    total = time.perf_counter() - started
    return {"jobs": len(requests), "batch": WORKER_BATCH, "seconds": round(total, 3),
            "jobs_per_second": round(len(requests) / total, 2),
            "batch_median_s": round(float(np.median(batch_seconds)), 3), "errors": errors,
            "build_seconds": round(build, 2)}


def _draft_bot(inputs, device: str, picks: int) -> dict:
    import torch  # noqa: PLC0415 torch takes seconds to import: only once measuring

    from drafts.bots.neural import load_bot  # noqa: PLC0415 torch: only once measuring

    bot = load_bot(inputs["dir"] / DRAFT_BOT)
    net = bot.to_module(0).to(device)
    rng = np.random.default_rng(0)
    C = bot.n_cards

    def contexts(batch: int):
        """``batch`` seats' (pool, pack) count vectors: a pool of 0..44 cards, a pack of 1..14."""
        pool = np.zeros((batch, C), np.float32)
        pack = np.zeros((batch, C), np.float32)
        for b in range(batch):
            np.add.at(pool[b], rng.integers(0, C, rng.integers(0, 45)), 1)
            pack[b, rng.choice(C, rng.integers(1, 15), replace=False)] = 1
        return pool, pack

    out = {"cards": C, "parameters": bot.parameter_count(), "picks": picks}
    for seats in (1, WORKER_BATCH):
        batches = [contexts(seats) for _ in range(max(1, picks // seats))]
        tensors = [(torch.from_numpy(p), torch.from_numpy(k)) for p, k in batches]
        with torch.inference_mode():
            for pool, pack in tensors[:5]:  # warm-up
                net(pool.to(device), pack.to(device) if bot.cfg.pack_input else None).cpu()
            _sync(device)
            started = time.perf_counter()
            for pool, pack in tensors:  # one pick: the seat's vectors to the device, the scores back
                logits = net(pool.to(device), pack.to(device) if bot.cfg.pack_input else None)
                logits.masked_fill(pack.to(device) <= 0, float("-inf")).argmax(1).cpu()
            _sync(device)
            took = time.perf_counter() - started
        out[f"picks_per_second_{seats}_seat{'s' if seats > 1 else ''}"] = round(len(tensors) * seats / took, 1)
    if device == "cpu":  # the site's own path: the numpy forward pass of NeuralBot.pick
        names = bot.cards
        seats = [(list(rng.choice(names, 14, replace=False)), list(rng.choice(names, int(rng.integers(0, 45)))))
                 for _ in range(picks)]
        started = time.perf_counter()
        for pack, pool in seats:
            bot.pick(pack, pool)
        out["numpy_pick_per_second"] = round(picks / (time.perf_counter() - started), 1)
    return out


def _training(inputs, arrays, device: str, steps: int) -> dict:
    import torch  # noqa: PLC0415 torch takes seconds to import: only once measuring

    from decks.completion.models.masked.model import MaskedConfig  # noqa: PLC0415 torch: only once measuring
    from decks.completion.models.masked.train import TrainConfig, prepare, train  # noqa: PLC0415 torch: only once measuring

    prep = prepare(arrays, len(inputs["names"]), inputs["legal"], inputs["copy_limit"], inputs["restricted"],
                   None)
    config = MaskedConfig.from_dict({**inputs["masked_config"]["model"], "vocab": len(prep.cards) + 1})
    tc = TrainConfig.from_dict({**TrainConfig().to_dict(), "steps": steps, "examples": 2000, "val_examples": 16,
                                "text_init": False, "warmup_days": 0})
    stamps = []
    torch.manual_seed(0)
    _, metrics = train(prep, config, tc, progress=lambda step, total, loss, msg: (_sync(device), stamps.append(
        (step, time.perf_counter(), loss))), device=device)
    timed = [s for s in stamps if s[0] > 1]  # the first step pays for allocations and kernel choice
    seconds = timed[-1][1] - stamps[0][1]
    return {"steps": steps, "batch": tc.batch, "parameters": metrics["parameters"], "examples": metrics["examples"],
            "timed_steps": len(timed), "seconds": round(seconds, 3),
            "steps_per_second": round(len(timed) / seconds, 2),
            "examples_per_second": round(len(timed) * tc.batch / seconds, 1),
            "final_loss": round(float(timed[-1][2]), 4), "plan_seconds": metrics["plan_seconds"]}


def load_inputs(folder: Path) -> tuple[dict, object]:
    from decks.completion.models.deck_arrays import DeckArrays  # noqa: PLC0415 torch: only once measuring

    meta = json.loads((folder / "inputs.json").read_text(encoding="utf-8"))
    npz = np.load(folder / "decks.npz")
    arrays = DeckArrays(main=npz["main"], side=npz["side"], fmt=npz["fmt"], day=npz["day"], weight=npz["weight"])
    meta.update(dir=folder, legal=npz["legal"], copy_limit=npz["copy_limit"], restricted=npz["restricted"])
    return meta, arrays


def measure(folder: Path, jobs: int, picks: int, steps: int) -> dict:
    import torch  # noqa: PLC0415 torch takes seconds to import: only once measuring

    inputs, arrays = load_inputs(folder)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    results: dict = {}
    for device in devices:
        row = results[device] = {}
        for name, run in (("completion", lambda: _completion(inputs, arrays, device, jobs)),
                          ("draft_bot", lambda: _draft_bot(inputs, device, picks)),
                          ("training", lambda: _training(inputs, arrays, device, steps))):
            try:
                row[name] = run()
            except Exception as exc:  # noqa: BLE001 one failing part still leaves the others' figures
                row[name] = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"{device} {name}: {row[name]}", flush=True)
    ratios = {}
    if "cuda" in results:
        for part, key in (("completion", "jobs_per_second"), ("draft_bot", "picks_per_second_1_seat"),
                          ("draft_bot", "picks_per_second_8_seats"), ("training", "steps_per_second")):
            gpu, cpu = results["cuda"][part].get(key), results["cpu"][part].get(key)
            if gpu and cpu:
                ratios[f"{part}.{key}"] = round(gpu / cpu, 2)
    return {"devices": devices, "results": results, "gpu_over_cpu": ratios or None,
            "inputs": {"decks": len(arrays), "jobs": min(jobs, len(inputs["jobs"])), "known_main_cards": KNOWN,
                       "draft_bot": DRAFT_BOT, "masked_weights_sha256": inputs["masked_sha256"],
                       "corpus": Path(inputs["corpus"]).name},
            "django_imported": "django" in sys.modules}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--export", type=Path, metavar="DIR", help="write the inputs to DIR (here: needs the data)")
    mode.add_argument("--inputs", type=Path, metavar="DIR", help="measure from the inputs in DIR")
    ap.add_argument("--decks", type=int, default=4000, help="corpus decks to export (the retrieval index)")
    ap.add_argument("--stride", type=int, default=40, help="export every STRIDE-th corpus deck (all formats, all dates)")
    ap.add_argument("--jobs", type=int, default=32, help="completion jobs (multiple of 8)")
    ap.add_argument("--picks", type=int, default=400, help="draft-bot picks per measurement")
    ap.add_argument("--steps", type=int, default=30, help="training steps")
    ap.add_argument("--output", type=Path, default=RESULTS / "device.json")
    args = ap.parse_args(argv)
    if args.export:
        export(args.export, args.decks, args.jobs, args.stride)
        return 0
    import torch  # noqa: PLC0415 torch takes seconds to import: only once measuring

    doc = {"benchmark": "device", "command": command("device", argv),
           "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine(torch=torch.__version__, torch_threads=torch.get_num_threads(),
                              gpu=torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)}
    doc.update(measure(args.inputs, args.jobs, args.picks, args.steps))
    write_result(doc, args.output)
    print(json.dumps(doc.get("gpu_over_cpu")), f"-> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
