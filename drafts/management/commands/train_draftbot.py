"""Train a draft bot on 17Lands-layout logs, evaluate it on held-out pods and register the version."""
import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from decks.management.importing import progress
from drafts.core.evaluate import agreement, ranks_from_scores, score_matrix
from drafts.core.logs import held_out_mask, pod_keys, read_seats, seats_file_for
from drafts.management.common import DraftErrorsAsCommandErrors, read_logs
from drafts.services import bot_scope, set_list

FAMILIES = ("archetype", "neural")


def stored_logs(code: str, kind: str | None, consented: bool = False):
    """The stored drafts of a set as arrays, with each seat's pod (for the split by pod).
    ``consented``: only people's own seats of online pods whose drafters opted in."""
    from drafts.logstore import seat_logs
    from drafts.models import DraftSeat
    from drafts.online import consented_seats

    seats = DraftSeat.objects.filter(draft__set_code=code.upper()).select_related("draft")
    if kind:
        seats = seats.filter(draft__kind=kind)
    if consented:
        seats = consented_seats(code).select_related("draft")
    if not seats.exists():
        raise CommandError(f"no stored {'consented ' if consented else ''}{kind + ' ' if kind else ''}drafts of {code.upper()}")
    pods = {s.log_id: (str(s.draft_id), s.seat) for s in seats}
    return seat_logs(seats), pods


def json_safe(value):
    """NaN and infinities (e.g. the validation loss of a split too small to hold validation pods)
    become None: JSON columns refuse them."""
    import math

    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def summary(result: dict) -> dict:
    return {"all": result["all"], "unforced": result["unforced"]}


class Command(BaseCommand):
    help = ("Train the archetype or neural bot on a 17Lands-layout file: 1 pod in 10 is held out for the "
            "reported metrics, the rest is split into training and validation pods. The new version is "
            "activated when it beats the active one on the held-out pods (or with --activate).")

    def add_arguments(self, parser):
        parser.add_argument("--bot", required=True, choices=FAMILIES)
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--logs", help="a 17Lands-layout CSV (.csv or .csv.gz)")
        source.add_argument("--stored", metavar="SET", help="train on the drafts of SET stored in the database")
        parser.add_argument("--kind", choices=["simulated", "imported", "online"], help="with --stored: only this kind")
        parser.add_argument("--consented", action="store_true",
                            help="with --stored: only people's online drafts shared for training (their consent)")
        parser.add_argument("--seats", help="seats side file (default: beside the logs)")
        parser.add_argument("--epochs", type=int)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--limit", type=int, help="read only the first N rows")
        parser.add_argument("--activate", action="store_true", help="activate even if it does not beat the active one")
        parser.add_argument("--no-activate", action="store_true")
        parser.add_argument("--plot", help="write the loss curves to FILE.svg or FILE.png")
        parser.add_argument("--notes", default="")

    def handle(self, *args, bot, logs=None, stored=None, kind=None, consented=False, seats=None, epochs=None, seed=0, limit=None, activate=False, no_activate=False,
               plot=None, notes="", **opts):
        import torch

        from ml.models import ModelVersion
        from ml.registry import activate_version, save_version

        torch.set_num_threads(max(1, torch.get_num_threads()))
        with DraftErrorsAsCommandErrors():
            if stored:
                data, pods = stored_logs(stored, kind, consented)
                logs = f"stored {stored.upper()} drafts" + (f" ({kind})" if kind else "") + (" (consented)" if consented else "")
            else:
                data = read_logs(logs, limit)
                seats_file = seats or seats_file_for(logs)
                pods = read_seats(seats_file) if seats_file else None
            s = set_list(data.set_code)
            keys = pod_keys(data, pods)
            held = held_out_mask(keys)
            train, test = data.select(~held), data.select(held)
            if not len(test) or not len(train):
                raise CommandError("too few pods to hold one in ten out: give more logs")
            bar = progress(total=epochs, desc=f"training {bot} on {data.set_code}", unit="epoch")

            def on_epoch(record=None, *rest):
                record = record if isinstance(record, dict) else {"epoch": record, "train_loss": rest[0] if rest else None,
                                                                   "val_loss": rest[1] if len(rest) > 1 else None}
                bar.update(1)
                bar.set_postfix({k: round(v, 4) for k, v in record.items() if isinstance(v, float)})

            started = time.perf_counter()
            if bot == "archetype":
                from drafts.bots.archetype import train_archetype

                kwargs = {"epochs": epochs} if epochs else {}
                model, history = train_archetype(train, seed=seed, on_epoch=on_epoch, set_list=s, keys=keys[~held],
                                                 **kwargs)
            else:
                from drafts.bots.archetype import validation_mask
                from drafts.bots.neural import train_neural

                val = validation_mask(keys[~held])
                kwargs = {"epochs": epochs} if epochs else {}
                model, history = train_neural(train, ~val, val, seed=seed, on_epoch=on_epoch, set_list=s, **kwargs)
            seconds = time.perf_counter() - started
            bar.close()
            result = agreement(test, ranks_from_scores(test, score_matrix(model, test, s)))
        if history.get("members"):  # an ensemble: the loss curves of its first member
            history = {**history["members"][0], "members": len(history["members"])}
        scope = bot_scope(bot, data.set_code)
        current = ModelVersion.objects.filter(kind="draft_bot", scope=scope, active=True).first()
        current_top1 = ((current.metrics or {}).get("held_out") or {}).get("all", {}).get("top1") if current else None
        better = current_top1 is None or result["all"]["top1"] > current_top1
        metrics = {"held_out": summary(result), "by_pick": result["by_pick"], "train_seconds": round(seconds, 1),
                   "history": {k: v for k, v in history.items() if isinstance(v, (list, int, float))}}
        config = json_safe(model.config())
        version = save_version("draft_bot", model.to_tensors(), config, metrics=json_safe(metrics), scope=scope,
                               activate=False, metadata={"config": json.dumps(config)}, notes=notes,
                               data_snapshot={"logs": Path(logs).name if not stored else logs, "rows": len(data), "train_rows": len(train),
                                              "held_out_rows": len(test),
                                              "split": "1 pod in 10 held out (crc32 of the pod id)"})
        if (better or activate) and not no_activate:
            activate_version(version)
        if plot:
            from drafts.core.plots import figure_bytes, loss_curves_figure

            fmt = Path(plot).suffix.lstrip(".").lower()
            Path(plot).write_bytes(figure_bytes(loss_curves_figure(history, f"{bot} bot, {data.set_code}"),
                                                "png" if fmt == "png" else "svg"))
        a, u = result["all"], result["unforced"]
        version.refresh_from_db()
        if version.active:
            state = "now active"
        elif current is not None:
            state = f"not activated (active v{current.version}: held-out top-1 {current_top1 or 0:.3f})"
        else:
            state = "not activated"
        self.stdout.write(self.style.SUCCESS(
            f"{scope} v{version.version} trained in {seconds:.0f}s: held-out top-1 {a['top1']:.3f}, top-3 {a['top3']:.3f} "
            f"(without forced picks {u['top1']:.3f}); {state}"))
