from django.urls import path

from gameplay import views

urlpatterns = [
    path("games/", views.games, name="games"),
    path("games/<uuid:game_id>/", views.game_page, name="game"),
]
