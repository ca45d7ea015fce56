from django.urls import path

from decks.consumers import DeckConsumer

websocket_urlpatterns = [path("ws/decks/<int:deck_id>/", DeckConsumer.as_asgi())]
