"""The review of a played game (imported at the bottom of ``gameplay.models``, so the model is the gameplay app's)."""
from django.db import models

from plumbing.jobs import JobRow


class GameReview(JobRow):
    """One review job per game: the advisor's look at each of the player's decisions (``gameplay.core.matches.decision_review``).

    ``result``: ``{"seat", "turns": [{"turn", "estimate"}], "decisions": [...], "mistakes", "reviewed", ...}``, only
    what the player's seat could see plus the advisor's suggestions. ``heartbeat`` is stamped while a worker runs
    it, so the workers' sweep (``plumbing.recovery``) finds a review whose worker died and runs it again."""

    STATUSES = [("queued", "queued"), ("running", "running"), ("done", "done"), ("failed", "failed")]

    game = models.OneToOneField("gameplay.PlayedGame", on_delete=models.CASCADE, related_name="review")
    status = models.CharField(max_length=10, choices=STATUSES, default="queued", db_index=True)
    progress = models.FloatField(default=0.0, help_text="0..1: the share of the player's moves replayed")
    settings = models.JSONField(default=dict, blank=True)
    result = models.JSONField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self):
        return f"review of {self.game_id} ({self.status})"


__all__ = ["GameReview"]
