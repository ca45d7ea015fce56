"""The gauntlet: a round robin between decks, played by Celery workers (or a command's processes).

- :mod:`gameplay.gauntlet.models`: ``GauntletRun`` and ``GauntletGame`` (models of the gameplay app:
  ``gameplay.models`` imports them).
- :mod:`gameplay.gauntlet.service`: decks in, runs and games stored, each game claimed, played and recorded.
- :mod:`gameplay.gauntlet.tasks`: one Celery task per game, and their queueing (above the service).
- :mod:`gameplay.gauntlet.views`, :mod:`gameplay.gauntlet.urls` (under /games/gauntlet/),
  :mod:`gameplay.gauntlet.admin` (imported by ``gameplay.admin``).

The pure part (schedule, results matrix, card statistics) is ``gameplay.core.matches.roundrobin``.
"""
