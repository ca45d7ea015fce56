"""Reverse processes for the deck DDPM, with inpainting of the known slots.

Known slots are handled exactly as in training (``decks.completion.models.manamorphosis.trainer``): at EVERY reverse step the model
input holds the CLEAN known vectors in those slots and the ``known`` mask tells the model which slots they
are ("user-given cards re-imposed at every reverse step"); only the unknown slots follow the reverse chain.
The returned x0 holds the known vectors unchanged (bit for bit) and the sampled ones elsewhere.

* ``ddpm_sample``: the full ancestral sampler (Ho et al. 2020), T steps, posterior variance beta~_t.
* ``ddim_sample``: DDIM (Song et al. 2021) over ``steps`` evenly spaced timesteps; ``eta=0`` is deterministic
  given the initial noise.

Both draw their noise on ``generator``'s device (CPU by default) and move it to the model's device, so a
seed gives the same noise on any device; ``generator`` may also be a list, one per batch row (a row then gets
the same noise alone or in a batch). ``x_init``/``t_start`` start from ``x_init`` forward-noised to
``t_start`` instead of pure noise (SDEdit-style re-noising, used by the completion refinement).
``clip_x0`` projects each predicted x0 slot vector onto the ball of that radius (the embeddings' norm, sqrt(D)
in diffusion space), which keeps the first steps of the cosine schedule stable: at t = T-1 alpha_bar is about
1e-9, and x0 = (x_t - sqrt(1 - ab) eps) / sqrt(ab) magnifies any error of an eps-model by ~2e4.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from decks.completion.models.manamorphosis.schedule import Schedule

__all__ = ["ddpm_sample", "ddim_sample", "ddim_timesteps"]


def _randn(shape, generator, device) -> torch.Tensor:
    """Standard normal noise; ``generator`` may be a list with one generator per batch row."""
    if isinstance(generator, (list, tuple)):
        if len(generator) != shape[0]:
            raise ValueError(f"{len(generator)} generators for a batch of {shape[0]}")
        return torch.cat([_randn((1, *shape[1:]), g, device) for g in generator])
    gdev = generator.device if generator is not None else torch.device("cpu")
    return torch.randn(shape, generator=generator, device=gdev).to(device)


def _denoiser(model, path: str | None, fmt: torch.Tensor, context: torch.Tensor | None):
    path = path or ("side" if context is not None else "main")
    if path == "main":
        return lambda x, t, known: model.forward_main(x, t, known, fmt)
    if path != "side":
        raise ValueError(f"path must be 'main' or 'side', not {path!r}")
    if context is None:
        raise ValueError("the side path needs context (the clean main deck vectors)")
    memory = model.encode_context(context, fmt)
    return lambda x, t, known: model.forward_side(x, t, known, fmt, memory=memory)


def _prepare(model, known_x0, known, fmt, context):
    device = next(model.parameters()).device
    known_x0 = known_x0.to(device=device, dtype=torch.float32)
    known = known.to(device=device, dtype=torch.bool)
    fmt = torch.as_tensor(fmt, device=device).long().reshape(-1)
    if fmt.numel() == 1 and known_x0.shape[0] > 1:
        fmt = fmt.expand(known_x0.shape[0])
    if context is not None:
        context = context.to(device=device, dtype=torch.float32)
    return device, known_x0, known, fmt, context


def _start(sched, known_x0, generator, device, x_init, t_start):
    noise = _randn(known_x0.shape, generator, device)
    T = sched.T
    t_start = T - 1 if t_start is None else int(min(max(t_start, 0), T - 1))
    if x_init is None or t_start >= T - 1:
        return noise, t_start
    ab = float(sched.alphas_cumprod[t_start])
    return ab ** 0.5 * x_init.to(device, torch.float32) + (1 - ab) ** 0.5 * noise, t_start


def _clip(x0: torch.Tensor, radius: float | None) -> torch.Tensor:
    """Project each slot vector of x0 onto the ball of radius ``radius`` (the embedding norm)."""
    if radius is None:
        return x0
    norm = x0.norm(dim=-1, keepdim=True)
    return x0 * (radius / norm.clamp(min=radius))


class _EvalMode:
    def __init__(self, model):
        self.model = model

    def __enter__(self):
        self.was_training = self.model.training
        self.model.eval()

    def __exit__(self, *exc):
        self.model.train(self.was_training)


def ddpm_sample(model, sched: Schedule, known_x0: torch.Tensor, known: torch.Tensor, fmt, generator=None,
                context: torch.Tensor | None = None, progress: Callable[[int, int], None] | None = None,
                path: str | None = None, clip_x0: float | None = None, x_init: torch.Tensor | None = None,
                t_start: int | None = None) -> torch.Tensor:
    """Ancestral sampling over all T steps (from ``t_start`` when given). Returns x0 [B,S,D]."""
    with torch.inference_mode(), _EvalMode(model):
        device, known_x0, known, fmt, context = _prepare(model, known_x0, known, fmt, context)
        f = _denoiser(model, path, fmt, context)
        km = known[..., None]
        x, t_start = _start(sched, known_x0, generator, device, x_init, t_start)
        recip = sched.sqrt_recip_ab.double().cpu()
        recipm1 = (1.0 / sched.alphas_cumprod.double().cpu() - 1.0).sqrt()
        c1, c2 = sched.posterior_mean_coef1.tolist(), sched.posterior_mean_coef2.tolist()
        sd = (0.5 * sched.posterior_log_variance.double().cpu()).exp().tolist()
        recip, recipm1 = recip.tolist(), recipm1.tolist()
        B = known_x0.shape[0]
        n = t_start + 1
        for i, t in enumerate(range(t_start, -1, -1)):
            tt = torch.full((B,), t, device=device, dtype=torch.long)
            eps = f(torch.where(km, known_x0, x), tt, known)
            x0 = recip[t] * x - recipm1[t] * eps
            x0 = _clip(x0, clip_x0)
            x = c1[t] * x0 + c2[t] * x
            if t > 0:
                x = x + sd[t] * _randn(x.shape, generator, device)
            if progress is not None:
                progress(i + 1, n)
        return torch.where(km, known_x0, x)


def ddim_timesteps(T: int, steps: int, t_start: int | None = None) -> list[int]:
    """Descending timesteps from ``t_start`` (default T-1) to 0, evenly spaced, ``steps`` of them (fewer when
    starting lower: proportionally)."""
    t_start = T - 1 if t_start is None else t_start
    n = max(1, min(t_start + 1, int(round(steps * (t_start + 1) / T))))
    ts = np.unique(np.round(np.linspace(0, t_start, n)).astype(np.int64))[::-1]
    return [int(t) for t in ts]


def ddim_sample(model, sched: Schedule, known_x0: torch.Tensor, known: torch.Tensor, fmt, generator=None,
                context: torch.Tensor | None = None, progress: Callable[[int, int], None] | None = None,
                path: str | None = None, steps: int = 50, eta: float = 0.0, clip_x0: float | None = None,
                x_init: torch.Tensor | None = None, t_start: int | None = None) -> torch.Tensor:
    """DDIM over ``steps`` timesteps (eta=0: deterministic given the start noise). Returns x0 [B,S,D]."""
    with torch.inference_mode(), _EvalMode(model):
        device, known_x0, known, fmt, context = _prepare(model, known_x0, known, fmt, context)
        f = _denoiser(model, path, fmt, context)
        km = known[..., None]
        x, t_start = _start(sched, known_x0, generator, device, x_init, t_start)
        ts = ddim_timesteps(sched.T, steps, t_start)
        ab = sched.alphas_cumprod.double().cpu().tolist()
        B = known_x0.shape[0]
        for i, t in enumerate(ts):
            ab_t = ab[t]
            ab_prev = ab[ts[i + 1]] if i + 1 < len(ts) else 1.0
            tt = torch.full((B,), t, device=device, dtype=torch.long)
            eps = f(torch.where(km, known_x0, x), tt, known)
            x0 = (x - (1 - ab_t) ** 0.5 * eps) / ab_t ** 0.5
            if clip_x0 is not None:
                x0 = _clip(x0, clip_x0)
                eps = (x - ab_t ** 0.5 * x0) / (1 - ab_t) ** 0.5
            sigma = eta * ((1 - ab_prev) / (1 - ab_t)) ** 0.5 * (1 - ab_t / ab_prev) ** 0.5 if eta > 0 else 0.0
            x = ab_prev ** 0.5 * x0 + max(1 - ab_prev - sigma ** 2, 0.0) ** 0.5 * eps
            if sigma > 0:
                x = x + sigma * _randn(x.shape, generator, device)
            if progress is not None:
                progress(i + 1, len(ts))
        return torch.where(km, known_x0, x)
