"""Search over the rules engine: which action should a seat take now, and what line follows.

One interface, three algorithms (split the way OpenSpiel splits its mcts.py: the leaf value comes from the
learned models the caller passes as one ``SearchModels``, the tree and the root live here, the bots that use them sit above in
``gameplay.core.matches``). Modules, each importing only those before it (and, from outside the package,
only ``gameplay.core.engine``; never ``learning``, never Django):

- ``evaluation``: the ``Evaluator`` and ``LeafModel`` protocols, ``SearchModels`` (the learned models a search
  is handed) and ``leaf_value`` (the leaf a search scores with, chosen once), ``win_probability`` (the engine's
  evaluation squashed by ``EVAL_SCALE``);
- ``pruning``: equivalent actions collapsed;
- ``base``: ``Budget``, ``SearchConfig``, ``Recommendation``, the tree's ``Edge``/``Node`` and
  ``Search``, everything a search needs but the algorithm (determinizations, policies, rollouts,
  the root prior, the answer, root statistics);
- ``flat``, ``mcts``, ``minimax``: ``FlatSearch``, ``MCTSSearch``, ``MinimaxSearch``, each a
  ``Search`` that fills in ``_run``;
- ``algorithms``: ``ALGORITHMS`` (name -> class) and ``make_search``;
- ``parallel``: root parallelism over processes or a spread function (Celery workers);
- ``advisor``: ``recommend``, the entry point, and the ``LEVELS``.
"""
