"""The deck-completion kinds of the model registry, by name: what the completers, the training and ``decks.kinds``
share (a module of its own, so that naming a kind imports no training code)."""
MASKED = "deck_masked"
RANK = "deck_rank"
DIFFUSION = "deck_diffusion"
