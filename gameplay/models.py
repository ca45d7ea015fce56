"""Game-advice data: which catalogue cards the rules engine supports, and games played on the site (and the
gauntlet's runs and games, defined in ``gameplay.gauntlet.models``)."""
import uuid

from django.conf import settings
from django.db import models

# the gauntlet's models (gameplay/gauntlet/models.py) belong to this app: importing them here registers them
from gameplay.gauntlet.models import GauntletGame, GauntletRun  # noqa: F401
from gameplay.review.models import GameReview  # noqa: F401 - likewise the review of a game


class EngineCard(models.Model):
    """Whether the rules engine fully supports a catalogue card (one row per card and engine)."""

    card = models.ForeignKey("decks.Card", on_delete=models.CASCADE, related_name="engine_support")
    engine = models.CharField(max_length=30, default="phase")
    engine_version = models.CharField(max_length=30, blank=True)
    # built: the engine accepted the card at all; supported: every ability became rules.
    built = models.BooleanField(default=True)
    supported = models.BooleanField(default=False, db_index=True)
    problems = models.JSONField(default=list, blank=True, help_text="abilities the engine could not parse")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["card", "engine"], name="engine_card_unique")]

    def __str__(self):
        return f"{self.card.name} ({self.engine}: {'supported' if self.supported else 'partial'})"


class PlayedGame(models.Model):
    """One game in the browser (or over the API) between a person and an AI opponent.

    ``state`` is the engine's full JSON (``Game.state()``): it holds hidden information and never
    leaves the server; what the person sees is built from ``Game.observation(human_seat)``. Every
    change runs under a row lock and bumps ``revision`` (gameplay.play).
    """

    STATUSES = [("playing", "playing"), ("finished", "finished")]
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE,
                              related_name="played_games")
    session_key = models.CharField(max_length=40, blank=True, db_index=True, help_text="a guest's session")
    human_deck_name = models.CharField(max_length=200)
    human_deck = models.JSONField(default=list, help_text="[[card name, count], ...] (main deck)")
    ai_deck_name = models.CharField(max_length=200)
    ai_deck = models.JSONField(default=list)
    opponent = models.CharField(max_length=40, help_text='the AI: "engine:Medium", "random", "search:fast", ...')
    human_seat = models.PositiveSmallIntegerField(default=0)
    seed = models.BigIntegerField(default=0)
    engine = models.CharField(max_length=40, blank=True, help_text="engine name and version")
    state = models.TextField(help_text="the engine's JSON state (hidden information: server only)")
    status = models.CharField(max_length=10, choices=STATUSES, default="playing", db_index=True)
    result = models.JSONField(null=True, blank=True, help_text='{"winner": seat or null, "you_won": bool}')
    turn = models.PositiveIntegerField(default=0)
    log = models.JSONField(default=list, blank=True, help_text="what the person may see happen, in order")
    revision = models.PositiveIntegerField(default=0)
    decisions = models.PositiveIntegerField(default=0)
    first_player = models.PositiveSmallIntegerField(null=True, blank=True, help_text="the seat that played first")
    moves = models.JSONField(default=list, blank=True,
                             help_text="every move applied since the deal, [seat, action key], in order: the game "
                                       "is rebuilt from them when the engine cannot read its own stored state")
    advice = models.JSONField(null=True, blank=True, help_text="the last finished advice: {revision, ...}")
    final_board = models.JSONField(null=True, blank=True,
                                   help_text="each seat's observation of the board as it stood when the game ended, "
                                             "before the engine's clean-up exiled the loser's cards: {seat: board}")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self):
        return f"{self.human_deck_name} vs {self.ai_deck_name} ({self.opponent}, {self.status})"
