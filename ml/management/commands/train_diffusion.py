"""Train the deck-completion diffusion model on the corpus (date-held-out validation) and register it."""
from __future__ import annotations

import json
import time

from django.core.management.base import BaseCommand, CommandError

from decks.management.importing import progress
from ml.datasets import DEFAULT_SPLIT, deck_arrays, names_sha1, split_day
from ml.registry import NoActiveModel, model_dir, save_version


class Command(BaseCommand):
    help = "Train the deck diffusion model (set transformer DDPM over card embeddings) and register a version."

    def add_arguments(self, parser):
        parser.add_argument("--steps", type=int, default=3000)
        parser.add_argument("--batch", type=int, default=64)
        parser.add_argument("--lr", type=float, default=5e-4)
        parser.add_argument("--warmup", type=int, default=200)
        parser.add_argument("--d-model", type=int, default=128)
        parser.add_argument("--heads", type=int, default=4)
        parser.add_argument("--layers", type=int, default=4)
        parser.add_argument("--ff", type=int, default=512)
        parser.add_argument("--side-layers", type=int, default=2)
        parser.add_argument("--context-layers", type=int, default=1)
        parser.add_argument("--prediction", choices=["v", "eps"], default="v",
                            help="v (default: uses the known cards far better at high noise) or eps (Manamorphosis)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--eval-every", type=int, default=500)
        parser.add_argument("--split-date", default=DEFAULT_SPLIT, help="decks first seen on/after it are held out")
        parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
        parser.add_argument("--resume", action="store_true", help="continue from the checkpoint of an interrupted run")
        parser.add_argument("--limit", type=int, help="train on at most N decks (quick runs, tests)")
        parser.add_argument("--no-activate", action="store_true")
        parser.add_argument("--notes", default="")

    def handle(self, *args, **opts):
        import numpy as np

        from ml.completion_service import device as default_device
        from ml.diffusion.data import split_by_date
        from ml.diffusion.model import DeckDenoiser, DenoiserConfig
        from ml.diffusion.trainer import TrainConfig, train
        from ml.embeddings.service import active_embeddings

        try:
            emb = active_embeddings()
        except NoActiveModel as exc:
            raise CommandError(f"{exc} (run train_embeddings first)")
        started = time.perf_counter()
        arrays = deck_arrays(emb.names)
        train_arrays, test_arrays = split_by_date(arrays, split_day(opts["split_date"]))
        if opts["limit"]:
            rng = np.random.default_rng(opts["seed"])
            pick = np.sort(rng.choice(len(train_arrays), size=min(opts["limit"], len(train_arrays)), replace=False))
            train_arrays = train_arrays.subset(pick)
        if len(train_arrays) == 0:
            raise CommandError("No training decks: import the deck corpus first (manage.py import_decks).")
        self.stdout.write(f"decks: {len(train_arrays)} train, {len(test_arrays)} held out (first seen >= {opts['split_date']})")

        mc = DenoiserConfig(dim=int(emb.E.shape[1]), d_model=opts["d_model"], heads=opts["heads"], layers=opts["layers"],
                            ff=opts["ff"], side_layers=opts["side_layers"], context_layers=opts["context_layers"],
                            prediction=opts["prediction"])
        tc = TrainConfig(batch=opts["batch"], lr=opts["lr"], steps=opts["steps"], warmup=min(opts["warmup"], opts["steps"] // 2),
                         seed=opts["seed"], eval_every=opts["eval_every"], val_decks=min(1024, max(len(test_arrays), 1)))
        params = DeckDenoiser(mc).parameter_count()
        self.stdout.write(f"model: {params:,} parameters ({json.dumps(mc.to_dict())})")
        device = opts["device"] or default_device()
        ckpt = model_dir() / "deck_diffusion" / "checkpoints" / f"train-seed{opts['seed']}.safetensors"
        bar = progress(total=tc.steps, desc="training", unit="step")

        def report(step, total, loss, val_loss):
            bar.n = step
            bar.set_postfix(loss=f"{loss:.4f}", **({"val": f"{val_loss:.4f}"} if val_loss is not None else {}))
            bar.refresh()

        state, metrics = train(train_arrays, test_arrays if len(test_arrays) else None, emb.E.numpy(), mc, tc,
                               checkpoint_path=ckpt, resume=opts["resume"], progress=report, device=device)
        bar.close()
        metrics = {k: v for k, v in metrics.items() if k != "history"} | {
            "parameters": params, "train_decks": len(train_arrays), "test_decks": len(test_arrays),
            "seconds": round(time.perf_counter() - started, 1), "device": device}
        config = {"model": mc.to_dict(), "train": tc.to_dict(), "T": mc.T, "names_sha1": names_sha1(emb.names),
                  "embeddings_version": emb.version_id, "split_date": opts["split_date"]}
        version = save_version("deck_diffusion", state,
                               config, metrics=metrics, activate=not opts["no_activate"],
                               data_snapshot={"corpus_decks": len(arrays), "split_date": opts["split_date"]},
                               notes=opts["notes"])
        self.stdout.write(self.style.SUCCESS(
            f"deck_diffusion v{version.version} saved ({version.weights_bytes / 1e6:.1f} MB){' and activated' if version.active else ''}: "
            f"{json.dumps({k: metrics[k] for k in metrics if isinstance(metrics[k], (int, float))})}"))
