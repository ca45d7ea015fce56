"""All websocket routes; each app contributes its own list."""
from decks.routing import websocket_urlpatterns as deck_ws

websocket_urlpatterns = [*deck_ws]
