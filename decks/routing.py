from django.urls import path

from decks.consumers import DeckConsumer, JobConsumer

websocket_urlpatterns = [
    path("ws/decks/<int:deck_id>/", DeckConsumer.as_asgi()),
    path("ws/jobs/<uuid:job_id>/", JobConsumer.as_asgi()),
]
