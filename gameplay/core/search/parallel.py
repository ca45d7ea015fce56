"""Root parallelism: the same search in several processes, root statistics summed.

Each worker process builds its own engine from the card data (a path or the card-data dict;
engines cannot cross processes) once, when the pool starts, and then searches the state JSON it
is sent on its own determinizations (its own seed). The calling process searches too (worker 0),
so on N processes N searches run; every ``progress_seconds`` each worker posts its root
statistics on a queue and the caller's ``on_progress`` gets the sum. Visits and value sums add
up across processes, as in Cowling, Ward & Powley's ensemble (one determinization set each).

Processes start with the ``forkserver`` context where there is one (``spawn`` elsewhere): a
forked copy of a threaded web or Celery process is not safe. Pools are kept per (card data,
size) and reused by later calls; ``shutdown_pools()`` ends them.

The same parts can run elsewhere: ``recommend_parallel(..., spread=...)`` hands the part payloads
(plain JSON: the state, the seat, the budget and config as dicts, a seed, the candidate keys) to a
function that starts them and returns one waiter per part, e.g. the Celery shell in
``gameplay.tasks`` (root parallelism across workers for long budgets). A part runs
``search_part(engine, part)``; what comes back is its root statistics, summed as above. With a
time budget, spread parts carry a ``deadline`` (when the caller's own search ends): a part stops
by then, a part that starts with less than half its time left returns at once with nothing, and
the caller waits for answers only a few seconds past it, so a busy queue costs simulations, not
the person's time.

Pure: no Django; imports ``gameplay.core.engine`` and the search package only (a part loads the caller's
network by its path with the caller's ``models.load_evaluator``, e.g. ``gameplay.core.learning.network.evaluator_at``;
a worker process is sent the caller's models without the loaded network) (the advisor calls
``recommend_parallel``; ``gameplay.tasks`` runs ``search_part`` on Celery workers).
"""
from __future__ import annotations

import atexit
import multiprocessing as mp
import os
import queue as _queue
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from gameplay.core.engine.adapter import Action, Game, PhaseEngine
from gameplay.core.search.algorithms import make_search
from gameplay.core.search.base import Budget, Search, SearchConfig
from gameplay.core.search.evaluation import NO_MODELS, SearchModels

_pools: dict[tuple, tuple[ProcessPoolExecutor, object]] = {}
SPREAD_SLACK_SECONDS = 5.0  # how long past its deadline a spread part's answer is still awaited
_pool_lock = threading.Lock()

# worker-process globals
_W_ENGINE = None
_W_QUEUE = None


def card_source(engine) -> str | dict | None:
    """What a worker needs to build the same engine: the card-data path or dict it was made from."""
    for attr in ("card_source", "card_data_path", "source"):
        value = getattr(engine, attr, None)
        if value:
            return str(value) if not isinstance(value, dict) else value
    return None


def _context():
    methods = mp.get_all_start_methods()
    return mp.get_context("forkserver" if "forkserver" in methods else "spawn")


def _init_worker(source, progress_queue):
    global _W_ENGINE, _W_QUEUE
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _W_ENGINE = PhaseEngine(source)
    _W_ENGINE.card_source = source
    _W_QUEUE = progress_queue


def part_payload(index: int, state: dict, seat: int, algorithm: str, budget, seed: int, config, hint,
                 action_keys: list[str], include_keys=(), source=None, deadline: float | None = None,
                 net: str | None = None) -> dict:
    """One part of a root-parallel search as plain JSON (what a process or a Celery worker is sent)."""
    return {"index": index, "state": state, "seat": seat, "algorithm": algorithm,
            "budget": {"seconds": budget.seconds, "simulations": budget.simulations}, "seed": seed,
            "config": dict(vars(config)), "hint": hint, "keys": list(action_keys), "include": list(include_keys),
            "card_source": source if isinstance(source, str) else None, "deadline": deadline, "net": net}


def search_part(engine, part: dict, on_progress=None, *, models: SearchModels | None = None) -> dict:
    """Run one part on ``engine`` (which must hold the same cards as the caller's): its root statistics.
    ``on_progress(stats)`` gets the statistics so far every ``config.progress_seconds``. ``models``: the learned
    models in use where the part runs (``SearchModels``, its network left out: a part that names the caller's
    network, ``part["net"]``, a path, loads it with ``models.load_evaluator``; ``models.leaf_model`` is the learned
    leaf of ``SearchConfig.leaf == "learned"``)."""
    models = models or NO_MODELS
    budget = Budget(**part["budget"])
    if part.get("deadline") is not None:
        left = part["deadline"] - time.time()
        if left <= 0 or (budget.seconds and left < 0.5 * budget.seconds):
            return {"edges": {}, "simulations": 0, "dropped": 0, "line": [], "cache_hits": 0,
                    "errors": ["started too late: the caller has moved on"], "expired": True}
        if budget.seconds:  # finish with the caller's own search
            budget = Budget(seconds=min(budget.seconds, left), simulations=budget.simulations)
    mine = card_source(engine)
    if part.get("card_source") and isinstance(mine, str) and mine != part["card_source"]:
        raise ValueError(f"this worker's card data ({mine}) is not the caller's ({part['card_source']})")
    config = SearchConfig(**part["config"])
    seat = part["seat"]
    game = engine.load(part["state"])
    legal = {a.key: a for a in game.legal_actions(seat)}
    actions = [legal[k] for k in part["keys"] if k in legal]
    hint = part.get("hint")
    hint_action = Action(seat, hint["type"], hint.get("data"), hint.get("label", "")) if hint else None
    include = [a for a in actions if a.key in set(part.get("include") or ())]
    last = [time.perf_counter()]

    def post(rec):
        now = time.perf_counter()
        if on_progress is not None and (now - last[0] >= config.progress_seconds or rec.stats.get("final")):
            last[0] = now
            on_progress(search.root_stats())

    evaluator = None
    if part.get("net"):  # the caller's policy/value network
        if models.load_evaluator is None:
            raise ValueError("this part searches with a network: search_part needs models with load_evaluator")
        evaluator = models.load_evaluator(part["net"])
    search = make_search(game, seat, algorithm=part["algorithm"], budget=budget, seed=part["seed"], config=config,
                         on_progress=post, hint=hint_action, state=part["state"], actions=actions, include=include,
                         models=models.with_evaluator(evaluator))
    search.run()
    return search.root_stats()


def _worker_search(call_id: str, part: dict, models: SearchModels | None = None) -> dict:
    def post(stats):
        try:
            _W_QUEUE.put_nowait((call_id, part["index"], stats))
        except Exception:  # noqa: BLE001 - progress is best effort
            pass

    return search_part(_W_ENGINE, part, on_progress=post if _W_QUEUE is not None else None, models=models)


def _pool(source, size: int):
    key = (source if isinstance(source, str) else id(source), size)
    with _pool_lock:
        found = _pools.get(key)
        if found is None:
            for other in [k for k in _pools if k[0] == key[0]]:  # one pool per card data: resize
                _pools.pop(other)[0].shutdown(wait=False, cancel_futures=True)
            ctx = _context()
            q = ctx.Queue()
            pool = ProcessPoolExecutor(max_workers=size, mp_context=ctx, initializer=_init_worker, initargs=(source, q))
            found = _pools[key] = (pool, q)
        return found


def _drop_pool(pool):
    with _pool_lock:
        for key, (p, _q) in list(_pools.items()):
            if p is pool:
                del _pools[key]
    pool.shutdown(wait=False, cancel_futures=True)


def shutdown_pools():
    with _pool_lock:
        items = list(_pools.values())
        _pools.clear()
    for pool, _q in items:
        pool.shutdown(wait=False, cancel_futures=True)


atexit.register(shutdown_pools)


def merge(search: Search, remote: dict[int, dict]):
    """Add the workers' root statistics to the local search's edges (returns a Recommendation)."""
    base = {e.key: (e.n, e.w) for e in search.edges}
    sims = search.simulations
    dropped = search.dropped
    base_det = {e.key: dict(e.by_det) for e in search.edges}
    for index, stats in remote.items():
        for e in search.edges:
            s = stats["edges"].get(e.key)
            if s:
                e.n += s["n"]
                e.w += s["w"]
                # another process's determinization k is not ours: keep them apart
                for k, v in (s.get("by_det") or {}).items():
                    e.by_det[int(k) + 100_000 * index] = list(v)
        sims += stats.get("simulations", 0)
        dropped += stats.get("dropped", 0)
    local_sims, local_dropped = search.simulations, search.dropped
    search.simulations, search.dropped = sims, dropped
    try:
        rec = search.recommendation()
    finally:
        for e in search.edges:
            e.n, e.w = base[e.key]
            e.by_det = base_det[e.key]
        search.simulations, search.dropped = local_sims, local_dropped
    rec.stats["workers"] = 1 + len(remote)
    return rec


def recommend_parallel(game: Game, seat: int, *, algorithm, budget, seed, workers, on_progress, config, hint,
                       actions, start, include=None, spread=None, models: SearchModels | None = None):
    models = models or NO_MODELS
    evaluator = models.evaluator
    config = config or SearchConfig()
    budget = budget or Budget(seconds=1.0)
    source = card_source(game.engine)
    state = game.state()
    if source is None and spread is None:  # the engine does not say where its cards came from: search here only
        search = make_search(game, seat, algorithm=algorithm, budget=budget, seed=seed, config=config,
                             on_progress=on_progress, hint=hint, state=state, actions=actions, include=include,
                             models=models)
        search.start = start
        rec = search.run()
        rec.stats["workers"] = 1
        rec.stats["parallel"] = "unavailable: the engine has no card_source"
        return rec
    share = budget
    if budget.simulations is not None:  # a simulation budget is shared; a time budget is not
        share = Budget(seconds=budget.seconds, simulations=max(1, -(-budget.simulations // workers)))
    hint_d = {"type": hint.kind, "data": hint.data, "label": hint.label} if hint is not None else None
    keys = [a.key for a in actions]
    include_keys = [a.key for a in include or [] if a is not None]
    # Local processes start at once and may run late (a pool's first start builds its engines); parts
    # sent through ``spread`` must end with this search when it has a time budget (see the docstring).
    deadline = time.time() + budget.seconds if spread is not None and budget.seconds else None
    wait_until = deadline + SPREAD_SLACK_SECONDS if deadline else time.time() + max(5.0, (budget.seconds or 30.0) * 4 + 30)
    parts = [part_payload(i, state, seat, algorithm, share, seed * 7919 + i, config, hint_d, keys, include_keys,
                          source=source, deadline=deadline, net=getattr(evaluator, "path", None))
             for i in range(1, workers)]
    pool = q = None
    waiters: list = []
    spread_error = None
    call_id = f"{os.getpid()}-{time.time_ns()}"
    if spread is not None:
        try:
            waiters = list(spread(parts))
        except Exception as exc:  # noqa: BLE001 - no helpers: this process searches alone
            spread_error = f"{type(exc).__name__}: {str(exc)[:200]}"
    else:
        pool, q = _pool(source, workers - 1)
        try:
            # the loaded network stays here: each process loads it from the part's path (``part["net"]``)
            futures = [pool.submit(_worker_search, call_id, part, models.with_evaluator(None)) for part in parts]
            waiters = [(lambda f: (lambda timeout: f.result(timeout=timeout)))(f) for f in futures]
        except (BrokenProcessPool, RuntimeError):
            _drop_pool(pool)
            waiters = []
    remote: dict[int, dict] = {}

    def drain():
        while q is not None:
            try:
                cid, index, stats = q.get_nowait()
            except (_queue.Empty, OSError, EOFError):
                return
            if cid == call_id:
                remote[index] = stats

    def progress(rec):
        if on_progress is None:
            return
        drain()
        merged = merge(search, remote) if remote else rec
        merged.elapsed = time.perf_counter() - start
        merged.stats.pop("final", None)  # the local search ended; the workers may not have
        on_progress(merged)

    search = make_search(game, seat, algorithm=algorithm, budget=share, seed=seed * 7919, config=config,
                         on_progress=progress if on_progress else None, hint=hint, state=state, actions=actions,
                         include=include, models=models)
    search.start = start
    local = search.run()
    if spread_error:
        local.stats.setdefault("worker_errors", []).append(spread_error)
    for i, wait in enumerate(waiters, start=1):
        try:
            stats = wait(max(1.0, wait_until - time.time()))
        except BrokenProcessPool:
            _drop_pool(pool)
            continue
        except Exception as exc:  # noqa: BLE001 - a lost worker costs its simulations, not the answer
            local.stats.setdefault("worker_errors", []).append(f"{type(exc).__name__}: {str(exc)[:200]}")
            continue
        if stats.get("expired"):
            local.stats["expired_parts"] = local.stats.get("expired_parts", 0) + 1
        else:
            remote[i] = stats
    rec = merge(search, remote) if remote else local
    rec.elapsed = time.perf_counter() - start
    rec.stats["workers"] = 1 + len(remote)
    rec.stats["parts"] = {"asked": len(parts), "answered": len(remote), "via": "celery" if spread else "processes"}
    rec.stats["final"] = True
    if on_progress is not None:
        on_progress(rec)
    return rec
