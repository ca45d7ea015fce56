"""The deck denoiser: a set transformer (no positional encoding) predicting the noise of each card slot.

Two paths share nothing but the class:

* **main** (60 slots): ``input_proj(x_t) + time_mlp(sinusoid(t)) + mask_mlp(known) + format_emb(fmt)``
  -> pre-norm ``TransformerEncoder`` -> LayerNorm -> ``output_proj`` -> eps.
* **side** (15 slots): a context encoder (``context_layers`` pre-norm encoder layers) reads the clean main
  deck (``ctx_proj(main_x0) + format_emb(fmt)``); a pre-norm ``TransformerDecoder`` (``side_layers``) over the
  side slots (same input sum as main, own weights) attends to itself and, by cross-attention, to that
  context -> eps.

Without positional encodings every layer is permutation-equivariant over slots: permuting the slots of
``x_t``/``known`` permutes the output the same way, and permuting the main-deck context changes nothing.
Format index ``config.formats`` (or any negative index) means "format unknown".

``forward_main``/``forward_side`` always return the predicted noise eps. With ``prediction="eps"`` (the default,
as in Manamorphosis) that is the network output itself. With ``prediction="v"`` the network predicts
``v = sqrt(ab_t) eps - sqrt(1 - ab_t) x0`` (Salimans & Ho 2022) and eps is ``sqrt(1 - ab_t) x_t + sqrt(ab_t) v``;
the trainer then regresses v (``raw=True`` gives the network output). v weights the high-noise steps, where the
known cards are what decides the deck, much more than eps does: on the synthetic corpus of the tests it learns to
use the known cards several times faster.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import torch
from torch import nn

from decks.completion.models.manamorphosis.schedule import cosine_schedule

__all__ = ["DenoiserConfig", "DeckDenoiser", "timestep_embedding"]


@dataclass
class DenoiserConfig:
    dim: int = 128  # card embedding size D
    d_model: int = 256
    heads: int = 8
    layers: int = 6  # main encoder layers
    ff: int = 1024
    side_layers: int = 3  # side decoder layers
    context_layers: int = 2  # encoder layers over the main deck, for the side path
    dropout: float = 0.1
    formats: int = 7  # number of known formats; index `formats` = unknown
    prediction: str = "eps"  # what the network outputs: "eps" (noise) or "v" (a*eps - s*x0); forward_* returns eps
    T: int = 1000  # diffusion steps of the cosine schedule the model is trained for

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "DenoiserConfig":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def timestep_embedding(t: torch.Tensor, dim: int, max_period: float = 10000.0) -> torch.Tensor:
    """Sinusoidal embedding of integer timesteps t [B] -> [B, dim] (as in the DDPM / transformer papers)."""
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = t.float()[:, None] * freqs[None]
    emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    if dim % 2:
        emb = torch.cat([emb, torch.zeros_like(emb[:, :1])], dim=-1)
    return emb


class _SlotConditioning(nn.Module):
    """input projection + time MLP + known-mask MLP + format embedding, summed per slot."""

    def __init__(self, c: DenoiserConfig):
        super().__init__()
        d = c.d_model
        self.d_model = d
        self.formats = c.formats
        self.input_proj = nn.Linear(c.dim, d)
        self.time_mlp = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, d))
        self.mask_mlp = nn.Sequential(nn.Linear(1, d), nn.SiLU(), nn.Linear(d, d))
        self.format_emb = nn.Embedding(c.formats + 1, d)

    def format_index(self, fmt: torch.Tensor) -> torch.Tensor:
        fmt = fmt.long()
        return torch.where((fmt < 0) | (fmt > self.formats), torch.full_like(fmt, self.formats), fmt)

    def forward(self, x_t, t, known, fmt):
        h = self.input_proj(x_t)
        h = h + self.time_mlp(timestep_embedding(t, self.d_model))[:, None, :]
        h = h + self.mask_mlp(known.to(h.dtype)[..., None])
        h = h + self.format_emb(self.format_index(fmt))[:, None, :]
        return h


class DeckDenoiser(nn.Module):
    def __init__(self, config: DenoiserConfig | None = None):
        super().__init__()
        c = config or DenoiserConfig()
        if c.prediction not in ("eps", "v"):
            raise ValueError(f"prediction must be 'eps' or 'v', not {c.prediction!r}")
        self.config = c
        d = c.d_model
        sched = cosine_schedule(c.T)
        self.register_buffer("sqrt_ab", sched.sqrt_ab, persistent=False)
        self.register_buffer("sqrt_1m_ab", sched.sqrt_1m_ab, persistent=False)

        def enc_layer():
            return nn.TransformerEncoderLayer(d, c.heads, c.ff, c.dropout, activation="gelu",
                                              batch_first=True, norm_first=True)

        # main path
        self.main_cond = _SlotConditioning(c)
        self.main_encoder = nn.TransformerEncoder(enc_layer(), c.layers, norm=nn.LayerNorm(d),
                                                  enable_nested_tensor=False)
        self.main_out = nn.Linear(d, c.dim)
        # side path
        self.ctx_proj = nn.Linear(c.dim, d)
        self.ctx_format_emb = nn.Embedding(c.formats + 1, d)
        self.ctx_encoder = nn.TransformerEncoder(enc_layer(), c.context_layers, norm=nn.LayerNorm(d),
                                                 enable_nested_tensor=False)
        self.side_cond = _SlotConditioning(c)
        dec_layer = nn.TransformerDecoderLayer(d, c.heads, c.ff, c.dropout, activation="gelu",
                                               batch_first=True, norm_first=True)
        self.side_decoder = nn.TransformerDecoder(dec_layer, c.side_layers, norm=nn.LayerNorm(d))
        self.side_out = nn.Linear(d, c.dim)

    def _eps(self, out: torch.Tensor, x_t: torch.Tensor, t: torch.Tensor, raw: bool) -> torch.Tensor:
        if raw or self.config.prediction == "eps":
            return out
        a = self.sqrt_ab[t].to(out.dtype)[:, None, None]
        s = self.sqrt_1m_ab[t].to(out.dtype)[:, None, None]
        return s * x_t + a * out

    # -- main ---------------------------------------------------------------------------------
    def forward_main(self, x_t: torch.Tensor, t: torch.Tensor, known: torch.Tensor, fmt: torch.Tensor,
                     raw: bool = False) -> torch.Tensor:
        """x_t [B,60,D] (known slots hold their clean vectors), t [B] long, known [B,60] bool, fmt [B] -> eps
        (``raw``: the network output, eps or v by ``config.prediction``)."""
        h = self.main_cond(x_t, t, known, fmt)
        return self._eps(self.main_out(self.main_encoder(h)), x_t, t, raw)

    # -- side ---------------------------------------------------------------------------------
    def encode_context(self, main_x0: torch.Tensor, fmt: torch.Tensor) -> torch.Tensor:
        """Clean main deck [B,60,D] -> context [B,60,d_model]; independent of t, so samplers compute it once."""
        h = self.ctx_proj(main_x0) + self.ctx_format_emb(self.main_cond.format_index(fmt))[:, None, :]
        return self.ctx_encoder(h)

    def forward_side(self, x_t: torch.Tensor, t: torch.Tensor, known: torch.Tensor, fmt: torch.Tensor,
                     main_x0: torch.Tensor | None = None, memory: torch.Tensor | None = None,
                     raw: bool = False) -> torch.Tensor:
        """x_t [B,15,D], t [B], known [B,15], fmt [B], main_x0 [B,60,D] (or a precomputed ``memory``) -> eps."""
        if memory is None:
            if main_x0 is None:
                raise ValueError("forward_side needs main_x0 or memory")
            memory = self.encode_context(main_x0, fmt)
        h = self.side_cond(x_t, t, known, fmt)
        return self._eps(self.side_out(self.side_decoder(h, memory)), x_t, t, raw)

    def forward(self, x_t, t, known, fmt, main_x0=None):
        if main_x0 is None:
            return self.forward_main(x_t, t, known, fmt)
        return self.forward_side(x_t, t, known, fmt, main_x0)

    def parameter_count(self, path: str | None = None) -> int:
        """All parameters, or those of one path ("main" or "side")."""
        prefixes = {"main": ("main_",), "side": ("ctx_", "side_")}.get(path or "", ("",))
        return sum(p.numel() for n, p in self.named_parameters() if n.startswith(prefixes))

    @classmethod
    def from_tensors(cls, config: dict | DenoiserConfig, tensors: dict) -> "DeckDenoiser":
        """Build from a config dict and a state dict (e.g. read with safetensors), in eval mode."""
        cfg = config if isinstance(config, DenoiserConfig) else DenoiserConfig.from_dict(config)
        model = cls(cfg)
        model.load_state_dict(tensors)
        return model.eval()
