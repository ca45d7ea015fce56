"""Django admin for the gauntlet's runs and games (imported by gameplay/admin.py)."""
from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from gameplay.gauntlet.models import GauntletGame, GauntletRun


class GauntletGameInline(admin.TabularInline):
    model = GauntletGame
    extra = 0
    can_delete = False
    fields = ["index", "seat0_deck", "seat1_deck", "seed", "status", "winner_deck", "cut", "turns", "decisions",
              "seconds", "error"]
    readonly_fields = fields
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(GauntletRun)
class GauntletRunAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "player", "games_per_pair", "status", "done", "total", "errors", "created_by",
                    "created", "page"]
    list_filter = ["status", "player", "runner"]
    search_fields = ["name", "player"]
    readonly_fields = ["decks", "total", "done", "errors", "results", "created", "started", "finished", "page"]
    inlines = [GauntletGameInline]
    date_hierarchy = "created"

    @admin.display(description="page")
    def page(self, obj):
        return format_html('<a href="{}">results</a>', reverse("gauntlet-detail", args=[obj.pk])) if obj.pk else ""


@admin.register(GauntletGame)
class GauntletGameAdmin(admin.ModelAdmin):
    list_display = ["run", "index", "seat0_deck", "seat1_deck", "seed", "status", "winner_deck", "cut", "turns",
                    "decisions", "seconds"]
    list_filter = ["status", "cut"]
    search_fields = ["error"]
    raw_id_fields = ["run"]
