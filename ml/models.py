"""Model registry: trained versions of every model kind, one active per (kind, scope)."""
from django.db import models


class ModelVersion(models.Model):
    KINDS = [
        ("card_embeddings", "Card embeddings (Doc2Vec + card classifier)"),
        ("deck_diffusion", "Deck completion diffusion"),
        ("draft_bot", "Draft bot"),
        ("game_policy", "Game policy/value"),
    ]
    kind = models.CharField(max_length=30, choices=KINDS, db_index=True)
    scope = models.CharField(max_length=40, blank=True, default="", help_text="e.g. a set code for draft bots")
    version = models.PositiveIntegerField()
    config = models.JSONField(default=dict)
    weights_path = models.CharField(max_length=400, help_text="safetensors file (relative to the repo or MTG_MODEL_DIR)")
    weights_sha256 = models.CharField(max_length=64)
    weights_bytes = models.PositiveBigIntegerField(default=0)
    metrics = models.JSONField(default=dict, blank=True)
    data_snapshot = models.JSONField(default=dict, blank=True, help_text="what it was trained on")
    code_version = models.CharField(max_length=64, blank=True)
    notes = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    active = models.BooleanField(default=False)

    class Meta:
        ordering = ["kind", "scope", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "scope", "version"], name="modelversion_unique_version"),
            models.UniqueConstraint(fields=["kind", "scope"], condition=models.Q(active=True),
                                    name="modelversion_one_active"),
        ]

    def __str__(self):
        scope = f"[{self.scope}]" if self.scope else ""
        return f"{self.kind}{scope} v{self.version}{' (active)' if self.active else ''}"
