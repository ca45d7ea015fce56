"""Training and evaluation of the draft bots: the registry kind ``draft_bot``, scope FAMILY:SET (archetype or neural).
Plain functions that ``manage.py models train|evaluate draft_bot`` and the training runs (``ml.training``) call;
the kind itself is ``drafts.kinds.DRAFT_BOT``, registered with ``ml.kinds`` from ``DraftsConfig.ready``.

The logs are a 17Lands-layout file (``logs``), the drafts of the set stored here (``stored``; the default when there
are any) or else the proxy logs in MTG_DATA_DIR. One pod in ten is held out for the reported metrics (crc32 of the
pod id); the rest is split into training and validation pods.
"""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

from django.conf import settings

from drafts.bots.archetype import train_archetype, validation_mask
from drafts.core.evaluate import agreement, ranks_from_scores, score_matrix
from common.figures import figure_bytes
from drafts.core.plots import loss_curves_figure
from drafts.core.logs import DraftLogs, held_out_mask, pod_keys, read_17lands_csv, read_seats, seats_file_for
from drafts.logstore import seat_logs
from drafts.models import DraftSeat
from drafts.pods.service import consented_seats
from drafts.services import _load_bot, bot_scope, set_list
from ml.kinds import TrainingError
from ml.models import ModelVersion
from ml.progress import Progress
from ml.registry import save_version

KIND = "draft_bot"
FAMILIES = ("archetype", "neural")
EPOCHS = {"archetype": 20, "neural": 25}  # the bots' own defaults
QUICK = {"archetype": {"epochs": 3},
         "neural": {"epochs": 2, "net": {"hidden": [64], "epochs": 2, "refit": False, "batch_size": 256,
                                         "patience": 2, "ensemble": 1}}}


def json_safe(value):
    """NaN and infinities (e.g. the validation loss of a split too small to hold validation pods)
    become None: JSON columns refuse them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def summary(result: dict) -> dict:
    return {"all": result["all"], "unforced": result["unforced"]}


# --- the logs ------------------------------------------------------------------------------------------------

def read_logs(path: str, limit: int | None, progress: Progress) -> DraftLogs:
    """A 17Lands-layout file (the first ``limit`` rows), with a bar over the picks read."""
    if not Path(path).exists():
        raise TrainingError(f"{path}: no such file")
    bar = progress.bar(desc=f"reading {Path(path).name}", unit="pick")
    last = [0]

    def on_chunk(n):
        bar.update(n - last[0])
        last[0] = n

    try:
        return read_17lands_csv(path, limit=limit, on_chunk=on_chunk)
    finally:
        bar.close()


def stored_logs(code: str, kind: str | None, consented: bool = False):
    """The stored drafts of a set as arrays, with each seat's pod (for the split by pod).
    ``consented``: only people's own seats of online pods whose drafters opted in."""
    seats = DraftSeat.objects.filter(draft__set_code=code.upper()).select_related("draft")
    if kind:
        seats = seats.filter(draft__kind=kind)
    if consented:
        seats = consented_seats(code).select_related("draft")
    if not seats.exists():
        raise TrainingError(f"no stored {'consented ' if consented else ''}{kind + ' ' if kind else ''}drafts of "
                            f"{code.upper()}")
    pods = {s.log_id: (str(s.draft_id), s.seat) for s in seats}
    return seat_logs(seats), pods


def logs_source(scope: str, params: dict) -> tuple[str, str | None]:
    """(set code of the scope, the logs file to read, or None for the stored drafts). ``params``: ``logs`` (a
    file), ``stored`` (the stored drafts; by default when there are any), else the proxy logs in MTG_DATA_DIR."""
    code = scope.partition(":")[2].upper()
    logs_path, use_stored = params.get("logs"), params.get("stored")
    if not code and not logs_path:
        raise TrainingError("A scope FAMILY: without a set takes the set of a 17Lands file: give the 'logs' parameter.")
    if not logs_path and not use_stored:
        if use_stored is None and DraftSeat.objects.filter(draft__set_code=code).exists():
            return code, None
        proxy = Path(settings.MTG_DATA_DIR) / "drafts" / f"draft_data_proxy.{code}.PremierDraft.train.csv.gz"
        if not proxy.exists():
            raise TrainingError(f"No draft logs for {code}: no stored drafts and no {proxy.name} in MTG_DATA_DIR; "
                                f"give a 17Lands file with the 'logs' parameter.")
        logs_path = str(proxy)
    return code, logs_path or None


def draft_logs(code: str, logs_path: str | None, params: dict, progress: Progress):
    """(logs, pod keys, description) of ``logs_source``'s answer; ``code`` empty: the set of the file."""
    if logs_path is None:
        kind, consented = params.get("draft_kind"), bool(params.get("consented"))
        data, pods = stored_logs(code, kind, consented)
        source = {"logs": f"stored {code} drafts" + (f" ({kind})" if kind else "") + (" (consented)" if consented else ""),
                  "stored": code, "draft_kind": kind, **({"consented": True} if consented else {})}
    else:
        data = read_logs(logs_path, params.get("limit"), progress)
        seats = params.get("seats") or seats_file_for(logs_path)
        pods = read_seats(seats) if seats else None
        source = {"logs": Path(logs_path).name, "logs_path": str(logs_path), "limit": params.get("limit")}
    if code and data.set_code.upper() != code:
        raise TrainingError(f"the logs are of {data.set_code}, the scope says {code}")
    return data, pod_keys(data, pods), source


# --- training and evaluation ---------------------------------------------------------------------------------

def train(params: dict, progress: Progress, scope: str) -> ModelVersion:
    """Train the bot of ``scope`` (FAMILY:SET; FAMILY: alone takes the set of the ``logs`` file), score it on the
    held-out pods and register an inactive version. params: the source (``logs``, ``stored``, ``draft_kind``,
    ``consented``, ``seats``, ``limit``), ``epochs``, ``seed``, ``notes``, ``plot`` (a FILE.svg or FILE.png the
    loss curves are written to); archetype: ``n_archetypes``, ``lr``; neural: ``net`` (a NeuralConfig)."""
    import torch  # noqa: PLC0415 - seconds to import: kept off Django start-up (DraftsConfig.ready imports this)

    family = scope.partition(":")[0]
    torch.set_num_threads(max(1, torch.get_num_threads()))
    code, logs_path = logs_source(scope, params)
    progress.expect(2 if logs_path else 1)  # reading the file, training
    data, keys, source = draft_logs(code, logs_path, params, progress)
    s = set_list(data.set_code)
    held = held_out_mask(keys)
    train_logs, test = data.select(~held), data.select(held)
    if not len(test) or not len(train_logs):
        raise TrainingError("too few pods to hold one in ten out: give more logs")
    progress.log(f"{len(data)} picks: {len(train_logs)} to train on, {len(test)} held out (1 pod in 10)")
    epochs = int(params.get("epochs") or EPOCHS[family])
    seed = int(params.get("seed") or 0)
    if family == "archetype":
        total, prefer = epochs, ("val_loss", "train_loss")
    else:
        from drafts.bots.neural import NeuralConfig, train_neural  # noqa: PLC0415 - imports torch, as above

        cfg = NeuralConfig.from_dict(params.get("net") or {})
        cfg.epochs = epochs
        total, prefer = epochs * max(1, cfg.ensemble) * (2 if cfg.refit else 1), ("val_top1", "train_loss")
    bar = progress.bar(total=total, desc=f"training {family} on {data.set_code}", unit="epoch")

    def on_epoch(record=None, *rest):
        if not isinstance(record, dict):  # the neural bot's (epoch, train_loss, val_loss, val_top1)
            record = dict(zip(("epoch", "train_loss", "val_loss", "val_top1"), (record, *rest)))
        floats = {k: v for k, v in record.items() if isinstance(v, float) and math.isfinite(v)}
        bar.update(1)
        bar.set_postfix({k: round(v, 4) for k, v in floats.items()})
        name = next((k for k in prefer if k in floats), None)
        if name:
            progress.metric(name, floats[name])
        progress.log(f"epoch {record.get('epoch')}: " + ", ".join(f"{k} {v:.4f}" for k, v in floats.items()))

    started = time.perf_counter()
    if family == "archetype":
        extra = {k: params[k] for k in ("n_archetypes", "lr") if params.get(k) is not None}
        model, history = train_archetype(train_logs, epochs=epochs, seed=seed, on_epoch=on_epoch, set_list=s,
                                         keys=keys[~held], **extra)
    else:
        val = validation_mask(keys[~held])
        model, history = train_neural(train_logs, ~val, val, config=cfg, seed=seed, on_epoch=on_epoch, set_list=s)
    seconds = time.perf_counter() - started
    bar.close()
    result = agreement(test, ranks_from_scores(test, score_matrix(model, test, s)))
    progress.metric("held_out_top1", result["all"]["top1"])
    progress.log(f"held-out top-1 {result['all']['top1']:.3f}, top-3 {result['all']['top3']:.3f}")
    if history.get("members"):  # an ensemble: the loss curves of its first member
        history = {**history["members"][0], "members": len(history["members"])}
    metrics = {"held_out": summary(result), "by_pick": result["by_pick"], "train_seconds": round(seconds, 1),
               "history": {k: v for k, v in history.items() if isinstance(v, (list, int, float))}}
    if params.get("plot"):
        write_loss_curves(params["plot"], metrics["history"], f"{family} bot, {data.set_code}")
    config = json_safe(model.config())
    return save_version(KIND, model.to_tensors(), config, metrics=json_safe(metrics),
                        scope=scope if code else bot_scope(family, data.set_code), activate=False, metadata={"config": json.dumps(config)},
                        notes=params.get("notes") or "",
                        data_snapshot={**source, "rows": len(data), "train_rows": len(train_logs),
                                       "held_out_rows": len(test), "split": "1 pod in 10 held out (crc32 of the pod id)"})


def write_loss_curves(path: str, history: dict, title: str) -> None:
    """The loss curves as FILE.png, else as SVG."""
    fmt = "png" if Path(path).suffix.lower() == ".png" else "svg"
    Path(path).write_bytes(figure_bytes(loss_curves_figure(history, title), fmt))


SPLITS = ("held-out", "all", "train")


def evaluate(version: ModelVersion, params: dict, progress: Progress) -> dict:
    """Pick agreement on the held-out pods of the logs the version was trained on (or of ``params``' source);
    ``split``: the held-out pods (the default), ``all`` the picks or the ``train`` pods."""
    split = params.get("split") or "held-out"
    if split not in SPLITS:
        raise TrainingError(f"split {split!r}: one of {', '.join(SPLITS)}")
    snap = version.data_snapshot or {}
    source = {k: v for k, v in params.items() if k in ("logs", "stored", "draft_kind", "limit")}
    if not source:
        if snap.get("logs_path"):
            source = {"logs": snap["logs_path"], "limit": snap.get("limit")}
        elif snap.get("stored"):
            source = {"stored": True, "draft_kind": snap.get("draft_kind"), "consented": snap.get("consented")}
    code, logs_path = logs_source(version.scope, source)
    progress.expect(2 if logs_path else 1)  # reading the file, scoring
    data, keys, _ = draft_logs(code, logs_path, source, progress)
    held = held_out_mask(keys)
    test = data if split == "all" else data.select(held if split == "held-out" else ~held)
    s = set_list(data.set_code)
    bar = progress.bar(total=1, desc=f"scoring {len(test)} {split} picks")
    started = time.perf_counter()
    result = agreement(test, ranks_from_scores(test, score_matrix(_load_bot(version), test, s)))
    elapsed = time.perf_counter() - started
    bar.update(1)
    progress.metric("top1", result["all"]["top1"])
    return {"top1": result["all"]["top1"], "top3": result["all"]["top3"], "mean_rank": result["all"]["mean_rank"],
            "unforced_top1": result["unforced"]["top1"], "picks": len(test),
            "picks_per_second": round(len(test) / max(elapsed, 1e-9), 1),
            "split": {"held-out": "held-out pods (1 in 10)", "all": "all picks", "train": "training pods"}[split]}
