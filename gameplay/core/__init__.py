"""The game's pure core: no Django, Celery or Channels (plain Python and numpy; ``phase``, torch and
matplotlib are loaded where they are used).

Four packages; imports run one way, down this list (a package imports only itself and those above it;
``tests/test_structure.py`` checks it):

- ``engine``: the rules-engine interface and its phase.rs adapter, card-data conversion, what one seat may
  see, the sample decks;
- ``search``: how a position is scored (``evaluation``: the ``Evaluator`` protocol and the engine's
  evaluation squashed), equivalent actions pruned, flat Monte Carlo, MCTS/PUCT and minimax, root
  parallelism, and the advisor's entry point ``advisor.recommend`` with the levels;
- ``learning``: the value model, the policy/value network, and ``active``: the versions the shell's
  registry names (the one place that remembers them);
- ``matches``: players, self-play (it plays search players), round robins between decks and their
  statistics, the yardstick, the review of a played game.

A learned model reaches the search as an argument (``recommend(evaluator=..., leaf_model=...)``), passed by
a caller above it; the search never imports ``learning``.
"""
