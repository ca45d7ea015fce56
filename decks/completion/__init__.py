"""Deck completion on the site: requests parsed and checked, jobs stored and run in batches by the model.

- :mod:`decks.completion.service`: the request, the job rows, the batch runner and the completers.
- :mod:`decks.completion.views` and :mod:`decks.completion.api`: the page and the /api/decks/complete
  routes (URLs in ``decks.urls`` and ``decks.api_urls``).

Its Celery task and queueing (``decks.complete_deck``, ``enqueue_completion``) and the job's websocket
(``JobConsumer``) stay in the app's ``decks.tasks`` and ``decks.consumers``, beside the deck analysis.
"""
