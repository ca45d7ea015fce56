"""Search over the rules engine: which action should a seat take now, and what line follows.

One interface, three algorithms (split the way OpenSpiel splits its mcts.py: the leaf value comes
from ``gameplay.core.learning.value``, the tree and the root live here, the bots that use them sit above).
Modules, each importing only those before it (and, from outside the package, only
``gameplay.core.engine.adapter``, ``pruning`` and ``value``; never Django):

- ``base``: ``Budget``, ``SearchConfig``, ``Recommendation``, the tree's ``Edge``/``Node`` and
  ``Search``, everything a search needs but the algorithm (determinizations, policies, rollouts,
  the root prior, the answer, root statistics);
- ``flat``, ``mcts``, ``minimax``: ``FlatSearch``, ``MCTSSearch``, ``MinimaxSearch``, each a
  ``Search`` that fills in ``_run``;
- ``algorithms``: ``ALGORITHMS`` (name -> class) and ``make_search``.

The entry point is ``gameplay.core.search.advisor.recommend``; root parallelism is ``gameplay.core.search.parallel``.
"""
