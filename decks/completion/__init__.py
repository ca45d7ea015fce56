"""Deck completion on the site: requests parsed and checked, jobs stored and run in batches by the model.

The request path reads one way: page or API (``views``, ``api``) -> ``service`` (the request, the job rows, the
batch runner) -> ``completers`` (builds the completers from the active registry versions, the catalogue and the
corpus) -> ``decks.completion.models`` (pure: retrieval, the masked sampler, Manamorphosis).

- :mod:`decks.completion.service`: the request, the job rows, the batch runner and the cached completers.
- :mod:`decks.completion.completers`: the completers of the active versions (``deck_masked``, ``deck_diffusion``).
- :mod:`decks.completion.datasets`: catalogue and corpus rows -> the arrays the models train and evaluate on.
- :mod:`decks.completion.training` and :mod:`decks.completion.evaluation`: the kinds' train and evaluate
  functions (``manage.py models train|evaluate``; the kinds are in ``decks.kinds``), and the evaluation of a
  deck file against the baselines.
- :mod:`decks.completion.views` and :mod:`decks.completion.api`: the page and the /api/decks/complete
  routes (URLs in ``decks.urls`` and ``decks.api_urls``).

Its Celery task and queueing (``decks.complete_deck``, ``enqueue_completion``) and the job's websocket
(``JobConsumer``) stay in the app's ``decks.tasks`` and ``decks.consumers``, beside the deck analysis.
"""
