"""The gameplay app's /api/ routes: games against the AI and turn advice (included under /api/ by mtgsite.urls)."""
from django.urls import path

from gameplay.api import AdviceView, GameActionView, GameConcedeView, GameCreateView, GameView, SampleDecksView
from gameplay.review.views import GameReviewView

urlpatterns = [
    path("games", GameCreateView.as_view(), name="api-games"),
    path("games/advice", AdviceView.as_view(), name="api-game-advice"),
    path("games/decks", SampleDecksView.as_view(), name="api-game-decks"),
    path("games/<uuid:game_id>", GameView.as_view(), name="api-game"),
    path("games/<uuid:game_id>/actions", GameActionView.as_view(), name="api-game-actions"),
    path("games/<uuid:game_id>/concede", GameConcedeView.as_view(), name="api-game-concede"),
    path("games/<uuid:game_id>/review", GameReviewView.as_view(), name="api-game-review"),
]
