from django.contrib import admin

from decks.models import Card, CardSet, CompletionJob, Deck, DeckAppearance, DeckCard, Legality, Printing


class LegalityInline(admin.TabularInline):
    model = Legality
    extra = 0
    fields = ["format", "status", "source"]


class PrintingInline(admin.TabularInline):
    model = Printing
    extra = 0
    autocomplete_fields = ["card_set"]
    fields = ["card_set", "rarity", "collector_number", "is_booster", "arena_id"]


@admin.register(Card)
class CardAdmin(admin.ModelAdmin):
    list_display = ["name", "mana_cost", "type_line", "colors", "layout", "source", "deck_count"]
    list_filter = ["types", "layout", "source", "colors"]
    search_fields = ["name", "name_key"]
    readonly_fields = ["deck_count"]
    inlines = [LegalityInline, PrintingInline]
    list_per_page = 50


@admin.register(CardSet)
class CardSetAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "release_date", "set_type", "source"]
    list_filter = ["set_type", "source"]
    search_fields = ["code", "name"]
    date_hierarchy = "release_date"


@admin.register(Printing)
class PrintingAdmin(admin.ModelAdmin):
    list_display = ["card", "card_set", "rarity", "collector_number", "is_booster"]
    list_filter = ["rarity", "is_booster", "card_set"]
    search_fields = ["card__name", "card_set__code"]
    autocomplete_fields = ["card", "card_set"]
    list_select_related = ["card", "card_set"]


@admin.register(Legality)
class LegalityAdmin(admin.ModelAdmin):
    list_display = ["card", "format", "status", "source"]
    list_filter = ["format", "status", "source"]
    search_fields = ["card__name"]
    autocomplete_fields = ["card"]
    list_select_related = ["card"]


class DeckCardInline(admin.TabularInline):
    model = DeckCard
    extra = 0
    fields = ["board", "card", "count"]
    readonly_fields = fields
    can_delete = False
    ordering = ["board", "card__name"]

    def has_add_permission(self, request, obj=None):
        return False


class DeckAppearanceInline(admin.TabularInline):
    model = DeckAppearance
    extra = 0
    fields = ["date", "event", "result", "source", "dup_of_earlier"]
    readonly_fields = fields
    can_delete = False
    ordering = ["-date"]
    max_num = 0


@admin.register(Deck)
class DeckAdmin(admin.ModelAdmin):
    list_display = ["__str__", "format", "source", "main_count", "side_count", "occurrences", "last_seen", "created"]
    list_filter = ["format", "source"]
    search_fields = ["name", "list_hash"]
    date_hierarchy = "created"
    readonly_fields = ["list_hash", "main_count", "side_count", "unresolved", "analysis", "analyzed_at", "created",
                       "occurrences", "first_seen", "last_seen"]
    raw_id_fields = ["owner"]
    inlines = [DeckCardInline, DeckAppearanceInline]


@admin.register(DeckAppearance)
class DeckAppearanceAdmin(admin.ModelAdmin):
    list_display = ["deck", "date", "event", "result", "source", "dup_of_earlier"]
    list_filter = ["source", "dup_of_earlier"]
    search_fields = ["event", "key"]
    date_hierarchy = "date"
    raw_id_fields = ["deck"]
    list_select_related = ["deck"]


@admin.register(CompletionJob)
class CompletionJobAdmin(admin.ModelAdmin):
    """The completion jobs as the workers left them (which worker ran each, how many runs): to be read, not edited."""

    list_display = ["id", "status", "format", "model", "worker", "attempts", "created", "finished"]
    list_filter = ["status", "model", "format", "worker"]
    search_fields = ["id", "client_key", "worker"]
    date_hierarchy = "created"
    raw_id_fields = ["owner", "deck", "model_version"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
