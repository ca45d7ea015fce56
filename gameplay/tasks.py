"""Celery tasks of the gameplay app (found by the Celery app's autodiscovery), and their queueing (above
gameplay.play, the service they run)."""
import functools
import logging

from celery import shared_task
from django.conf import settings
from django.core.cache import cache

from gameplay.carddb import get_engine
from gameplay.core.engine.adapter import PhaseEngine
from gameplay.core.matches import yardstick as strength
from gameplay.core.search.parallel import search_part as run_part
from gameplay.core.matches.selfplay import pool_decisions
from gameplay.models_in_use import search_models
from gameplay.play import PROTOCOL_VERSION, advice, session
from plumbing.recovery import max_attempts

log = logging.getLogger(__name__)


@shared_task(name="gameplay.advise", ignore_result=True, soft_time_limit=180, acks_late=True,
             reject_on_worker_lost=True)
def advise(game_id: str, revision: int, level=None, algorithm=None, seconds=None, simulations=None,
           ticket=None) -> dict | None:
    """The advisor: search the person's decision and stream the recommendation to the game's group
    (gameplay.play.advice.run_advice). A newer request or the person's next action stops it early.

    A worker that dies mid-search leaves the message unacknowledged: the broker hands it to another worker,
    which searches again (MTG_JOB_MAX_ATTEMPTS runs of one request, then the page is told why it stopped)."""
    run = _advice_run(ticket)
    if run is None:
        return None  # a copy of a request that has had its answer
    try:
        if run > max_attempts():
            session.send_to_game(game_id, {
                "v": PROTOCOL_VERSION, "type": "error", "context": "advice", "game": str(game_id), "revision": revision,
                "code": 503, "message": f"the advisor stopped: the worker searching this position was lost "
                                        f"{run - 1} times; ask again"})
            return None
        return advice.run_advice(game_id, revision, level=level, algorithm=algorithm, seconds=seconds,
                                 simulations=simulations, ticket=ticket, spread_for=advice_spread)
    except Exception as exc:  # the worker survives; the page is told
        log.exception("advice for game %s crashed", game_id)
        session.send_to_game(game_id, {"v": PROTOCOL_VERSION, "type": "error", "context": "advice",
                                       "game": str(game_id), "revision": revision, "code": 500,
                                       "message": f"the advisor failed ({exc.__class__.__name__}); try again"})
        return None
    finally:
        _advice_answered(ticket)


def _advice_key(ticket: str) -> str:
    return f"advice-runs:{ticket}"


def _advice_run(ticket: str | None) -> int | None:
    """Which run of the advice request ``ticket`` this is (1, or more when its message was redelivered after
    its worker died); None when a run of it already answered (a late copy: nothing to do)."""
    if not ticket:
        return 1
    try:
        runs = cache.get(_advice_key(ticket))
        if runs == "answered":
            return None
        runs = int(runs or 0) + 1
        cache.set(_advice_key(ticket), runs, 3600)
        return runs
    except Exception:  # noqa: BLE001 - the cache is down (its backend's errors share no base class): advise anyway
        return 1


def _advice_answered(ticket: str | None) -> None:
    if ticket:
        try:
            cache.set(_advice_key(ticket), "answered", 3600)
        except Exception:  # noqa: BLE001 - the cache is down: a late copy would search once more, harmlessly
            log.warning("could not mark the advice %s answered", ticket)


def enqueue_advice(game_id, revision: int, *, level=None, algorithm=None, seconds=None, simulations=None,
                   ticket: str | None = None) -> str:
    """Queue the advice task (eager on the embedded stack: it runs in the caller's thread). Returns its
    ticket: a newer request (or the person's next action) stops this one."""
    ticket = ticket or session.new_ticket(game_id)
    advise.delay(str(game_id), revision, level=level, algorithm=algorithm, seconds=seconds,
                 simulations=simulations, ticket=ticket)
    return ticket


@shared_task(name="gameplay.search_part", soft_time_limit=300)
def search_part(part: dict) -> dict:
    """One part of a root-parallel search (``gameplay.core.search.parallel``) on this worker's engine: its root
    statistics, which the caller sums with its own. The network the part names is loaded by its path; the learned
    leaf is the value model in use here."""
    return run_part(get_engine(), part, models=search_models().with_evaluator(None))


def spread_over_workers(parts: list[dict]) -> list:
    """Start the parts on Celery workers; one waiter per part (``waiter(timeout)`` -> root statistics).
    A part not answered in time is revoked; the caller goes on with what it has."""
    results = [search_part.apply_async(args=[part]) for part in parts]

    def waiter(result):
        def wait(timeout: float) -> dict:
            try:
                # the advisor itself runs in a task: waiting here is bounded by the part's deadline (a
                # part that a busy queue starts late returns at once), so it cannot hold a worker long
                return result.get(timeout=timeout, disable_sync_subtasks=False)
            except Exception:
                result.revoke()
                raise
        return wait

    return [waiter(r) for r in results]


def advice_spread(budget) -> tuple[int, object]:
    """(workers, spread) for one advice search: extra parts on Celery workers when the budget is long
    enough to pay for them (GAME_ADVICE_SPREAD_PARTS, GAME_ADVICE_SPREAD_MIN_SECONDS) and a real broker
    runs them; otherwise the search runs in the calling process alone."""
    parts = int(settings.GAME_ADVICE_SPREAD_PARTS or 0)
    long_enough = (budget.seconds or 0) >= float(settings.GAME_ADVICE_SPREAD_MIN_SECONDS)
    if parts <= 0 or settings.CELERY_TASK_ALWAYS_EAGER or not long_enough:
        return 1, None
    return 1 + parts, spread_over_workers


@shared_task(name="gameplay.policy_game", soft_time_limit=600)
def policy_game(job: dict) -> list:
    """One self-play game for the policy/value network on this worker's engine: (index, decision records, error);
    a search player searches with the learned models in use."""
    return list(pool_decisions({**job, "engine": get_engine()}, models=search_models()))


def policy_games_over_workers(jobs: list[dict]):
    """The games as Celery tasks (eager on the embedded stack), their results in order as each comes."""
    for result in [policy_game.apply_async(args=[job]) for job in jobs]:
        yield tuple(result.get(disable_sync_subtasks=False))


@functools.lru_cache(maxsize=2)
def _engine_over(card_data: str):
    return PhaseEngine(card_data)


@shared_task(name="gameplay.strength_game", acks_late=True, reject_on_worker_lost=True, soft_time_limit=900)
def strength_game(job: dict, player: str, cards: dict, card_data: str | None = None) -> dict:
    """One game of the paired strength yardstick (``bench/game_strength.py --pool --celery``): ``player`` in
    the job's seat, on the card database file ``card_data`` (the bench's, on a shared disk) or this worker's.
    A game is a pure function of its job, so a copy redelivered after a worker died plays it again."""
    return strength.play(_engine_over(card_data) if card_data else get_engine(), job, player, cards,
                         models=search_models())
