"""The masked deck-completion model (pure torch/numpy): ``model`` (the denoiser over card tokens), ``data``
(examples and batches), ``sampler`` (``MaskedCompleter``, legality masked at every step), ``train`` and
``ablation`` (the no-retrieval ``PlainDenoiser``)."""
