"""/api/ routes (the OpenAPI schema itself is served at /api/schema/ by mtgsite.urls)."""
from django.urls import path

from decks.api import CardViewSet, DeckViewSet
from decks.completion_api import CompletionDetailView, CompletionListView
from drafts.api import DraftDetailView, DraftExportView, SetListView, SimulateView, SuggestView
from drafts.pod_api import PodCreateView, PodJoinView, PodPickView, PodStartView, PodView
from gameplay.api import AdviceView, GameActionView, GameCreateView, GameView, SampleDecksView

urlpatterns = [
    path("cards/", CardViewSet.as_view({"get": "list"}), name="api-card-list"),
    path("cards/<int:pk>/", CardViewSet.as_view({"get": "retrieve"}), name="api-card-detail"),
    path("decks/", DeckViewSet.as_view({"get": "list", "post": "create"}), name="api-deck-list"),
    path("decks/complete", CompletionListView.as_view(), name="api-completion"),
    path("decks/complete/<uuid:job_id>", CompletionDetailView.as_view(), name="api-completion-detail"),
    path("decks/<int:pk>/", DeckViewSet.as_view({"get": "retrieve"}), name="api-deck-detail"),
    path("decks/<int:pk>/export", DeckViewSet.as_view({"get": "export"}), name="api-deck-export"),
    path("drafts/sets", SetListView.as_view(), name="api-draft-sets"),
    path("drafts/simulate", SimulateView.as_view(), name="api-draft-simulate"),
    path("drafts/suggest", SuggestView.as_view(), name="api-draft-suggest"),
    path("drafts/<uuid:draft_id>", DraftDetailView.as_view(), name="api-draft-detail"),
    path("pods", PodCreateView.as_view(), name="api-pods"),
    path("pods/<uuid:draft_id>", PodView.as_view(), name="api-pod"),
    path("pods/<uuid:draft_id>/join", PodJoinView.as_view(), name="api-pod-join"),
    path("pods/<uuid:draft_id>/start", PodStartView.as_view(), name="api-pod-start"),
    path("pods/<uuid:draft_id>/picks", PodPickView.as_view(), name="api-pod-pick"),
    path("drafts/<uuid:draft_id>/export", DraftExportView.as_view(), name="api-draft-export"),
    path("games", GameCreateView.as_view(), name="api-games"),
    path("games/advice", AdviceView.as_view(), name="api-game-advice"),
    path("games/decks", SampleDecksView.as_view(), name="api-game-decks"),
    path("games/<uuid:game_id>", GameView.as_view(), name="api-game"),
    path("games/<uuid:game_id>/actions", GameActionView.as_view(), name="api-game-actions"),
]
