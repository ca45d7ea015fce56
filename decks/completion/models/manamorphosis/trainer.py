"""Training of the deck denoiser (epsilon prediction, inpainting objective as in Manamorphosis).

Each step:

1. sample ``batch`` decks with probability proportional to ``sqrt(weight)`` (damps reposted lists);
2. ``x0 = E_diff[cards]`` for the main deck [B,60,D] and the sideboard [B,15,D];
3. known masks by the training rule (``decks.completion.models.masking``), t uniform in 0..T-1 (main and side draw
   their own t), Gaussian noise, ``x_t = q_sample(x0, t, noise)``;
4. **known slots are given CLEAN**: the model input is ``where(known, x0, x_t)`` and the mask tells the model
   which slots those are; the samplers do the same at every reverse step, so training and sampling agree;
5. loss = MSE(eps_pred, noise) averaged over the UNKNOWN slots only (MSE(v_pred, v) for a model configured
   with ``prediction="v"``); the side path sees the clean full main
   deck as context; ``total = main + side_weight * side``.

The format is given to the model, replaced by "unknown" with probability ``format_dropout`` so the model
also works without one. AdamW (no weight decay on biases/norms), linear warmup then cosine decay, gradient
clipping, an exponential moving average of the weights (returned when ``ema`` is set; the decay ramps up as
``min(ema, (1 + step) / (10 + step))``), and a validation loss on ``test_arrays`` with fixed masks, t and noise.

Reproducible and resumable: the randomness of step ``s`` comes only from ``(seed, s)``, and checkpoints
(safetensors: model, EMA, AdamW moments; step, configs and history as JSON metadata; nothing pickled) restore
everything else, so 5 steps + resume + 5 steps gives the weights of 10 steps in one go.
"""
from __future__ import annotations

import copy
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from decks.completion.models.deck_arrays import DeckArrays, card_popularity
from decks.completion.models.masking import batch_masks
from decks.completion.models.manamorphosis.model import DeckDenoiser, DenoiserConfig
from decks.completion.models.manamorphosis.schedule import Schedule, cosine_schedule, q_sample

__all__ = ["TrainConfig", "train", "lr_at", "save_checkpoint", "load_checkpoint", "diffusion_loss"]

CHECKPOINT_FORMAT = "deck_diffusion_checkpoint/1"


@dataclass
class TrainConfig:
    batch: int = 256
    lr: float = 3e-4
    weight_decay: float = 0.01
    steps: int = 100_000
    warmup: int = 1000
    grad_clip: float = 1.0
    seed: int = 0
    eval_every: int = 1000  # 0: validate only at the end
    side_weight: float = 0.5
    ema: float | None = 0.999  # None: no EMA, the raw weights are returned
    format_dropout: float = 0.1
    val_decks: int = 2048  # validation subset size (seeded)
    checkpoint_every: int | None = None  # default: eval_every
    amp: bool = True  # bfloat16 autocast, on CUDA only

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TrainConfig":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def lr_at(step: int, tc: TrainConfig) -> float:
    """Learning rate of update ``step`` (0-based): linear warmup, then cosine decay to 0 at ``tc.steps``."""
    if tc.warmup > 0 and step < tc.warmup:
        return tc.lr * (step + 1) / tc.warmup
    span = max(1, tc.steps - tc.warmup)
    progress = min(1.0, (step - tc.warmup) / span)
    return tc.lr * 0.5 * (1.0 + math.cos(math.pi * progress))


def _param_groups(model: torch.nn.Module, weight_decay: float):
    decay, no_decay = [], []
    for _, p in model.named_parameters():
        (decay if p.ndim >= 2 else no_decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def _masked_mse(pred: torch.Tensor, target: torch.Tensor, known: torch.Tensor) -> torch.Tensor:
    per_slot = ((pred.float() - target) ** 2).mean(-1)
    unknown = (~known).float()
    return (per_slot * unknown).sum() / unknown.sum().clamp(min=1.0)


def _batch(arrays: DeckArrays, idx: np.ndarray, E: torch.Tensor, pop: np.ndarray, rng: np.random.Generator,
           gen: torch.Generator, T: int, format_dropout: float, formats: int, device) -> dict:
    main = arrays.main[idx]
    side = arrays.side[idx]
    fmt = arrays.fmt[idx].astype(np.int64)
    fmt = np.where((fmt < 0) | (fmt >= formats), formats, fmt)
    if format_dropout > 0:
        fmt = np.where(rng.random(len(idx)) < format_dropout, formats, fmt)
    km = batch_masks(main, pop, rng, "main")
    ks = batch_masks(side, pop, rng, "side")
    B = len(idx)
    D = E.shape[1]
    tm = torch.randint(0, T, (B,), generator=gen)
    ts = torch.randint(0, T, (B,), generator=gen)
    nm = torch.randn((B, main.shape[1], D), generator=gen)
    ns = torch.randn((B, side.shape[1], D), generator=gen)
    to = lambda a: torch.as_tensor(a).to(device, non_blocking=True)  # noqa: E731
    return {"main": to(main.astype(np.int64)), "side": to(side.astype(np.int64)), "fmt": to(fmt),
            "known_main": to(km), "known_side": to(ks), "t_main": to(tm), "t_side": to(ts),
            "noise_main": to(nm), "noise_side": to(ns)}


def _target(sched: Schedule, model: DeckDenoiser, x0, t, noise):
    if model.config.prediction == "eps":
        return noise
    a = sched.sqrt_ab[t][:, None, None]
    s = sched.sqrt_1m_ab[t][:, None, None]
    return a * noise - s * x0


def diffusion_loss(model: DeckDenoiser, sched: Schedule, E: torch.Tensor, b: dict, side_weight: float,
                   autocast: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(total, main, side) losses of one prepared batch (see the module docstring)."""
    x0m, x0s = E[b["main"]], E[b["side"]]
    km, ks = b["known_main"], b["known_side"]
    xm = torch.where(km[..., None], x0m, q_sample(sched, x0m, b["t_main"], b["noise_main"]))
    xs = torch.where(ks[..., None], x0s, q_sample(sched, x0s, b["t_side"], b["noise_side"]))
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
        em = model.forward_main(xm, b["t_main"], km, b["fmt"], raw=True)
        es = model.forward_side(xs, b["t_side"], ks, b["fmt"], x0m, raw=True)
    lm = _masked_mse(em, _target(sched, model, x0m, b["t_main"], b["noise_main"]), km)
    ls = _masked_mse(es, _target(sched, model, x0s, b["t_side"], b["noise_side"]), ks)
    return lm + side_weight * ls, lm, ls


def _evaluate(model, sched, E, arrays: DeckArrays | None, pop, tc: TrainConfig, formats: int, device):
    if arrays is None or len(arrays) == 0:
        return None
    n = len(arrays)
    idx = np.arange(n)
    if n > tc.val_decks:
        idx = np.sort(np.random.default_rng([tc.seed, 7]).choice(n, tc.val_decks, replace=False))
    was_training = model.training
    model.eval()
    tot = main = side = 0.0
    with torch.no_grad():
        for bi, start in enumerate(range(0, len(idx), tc.batch)):
            part = idx[start:start + tc.batch]
            rng = np.random.default_rng([tc.seed, 8, bi])
            gen = torch.Generator().manual_seed(tc.seed * 1_000_003 + 777_777 + bi)
            b = _batch(arrays, part, E, pop, rng, gen, sched.T, 0.0, formats, device)
            t, m, s = diffusion_loss(model, sched, E, b, tc.side_weight,
                                     autocast=tc.amp and torch.device(device).type == "cuda")
            w = len(part) / len(idx)
            tot += float(t) * w
            main += float(m) * w
            side += float(s) * w
    model.train(was_training)
    return {"val_loss": tot, "val_loss_main": main, "val_loss_side": side}


# -- checkpoints --------------------------------------------------------------------------------

def save_checkpoint(path, model, ema_model, opt, step: int, mc: DenoiserConfig, tc: TrainConfig,
                    history: list) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tensors = {f"model/{k}": v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    if ema_model is not None:
        tensors.update({f"ema/{k}": v.detach().cpu().contiguous() for k, v in ema_model.state_dict().items()})
    for i, st in opt.state_dict()["state"].items():
        for key, value in st.items():
            tv = torch.as_tensor(value)
            tensors[f"opt/{i}/{key}"] = tv.detach().cpu().reshape(tv.shape or (1,)).contiguous()
    meta = {"format": CHECKPOINT_FORMAT, "step": str(step), "model_config": json.dumps(mc.to_dict()),
            "train_config": json.dumps(tc.to_dict()), "history": json.dumps(history)}
    tmp = path.with_name(path.name + ".tmp")
    save_file(tensors, str(tmp), metadata=meta)
    os.replace(tmp, path)


def load_checkpoint(path) -> tuple[dict, dict]:
    """(tensors, metadata with configs/history decoded) of a training checkpoint; nothing unpickled."""
    tensors = load_file(str(path))
    with safe_open(str(path), framework="pt") as fh:
        meta = dict(fh.metadata() or {})
    if meta.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not a deck diffusion training checkpoint")
    meta["step"] = int(meta["step"])
    for key in ("model_config", "train_config", "history"):
        meta[key] = json.loads(meta[key])
    return tensors, meta


def _restore(path, model, ema_model, opt, mc: DenoiserConfig) -> tuple[int, list]:
    tensors, meta = load_checkpoint(path)
    if meta["model_config"] != mc.to_dict():
        raise ValueError(f"checkpoint {path} was made with another model config: {meta['model_config']}")
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model/")})
    if ema_model is not None:
        ema = {k[4:]: v for k, v in tensors.items() if k.startswith("ema/")}
        ema_model.load_state_dict(ema or model.state_dict())
    state: dict = {}
    ref = opt.state_dict()
    for k, v in tensors.items():
        if k.startswith("opt/"):
            _, i, key = k.split("/", 2)
            state.setdefault(int(i), {})[key] = v.reshape(()) if key == "step" else v
    opt.load_state_dict({"state": state, "param_groups": ref["param_groups"]})
    return meta["step"], meta["history"]


# -- training -----------------------------------------------------------------------------------

def train(train_arrays: DeckArrays, test_arrays: DeckArrays | None, E_diff: np.ndarray,
          model_config: DenoiserConfig | dict | None = None, train_config: TrainConfig | dict | None = None,
          checkpoint_path=None, resume: bool = False,
          progress: Callable[[int, int, float, float | None], None] | None = None, device="cpu",
          stop_after: int | None = None) -> tuple[dict, dict]:
    """Train a ``DeckDenoiser``; returns (state_dict on CPU — the EMA weights when ``ema`` is set, metrics).

    ``progress(step, total, loss, val_loss | None)`` is called after every step. ``stop_after`` ends the run
    after that global step (with a checkpoint) without changing the schedule, e.g. to train in time slices.
    """
    mc = model_config if isinstance(model_config, DenoiserConfig) else DenoiserConfig.from_dict(model_config or {})
    tc = train_config if isinstance(train_config, TrainConfig) else TrainConfig.from_dict(train_config or {})
    device = torch.device(device)
    if len(train_arrays) == 0:
        raise ValueError("no training decks")
    E = torch.as_tensor(np.asarray(E_diff, dtype=np.float32)).to(device)
    V, D = E.shape
    if D != mc.dim:
        raise ValueError(f"embeddings have dim {D}, the model expects {mc.dim}")
    for arr in (train_arrays, test_arrays):
        if arr is not None and len(arr) and (min(arr.main.min(), arr.side.min()) < 0
                                              or max(arr.main.max(), arr.side.max()) >= V):
            raise ValueError("card index out of range of the embeddings")
    sched = cosine_schedule(mc.T).to(device)
    pop = card_popularity(train_arrays, V)
    cdf = np.cumsum(np.sqrt(np.maximum(train_arrays.weight.astype(np.float64), 0.0)))
    if cdf[-1] <= 0:
        cdf = np.arange(1, len(train_arrays) + 1, dtype=np.float64)
    cdf /= cdf[-1]
    use_amp = tc.amp and device.type == "cuda"
    ckpt_every = tc.checkpoint_every if tc.checkpoint_every is not None else tc.eval_every
    started = time.time()

    cuda_ids = [device.index if device.index is not None else torch.cuda.current_device()] \
        if device.type == "cuda" else []
    with torch.random.fork_rng(devices=cuda_ids):
        torch.manual_seed(tc.seed)
        model = DeckDenoiser(mc).to(device)
        ema_model = None
        if tc.ema:
            ema_model = copy.deepcopy(model).eval()
            for p in ema_model.parameters():
                p.requires_grad_(False)
        opt = torch.optim.AdamW(_param_groups(model, tc.weight_decay), lr=tc.lr, betas=(0.9, 0.999))
        step, history = 0, []
        if resume and checkpoint_path is not None and Path(checkpoint_path).exists():
            step, history = _restore(checkpoint_path, model, ema_model, opt, mc)
        eval_model = ema_model if ema_model is not None else model
        if step == 0 and tc.eval_every > 0 and not history:
            ev = _evaluate(eval_model, sched, E, test_arrays, pop, tc, mc.formats, device)
            if ev:
                history.append({"step": 0, "loss": None, "lr": 0.0, **ev})

        model.train()
        window: list[float] = []
        last_val = None
        end = tc.steps if stop_after is None else min(tc.steps, stop_after)
        while step < end:
            lr = lr_at(step, tc)
            for g in opt.param_groups:
                g["lr"] = lr
            rng = np.random.default_rng([tc.seed, step])
            torch.manual_seed(tc.seed * 1_000_003 + step)  # dropout
            gen = torch.Generator().manual_seed(tc.seed * 1_000_003 + step)
            idx = np.minimum(np.searchsorted(cdf, rng.random(tc.batch), side="right"), len(cdf) - 1)
            b = _batch(train_arrays, idx, E, pop, rng, gen, sched.T, tc.format_dropout, mc.formats, device)
            loss, _, _ = diffusion_loss(model, sched, E, b, tc.side_weight, autocast=use_amp)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if tc.grad_clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), tc.grad_clip)
            opt.step()
            if ema_model is not None:
                decay = min(tc.ema, (1 + step) / (10 + step))
                with torch.no_grad():
                    for pe, pm in zip(ema_model.parameters(), model.parameters()):
                        pe.lerp_(pm, 1.0 - decay)
            step += 1
            lv = float(loss.detach())
            window.append(lv)
            val = None
            if (tc.eval_every > 0 and step % tc.eval_every == 0) or step == tc.steps:
                ev = _evaluate(eval_model, sched, E, test_arrays, pop, tc, mc.formats, device)
                val = ev["val_loss"] if ev else None
                history.append({"step": step, "loss": float(np.mean(window)), "lr": lr, **(ev or {})})
                window = []
                last_val = val
            if checkpoint_path is not None and ((ckpt_every and step % ckpt_every == 0) or step == end):
                save_checkpoint(checkpoint_path, model, ema_model, opt, step, mc, tc, history)
            if progress is not None:
                progress(step, tc.steps, lv, val)

    final = (ema_model if ema_model is not None else model).state_dict()
    state = {k: v.detach().cpu().clone() for k, v in final.items()}
    evals = [h for h in history if h.get("val_loss") is not None]
    metrics = {
        "steps": step, "finished": step >= tc.steps, "seconds": time.time() - started,
        "train_loss": float(np.mean(window)) if window else next(
            (h["loss"] for h in reversed(history) if h.get("loss") is not None), None),
        "val_loss": evals[-1]["val_loss"] if evals else last_val,
        "val_loss_main": evals[-1]["val_loss_main"] if evals else None,
        "val_loss_side": evals[-1]["val_loss_side"] if evals else None,
        "history": history, "parameters": model.parameter_count(), "train_decks": len(train_arrays),
        "test_decks": 0 if test_arrays is None else len(test_arrays), "ema": bool(tc.ema),
        "model_config": mc.to_dict(), "train_config": tc.to_dict(), "device": str(device),
    }
    return state, metrics
