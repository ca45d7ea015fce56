"""The deck-completion models (pure: numpy/scipy/torch, no Django, no database): arrays and names in, names out.

- ``common``: ``CompletionError``, the deck sizes and the checks both models run on the user's cards.
- ``deck_arrays``: ``DeckArrays`` (the corpus as 60 + 15 card-index slots per deck), the date split, popularity.
- ``masking``: which cards of a deck stay known (the training and evaluation masking rule).
- ``retrieval``: the sparse nearest-deck index and the neighbour vote.
- ``baselines``: ``PopularityBaseline``, ``CooccurrenceBaseline``, ``NearestDeckBaseline`` and the shared
  ``Baseline`` / ``DeckBuilder`` / ``FittedCorpus``.
- ``evaluate``: ``evaluate(completer_fn, test, ...)`` and ``compare(methods, test, ...)`` (recall, validity).
- ``masked``: the site's default, masked diffusion over card tokens with retrieval (model, data, sampler, train;
  ``ablation`` is the no-retrieval variant).
- ``manamorphosis``: the older continuous model (a DDPM over card embeddings).

The shell that feeds them rows and stores what they return is ``decks.completion`` (``completers``,
``datasets``, ``training``, ``evaluation``, ``service``).
"""
