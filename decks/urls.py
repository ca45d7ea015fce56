from django.urls import path

from decks import views
from decks.completion import views as completion_views

urlpatterns = [
    path("", views.home, name="home"),
    path("cards/", views.card_list, name="card-list"),
    path("cards/<int:card_id>/", views.card_detail, name="card-detail"),
    path("decks/", views.deck_list, name="deck-list"),
    path("decks/import/", views.deck_import, name="deck-import"),
    path("decks/mine/", views.my_decks, name="my-decks"),
    path("decks/<int:deck_id>/", views.deck_detail, name="deck-detail"),
    path("decks/<int:deck_id>/visibility/", views.deck_visibility, name="deck-visibility"),
    path("decks/complete/", completion_views.completion_form, name="completion-form"),
    path("decks/complete/<uuid:job_id>/", completion_views.completion_job, name="completion-job"),
    path("decks/<int:deck_id>/export.txt", views.deck_export, name="deck-export"),
]
