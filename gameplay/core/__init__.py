"""The game's pure core: no Django, Celery or Channels (plain Python and numpy; ``phase``, torch and
matplotlib are loaded where they are used).

Imports run one way, down this list: a module imports only modules above it (as listed in brackets).

- ``carddata``, ``seatview``: card-data conversion, what one seat may see (nothing here);
- ``engine``: the rules-engine interface and its phase.rs implementation (nothing here);
- ``pruning``: equivalent actions collapsed (engine);
- ``value``: a position's value, the engine's evaluation squashed or the learned model (engine);
- ``search/``: ``base``, then ``flat``, ``mcts``, ``minimax``, then ``algorithms`` (engine, pruning,
  value);
- ``parallel``: root parallelism over processes or a spread function (engine, search);
- ``advisor``: ``recommend``, the entry point, and the ``LEVELS`` (engine, pruning, value, search,
  parallel);
- ``players``: random, engine and search players, ``make_player`` (engine, pruning, search, advisor);
- ``selfplay``: engine-vs-engine positions that train the value (engine, value);
- ``gauntlet``: round robins between decks and their statistics (engine, players).

A learned evaluator plugs into the search from below (``value``), never the other way round.
"""
