"""Deck completion by diffusion (pure torch/numpy, no Django): a DDPM over card embeddings of a 60-card
main deck and a 15-card sideboard, each a set of slots (Manamorphosis), with format conditioning,
legality-masked naming and a seeded copy-limit refinement; and the masked (discrete) model over card tokens.
See docs/completion-design.md.

Import from the modules (``ml.diffusion.complete``, ``.model``, ``.trainer``, ``.masked_sampler``, ...): the
package re-exports nothing, so that the numpy-only ``data`` and ``masking`` load without torch (the Django
shell imports them at start-up).
"""
