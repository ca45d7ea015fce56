"""Deck completion by diffusion (pure torch/numpy, no Django): a DDPM over card embeddings of a 60-card
main deck and a 15-card sideboard, each a set of slots (Manamorphosis), with format conditioning,
legality-masked naming and a seeded copy-limit refinement. See docs/completion-design.md."""
from .complete import Completer, Completion, CompletionError
from .data import DeckArrays, card_popularity, load_npz, save_npz, split_by_date
from .model import DeckDenoiser, DenoiserConfig
from .sampler import ddim_sample, ddpm_sample
from .schedule import Schedule, cosine_schedule, q_sample
from .trainer import TrainConfig, train

__all__ = ["Completer", "Completion", "CompletionError", "DeckArrays", "card_popularity", "load_npz", "save_npz",
           "split_by_date", "DeckDenoiser", "DenoiserConfig", "ddim_sample", "ddpm_sample", "Schedule",
           "cosine_schedule", "q_sample", "TrainConfig", "train"]
