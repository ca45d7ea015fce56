"""Gauntlet data: a round robin between decks (``GauntletRun``) and its games (``GauntletGame``).

Imported at the bottom of ``gameplay.models`` so Django sees the models as the gameplay app's.
"""
from django.conf import settings
from django.db import models

from plumbing.jobs import JobRow


class GauntletRun(models.Model):
    """N decks, K games per pair with seats swapped, both seats played by one player spec.

    ``decks``: ``[{"name", "source", "cards": [[name, copies], ...]}]`` (main decks, catalogue
    names). ``done`` counts finished games (played or failed); ``errors`` the failed ones.
    ``results``: ``{"summary": core.gauntlet.aggregate(...), "cards": core.gauntlet.card_stats(...)}``.
    """

    STATUSES = [("pending", "pending"), ("running", "running"), ("done", "done"), ("cancelled", "cancelled"),
                ("failed", "failed")]
    RUNNERS = [("celery", "Celery workers"), ("local", "the command's processes")]

    name = models.CharField(max_length=200, blank=True)
    decks = models.JSONField(default=list)
    games_per_pair = models.PositiveSmallIntegerField()
    player = models.CharField(max_length=60, default="engine:Medium", help_text="player spec for both seats")
    max_decisions = models.PositiveIntegerField(default=5000, help_text="a game still going after this is a draw (cut)")
    seed = models.BigIntegerField(default=0)
    runner = models.CharField(max_length=10, choices=RUNNERS, default="celery")
    status = models.CharField(max_length=10, choices=STATUSES, default="pending", db_index=True)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0)
    results = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="gauntlet_runs")
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self):
        return self.name or f"gauntlet #{self.pk}"

    @property
    def deck_names(self) -> list[str]:
        return [d["name"] for d in self.decks]

    @property
    def progress(self) -> float:
        return self.done / self.total if self.total else 0.0

    @property
    def finished_or_stopped(self) -> bool:
        return self.status in ("done", "cancelled", "failed")


class GauntletGame(JobRow):
    """One scheduled game: which decks sit where, its seed, and how it ended."""

    STATUSES = [("pending", "pending"), ("running", "running"), ("done", "done"), ("error", "error")]

    run = models.ForeignKey(GauntletRun, on_delete=models.CASCADE, related_name="games")
    index = models.PositiveIntegerField()
    deck_a = models.PositiveSmallIntegerField(help_text="the pair: deck indexes a < b")
    deck_b = models.PositiveSmallIntegerField()
    round = models.PositiveSmallIntegerField(help_text="game number within the pair")
    seat0_deck = models.PositiveSmallIntegerField(help_text="the deck in seat 0, which plays first")
    seat1_deck = models.PositiveSmallIntegerField()
    seed = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=STATUSES, default="pending", db_index=True)
    winner = models.SmallIntegerField(null=True, blank=True, help_text="winning seat; empty for a draw or cut game")
    winner_deck = models.SmallIntegerField(null=True, blank=True)
    cut = models.BooleanField(default=False, help_text="stopped at the decision cap (scored as a draw)")
    turns = models.PositiveIntegerField(null=True, blank=True)
    decisions = models.PositiveIntegerField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="gauntlet_game_unique_index")]

    def __str__(self):
        return f"{self.run} game {self.index}"

    @property
    def seats(self) -> list[int]:
        return [self.seat0_deck, self.seat1_deck]


__all__ = ["GauntletGame", "GauntletRun"]
