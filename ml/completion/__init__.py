"""Deck-completion baselines and the shared evaluation harness (pure numpy/scipy, no Django).

- ``baselines``: ``PopularityBaseline``, ``CooccurrenceBaseline``, ``NearestDeckBaseline``.
- ``evaluate``: ``evaluate(completer_fn, test, ...)`` and ``compare(methods, test, ...)``.
"""
