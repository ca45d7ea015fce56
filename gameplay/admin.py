"""Django admin of the gameplay app."""
from django.contrib import admin

from gameplay.gauntlet import admin as gauntlet_admin  # noqa: F401 - registers the gauntlet's runs and games
from gameplay.models import PlayedGame


@admin.register(PlayedGame)
class PlayedGameAdmin(admin.ModelAdmin):
    """Games against the AI. The engine state (hidden cards included, ~0.5 MB) is never shown as a form field."""

    list_display = ("id", "human_deck_name", "ai_deck_name", "opponent", "owner", "status", "turn", "revision", "created")
    list_filter = ("status", "opponent")
    search_fields = ("id", "human_deck_name", "ai_deck_name", "owner__username")
    readonly_fields = ("id", "owner", "session_key", "human_deck_name", "human_deck", "ai_deck_name", "ai_deck",
                       "opponent", "human_seat", "seed", "first_player", "engine", "status", "result", "turn",
                       "revision", "decisions", "log", "advice", "state_size", "moves_recorded", "created", "updated")
    exclude = ("state", "moves")

    @admin.display(description="engine state")
    def state_size(self, obj):
        return f"{len(obj.state or '') / 1024:.0f} KiB of engine JSON"

    @admin.display(description="moves")
    def moves_recorded(self, obj):
        return f"{len(obj.moves or [])} recorded (the game is rebuilt from them if its state cannot be read back)"

    def has_add_permission(self, request):
        return False
