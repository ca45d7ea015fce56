"""Training of the masked deck denoiser on a CPU (pure: arrays in, weights and metrics out; no Django).

``prepare(arrays, V, legal, limit, params, ...)`` builds what training and sampling share: the neighbour-vote
baseline fitted on the training decks (its ``DeckIndex``), the per-format ``Tables`` and the token vocabulary
(every card seen in the training decks; token 0 = unknown). ``train(prepared, config, train_config, ...)`` then

1. plans ``examples`` training examples (retrieval once per example, the deck itself excluded; ~2 ms each);
2. runs AdamW with a one-cycle schedule over random batches of them, features computed per batch;
3. checkpoints (safetensors: model + AdamW state; JSON metadata: step, configs, history) every
   ``checkpoint_every`` steps, and resumes from one: the plans are seeded, so a resumed run sees the same data.

Card embeddings can start from the card-text (Doc2Vec) vectors: ``text_vectors`` [V, D] in catalogue space are
projected to ``d_model`` by PCA and scaled to the default init's norm, so cards seen in few decks start near
cards with similar text. ``progress(step, total, loss, message)`` is called after every step.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from decks.completion.models.retrieval import NeighbourVoteBaseline, RetrievalParams
from decks.completion.models.deck_arrays import card_popularity
from decks.completion.models.masked.model import MaskedConfig, MaskedDenoiser, collate
from decks.completion.models.masked.data import Tables, plan_examples, plan_to_example
from decks.completion.models.masked.ablation import PlainDenoiser, plain_batch, plan_plain_examples

__all__ = ["TrainConfig", "Prepared", "prepare", "train", "text_init", "denoiser_for", "CHECKPOINT_FORMAT"]

CHECKPOINT_FORMAT = "deck_masked_checkpoint/1"


@dataclass
class TrainConfig:
    steps: int = 3000
    batch: int = 64
    lr: float = 2e-3
    weight_decay: float = 0.01
    examples: int = 60000
    side_share: float = 0.5
    seed: int = 0
    grad_clip: float = 1.0
    text_init: bool = True
    checkpoint_every: int = 250
    val_examples: int = 512
    warmup_days: int = 120
    # training decks are drawn with weight exp(-age / recency_days), age counted back from the newest training
    # deck (0 = uniform): the metagame drifts, and completions are asked about the current one
    recency_days: float = 365.0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        return cls(**{k: v for k, v in dict(d).items() if k in cls.__dataclass_fields__})


@dataclass
class Prepared:
    arrays: object                   # DeckArrays the index and the examples come from
    vote: NeighbourVoteBaseline
    tables: Tables
    cards: np.ndarray                # int64 [vocab-1]: catalogue index of tokens 1..
    popularity: np.ndarray           # float64 [V]: share of all training decks playing each card
    params: RetrievalParams
    extra: dict = field(default_factory=dict)


def denoiser_for(model_config: dict | MaskedConfig):
    """The denoiser a stored model config describes: the full model, or the no-retrieval ablation."""
    mc = model_config if isinstance(model_config, MaskedConfig) else MaskedConfig.from_dict(model_config)
    return MaskedDenoiser(mc) if mc.retrieval else PlainDenoiser(mc)


def tables_for(arrays, V: int, legal: np.ndarray, limit: np.ndarray, cards: np.ndarray) -> Tables:
    """Per-format popularity and the catalogue -> token map for ``cards`` (token i+1 = cards[i])."""
    F = legal.shape[0]
    popf = np.zeros((F, V), np.float32)
    fmt = np.asarray(arrays.fmt)
    for f in range(F):
        rows = np.flatnonzero(fmt == f)
        if rows.size:
            popf[f] = card_popularity(arrays.subset(rows), V)
    token = np.zeros(V, np.int64)
    token[np.asarray(cards, dtype=np.int64)] = np.arange(1, len(cards) + 1)
    return Tables(np.asarray(legal, bool), np.asarray(limit, np.int64), popf, token)


def prepare(arrays, V: int, legal: np.ndarray, copy_limit: np.ndarray, restricted=None,
            params: RetrievalParams | None = None, cards: np.ndarray | None = None) -> Prepared:
    """Fit the retrieval index and the tables on ``arrays``. ``cards``: a fixed vocabulary (default: seen cards)."""
    params = params or RetrievalParams()
    vote = NeighbourVoteBaseline(params).fit(arrays, V, legal, copy_limit, restricted)
    if cards is None:
        cards = np.unique(np.concatenate([np.asarray(arrays.main).ravel(), np.asarray(arrays.side).ravel()]))
        cards = cards[cards >= 0]
    tables = tables_for(arrays, V, legal, vote.fitted.limit, cards)
    return Prepared(arrays, vote, tables, np.asarray(cards, np.int64), card_popularity(arrays, V), params)


def text_init(model: MaskedDenoiser, cards: np.ndarray, text_vectors: np.ndarray) -> None:
    """Start the card embeddings (tokens 1..) from a PCA projection of the cards' text vectors."""
    X = np.asarray(text_vectors, dtype=np.float64)[np.asarray(cards, dtype=np.int64)]
    X = X - X.mean(axis=0, keepdims=True)
    d = model.config.d_model
    _, _, vt = np.linalg.svd(X, full_matrices=False)
    P = X @ vt[:d].T
    if P.shape[1] < d:
        P = np.pad(P, ((0, 0), (0, d - P.shape[1])))
    target = float(model.card.weight.detach().norm(dim=1).mean())
    P = P / max(float(np.linalg.norm(P, axis=1).mean()), 1e-9) * target
    with torch.no_grad():
        model.card.weight[1:] = torch.as_tensor(P, dtype=torch.float32)


def _save_checkpoint(path: Path, model, opt, step: int, meta: dict) -> None:
    tensors = {f"model.{k}": v.detach().contiguous() for k, v in model.state_dict().items()}
    for i, state in opt.state_dict()["state"].items():
        for name in ("exp_avg", "exp_avg_sq", "step"):
            if name in state:
                tensors[f"opt.{i}.{name}"] = torch.as_tensor(state[name]).detach().contiguous().reshape(-1)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    save_file(tensors, str(tmp), metadata={"format": CHECKPOINT_FORMAT, "step": str(step), "meta": json.dumps(meta)})
    tmp.replace(path)


def _load_checkpoint(path: Path, model, opt) -> tuple[int, dict]:
    with safe_open(str(path), framework="pt") as fh:
        md = fh.metadata() or {}
        if md.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"{path} is not a {CHECKPOINT_FORMAT} checkpoint")
        tensors = {k: fh.get_tensor(k) for k in fh.keys()}
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    sd = opt.state_dict()
    for i in list(sd["state"].keys()) or range(len(sd["param_groups"][0]["params"])):
        params = [p for g in opt.param_groups for p in g["params"]]
        if f"opt.{i}.exp_avg" in tensors:
            p = params[int(i)]
            sd["state"][int(i)] = {"step": tensors[f"opt.{i}.step"].reshape(()),
                                   "exp_avg": tensors[f"opt.{i}.exp_avg"].reshape(p.shape),
                                   "exp_avg_sq": tensors[f"opt.{i}.exp_avg_sq"].reshape(p.shape)}
    opt.load_state_dict(sd)
    return int(md["step"]), json.loads(md.get("meta", "{}"))


def _recency_order(rng: np.random.Generator, days: np.ndarray, recency_days: float) -> np.ndarray:
    """A random order of the decks in which newer ones come first more often: weighted sampling without
    replacement with weight exp(-age / recency_days) (Efraimidis-Spirakis keys u ** (1 / w)); uniform when
    recency_days <= 0."""
    if recency_days <= 0 or days.size == 0:
        return rng.permutation(days.size)
    age = np.minimum((days.max() - days) / float(recency_days), 600.0)
    log_key = np.log(rng.random(days.size)) * np.exp(age)  # log(u ** (1 / w)); larger = drawn earlier
    return np.argsort(-log_key, kind="stable")


def train(prep: Prepared, config: MaskedConfig, tc: TrainConfig, text_vectors: np.ndarray | None = None,
          checkpoint: str | Path | None = None, resume: bool = False, progress=None, stop_after: float | None = None,
          plan_progress=None, device: str = "cpu"):
    """Train on ``device``; returns (state_dict on the CPU, metrics). ``stop_after`` (seconds) ends a time slice
    early (resume later)."""
    torch.manual_seed(tc.seed)
    a = prep.arrays
    n = len(a)
    rng = np.random.default_rng([tc.seed, 7])
    val_n = min(tc.val_examples, max(1, n // 10))
    # examples need a past to retrieve from: decks from the first ``warmup_days`` of the corpus only vote
    days = np.asarray(a.day)
    eligible = np.flatnonzero(days >= days.min() + tc.warmup_days) if n else np.zeros(0, np.int64)
    if eligible.size < max(2 * val_n, n // 4):
        eligible = np.arange(n)
    perm = eligible[_recency_order(rng, days[eligible], tc.recency_days)]
    val_rows, train_rows = perm[:val_n], perm[val_n:val_n + tc.examples]
    started = time.perf_counter()
    if config.retrieval:
        plans = plan_examples(prep.vote.index, a.main, a.side, a.fmt, a.day, train_rows, prep.popularity,
                              prep.params, seed=tc.seed, side_share=tc.side_share, progress=plan_progress)
        val_plans = plan_examples(prep.vote.index, a.main, a.side, a.fmt, a.day, val_rows, prep.popularity,
                                  prep.params, seed=tc.seed + 1, side_share=tc.side_share)
    else:  # the no-retrieval ablation: nothing to retrieve, only the masks
        plans = plan_plain_examples(a.main, a.side, train_rows, prep.popularity, tc.seed, tc.side_share)
        val_plans = plan_plain_examples(a.main, a.side, val_rows, prep.popularity, tc.seed + 1, tc.side_share)
    plan_seconds = time.perf_counter() - started
    config = MaskedConfig.from_dict({**config.to_dict(), "vocab": len(prep.cards) + 1})
    model = denoiser_for(config)
    if tc.text_init and text_vectors is not None:
        text_init(model, prep.cards, text_vectors)
    model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=tc.lr, weight_decay=tc.weight_decay)

    def lr_at(step: int) -> float:  # linear warm-up (5%), cosine down to 5%
        warm = max(1, tc.steps // 20)
        if step < warm:
            return tc.lr * (step + 1) / warm
        p = (step - warm) / max(1, tc.steps - warm)
        return tc.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(1.0, p))))

    def batch_of(plan_list, idx):
        if not config.retrieval:
            batch = plain_batch(prep.tables, [plan_list[i] for i in idx], a.main, a.side, a.fmt)
        else:
            batch = collate([plan_to_example(prep.vote.index, prep.tables, plan_list[i], a.main, a.side, a.fmt,
                                             config.candidates) for i in idx])
        return {k: v.to(device) for k, v in batch.items()}

    val_batches = [batch_of(val_plans, range(i, min(i + 128, len(val_plans)))) for i in range(0, len(val_plans), 128)]

    def validate() -> float:
        model.eval()
        with torch.no_grad():
            losses = [float(model.loss(b)[0]) for b in val_batches]
        model.train()
        return float(np.mean(losses)) if losses else math.nan

    meta = {"config": config.to_dict(), "train": tc.to_dict(), "history": []}
    step = 0
    ckpt = Path(checkpoint) if checkpoint else None
    if resume and ckpt is not None and ckpt.exists():
        step, meta = _load_checkpoint(ckpt, model, opt)
    prior_val = None
    if step == 0:
        with torch.no_grad():  # the gate-1 model (the neighbour vote) as the reference loss
            model.eval()
            g = [float(model.loss({**b})[0]) for b in val_batches]
            model.train()
        prior_val = float(np.mean(g)) if g else math.nan
        meta["val_loss_start"] = prior_val
    model.train()
    t_loop = time.perf_counter()
    loss_ema = None
    while step < tc.steps:
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        srng = np.random.default_rng([tc.seed, 11, step])
        idx = srng.choice(len(plans), size=min(tc.batch, len(plans)), replace=False)
        loss, parts = model.loss(batch_of(plans, idx))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), tc.grad_clip)
        opt.step()
        step += 1
        lv = loss.item()
        loss_ema = lv if loss_ema is None else 0.98 * loss_ema + 0.02 * lv
        if progress:
            progress(step, tc.steps, lv, f"gate {float(model.gate().detach()):.2f}")
        last = step == tc.steps
        if ckpt is not None and (last or step % tc.checkpoint_every == 0):
            meta["history"].append({"step": step, "loss": round(loss_ema, 4), "val_loss": round(validate(), 4),
                                    "gate": round(float(model.gate().detach()), 4)})
            _save_checkpoint(ckpt, model, opt, step, meta)
        if stop_after is not None and time.perf_counter() - t_loop > stop_after and not last:
            if ckpt is not None:
                _save_checkpoint(ckpt, model, opt, step, meta)
            break
    val = validate()
    metrics = {"steps": step, "finished": step >= tc.steps, "train_loss": loss_ema, "val_loss": val,
               "val_loss_gate1": meta.get("val_loss_start"), "gate": float(model.gate().detach()),
               "parameters": model.parameter_count(), "examples": len(plans), "plan_seconds": round(plan_seconds, 1),
               "seconds": round(time.perf_counter() - started, 1), "history": meta["history"],
               "train_decks": n, "config": config.to_dict(), "train_config": tc.to_dict()}
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}, metrics
