"""The decks app's pure core: no Django, Celery or Channels (standard library only).

It may import only other modules of this package. ``cards``, ``names``, ``decklist``, ``export``,
``rules`` and ``setnames`` import nothing here (the wire envelope is ``common.wire``); ``catalogue`` (MTGJSON/oracle records to
cards) imports ``cards`` and ``names``. Every other pure core (``drafts.core``, ``drafts.bots``,
``decks.completion.models``, ``decks.completion.models.manamorphosis``) may import this package; the shell (models, services, views,
tasks) builds on it. ``tests/test_structure.py`` checks both rules.
"""
