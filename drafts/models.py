"""Draft logs: pods, their seats and every pick (pack shown, pool, pick, time, the bot's scores).

A pod simulated here, imported from a 17Lands file or drafted online is stored the same way, so
any of them can be exported in the 17Lands layout or used to train the bots.
"""
import uuid

from django.conf import settings
from django.db import models


class Draft(models.Model):
    KINDS = [("simulated", "simulated"), ("imported", "imported"), ("online", "online")]
    STATUSES = [("open", "open"), ("drafting", "drafting"), ("complete", "complete")]
    TIMERS = [(0, "off"), (30, "30 s"), (45, "45 s"), (60, "60 s"), (90, "90 s"), (120, "120 s")]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    set_code = models.CharField(max_length=10, db_index=True)
    kind = models.CharField(max_length=10, choices=KINDS, db_index=True)
    status = models.CharField(max_length=10, choices=STATUSES, default="complete")
    seats = models.PositiveSmallIntegerField(default=8)
    packs = models.PositiveSmallIntegerField(default=3)
    picks_per_pack = models.PositiveSmallIntegerField(default=14)
    seed = models.BigIntegerField(null=True, blank=True)
    event_type = models.CharField(max_length=40, default="PremierDraft", help_text="17Lands event_type")
    external_id = models.CharField(max_length=100, null=True, blank=True, unique=True,
                                   help_text="pod id of an imported file (idempotent re-imports)")
    source = models.CharField(max_length=300, blank=True, help_text="file it was imported from")
    state = models.JSONField(null=True, blank=True, help_text="pod engine state while drafting")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    started = models.DateTimeField(null=True, blank=True, help_text="17Lands draft_time")
    # Online pods (kind="online"): status "open" is the lobby, then "drafting", then "complete".
    bot_kind = models.CharField(max_length=20, default="draftsim", help_text="bot for empty seats and suggestions")
    pick_timer = models.PositiveSmallIntegerField(default=0, choices=TIMERS, help_text="seconds per pick; 0 = off")
    host_seat = models.PositiveSmallIntegerField(null=True, blank=True, help_text="seat of the person who may start")
    revision = models.PositiveIntegerField(default=0, help_text="bumped by every change of an online pod")
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self):
        return f"{self.set_code} {self.kind} draft {str(self.id)[:8]}"


class DraftSeat(models.Model):
    draft = models.ForeignKey(Draft, on_delete=models.CASCADE, related_name="seat_set")
    seat = models.PositiveSmallIntegerField()
    drafter = models.CharField(max_length=40, help_text="'human', 'logged' (an imported log) or a bot name")
    bot_version = models.ForeignKey("ml.ModelVersion", null=True, blank=True, on_delete=models.SET_NULL)
    log_id = models.CharField(max_length=40, unique=True, help_text="its 17Lands draft_id (32 hex characters)")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    display_name = models.CharField(max_length=60, blank=True)
    session_key = models.CharField(max_length=40, blank=True, db_index=True,
                                   help_text="a guest's session: the seat is bound to it")
    consent = models.BooleanField(null=True, blank=True,
                                  help_text="the drafter agreed (True) or refused (False) to share picks for training")
    pack_since = models.DateTimeField(null=True, blank=True, help_text="when the current pack reached the seat")
    deadline = models.DateTimeField(null=True, blank=True, help_text="when the current pick times out")
    colors = models.CharField(max_length=5, blank=True, help_text="colours of the built deck")
    deck = models.ForeignKey("decks.Deck", null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["draft", "seat"]
        constraints = [models.UniqueConstraint(fields=["draft", "seat"], name="draftseat_unique_seat")]

    def __str__(self):
        return f"seat {self.seat} ({self.drafter})"


class DraftPick(models.Model):
    seat = models.ForeignKey(DraftSeat, on_delete=models.CASCADE, related_name="picks")
    pack_number = models.PositiveSmallIntegerField()
    pick_number = models.PositiveSmallIntegerField()
    pack = models.JSONField(help_text="card names shown, before the pick")
    pool = models.JSONField(help_text="card names picked before this pick")
    pick = models.CharField(max_length=200)
    scores = models.JSONField(null=True, blank=True, help_text="the bot's ranking: [[name, score], ...]")
    picked_at = models.DateTimeField()
    elapsed_ms = models.PositiveIntegerField(null=True, blank=True, help_text="time taken to pick")
    client_pick_id = models.CharField(max_length=64, null=True, blank=True)
    timed_out = models.BooleanField(default=False, db_default=False, help_text="the timer ran out and the suggested card was taken")

    class Meta:
        ordering = ["seat", "pack_number", "pick_number"]
        constraints = [
            models.UniqueConstraint(fields=["seat", "pack_number", "pick_number"], name="draftpick_unique_pick"),
        ]

    def __str__(self):
        return f"P{self.pack_number + 1}p{self.pick_number + 1}: {self.pick}"


class DrafterProfile(models.Model):
    """A signed-up drafter's data-sharing choice (asked at sign-up or at the first draft)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="drafter_profile")
    consent = models.BooleanField(null=True, blank=True, help_text="include my drafts in the training data")
    decided = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.user} consent={self.consent}"


class DraftRound(models.Model):
    """Play your pod: one best-of-one round of a person's seat against a bot seat's auto-built deck, played as a
    game on /games/ (``drafts.rounds``). Deleted with the seat or the draft; its game goes with it there."""

    draft = models.ForeignKey(Draft, on_delete=models.CASCADE, related_name="rounds")
    seat = models.ForeignKey(DraftSeat, on_delete=models.CASCADE, related_name="rounds", help_text="the person's seat")
    number = models.PositiveSmallIntegerField(help_text="1, 2, 3")
    opponent = models.ForeignKey(DraftSeat, on_delete=models.CASCADE, related_name="rounds_against",
                                 help_text="the bot's seat whose deck the AI plays")
    game = models.OneToOneField("gameplay.PlayedGame", on_delete=models.CASCADE, related_name="draft_round")
    level = models.CharField(max_length=40, help_text="the engine AI's level, e.g. engine:Medium")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["seat", "number"]
        constraints = [models.UniqueConstraint(fields=["seat", "number"], name="draftround_unique_number")]

    def __str__(self):
        return f"round {self.number}: seat {self.seat.seat} vs seat {self.opponent.seat}"
