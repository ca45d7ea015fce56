"""The advisor's entry point: ``recommend(game, seat, algorithm=..., budget=...)``, and the levels.

``recommend`` answers which action ``seat`` should take now, the expected line, a win estimate and
the alternatives: a forced decision at once, otherwise one search (``gameplay.core.search``: flat
Monte Carlo, MCTS or minimax) on this process, or root parallelism over processes or workers
(``gameplay.core.search.parallel``). ``LEVELS`` name the settings a person (the play page's advice) or a
player (``gameplay.core.matches.players.SearchPlayer``) picks from.

The caller passes the learned models (the search looks nothing up): ``evaluator``, a policy/value network that
every level then searches with (its prior in PUCT, its value at the leaves; None: as before the network),
``leaf_model`` for the ``learned`` level's leaves and ``load_evaluator`` for root parallelism's worker processes
(``gameplay.core.learning.active.search_models()`` gives the ones in use).

Pure: no Django; imports the engine and the search package only. Used by the
play page's advisor (streams ``on_progress``), the search players and the benches.
"""
from __future__ import annotations

import time
from typing import Callable

from gameplay.core.engine.adapter import Action, EngineError, Game, IllegalAction
from gameplay.core.search.parallel import recommend_parallel
from gameplay.core.search.pruning import prune_actions
from gameplay.core.search.algorithms import ALGORITHMS, make_search
from gameplay.core.search.base import Budget, Recommendation, SearchConfig
from gameplay.core.search.evaluation import Evaluator, EvaluatorLoader, LeafModelSource, win_probability

# Levels, like Magarena's AI levels: an algorithm, a budget, processes, and how SearchPlayer uses
# them: ``defer`` is the engine AI whose choice is the default (and ``defer_low`` once the per-game
# CPU bank ``game_seconds`` is spent), ``contest`` the second opinion that decides what is searched.
# The levels that defer to VeryHard keep it once the bank is spent: falling back to Medium made long games
# worse than the AI they defer to (one Modern mirror played 194 decisions on Medium); VeryHard costs about
# 30 ms a decision, so a whole game still stays well inside 2 minutes of one core.
LEVELS: dict[str, dict] = {
    "fast": {"algorithm": "mcts", "budget": Budget(seconds=2.0, simulations=6), "workers": 1, "defer": "Medium",
             "game_seconds": 40.0, "defer_low": "Easy",
             "config": SearchConfig(prior_level="Medium", determinizations=3, horizon=1, keep_margin=0.03, min_visits=2,
                                    root_finalists=2, max_candidates=4)},
    "default": {"algorithm": "mcts", "budget": Budget(seconds=8.0, simulations=12), "workers": 1, "defer": "VeryHard",
                "contest": "Medium", "game_seconds": 70.0, "defer_low": "VeryHard",
                "config": SearchConfig(prior_level="VeryHard", determinizations=6, horizon=2, keep_margin=0.03,
                                       min_visits=3, root_finalists=2, max_candidates=4)},
    # default with one-turn rollouts scored by the learned value model (gameplay.core.learning.value): it predicts
    # the winner twice as well, yet was not stronger against Medium (bench/README.md), so default keeps
    # the engine's evaluation
    "learned": {"algorithm": "mcts", "budget": Budget(seconds=8.0, simulations=20), "workers": 1, "defer": "VeryHard",
                "contest": "Medium", "game_seconds": 70.0, "defer_low": "VeryHard",
                "config": SearchConfig(prior_level="VeryHard", determinizations=6, horizon=1, keep_margin=0.03,
                                       min_visits=3, root_finalists=2, max_candidates=4, leaf="learned")},
    "strong": {"algorithm": "mcts", "budget": Budget(seconds=10.0, simulations=48), "workers": 2, "defer": "VeryHard",
               "game_seconds": None,
               "config": SearchConfig(prior_level="VeryHard", determinizations=8, horizon=2, keep_margin=0.02,
                                      min_visits=3, root_finalists=3)},
    "flat": {"algorithm": "flat", "budget": Budget(seconds=6.0, simulations=10), "workers": 1, "defer": "VeryHard",
             "game_seconds": 70.0, "defer_low": "VeryHard",
             "config": SearchConfig(prior_level="VeryHard", determinizations=3, horizon=2, keep_margin=0.03, min_visits=2,
                                    max_candidates=4)},
    "minimax": {"algorithm": "minimax", "budget": Budget(seconds=3.0), "workers": 1, "defer": "VeryHard",
                "game_seconds": 70.0, "defer_low": "VeryHard",
                "config": SearchConfig(prior_level="VeryHard", determinizations=1, max_depth=3, horizon=1,
                                       keep_margin=0.03)},
}


def level_spec(level: str) -> dict:
    """A level's settings as plain JSON (what the benches write beside their figures)."""
    spec = LEVELS[level]
    return {"algorithm": spec["algorithm"], "budget": spec["budget"].to_dict(), "workers": spec.get("workers", 1),
            "defer": spec.get("defer"), "defer_low": spec.get("defer_low"), "contest": spec.get("contest"),
            "game_seconds": spec.get("game_seconds"), "config": {k: v for k, v in vars(spec.get("config") or SearchConfig()).items()}}


def forced_recommendation(action: Action, start: float, algorithm: str, estimate: float = 0.5) -> Recommendation:
    """The answer to a decision with one distinct action: that action, nothing searched."""
    return Recommendation(action=action, line=[action.label], win_estimate=estimate,
                          alternatives=[{"label": action.label, "key": action.key, "visits": 0, "value": None}],
                          simulations=0, elapsed=time.perf_counter() - start, algorithm=algorithm, forced=True,
                          stats={"final": True})


def recommend(game: Game, seat: int, *, algorithm: str = "mcts", budget: Budget | None = None, seed: int = 0,
              workers: int = 1, on_progress: Callable[[Recommendation], None] | None = None,
              config: SearchConfig | None = None, hint: Action | None = None,
              include: list[Action] | None = None, spread=None, evaluator: Evaluator | None = None,
              leaf_model: LeafModelSource | None = None, load_evaluator: EvaluatorLoader | None = None
              ) -> Recommendation:
    """The best action for ``seat`` now, the expected line, a win estimate and the alternatives.

    Without ``budget``/``config`` the ``default`` level's are used (for flat/minimax, that level's).
    ``game`` is never changed (the search works on loaded copies). ``on_progress`` is called with
    the best answer so far every few simulations or ``config.progress_seconds``, and once at the
    end. A decision with one distinct action returns at once with ``forced=True``. ``hint`` is an
    action the caller already knows the engine AI would take (the prior; saves computing it);
    ``include`` are actions that must stay among the candidates when ``max_candidates`` cuts them.
    ``workers > 1`` is root parallelism: on this machine's processes, or through ``spread`` (a function
    that starts part payloads elsewhere, e.g. on Celery workers; see ``gameplay.core.search.parallel``).
    ``evaluator``: the policy/value network to search with (None: none); ``leaf_model``: what returns the value
    model (needed by ``config.leaf == "learned"``); ``load_evaluator``: how a worker process loads ``evaluator``
    from its path (needed with ``evaluator`` and ``workers > 1``).
    """
    start = time.perf_counter()
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}")
    level = LEVELS["default"] if algorithm == "mcts" else LEVELS.get(algorithm, LEVELS["default"])
    budget = budget or level["budget"]
    config = config or level["config"]
    legal = game.legal_actions(seat)
    if not legal:
        raise IllegalAction(f"seat {seat} has no decision to make now")
    if len(legal) == 1 or len(actions := prune_actions(game, legal)) == 1:
        # nothing to search; the estimate is the engine's evaluation of the position as it stands
        try:
            estimate = win_probability(game.evaluate(seat))
        except EngineError:
            estimate = 0.5
        rec = forced_recommendation(legal[0], start, algorithm, estimate)
        if on_progress is not None:
            on_progress(rec)
        return rec
    if workers and workers > 1:
        return recommend_parallel(game, seat, algorithm=algorithm, budget=budget, seed=seed, workers=workers,
                                  on_progress=on_progress, config=config, hint=hint, actions=actions, start=start,
                                  include=include, spread=spread, evaluator=evaluator, leaf_model=leaf_model,
                                  load_evaluator=load_evaluator)
    search = make_search(game, seat, algorithm=algorithm, budget=budget, seed=seed, config=config,
                         on_progress=on_progress, hint=hint, actions=actions, include=include, evaluator=evaluator,
                         leaf_model=leaf_model)
    search.start = start
    return search.run()
