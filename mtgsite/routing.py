"""All websocket routes; each app contributes its own list."""
from decks.routing import websocket_urlpatterns as deck_ws
from drafts.routing import websocket_urlpatterns as draft_ws
from gameplay.routing import websocket_urlpatterns as game_ws

websocket_urlpatterns = [*deck_ws, *draft_ws, *game_ws]
