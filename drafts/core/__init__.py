"""The drafts app's pure core: no Django, Celery or Channels (numpy; matplotlib and pandas where used).

It may import ``decks.core`` and, inside the drafts app, only pure code: ``cards`` (the set list and
card facts) first; ``collation`` and ``deckbuild`` (cards); ``logs`` (17Lands logs; decks.core); the
bots' interface ``drafts.bots.base``; then ``pod`` (the pod engine: cards, collation, bots.base),
``protocol`` (what a seat may see: cards, pod), ``evaluate`` (bots.base, logs) and ``plots``.
``drafts.bots`` is pure too (``base`` first; each bot imports base, core.cards and core.logs).
The shell (``services``, ``online``, ``consumers``, views) builds on both. Checked by tests/test_structure.py.
"""
