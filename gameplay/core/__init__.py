"""The game's pure core: no Django, Celery or Channels (plain Python and numpy; ``phase``, torch and
matplotlib are loaded where they are used).

Four packages; imports run one way, down this list (a package imports only itself and those above it;
``tests/test_structure.py`` checks it):

- ``engine``: the rules-engine interface and its phase.rs adapter, card-data conversion, what one seat may
  see, the sample decks;
- ``search``: how a position is scored (``evaluation``: the ``Evaluator`` protocol and the engine's
  evaluation squashed), equivalent actions pruned, flat Monte Carlo, MCTS/PUCT and minimax, root
  parallelism, and the advisor's entry point ``advisor.recommend`` with the levels;
- ``learning``: the value model, the policy/value network, and ``weights``: the ``SearchModels`` built from
  their files (which files, the caller says);
- ``matches``: players, self-play (it plays search players), round robins between decks and their
  statistics, the yardstick, the review of a played game.

The learned models reach the search as one argument (``recommend(..., models=SearchModels(...))``, as OpenSpiel
passes one evaluator to its bot), built once by the shell (``gameplay.models_in_use``: the registry's active
versions) or a bench (from files) and passed down through the players, the review and the advisor; the search
never imports ``learning``. No module here keeps state that says which model is in use
(``tests/test_structure.py`` forbids module-level mutable state, but for the few memos and pools it names).
"""
