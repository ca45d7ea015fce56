"""Game review: after a game, a Celery job replays it and weighs each of the player's decisions with the advisor.

- :mod:`gameplay.review.models`: ``GameReview``, one per game (queued, running, done, failed; progress, heartbeat).
- :mod:`gameplay.review.service`: start a review, claim and run it under a heartbeat, recover what a dead worker left.
- :mod:`gameplay.review.tasks`: the Celery job ``gameplay.review_game`` and the workers' sweep.
- :mod:`gameplay.review.views`: the page ``/games/<id>/review/`` and ``/api/games/<id>/review`` (the owner only).

The pure part is ``gameplay.core.matches.decision_review``.
"""
