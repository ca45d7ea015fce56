from django.urls import path

from gameplay import views
from gameplay.review.views import review_page

urlpatterns = [
    path("games/", views.games, name="games"),
    path("games/<uuid:game_id>/", views.game_page, name="game"),
    path("games/<uuid:game_id>/concede/", views.concede_page, name="game-concede"),
    path("games/<uuid:game_id>/review/", review_page, name="game-review"),
]
