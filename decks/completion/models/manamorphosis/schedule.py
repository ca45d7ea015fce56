"""Noise schedule of the deck DDPM: the cosine schedule of Nichol & Dhariwal (2021).

``alpha_bar(t) = f(t) / f(0)`` with ``f(t) = cos(((t / T + s) / (1 + s)) * pi / 2) ** 2`` and
``beta_t = 1 - alpha_bar(t + 1) / alpha_bar(t)`` clipped to ``max_beta`` (0.999), for t = 0 .. T-1
(index 0 is the first, least noisy step). Every table is computed in float64 and stored as a float32
tensor; ``Schedule.to(device)`` moves them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

import torch

__all__ = ["Schedule", "cosine_schedule", "q_sample", "extract"]


@dataclass
class Schedule:
    """Tables of a T-step DDPM, each a float32 tensor of shape [T]."""

    T: int
    betas: torch.Tensor
    alphas: torch.Tensor
    alphas_cumprod: torch.Tensor
    alphas_cumprod_prev: torch.Tensor
    sqrt_ab: torch.Tensor  # sqrt(alpha_bar_t)
    sqrt_1m_ab: torch.Tensor  # sqrt(1 - alpha_bar_t)
    sqrt_recip_ab: torch.Tensor  # 1 / sqrt(alpha_bar_t)
    posterior_variance: torch.Tensor  # beta~_t = beta_t (1 - ab_{t-1}) / (1 - ab_t)
    posterior_log_variance: torch.Tensor  # log beta~_t, with beta~_0 replaced by beta~_1 (clipped)
    posterior_mean_coef1: torch.Tensor  # coefficient of x0 in the mean of q(x_{t-1} | x_t, x0)
    posterior_mean_coef2: torch.Tensor  # coefficient of x_t

    def to(self, device) -> "Schedule":
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return Schedule(**{k: (v.to(device) if isinstance(v, torch.Tensor) else v) for k, v in values.items()})

    @property
    def device(self) -> torch.device:
        return self.betas.device


def cosine_schedule(T: int = 1000, s: float = 0.008, max_beta: float = 0.999) -> Schedule:
    if T < 2:
        raise ValueError("T must be at least 2")
    steps = torch.arange(T + 1, dtype=torch.float64)
    f = torch.cos(((steps / T + s) / (1 + s)) * math.pi / 2) ** 2
    alpha_bar = f / f[0]
    betas = (1 - alpha_bar[1:] / alpha_bar[:-1]).clamp(min=0.0, max=max_beta)
    alphas = 1 - betas
    ab = torch.cumprod(alphas, 0)
    ab_prev = torch.cat([torch.ones(1, dtype=torch.float64), ab[:-1]])
    post_var = betas * (1 - ab_prev) / (1 - ab)
    post_log_var = torch.log(torch.cat([post_var[1:2], post_var[1:]]))
    coef1 = betas * ab_prev.sqrt() / (1 - ab)
    coef2 = (1 - ab_prev) * alphas.sqrt() / (1 - ab)
    f32 = lambda x: x.to(torch.float32)  # noqa: E731
    return Schedule(
        T=T, betas=f32(betas), alphas=f32(alphas), alphas_cumprod=f32(ab), alphas_cumprod_prev=f32(ab_prev),
        sqrt_ab=f32(ab.sqrt()), sqrt_1m_ab=f32((1 - ab).sqrt()), sqrt_recip_ab=f32(1 / ab.sqrt()),
        posterior_variance=f32(post_var), posterior_log_variance=f32(post_log_var),
        posterior_mean_coef1=f32(coef1), posterior_mean_coef2=f32(coef2),
    )


def extract(table: torch.Tensor, t: torch.Tensor, ndim: int) -> torch.Tensor:
    """table[t] reshaped to [B, 1, ..., 1] (``ndim`` dimensions) for broadcasting."""
    out = table.to(t.device)[t]
    return out.reshape(t.shape[0], *([1] * (ndim - 1)))


def q_sample(sched: Schedule, x0: torch.Tensor, t: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """x_t = sqrt(alpha_bar_t) x0 + sqrt(1 - alpha_bar_t) noise, with t [B] long."""
    return extract(sched.sqrt_ab, t, x0.ndim).to(x0.dtype) * x0 + extract(sched.sqrt_1m_ab, t, x0.ndim).to(x0.dtype) * noise
