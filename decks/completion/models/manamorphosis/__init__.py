"""Manamorphosis, the older continuous deck-completion model (pure torch/numpy, no Django): a DDPM over card
embeddings of a 60-card main deck and a 15-card sideboard, each a set of slots, with format conditioning,
legality-masked naming and a seeded copy-limit refinement. See docs/completion-design.md.

``complete`` (``Completer``), ``model`` (``DeckDenoiser``), ``sampler`` (DDPM/DDIM), ``schedule``, ``trainer``.
Import from the modules: the package re-exports nothing.
"""
