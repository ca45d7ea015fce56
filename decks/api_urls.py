"""The decks app's /api/ routes: cards, decks and deck completion (included under /api/ by mtgsite.urls)."""
from django.urls import path

from decks.api import CardViewSet, DeckViewSet
from decks.completion.api import CompletionDetailView, CompletionListView

urlpatterns = [
    path("cards/", CardViewSet.as_view({"get": "list"}), name="api-card-list"),
    path("cards/<int:pk>/", CardViewSet.as_view({"get": "retrieve"}), name="api-card-detail"),
    path("decks/", DeckViewSet.as_view({"get": "list", "post": "create"}), name="api-deck-list"),
    path("decks/complete", CompletionListView.as_view(), name="api-completion"),
    path("decks/complete/<uuid:job_id>", CompletionDetailView.as_view(), name="api-completion-detail"),
    path("decks/<int:pk>/", DeckViewSet.as_view({"get": "retrieve", "patch": "partial_update"}),
         name="api-deck-detail"),
    path("decks/<int:pk>/export", DeckViewSet.as_view({"get": "export"}), name="api-deck-export"),
]
