"""The review service: start a review of a finished game, run it (claimed, under a heartbeat, with progress), and
recover the reviews a dead worker left running (``plumbing.recovery``). Calls the pure ``gameplay.core.matches.decision_review``."""
from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from gameplay.carddb import get_engine
from gameplay.core.engine.adapter import EngineError
from gameplay.core.matches.decision_review import ReviewSettings, review_game
from gameplay.models_in_use import search_models
from gameplay.models import PlayedGame
from gameplay.play import PlayError
from gameplay.play.choice import check_deck
from gameplay.review.models import GameReview
from plumbing import recovery

log = logging.getLogger(__name__)


def review_settings() -> ReviewSettings:
    """The site's review settings (``GAME_REVIEW_*``): the ensemble judge by default."""
    return ReviewSettings(judge=settings.GAME_REVIEW_JUDGE, copies=settings.GAME_REVIEW_COPIES,
                          settle=settings.GAME_REVIEW_SETTLE, workers=settings.GAME_REVIEW_WORKERS,
                          level=settings.GAME_REVIEW_LEVEL, seconds=settings.GAME_REVIEW_SECONDS,
                          simulations=settings.GAME_REVIEW_SIMULATIONS, max_decisions=settings.GAME_REVIEW_MAX_DECISIONS,
                          margin=settings.GAME_REVIEW_MISTAKE_MARGIN)


def reviewable(game: PlayedGame) -> None:
    """Raise PlayError (409) unless the game is over and can be rebuilt from its moves."""
    if game.status != "finished":
        raise PlayError("the game is still being played: it can be reviewed once it is over", 409)
    if game.first_player is None or len(game.moves) != game.decisions:
        raise PlayError("this game was stored before its moves were recorded: it cannot be replayed", 409)


def start_review(game: PlayedGame) -> tuple[GameReview, bool]:
    """The game's review, created queued when there is none (or the last one failed); (review, queue it?)."""
    reviewable(game)
    with transaction.atomic():
        review, created = GameReview.objects.select_for_update().get_or_create(
            game=game, defaults={"settings": review_settings().to_dict()})
        if not created and review.status == "failed":
            review.status, review.progress, review.error, review.attempts = "queued", 0.0, "", 0
            review.result, review.finished, review.settings = None, None, review_settings().to_dict()
            review.save()
            created = True
    return review, created


def claim(review_id: int) -> GameReview | None:
    """Mark the review running; None when it is over, or a live worker runs it (a copy of its task, redelivered).
    A review whose worker died (no heartbeat for MTG_JOB_STALE_SECONDS) may be claimed again."""
    with transaction.atomic():
        review = GameReview.objects.select_for_update(of=("self",)).select_related("game").filter(pk=review_id).first()
        if review is None or review.status in ("done", "failed"):
            return None
        if review.status == "running" and not GameReview.objects.filter(recovery.stale_q(), pk=review.pk).exists():
            return None
        now = timezone.now()
        review.status, review.started, review.heartbeat, review.attempts = "running", now, now, review.attempts + 1
        review.save(update_fields=["status", "started", "heartbeat", "attempts"])
    return review


def run_review(review_id: int) -> dict | None:
    """What the Celery job does: claim, replay and weigh the game (no transaction held), store the result.
    Never raises for a game: a failure is stored as the review's error."""
    review = claim(review_id)
    if review is None:
        return None
    rows = GameReview.objects.filter(pk=review.pk)
    last = [0.0]

    def progress(done: int, total: int):
        now = time.monotonic()
        if now - last[0] >= 1.0 or done == total:
            last[0] = now
            rows.filter(status="running").update(progress=round(done / max(total, 1), 3), heartbeat=timezone.now())

    game = review.game
    try:
        with recovery.heartbeat(rows):
            result = _review(game, ReviewSettings.from_dict(review.settings) if review.settings else review_settings(),
                             progress)
    except (EngineError, PlayError) as exc:
        return _finish(rows, error=f"the game could not be replayed: {exc}")
    except Exception as exc:  # noqa: BLE001 - a bug must not kill the worker; the page says what failed
        log.exception("review %s crashed", review_id)
        return _finish(rows, error=f"internal error: {type(exc).__name__}: {exc}"[:2000])
    return _finish(rows, result=result)


def _review(game: PlayedGame, review: ReviewSettings, progress) -> dict:
    human, problem = check_deck(game.human_deck, "your deck")
    ai, ai_problem = check_deck(game.ai_deck, "the AI's deck")
    if problem or ai_problem:
        raise PlayError("a deck of this game is no longer playable by the engine")
    decks = (human, ai) if game.human_seat == 0 else (ai, human)
    return review_game(get_engine(), decks, game.moves, seed=game.seed, first_player=game.first_player,
                       seat=game.human_seat, settings=review, on_progress=progress, models=search_models())


def _finish(rows, *, result: dict | None = None, error: str = "") -> dict | None:
    rows.filter(status="running").update(status="failed" if error else "done", result=result, error=error,
                                         progress=1.0 if result is not None else 0.0, finished=timezone.now())
    return result


def queued_reviews() -> list[int]:
    return list(GameReview.objects.filter(status="queued").values_list("pk", flat=True))


def recover_stale_reviews() -> list[int]:
    """The reviews a dead worker left running: queued again while they have runs left (returned: the caller queues
    them), else failed with the reason after MTG_JOB_MAX_ATTEMPTS runs."""
    again, _ = recovery.recover_stale(GameReview.objects.all(), what="review",
                                      again=lambda review: {"status": "queued"})
    return [review.pk for review in again]


def payload(review: GameReview | None) -> dict:
    """The review as the API and the page's poller show it."""
    if review is None:
        return {"status": "none", "progress": 0.0, "result": None, "error": ""}
    return {"status": review.status, "progress": review.progress, "result": review.result, "error": review.error,
            "attempts": review.attempts, "finished": review.finished.isoformat() if review.finished else None}
